"""Steps about the context: what the model would be given for a session, right now.

Usage::

    Then the context is empty
    Then the context contains 4 messages
    Then the context is:
      | role      | content |
      | user      | 我叫张三 |
    Then the context ends with:
      | role | content |
      | user | Friday? |
    Then the context of session "bob" is empty
    Then the context is messages 41 to 50 of the exchange
    Then loading the context fails, rather than leaving messages out

Each step loads the context afresh through the memory's public API and compares
whole values, so a failure shows what the model would have seen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from pytest_bdd import parsers, then

from chat_memory import CorruptEntryError, MemoryService
from chat_memory_suite.adapter import requires
from chat_memory_suite.compare import expect_count, expect_messages, expect_text
from chat_memory_suite.tables import MESSAGE_COLUMNS, exchange, messages, reads_json, reads_table

from .conversation import Attempt


@then("the context is empty")
def context_is_empty(memory: MemoryService, session_id: str) -> None:
    """The session has nothing for the model to see.

    Then the context is empty
    """
    expect_messages(_the_context(session_id), memory.get_context(session_id), [])


@then(parsers.parse('the context of session "{name}" is empty'))
def context_of_session_is_empty(memory: MemoryService, name: str) -> None:
    """Another session has nothing for the model to see.

    Then the context of session "bob" is empty
    """
    expect_messages(_the_context(name), memory.get_context(name), [])


@then(parsers.re(r"the context contains (?P<count>\d+) messages?"), converters={"count": int})
def context_contains(memory: MemoryService, session_id: str, count: int) -> None:
    """The session holds exactly this many messages.

    Then the context contains 4 messages
    """
    expect_count(_the_context(session_id), memory.get_context(session_id), count)


@then("the context is:")
@reads_table(*MESSAGE_COLUMNS)
def context_is(memory: MemoryService, session_id: str, datatable: Sequence[Sequence[str]]) -> None:
    """The session holds exactly these messages, oldest first.

    A message that carries more than a role and a content (a compaction's
    summary, named "summary"; an assistant's tool calls; a named writer's
    name) does not equal a table row: check such a context with "Then the
    context is this JSON:", which shows every field. This is the current
    session; a user's own session is checked with "Then the context of user
    ... 's session ... is:".

    Then the context is:
    """
    expect_messages(_the_context(session_id), memory.get_context(session_id), messages(datatable))


@then("the context ends with:")
@reads_table(*MESSAGE_COLUMNS)
def context_ends_with(
    memory: MemoryService, session_id: str, datatable: Sequence[Sequence[str]]
) -> None:
    """The session's newest messages are exactly these, oldest first.

    Then the context ends with:
    """
    expected = messages(datatable)
    newest = memory.get_context(session_id)[-len(expected) :]
    expect_messages(f"the newest messages of {_the_context(session_id)}", newest, expected)


@then(parsers.parse('the context of session "{name}" is:'))
@reads_table(*MESSAGE_COLUMNS)
def context_of_session_is(
    memory: MemoryService, name: str, datatable: Sequence[Sequence[str]]
) -> None:
    """Another session holds exactly these messages, oldest first.

    Then the context of session "alice" is:
    """
    expect_messages(_the_context(name), memory.get_context(name), messages(datatable))


@then(parsers.parse("the context is messages {first:d} to {last:d} of the exchange"))
def context_is_exchange_slice(
    memory: MemoryService, session_id: str, first: int, last: int
) -> None:
    """The session holds exactly these numbered messages of the exchange, in order, roles intact.

    Then the context is messages 41 to 50 of the exchange
    """
    expected = exchange(last)[first - 1 :]
    expect_messages(_the_context(session_id), memory.get_context(session_id), expected)


@then("the context holds that document, character for character")
def context_holds_document(memory: MemoryService, session_id: str, document: str) -> None:
    """The long message comes back exactly as sent.

    Then the context holds that document, character for character
    """
    expected = [{"role": "user", "content": document}]
    expect_messages(_the_context(session_id), memory.get_context(session_id), expected)


@then("the context holds exactly that text")
def context_holds_exactly_that_text(memory: MemoryService, session_id: str, said: str) -> None:
    """The message comes back byte for byte; a difference shows every invisible character.

    Then the context holds exactly that text
    """
    held = [message["content"] for message in memory.get_context(session_id)]
    expect_text(f"the text {_the_context(session_id)} holds", held, [said])


@then(parsers.parse("loading the context fails, naming entry {number:d} as corrupt"))
@requires("typed_errors")
def context_fails_on_corrupt_entry(memory: MemoryService, session_id: str, number: int) -> None:
    """A stored entry that cannot be read is reported, never dropped silently.

    Then loading the context fails, naming entry 2 as corrupt
    """
    with pytest.raises(CorruptEntryError) as failure:
        memory.get_context(session_id)
    assert (failure.value.session_id, failure.value.position + 1) == (session_id, number)


@then("loading the context fails, rather than leaving messages out")
def context_fails_loudly(memory: MemoryService, session_id: str) -> None:
    """A session whose stored data is damaged fails to load: never a shorter or garbled context.

    The error is the store's own (chat-memory's is a typed one).

    Then loading the context fails, rather than leaving messages out
    """
    loading = Attempt()
    loading.make(lambda: memory.get_context(session_id), memory=memory)
    if loading.error is None:
        given = json.dumps(memory.get_context(session_id), ensure_ascii=False, indent=1)
        raise AssertionError(
            f"{_the_context(session_id)} loaded as if nothing were wrong:\n{given}"
        )


@then("the context is this JSON:")
@reads_json
def context_is_json(memory: MemoryService, session_id: str, docstring: str) -> None:
    """The context is exactly these chat-completions messages (for tool calls and names).

    Then the context is this JSON:
    """
    expect_text(_the_context(session_id), memory.get_context(session_id), json.loads(docstring))


@then(parsers.parse("the context within {tokens:d} tokens is:"))
@reads_table(*MESSAGE_COLUMNS)
@requires("token_budget")
def context_within_is(
    memory: MemoryService, session_id: str, tokens: int, datatable: Sequence[Sequence[str]]
) -> None:
    """The newest messages that fit this many tokens, as the memory counts them, are these.

    Then the context within 13 tokens is:
    """
    expect_messages(
        _the_context(session_id),
        memory.get_context(session_id, max_tokens=tokens),
        messages(datatable),
    )


@then("the session's messages, with their ids and times, are this JSON:")
@reads_json
@requires("message_ids", "timestamps")
def messages_with_ids_are(memory: MemoryService, session_id: str, docstring: str) -> None:
    """The session's stored messages as the app reads them back, ids and times included.

    Then the session's messages, with their ids and times, are this JSON:
    """
    actual = [
        m.to_chat() | {"id": m.id, "created_at": m.created_at}
        for m in memory.get_messages(session_id)
    ]
    expect_text(f'the messages of session "{session_id}"', actual, json.loads(docstring))


@then(parsers.re(r'the session\'s messages have the ids (?P<ids>"[^"]+"(?:(?:, | and )"[^"]+")*)'))
@requires("message_ids")
def messages_have_ids(memory: MemoryService, session_id: str, ids: str) -> None:
    """The session's messages, as the app reads them back, carry these ids, oldest first.

    Then the session's messages have the ids "s-1", "u-1", "a-1" and "t-1"
    """
    expected = ids.strip('"').replace('" and "', '", "').split('", "')
    expect_text(
        f'the ids of the messages of session "{session_id}"',
        [m.id for m in memory.get_messages(session_id)],
        expected,
    )


@then(parsers.parse('loading the context fails, naming entry {number:d} as corrupt: "{reason}"'))
@requires("typed_errors")
def context_fails_on_corrupt_entry_because(
    memory: MemoryService, session_id: str, number: int, reason: str
) -> None:
    """A stored entry that cannot be read is reported with the session, its position and why.

    The reason is found in the error's (which may quote a parser's own words).

    Then loading the context fails, naming entry 1 as corrupt: "not valid UTF-8 JSON"
    """
    _context_fails(memory, session_id, number, reason, whole=False)


@then(
    parsers.parse(
        'loading the context fails, naming entry {number:d} as corrupt: "{reason}", word for word'
    )
)
@requires("typed_errors")
def context_fails_on_corrupt_entry_word_for_word(
    memory: MemoryService, session_id: str, number: int, reason: str
) -> None:
    """As the step above, the reason read whole: chat-memory's own words, nothing more.

    Then loading the context fails, naming entry 1 as corrupt: "expected a JSON object, got list", word for word
    """
    _context_fails(memory, session_id, number, reason, whole=True)


def _context_fails(
    memory: MemoryService, session_id: str, number: int, reason: str, *, whole: bool
) -> None:
    with pytest.raises(CorruptEntryError) as failure:
        memory.get_context(session_id)
    expect_corrupt_entry(failure.value, session_id, number)
    error = failure.value
    if whole:
        assert error.reason == reason, f"the reason given is: {error.reason}"
    assert reason in error.reason, f"the reason given is: {error.reason}"
    assert reason in str(error), str(error)


def expect_corrupt_entry(error: BaseException | None, session_id: str, number: int) -> None:
    """``error`` reports entry ``number`` (counted from 1) of ``session_id`` as corrupt."""
    assert isinstance(error, CorruptEntryError), f"not a corrupt-entry error: {error!r}"
    assert (error.session_id, error.position + 1) == (session_id, number), str(error)
    assert session_id in str(error), str(error)


def _the_context(session_id: str) -> str:
    return f'the context of session "{session_id}"'
