"""Steps about the context: what the model would be given for a session, right now.

Usage::

    Then the context is empty
    Then the context contains 3 messages
    Then the context is:
      | role      | content |
      | user      | 我叫张三 |
    Then the context of session "bob" is empty
    Then the context is messages 41 to 50 of the exchange

Each step loads the context afresh through the memory's public API and compares
whole values, so a failure shows what the model would have seen.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pytest_bdd import parsers, then

from chat_memory import CorruptEntryError, MemoryService

from ._compare import expect_count, expect_messages
from ._tables import MESSAGE_COLUMNS, exchange, messages, reads_table


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

    Then the context contains 3 messages
    """
    expect_count(_the_context(session_id), memory.get_context(session_id), count)


@then("the context is:")
@reads_table(*MESSAGE_COLUMNS)
def context_is(memory: MemoryService, session_id: str, datatable: Sequence[Sequence[str]]) -> None:
    """The session holds exactly these messages, oldest first.

    Then the context is:
    """
    expect_messages(_the_context(session_id), memory.get_context(session_id), messages(datatable))


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


@then(parsers.parse("loading the context fails, naming entry {number:d} as corrupt"))
def context_fails_on_corrupt_entry(memory: MemoryService, session_id: str, number: int) -> None:
    """A stored entry that cannot be read is reported, never dropped silently.

    Then loading the context fails, naming entry 2 as corrupt
    """
    with pytest.raises(CorruptEntryError) as failure:
        memory.get_context(session_id)
    assert (failure.value.session_id, failure.value.position + 1) == (session_id, number)


def _the_context(session_id: str) -> str:
    return f'the context of session "{session_id}"'
