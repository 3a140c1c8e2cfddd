"""The one exception hierarchy of chat-memory.

Every error the library raises on purpose derives from :class:`ChatMemoryError`::

    ChatMemoryError
    ├── InvalidInputError (also ValueError)   bad input; nothing was written
    │   ├── InvalidSessionIdError
    │   ├── InvalidRoleError
    │   ├── InvalidContentError
    │   ├── MessageTooLargeError
    │   └── PromptTooLargeError                the system prompt and new message exceed the budget
    ├── CorruptEntryError                      a stored entry cannot be decoded
    └── StorageError                           Redis failed; see ``may_have_written``
        ├── StorageUnavailableError            nothing was written
        └── WriteOutcomeUnknownError           the write may or may not have happened

Redis errors are never leaked raw and never swallowed: they are wrapped in a
:class:`StorageError` whose ``__cause__`` is the original redis-py exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._message import Message

__all__ = [
    "ChatMemoryError",
    "CorruptEntryError",
    "InvalidContentError",
    "InvalidInputError",
    "InvalidRoleError",
    "InvalidSessionIdError",
    "MessageTooLargeError",
    "PromptTooLargeError",
    "StorageError",
    "StorageUnavailableError",
    "WriteOutcomeUnknownError",
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
    """A message's encoded size exceeds the configured maximum."""


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


class StorageError(ChatMemoryError):
    """Redis failed or refused a command.

    ``may_have_written`` tells the caller whether the failed call could have
    changed the stored history (True only for writes whose outcome is unknown).
    """

    may_have_written: bool = False


class StorageUnavailableError(StorageError):
    """Redis could not be reached or refused the command; nothing was written."""

    may_have_written = False


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


def check_whole_number(name: str, value: object, minimum: int) -> None:
    """Raise :class:`InvalidInputError` unless ``value`` is an int (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInputError(f"{name} must be a whole number >= {minimum}, not {value!r}")
