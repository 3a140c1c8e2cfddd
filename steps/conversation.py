"""Steps about what is said in a session.

Usage::

    Given the user said "我叫张三"
    Given the assistant replied "你好张三，有什么事？"
    When the user says "我刚才说我叫什么？"
    When the user tries to say "are you there?"
    When the user and the assistant exchange 50 messages
    When the app sends a message with the role "wizard"
    Then the message is refused with the reason "over the limit"

Steps that start with "the app sends" expect a refusal: they keep the error
for a "Then the message is refused" step instead of failing the scenario.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    ChatMemoryError,
    CorruptEntryError,
    InvalidInputError,
    MemoryService,
    Message,
    MessageIdConflictError,
    MessageTooLargeError,
    NotReplicatedError,
    Role,
    StorageUnavailableError,
    ToolCall,
)
from chat_memory._codec import encode_for_storage
from chat_memory_suite.adapter import AdaptedMemory, requires
from chat_memory_suite.collect import NOT_SUPPORTED
from chat_memory_suite.compare import expect_text
from chat_memory_suite.tables import (
    MESSAGE_COLUMNS,
    exchange,
    messages,
    reads_json,
    reads_table,
    rows,
)

Reply = TypeVar("Reply")


class Attempt:
    """The outcome of a step that expects the memory to refuse a message, or to fail."""

    def __init__(self) -> None:
        """No attempt has been made yet."""
        self.error: Exception | None = None
        self.made = False
        self.seconds = 0.0
        self.messages: list[Message] = []
        """What the attempt sent to a store not ours, which the app keeps to send again."""

    def make(self, send: Callable[[], object], *, memory: object = None) -> None:
        """Run ``send``, keeping the memory's error instead of raising it, and timing it.

        chat-memory's errors are its typed ones; a store under test through an
        adapter (``memory``) raises its own, so any error the store itself raised is
        kept, but never one of the suite's code around it (a failed check, a reply of
        the wrong type).
        """
        self.made = True
        started = time.monotonic()
        try:
            send()
        except ChatMemoryError as exc:
            self.error = exc
        except Exception as exc:
            if not isinstance(memory, AdaptedMemory) or exc is not memory.raised:
                raise  # a failed check, or the suite's own code failing: never the store's
            self.error = exc
        finally:
            self.seconds = time.monotonic() - started

    def failure(
        self, memory: MemoryService, typed: type[Exception], within: float | None = None
    ) -> Exception:
        """The error the attempt got: chat-memory's ``typed`` one, or a store's own.

        With ``within``, it came in that many seconds at most. chat-memory's errors
        that changed nothing say so in their message too ("nothing was written", "sent",
        "read or written", "changed"). A store under test through an adapter fails with
        its own errors, which say no more than that it failed.
        """
        assert self.made, "no step tried to use the memory"
        assert self.error is not None, "the call succeeded, as if nothing were wrong"
        if within is not None:
            assert self.seconds <= within, f"the error took {self.seconds:.1f} seconds"
        if not isinstance(memory, AdaptedMemory):
            assert isinstance(self.error, typed), f"not a {typed.__name__}: {self.error!r}"
            if isinstance(self.error, StorageUnavailableError):  # what whoever reads the log sees
                assert "nothing was" in str(self.error), f"the error does not say so: {self.error}"
        return self.error

    def not_replicated(self, reply: type[Reply]) -> tuple[NotReplicatedError, Reply]:
        """The attempt's NotReplicatedError, confirmed by no replica, and the reply it hands back.

        The call did its work (the error carries what it would have returned, of type
        ``reply``) but no replica confirmed it in time.
        """
        error = self.error
        assert isinstance(error, NotReplicatedError), f"not a NotReplicatedError: {error!r}"
        assert error.confirmed == 0 < error.wanted, str(error)
        assert isinstance(error.reply, reply), f"the error hands back {error.reply!r}"
        return error, error.reply


@pytest.fixture
def attempt() -> Attempt:
    """The scenario's attempt to send something the memory should refuse."""
    return Attempt()


@pytest.fixture
def chat_turns() -> list[list[Any]]:
    """Every turn the app sent in the chat-completions shape, as JSON values, in order."""
    return []


@pytest.fixture
def sent() -> list[Message]:
    """Every message the scenario stored, as the memory returned it, in order."""
    return []


@pytest.fixture
def taken_back() -> list[Message | None]:
    """What the app took back from the session, in order (None: nothing was there)."""
    return []


def _say(memory: MemoryService, session_id: str, sent: list[Message], role: Any, text: str) -> None:
    if isinstance(memory, AdaptedMemory) and len(text.encode("utf-8")) > memory.largest_content:
        # A message larger than the memory states it takes: what it cannot represent.
        pytest.skip(
            f"{NOT_SUPPORTED}: needs messages larger than its max_message_bytes"
            f" ({memory.largest_content})"
        )
    sent.append(memory.add_message(session_id, role, text))


@given(parsers.parse('the user said "{text}"'))
@when(parsers.parse('the user says "{text}"'))
def user_says(memory: MemoryService, session_id: str, sent: list[Message], text: str) -> None:
    """The user sends one message in the current session.

    Given the user said "我叫张三"
    When the user says "four"
    """
    _say(memory, session_id, sent, "user", text)


@given(parsers.parse('the user tried to say "{text}"'))
@when(parsers.parse('the user tries to say "{text}"'))
def user_tries_to_say(memory: MemoryService, session_id: str, attempt: Attempt, text: str) -> None:
    """The user sends a message that may fail; the failure is kept for a Then step.

    Given the user tried to say "are you there?"
    When the user tries to say "are you there?"
    """
    if isinstance(memory, AdaptedMemory):  # the app keeps the message (and its id) to resend
        attempt.messages = [Message("user", text, id=f"m-{uuid.uuid4().hex}")]
        attempt.make(lambda: memory.add_messages(session_id, attempt.messages), memory=memory)
    else:
        attempt.make(lambda: memory.add_message(session_id, "user", text))


@given(parsers.parse('the user sent message "{message_id}" saying "{text}"'))
@when(parsers.parse('the user sends message "{message_id}" saying "{text}"'))
@requires("message_ids")
def user_says_with_id(
    memory: MemoryService, session_id: str, sent: list[Message], text: str, message_id: str
) -> None:
    """The user sends one message under an id the app chose (used to recognise retries).

    Given the user sent message "m-1" saying "hello"
    When the user sends message "m-1" saying "Book a table for two."
    """
    sent.append(memory.add_message(session_id, "user", text, message_id=message_id))


@given(parsers.parse('the assistant sent message "{message_id}" saying "{text}"'))
@requires("message_ids")
def assistant_says_with_id(
    memory: MemoryService, session_id: str, sent: list[Message], text: str, message_id: str
) -> None:
    """The assistant's answer, stored under an id the app chose.

    Given the assistant sent message "m-2" saying "Done: Friday at eight."
    """
    sent.append(memory.add_message(session_id, "assistant", text, message_id=message_id))


@given(parsers.parse('the assistant replied "{text}"'))
@when(parsers.parse('the assistant replies "{text}"'))
def assistant_replies(
    memory: MemoryService, session_id: str, sent: list[Message], text: str
) -> None:
    """The assistant answers in the current session.

    Given the assistant replied "你好张三，有什么事？"
    When the assistant replies "four"
    """
    _say(memory, session_id, sent, "assistant", text)


@given(parsers.re(r'the (?P<role>user|assistant|system) "(?P<name>[^"]+)" said "(?P<text>.*)"'))
@when(parsers.re(r'the (?P<role>user|assistant|system) "(?P<name>[^"]+)" says "(?P<text>.*)"'))
@requires("names")
def named_writer_said(
    memory: MemoryService, session_id: str, sent: list[Message], role: str, name: str, text: str
) -> None:
    """Someone named wrote a message: one of several users in a group chat, or a named assistant.

    Given the user "ann" said "Shall we meet at noon?"
    When the assistant "planner" says "Booked: Friday at noon."
    """
    sent.append(memory.add_message(session_id, cast(Role, role), text, name=name))


@given("the session remembers:")
@when("these messages are stored in one write:")
@reads_table(*MESSAGE_COLUMNS)
def session_remembers(
    memory: MemoryService, session_id: str, sent: list[Message], datatable: list[list[str]]
) -> None:
    """The session already holds these messages, oldest first; they were stored in one write.

    Given the session remembers:
    When these messages are stored in one write:
    """
    sent.extend(memory.add_messages(session_id, messages(datatable)))


@when("these messages are stored in one write, as this JSON:")
@reads_json
@requires("message_ids")
def messages_stored_as_json(
    memory: MemoryService, session_id: str, sent: list[Message], docstring: str
) -> None:
    """The app stores chat-completions messages, given whole: ids, tool calls and all.

    When these messages are stored in one write, as this JSON:
    """
    sent.extend(memory.add_messages(session_id, json.loads(docstring)))


@when("the app stores these messages it kept elsewhere, with the times they were sent:")
@reads_table("role", "content", "sent at")
@requires("timestamps")
def stores_messages_kept_elsewhere(
    memory: MemoryService, session_id: str, sent: list[Message], datatable: list[list[str]]
) -> None:
    """The app brings a conversation over from another store: times kept there, and no ids.

    The times are written as in "the time is ...": 2026-11-30 09:00:05 UTC.

    When the app stores these messages it kept elsewhere, with the times they were sent:
    """
    kept = [
        Message(cast(Role, row["role"]), row["content"], created_at=_utc(row["sent at"]))
        for row in rows(datatable, ("role", "content", "sent at"))
    ]
    sent.extend(memory.add_messages(session_id, kept))


@then("the session's messages, each with an id of its own, were sent at:")
@reads_table("content", "sent at")
@requires("message_ids", "timestamps")
def messages_sent_at(memory: MemoryService, session_id: str, datatable: list[list[str]]) -> None:
    """The session's messages, oldest first, at these times; each has an id no other has.

    Then the session's messages, each with an id of its own, were sent at:
    """
    stored = memory.get_messages(session_id)
    expect_text(
        f'the times of the messages of session "{session_id}"',
        [{"content": m.content, "sent at": _written(m.created_at)} for m in stored],
        rows(datatable, ("content", "sent at")),
    )
    ids = [m.id for m in stored]
    assert all(isinstance(i, str) and i for i in ids), f"messages without an id: {ids}"
    assert len(set(ids)) == len(ids), f"ids given twice: {ids}"


def _utc(moment: str) -> float:
    """Unix time of a moment written as in a scenario: 2026-11-30 09:00:05 UTC."""
    return datetime.fromisoformat(moment.removesuffix(" UTC")).replace(tzinfo=UTC).timestamp()


def _written(seconds: float | None) -> str:
    """A stored time as a scenario writes it (whole seconds): 2026-11-30 09:00:05 UTC."""
    if seconds is None:
        return "no time"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@given(parsers.parse('the assistant called the tool "{name}" with the arguments {arguments}'))
@requires("tool_calls")
def assistant_called_tool(
    memory: MemoryService, session_id: str, sent: list[Message], name: str, arguments: str
) -> None:
    """The assistant asked for a tool call; calls are numbered in the scenario: call-1, call-2, ...

    The arguments are the JSON text the model produced, kept verbatim.

    Given the assistant called the tool "weather" with the arguments {"city": "Paris"}
    """
    number = 1 + sum(len(m.tool_calls) for m in sent)
    call = ToolCall(id=f"call-{number}", name=name, arguments=arguments)
    sent.append(memory.add_message(session_id, "assistant", None, tool_calls=[call]))


@given(parsers.parse('the tool "{name}" answered "{text}"'))
@requires("tool_calls")
def tool_answered(
    memory: MemoryService, session_id: str, sent: list[Message], name: str, text: str
) -> None:
    """The tool's result for the assistant's latest call of that tool.

    It is stored as a tool message with that call's id (`tool_call_id`) and the
    tool's name (`name`), and reaches prompts with both.

    Given the tool "weather" answered "18°C and sunny"
    """
    call = next(c for m in reversed(sent) for c in m.tool_calls if c.name == name)
    sent.append(memory.add_message(session_id, "tool", text, tool_call_id=call.id, name=name))


@when(parsers.re(r"the (?P<role>user|assistant) sends an empty message"))
def sends_empty(memory: MemoryService, session_id: str, sent: list[Message], role: str) -> None:
    """The user, or the assistant, sends a message with no text (stored like any other).

    When the user sends an empty message
    """
    _say(memory, session_id, sent, role, "")


@when(
    parsers.parse("the user pastes a document of {length:d} characters"),
    target_fixture="document",
)
def user_pastes_document(
    memory: MemoryService, session_id: str, sent: list[Message], length: int
) -> str:
    """The user sends one very long message of mixed scripts.

    When the user pastes a document of 100000 characters
    """
    pattern = 'Ada Lovelace 我叫张三 👋🏽 "quoted" \\back\\slash\n'
    document = (pattern * (length // len(pattern) + 1))[:length]
    _say(memory, session_id, sent, "user", document)
    return document


def _largest_content(memory: MemoryService) -> tuple[Message, str]:
    """The user's message with the largest content the memory takes, and that content.

    An adapted memory states its largest content in UTF-8 bytes (1 MiB when it states
    none); chat-memory's own service limits the stored entry, JSON and all, so the
    content is what fills the entry to exactly ``max_message_bytes``.
    """
    message = Message("user", "", id=uuid.uuid4().hex, created_at=time.time())
    if isinstance(memory, AdaptedMemory):
        size = memory.largest_content
    else:
        size = memory.max_message_bytes - len(encode_for_storage(message).entry)
    pattern = "Ada Lovelace 我叫张三 👋🏽 pasted, kept whole. "
    pattern_bytes = len(pattern.encode("utf-8"))
    content = pattern * (size // pattern_bytes)
    while len(content.encode("utf-8")) < size:  # the rest in one-byte letters
        content += "a"
    return dataclasses.replace(message, content=content), content


@when("the user sends a message as large as the memory takes", target_fixture="document")
def user_sends_largest(memory: MemoryService, session_id: str, sent: list[Message]) -> str:
    """One message exactly as large as the memory says it takes, of mixed scripts.

    That is the content size an adapter states in ``max_message_bytes`` (1 MiB if it
    states none), or for chat-memory's own service the content that makes its stored
    entry exactly ``max_message_bytes`` long.

    When the user sends a message as large as the memory takes
    """
    message, content = _largest_content(memory)
    sent.extend(memory.add_messages(session_id, [message]))
    return content


@when(parsers.parse("the user sends the JSON string {text}"), target_fixture="said")
def user_sends_json_string(
    memory: MemoryService, session_id: str, sent: list[Message], text: str
) -> str:
    r"""The user's message, written as a JSON string so that every invisible character shows.

    ``\t`` is a tab, ``\r\n`` a Windows line end, ``\u00a0`` a no-break space.

    When the user sends the JSON string "   indented, and trailing   "
    """
    said = json.loads(text)
    assert isinstance(said, str), f"not a JSON string: {text}"
    _say(memory, session_id, sent, "user", said)
    return said


@given(parsers.parse("the user and the assistant exchanged {count:d} messages"))
@when(parsers.parse("the user and the assistant exchange {count:d} messages"))
def exchange_messages(
    memory: MemoryService, session_id: str, sent: list[Message], count: int
) -> None:
    """The user and the assistant take turns, one write per message ("message 1", ...).

    Given the user and the assistant exchanged 3 messages
    When the user and the assistant exchange 50 messages
    """
    for message in exchange(count):
        _say(memory, session_id, sent, message["role"], message["content"])


@given(
    parsers.parse('{count:d} users each said "{text}" in a session of their own'),
    target_fixture="crowd_sessions",
)
def users_each_said(memory: MemoryService, count: int, text: str) -> list[str]:
    """Many users each send one message, each in a session of their own ("user-1", ...).

    Given 30 users each said "hello" in a session of their own
    """
    sessions = [f"user-{n}" for n in range(1, count + 1)]
    for session in sessions:
        memory.add_message(session, "user", text)
    return sessions


@when("the last message is sent again")
@requires("message_ids")
def last_message_sent_again(memory: MemoryService, session_id: str, sent: list[Message]) -> None:
    """The app retries its last write (e.g. after a timeout), with the same message id.

    When the last message is sent again
    """
    memory.add_messages(session_id, [sent[-1]])


@when(parsers.re(r'messages? (?P<ids>"[^"]+"(?:(?:, | and )"[^"]+")*) (?:is|are) sent again'))
@requires("message_ids")
def messages_sent_again(
    memory: MemoryService, session_id: str, sent: list[Message], ids: str
) -> None:
    """The app retries earlier writes, by their message ids, as one write.

    When messages "m-1" and "m-2" are sent again
    """
    wanted = ids.strip('"').replace('" and "', '", "').split('", "')
    by_id = {m.id: m for m in sent}
    memory.add_messages(session_id, [by_id[message_id] for message_id in wanted])


@when(
    parsers.re(r"the app sends the last (?P<count>\d+) messages? again, as chat messages"),
    converters={"count": int},
)
@requires("message_ids")
def app_resends_as_chat(
    memory: MemoryService, session_id: str, sent: list[Message], count: int
) -> None:
    """The app retries a turn in the chat-completions shape (dicts with their ids).

    When the app sends the last 2 messages again, as chat messages
    """
    turn = [m.to_chat() | {"id": m.id} for m in sent[-count:]]
    memory.add_messages(session_id, turn)


@when(parsers.parse('the app sends message "{message_id}" saying "{text}"'))
@requires("message_ids")
def app_sends_with_id(
    memory: MemoryService, session_id: str, attempt: Attempt, message_id: str, text: str
) -> None:
    """The app tries to store a user message under an id the session already holds.

    When the app sends message "m-1" saying "Cancel my booking."
    """
    attempt.make(
        lambda: memory.add_message(session_id, "user", text, message_id=message_id),
        memory=memory,
    )


@then("the message is refused as another message under a stored id")
@requires("message_ids")
def refused_as_id_conflict(memory: MemoryService, attempt: Attempt) -> None:
    """An id stands for one message: other content under it is refused, not stored or dropped.

    chat-memory refuses it with a MessageIdConflictError; a store not ours, with its own error.

    Then the message is refused as another message under a stored id
    """
    error = attempt.failure(memory, MessageIdConflictError)
    if not isinstance(memory, AdaptedMemory):
        assert "already stored with other content" in str(error), str(error)


@when(parsers.parse('the app sends a message with the role "{role}"'))
@requires("typed_errors")
def app_sends_role(memory: MemoryService, session_id: str, attempt: Attempt, role: str) -> None:
    """The app tries to store a message whose role the memory should refuse.

    When the app sends a message with the role "wizard"
    """
    attempt.make(lambda: memory.add_message(session_id, role, "hello"))  # type: ignore[arg-type]


@when(parsers.parse("the app sends a message whose content is the number {number:d}"))
@requires("typed_errors")
def app_sends_number(memory: MemoryService, session_id: str, attempt: Attempt, number: int) -> None:
    """The app tries to store a message whose content is not text.

    When the app sends a message whose content is the number 42
    """
    attempt.make(lambda: memory.add_message(session_id, "user", number))  # type: ignore[arg-type]


@when(parsers.parse("the app sends a message of {length:d} characters"))
@requires("typed_errors")
def app_sends_long(memory: MemoryService, session_id: str, attempt: Attempt, length: int) -> None:
    """The app tries to store a message longer than the memory accepts.

    When the app sends a message of 2000000 characters
    """
    attempt.make(lambda: memory.add_message(session_id, "user", "x" * length))


@when(
    parsers.re(
        r"the app sends a message whose stored form is"
        r" (?P<where>exactly|one byte over) the size limit"
    )
)
@requires("client_settings", "typed_errors", "message_ids", "timestamps")
def app_sends_message_at_size_limit(
    memory: MemoryService, session_id: str, attempt: Attempt, where: str
) -> None:
    """The app sends a message whose stored entry is exactly the limit, or one byte more.

    The entry's overhead (its id, time and field names) is learnt from the
    size the memory's refusal of a message certainly too long reports, so the
    boundary is exact whatever the entry format.

    When the app sends a message whose stored form is exactly the size limit
    """
    limit = memory.max_message_bytes

    def message(length: int) -> Message:
        return Message("user", "x" * length, id="m-1", created_at=1796205600.0)

    with pytest.raises(MessageTooLargeError) as probe:
        memory.add_messages(session_id, [message(limit + 1)])
    overhead = probe.value.size - (limit + 1)
    length = limit - overhead + (1 if where == "one byte over" else 0)
    attempt.make(lambda: memory.add_messages(session_id, [message(length)]))


@when(parsers.parse("the app sends a message to a session whose id is {length:d} characters long"))
@requires("typed_errors")
def app_sends_to_long_session(memory: MemoryService, attempt: Attempt, length: int) -> None:
    """The app tries to store a message under a session id longer than allowed.

    When the app sends a message to a session whose id is 300 characters long
    """
    attempt.make(lambda: memory.add_message("s" * length, "user", "hello"))


@when("the app sends a message to a session with an empty id")
@requires("typed_errors")
def app_sends_to_empty_session(memory: MemoryService, attempt: Attempt) -> None:
    """The app tries to store a message without saying which session it belongs to.

    When the app sends a message to a session with an empty id
    """
    attempt.make(lambda: memory.add_message("", "user", "hello"))


@then(parsers.parse('the message is refused with the reason "{reason}"'))
@requires("typed_errors")
def message_refused(attempt: Attempt, reason: str) -> None:
    """The memory refused the message with a clear, typed error.

    Then the message is refused with the reason "over the limit"
    """
    assert reason in str(_refusal(attempt)), f"the refusal says {str(attempt.error)!r}"


@then(parsers.parse('the message is refused with the reason "{reason}", word for word'))
@requires("typed_errors")
def message_refused_word_for_word(attempt: Attempt, reason: str) -> None:
    """The memory refused the message with a typed error that says exactly this, and no more.

    Then the message is refused with the reason "tool_calls must be a list", word for word
    """
    said = str(_refusal(attempt))
    assert said == reason, f"the refusal says {said!r}"


def _refusal(attempt: Attempt) -> InvalidInputError:
    assert attempt.made, "no step tried to send a message that should be refused"
    assert attempt.error is not None, "the message was accepted"
    assert isinstance(attempt.error, InvalidInputError), f"not a refusal: {attempt.error!r}"
    assert isinstance(attempt.error, ValueError)
    return attempt.error


@when(parsers.parse("the app sends the chat message {message}"))
def app_sends_chat_message(
    memory: MemoryService, session_id: str, attempt: Attempt, message: str
) -> None:
    """The app sends one message in the chat-completions shape, written as JSON.

    When the app sends the chat message "hello"
    """
    attempt.make(lambda: memory.add_messages(session_id, [json.loads(message)]))


@given("the app sent these chat messages:")
@when("the app sends these chat messages:")
@reads_json
def app_sends_chat_messages(
    memory: MemoryService, session_id: str, chat_turns: list[list[Any]], docstring: str
) -> None:
    """The app stores a turn given as a JSON list of chat-completions messages.

    Given the app sent these chat messages:
    When the app sends these chat messages:
    """
    turn = json.loads(docstring)
    chat_turns.append(turn)
    memory.add_messages(session_id, turn)


@when("the app tries to send these chat messages:")
@reads_json
@requires("typed_errors")
def app_tries_chat_messages(
    memory: MemoryService, session_id: str, attempt: Attempt, docstring: str
) -> None:
    """The app tries to store a turn of chat-completions messages that should be refused.

    When the app tries to send these chat messages:
    """
    attempt.make(lambda: memory.add_messages(session_id, json.loads(docstring)))


@then(parsers.parse('the refusal names the message id "{message_id}"'))
@requires("typed_errors")
def refusal_names_id(attempt: Attempt, message_id: str) -> None:
    """The refusal is a MessageIdConflictError carrying the id stored with other content.

    Then the refusal names the message id "m-2"
    """
    assert isinstance(attempt.error, MessageIdConflictError), f"not a conflict: {attempt.error!r}"
    assert attempt.error.message_id == message_id, f"it names {attempt.error.message_id!r}"


@then(
    parsers.parse(
        "the refusal names a {role} message of {size:d} bytes, over the limit of {limit:d}"
    )
)
@requires("typed_errors")
def refusal_names_size(attempt: Attempt, role: str, size: int, limit: int) -> None:
    """The refusal is a MessageTooLargeError whose fields say which message and by how much.

    Then the refusal names a user message of 301 bytes, over the limit of 300
    """
    error = attempt.error
    assert isinstance(error, MessageTooLargeError), f"not a size refusal: {error!r}"
    found = (error.role, error.size, error.limit)
    assert found == (role, size, limit), f"it names (role, size, limit) {found}"


@when("the app sends the same chat messages again")
@requires("message_ids")
def app_resends_chat_messages(
    memory: MemoryService, session_id: str, chat_turns: list[list[Any]]
) -> None:
    """The app retries its last JSON turn, exactly as it sent it (ids included).

    When the app sends the same chat messages again
    """
    assert chat_turns, "no step sent chat messages before"
    memory.add_messages(session_id, chat_turns[-1])


@when(parsers.parse("the app sends {count:d} messages in one call"))
@requires("client_settings", "typed_errors")
def app_sends_many_in_one_call(
    memory: MemoryService, session_id: str, attempt: Attempt, count: int
) -> None:
    """The app stores this many messages in one call (a long turn of tool calls, say).

    When the app sends 21 messages in one call
    """
    batch = [Message("user", f"message {n}") for n in range(1, count + 1)]
    attempt.make(lambda: memory.add_messages(session_id, batch))


@when(parsers.parse('the app sends two messages under the id "{message_id}" in one call'))
@requires("message_ids", "typed_errors")
def app_sends_one_id_twice(
    memory: MemoryService, session_id: str, attempt: Attempt, message_id: str
) -> None:
    """The app stores two messages in one call and gives both the same id.

    When the app sends two messages under the id "m-1" in one call
    """
    batch = [Message("user", "one", id=message_id), Message("user", "two", id=message_id)]
    attempt.make(lambda: memory.add_messages(session_id, batch))


@when(parsers.parse("the app sends a message whose id is {length:d} characters long"))
@requires("message_ids")
def app_sends_long_id(
    memory: MemoryService, session_id: str, attempt: Attempt, length: int
) -> None:
    """The app stores a message under an id of this length (the memory takes up to 128).

    When the app sends a message whose id is 128 characters long
    """
    attempt.make(lambda: memory.add_message(session_id, "user", "hello", message_id="i" * length))


@then("the message is accepted")
def message_accepted(attempt: Attempt) -> None:
    """The message the app sent was stored without an error.

    Then the message is accepted
    """
    assert attempt.made, "no step tried to send a message"
    assert attempt.error is None, f"the message was refused: {attempt.error}"


@then(parsers.parse('message "{message_id}" is stored once, sent at {moment:ti} UTC'))
@requires("message_ids", "timestamps")
def stored_once_at(
    memory: MemoryService, session_id: str, sent: list[Message], message_id: str, moment: datetime
) -> None:
    """The session holds the message once, at its first time; every send had that answer.

    A retry is answered with the stored version, whatever time it was sent again.

    Then message "m-1" is stored once, sent at 2026-12-02 10:00:00 UTC
    """
    first = moment.replace(tzinfo=UTC).timestamp()
    stored = [m.created_at for m in memory.get_messages(session_id) if m.id == message_id]
    answered = [m.created_at for m in sent if m.id == message_id]
    assert stored == [first], f"stored at {stored}, not once at {first}"
    assert answered, f'no step sent message "{message_id}"'
    assert set(answered) == {first}, f"the sends were answered with {answered}"


@given("the app took back the newest message")
@when("the app takes back the newest message")
@requires("pop_message")
def app_takes_back(
    memory: MemoryService, session_id: str, taken_back: list[Message | None]
) -> None:
    """The app removes the session's newest message (to correct or retry its last turn).

    Given the app took back the newest message
    When the app takes back the newest message
    """
    taken_back.append(memory.pop_message(session_id))


@when("the app tries to take back the newest message")
@requires("pop_message")
def app_tries_to_take_back(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app removes the session's newest message; a failure is kept for a Then step.

    When the app tries to take back the newest message
    """
    attempt.make(lambda: memory.pop_message(session_id))


@then(parsers.parse('the message taken back says "{text}"'))
@requires("pop_message")
def message_taken_back_says(taken_back: list[Message | None], text: str) -> None:
    """The memory handed back the message it removed, with its text.

    Then the message taken back says "For how many?"
    """
    assert taken_back, "no step took a message back"
    assert taken_back[-1] is not None, "nothing was taken back"
    assert taken_back[-1].content == text


@then(parsers.parse("taking back the newest message fails, naming entry {number:d} as corrupt"))
@requires("pop_message", "typed_errors")
def taking_back_fails_on_corrupt_entry(memory: MemoryService, session_id: str, number: int) -> None:
    """A newest entry that cannot be read is reported, and stays: never removed unread.

    Then taking back the newest message fails, naming entry 1 as corrupt
    """
    _taking_back_fails(memory, session_id, number, reason="")


@then(
    parsers.parse(
        'taking back the newest message fails, naming entry {number:d} as corrupt: "{reason}"'
    )
)
@requires("pop_message", "typed_errors")
def taking_back_fails_on_corrupt_entry_because(
    memory: MemoryService, session_id: str, number: int, reason: str
) -> None:
    """The same, with why the entry cannot be read.

    Then taking back the newest message fails, naming entry 2 as corrupt: "not valid UTF-8 JSON"
    """
    _taking_back_fails(memory, session_id, number, reason=reason)


def _taking_back_fails(memory: MemoryService, session_id: str, number: int, reason: str) -> None:
    for attempt in ("first", "second"):  # the second finds the same entry: nothing was removed
        with pytest.raises(CorruptEntryError) as failure:
            memory.pop_message(session_id)
        error = failure.value
        where = (error.session_id, error.position + 1)
        assert where == (session_id, number), f"{attempt} attempt: {error}"
        assert reason in error.reason, f"{attempt} attempt: the reason given is {error.reason}"
        assert session_id in str(error), str(error)


@then("nothing was taken back")
@requires("pop_message")
def nothing_taken_back(taken_back: list[Message | None]) -> None:
    """The session had no message to take back, and the memory said so.

    Then nothing was taken back
    """
    assert taken_back == [None]
