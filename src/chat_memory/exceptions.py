"""The one exception hierarchy of chat-memory.

Every error the library raises on purpose derives from :class:`ChatMemoryError`::

    ChatMemoryError
    ├── InvalidInputError (also ValueError)   bad input or settings; nothing was written
    │   ├── InvalidSessionIdError
    │   ├── InvalidRoleError
    │   ├── InvalidContentError                incl. text that is not valid UTF-8 (lone surrogates)
    │   ├── MessageTooLargeError
    │   ├── MessageIdConflictError             an id already stored with other content
    │   ├── SessionExistsError                 an import into a session in use, without append
    │   └── PromptTooLargeError                the system prompt and new message exceed the budget
    ├── CorruptEntryError                      a stored entry cannot be decoded
    ├── CorruptMetadataError                   a session's stored metadata cannot be decoded
    ├── SessionChangedError                    the session kept changing; nothing was removed
    │   └── CompactionConflictError            ... while being compacted; nothing was folded
    ├── ReplyNotStoredError                    the model answered, the turn could not be stored
    └── StorageError                           Redis failed; see ``may_have_written``
        ├── StorageUnavailableError            Redis refused or was unreachable; nothing written
        │   ├── PermissionDeniedError          the Redis user may not run a command or touch a key
        │   ├── ScriptingUnavailableError      the server (or a proxy) cannot run Lua scripts
        │   └── WrongKeyTypeError              a session key holds another type of value
        ├── WriteOutcomeUnknownError           the write may or may not have happened
        │   └── NotReplicatedError             stored on the primary, too few replicas confirmed
        └── PartialWriteError                  stored, but Redis refused a later part of the write

Every exception redis-py raises (cluster ones included) and every encoding
error is wrapped: a :class:`ChatMemoryError` whose ``__cause__`` is the
original exception. Nothing is swallowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._message import Message

__all__ = [
    "ChatMemoryError",
    "CompactionConflictError",
    "CorruptEntryError",
    "CorruptMetadataError",
    "InvalidContentError",
    "InvalidInputError",
    "InvalidRoleError",
    "InvalidSessionIdError",
    "MessageIdConflictError",
    "MessageTooLargeError",
    "NotReplicatedError",
    "PartialWriteError",
    "PermissionDeniedError",
    "PromptTooLargeError",
    "ReplyNotStoredError",
    "ScriptingUnavailableError",
    "SessionChangedError",
    "SessionExistsError",
    "StorageError",
    "StorageUnavailableError",
    "WriteOutcomeUnknownError",
    "WrongKeyTypeError",
]


class ChatMemoryError(Exception):
    """Base class of every error chat-memory raises on purpose."""


class InvalidInputError(ChatMemoryError, ValueError):
    """The caller passed something the memory refuses; nothing was written."""


class InvalidSessionIdError(InvalidInputError):
    """A session id is not a string, is empty, or is longer than allowed."""


class InvalidRoleError(InvalidInputError):
    """A message's role is not one of system, user, assistant or tool."""


class InvalidContentError(InvalidInputError):
    """A message's content (or one of its tool fields) has the wrong type or shape."""


class MessageTooLargeError(InvalidInputError):
    """A message's encoded size exceeds the configured maximum.

    ``role``, ``size`` (bytes once encoded for storage) and ``limit`` say
    which message and by how much; nothing of the call was written.
    """

    def __init__(self, role: str, size: int, limit: int) -> None:
        """Name the message's role, its encoded size and the limit it exceeds."""
        super().__init__(f"a {role} message encodes to {size} bytes, over the limit of {limit}")
        self.role = role
        self.size = size
        self.limit = limit


class MessageIdConflictError(InvalidInputError):
    """A message id the session already holds was sent again with other content.

    A retry must resend the same message; nothing of the call was written.
    ``message_id`` is the conflicting id.
    """

    def __init__(self, message_id: str) -> None:
        """Name the id that is already stored with other content."""
        super().__init__(
            f"message id {message_id!r} is already stored with other content;"
            " nothing of this write was stored"
        )
        self.message_id = message_id


class PromptTooLargeError(InvalidInputError):
    """The system prompt and the new message alone exceed the prompt's token budget."""


class CorruptEntryError(ChatMemoryError):
    """A stored entry of a session cannot be decoded.

    The context is never returned shortened or empty in that case: the caller
    learns which session and which entry (0-based position, oldest first) is bad.
    """

    def __init__(self, session_id: str, position: int, reason: str) -> None:
        """Describe the bad entry at ``position`` of ``session_id``."""
        super().__init__(
            f"session {session_id!r}: stored entry {position} cannot be decoded: {reason}"
        )
        self.session_id = session_id
        self.position = position
        self.reason = reason


class SessionExistsError(InvalidInputError):
    """An import into a session that already holds messages or metadata, without ``append``."""


class SessionChangedError(ChatMemoryError):
    """The session kept changing while a read-then-write of it was tried; nothing was changed.

    Every attempt found another write between reading the session and changing
    it (e.g. :meth:`~chat_memory.MemoryService.pop_message` found a newer message).
    """


class CompactionConflictError(SessionChangedError):
    """The session kept changing while it was being compacted; nothing was folded.

    Every attempt found a message appended (or the history otherwise changed)
    between reading the session and folding it, so the summary was not stored.
    """


class CorruptMetadataError(ChatMemoryError):
    """A session's stored metadata cannot be read as a JSON object.

    ``session_id`` names the session and ``reason`` says what is wrong. A
    listing raises it too for an entry of the user's index that is not a
    session id as chat-memory writes it (another program's), named as stored:
    a name the API cannot address.
    """

    def __init__(self, session_id: str, reason: str) -> None:
        """Name the session and the problem."""
        super().__init__(f"session {session_id!r}: its metadata cannot be decoded: {reason}")
        self.session_id = session_id
        self.reason = reason


class ReplyNotStoredError(ChatMemoryError):
    """The model answered, but the turn (question and answer) could not be stored.

    ``reply`` is the model's answer, so the caller can still show it;
    ``messages`` is the turn as it was to be stored, ids included, for a safe
    retry with ``add_messages``; ``__cause__`` is the reason (an answer that
    cannot be stored, such as text that is not UTF-8, or a
    :class:`StorageError`), and ``may_have_written`` is that reason's. A model
    that returns something other than text or an assistant Message raises
    :class:`InvalidContentError` instead: there is no reply to show.
    """

    def __init__(self, reply: str | Message, messages: Sequence[Message], cause: Exception) -> None:
        """Keep the reply and the turn that could not be stored."""
        super().__init__(f"the model answered, but the turn could not be stored: {cause}")
        self.reply = reply
        self.messages: list[Message] = list(messages)
        self.may_have_written: bool = getattr(cause, "may_have_written", False)


class StorageError(ChatMemoryError):
    """Redis failed or refused a command.

    ``may_have_written`` tells the caller whether the failed call could have
    changed the stored history (True only for writes whose outcome is unknown).
    """

    may_have_written: bool = False


class StorageUnavailableError(StorageError):
    """Redis could not be reached or refused the command; nothing was written."""

    may_have_written = False


class PermissionDeniedError(StorageUnavailableError):
    """The Redis user may not run a command the memory needs, or touch one of its keys.

    Nothing was written: a service's first append checks every command the
    script will run before its first write, and a later one undoes its push when
    the message's id cannot be remembered (``ACL SETUSER`` in the README lists
    every command). A refusal after both is a :class:`PartialWriteError`.
    """


class ScriptingUnavailableError(StorageUnavailableError):
    """The server, or a proxy in front of it, cannot run Lua scripts; nothing was written.

    Every write of chat-memory (and some reads) is one Lua script, sent with
    ``EVALSHA``. A server or proxy that answers it as an unknown command ran
    nothing: plain ``fakeredis`` without its ``lua`` extra, a server with
    scripting renamed away, a proxy that does not pass scripts through.
    """


class WrongKeyTypeError(StorageUnavailableError):
    """A key of a session holds another type of value than the memory stores there.

    Something else wrote to the memory's keys; nothing was written. ``key`` is
    the key and ``key_type`` the Redis type found there (e.g. ``"hash"``).
    """

    def __init__(self, key: str, key_type: str) -> None:
        """Name the key and the type found there."""
        super().__init__(
            f"the key {key!r} holds a {key_type}, not what chat-memory stores there;"
            " nothing was written"
        )
        self.key = key
        self.key_type = key_type


class WriteOutcomeUnknownError(StorageError):
    """A write was sent but no answer came back: it may or may not have happened.

    ``messages`` are the messages of the failed append, ids included: passing
    them to ``add_messages`` again is safe, since an id already stored is not
    appended twice.
    """

    may_have_written = True

    def __init__(self, description: str, messages: Sequence[Message] = ()) -> None:
        """Describe the failed write and keep its messages for a retry."""
        super().__init__(description)
        self.messages: list[Message] = list(messages)


class PartialWriteError(StorageError):
    """The messages were stored, but Redis refused a write the append makes after them.

    A service checks every permission of an append before its first write (Redis 7
    and newer; on the server that took it), then takes a shorter way that asks none
    in advance. A permission missing on another server (another cluster node, a
    replica promoted by a failover) or revoked from the Redis user since is found by
    the write it refuses: a refused push writes nothing, and a push whose id is
    refused is undone, both reported as :class:`PermissionDeniedError` (nothing
    was written); a refusal after them cannot be undone and is this error.
    ``unconfirmed`` says, with a durability setting, how many replicas confirmed
    the write when fewer than asked.
    ``command`` is the first command refused: ``lpop`` (the history is over its
    limit), ``hdel`` (ids of messages the limit dropped are still remembered),
    ``pexpire`` or ``persist`` (a key's expiry was not set). ``messages`` are
    stored, and sending them again is safe (``retry_is_safe``), except when the
    id itself could not be remembered (``hset``, whose undo was refused too).
    """

    may_have_written = True

    def __init__(
        self, command: str, messages: Sequence[Message] = (), *, unconfirmed: str | None = None
    ) -> None:
        """Name the refused command and keep the messages, which are stored.

        ``unconfirmed``: with a durability setting, how many replicas confirmed the
        write, when fewer than asked.
        """
        self.command = command
        self.retry_is_safe = command != "hset"
        if self.retry_is_safe:
            left = {
                "lpop": "the history is over its limit until an append may trim it",
                "hdel": "the ids of messages the history limit dropped are still remembered",
            }.get(command, "the session's expiry was not refreshed")
            outcome = (
                "the message is stored and its id remembered, so sending it again is safe,"
                f" but {left}"
            )
        else:
            outcome = (
                "the message is stored but its id is not remembered (undoing the push was"
                " refused too), and neither trimmed nor given its expiry: sending it again would"
                " store it twice"
            )
        replicas = ""
        if unconfirmed:
            replicas = f"; the write is {unconfirmed}: a failover now could lose it"
        super().__init__(
            f"Redis refused '{command}' after the append had written (a permission missing"
            " on this server, or revoked from the Redis user since the memory checked them;"
            f" see the README's ACL SETUSER line): {outcome}{replicas}"
        )
        self.unconfirmed = unconfirmed
        self.messages: list[Message] = list(messages)


class NotReplicatedError(WriteOutcomeUnknownError):
    """A write is stored on the primary, but fewer replicas confirmed it than asked.

    Raised only with a :class:`~chat_memory.Durability` setting, after Redis's
    ``WAIT`` counted ``confirmed`` of the ``wanted`` replicas within ``timeout``
    seconds. The write happened on the primary and reads there return it; a
    failover before the replicas catch up could lose it. For an append,
    retrying with the same message ids (``messages``, as for any
    :class:`WriteOutcomeUnknownError`) is safe: an id already stored is not
    appended again, and the retry waits for the replicas once more (it writes
    the session's expiry again, so that the wait covers the stored messages).
    ``reply`` is what the call would have returned for ``pop_message`` (the
    :class:`~chat_memory.Message` it removed), ``compact`` (its
    :class:`~chat_memory.CompactResult`), ``forget_user`` and ``import_session``
    (their :class:`~chat_memory.ForgetResult` and
    :class:`~chat_memory.ImportResult`: they go on with their other batches after
    one the replicas did not confirm), and what Redis answered for another write
    (clear, metadata). For an append, read ``messages``: its ``reply`` is the
    script's raw answer, or, for an append made in steps while its cluster slot
    migrates, the answer of the first step the replicas did not confirm.
    """

    def __init__(
        self,
        *,
        confirmed: int,
        wanted: int,
        timeout: float,
        reply: object = None,
        reason: str | None = None,
        messages: Sequence[Message] = (),
    ) -> None:
        """Say how many replicas confirmed the write, of how many asked for."""
        self.confirmed = confirmed
        self.wanted = wanted
        self.timeout = timeout
        self.reply = reply
        self.reason = reason
        retry = "; a retry with the same message ids is safe" if messages else ""
        super().__init__(
            f"the write is stored on the primary but {self.confirmation}: a failover now could"
            f" lose it{retry}",
            messages,
        )

    @property
    def confirmation(self) -> str:
        """What the replicas confirmed, in words: ``confirmed by 0 of 1 replica(s) within 1 s``."""
        why = f" ({self.reason})" if self.reason else ""
        return (
            f"confirmed by {self.confirmed} of {self.wanted} replica(s) within {self.timeout:g} s"
            f"{why}"
        )

    def with_messages(self, messages: Sequence[Message]) -> NotReplicatedError:
        """Return this error carrying the messages of the write, for a retry."""
        return self._but(reply=self.reply, messages=messages)

    def with_reply(self, reply: object) -> NotReplicatedError:
        """Return this error carrying what the call returns (e.g. the message it removed)."""
        return self._but(reply=reply, messages=self.messages)

    def _but(self, *, reply: object, messages: Sequence[Message]) -> NotReplicatedError:
        return NotReplicatedError(
            confirmed=self.confirmed,
            wanted=self.wanted,
            timeout=self.timeout,
            reply=reply,
            reason=self.reason,
            messages=messages,
        )


def check_whole_number(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` if it is an int (not a bool) from ``minimum`` to ``maximum``.

    Raise :class:`InvalidInputError` naming the setting otherwise.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        bounds = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise InvalidInputError(f"{name} must be a whole number {bounds}, not {value!r}")
    return value
