"""Frozen, typed messages and the validation every message passes before it is stored."""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, cast, get_args

from .exceptions import InvalidContentError, InvalidRoleError

__all__ = ["MAX_ID_CHARS", "ROLES", "Message", "Role", "ToolCall", "stored_message"]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
"""The roles a message may have, as the chat-completions API names them."""

ROLES: Final[frozenset[str]] = frozenset(get_args(Role))

MAX_ID_CHARS: Final = 128


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call an assistant message asks for.

    ``arguments`` is the JSON text the model produced, kept verbatim.
    """

    id: str
    name: str
    arguments: str

    def to_chat(self) -> dict[str, Any]:
        """Return the chat-completions shape of this call."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_chat(cls, data: object) -> ToolCall:
        """Build a tool call from its chat-completions shape, checking every field."""
        if not isinstance(data, Mapping):
            raise InvalidContentError(f"a tool call must be an object, not {_type_name(data)}")
        function = data.get("function")
        if data.get("type", "function") != "function" or not isinstance(function, Mapping):
            raise InvalidContentError("a tool call must be of type 'function' with a 'function'")
        call_id, name, arguments = data.get("id"), function.get("name"), function.get("arguments")
        for label, value in (("id", call_id), ("name", name), ("arguments", arguments)):
            if not isinstance(value, str):
                raise InvalidContentError(
                    f"a tool call's {label} must be a string, not {_type_name(value)}"
                )
        return cls(id=cast(str, call_id), name=cast(str, name), arguments=cast(str, arguments))


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message of a session.

    ``id`` and ``created_at`` are ``None`` only for entries written in the
    earlier plain shape (``{"role": ..., "content": ...}``).
    ``content`` is ``None`` only for an assistant message that carries tool calls.
    """

    role: Role
    content: str | None
    id: str | None = None
    created_at: float | None = None
    tool_calls: tuple[ToolCall, ...] = field(default=())
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        """Refuse a message that is not well formed."""
        validate(self)

    def to_chat(self) -> dict[str, Any]:
        """Return the message as the chat-completions API takes it.

        A plain message is exactly ``{"role": ..., "content": ...}``; tool
        fields appear only when set.
        """
        chat: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            chat["tool_calls"] = [call.to_chat() for call in self.tool_calls]
        if self.tool_call_id is not None:
            chat["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            chat["name"] = self.name
        return chat


def message_for(
    role: Role,
    content: str | None,
    *,
    message_id: str | None = None,
    tool_calls: Iterable[ToolCall] = (),
    tool_call_id: str | None = None,
    name: str | None = None,
) -> Message:
    """Return the message ``add_message`` stores for these arguments (checked)."""
    return Message(
        role=role,
        content=content,
        id=message_id,
        tool_calls=tuple(tool_calls),
        tool_call_id=tool_call_id,
        name=name,
    )


def new_message_id() -> str:
    """Return a new message id: 128 random bits in 22 URL-safe base64 characters.

    Every message's id is stored twice (in its entry and in the session's hash of
    ids), so it is kept short: a hex UUID would take 10 bytes more each time.
    """
    return secrets.token_urlsafe(16)


def validate(message: Message) -> None:
    """Raise an :class:`~chat_memory.InvalidInputError` naming what is wrong with ``message``."""
    if not isinstance(message.role, str) or message.role not in ROLES:
        raise InvalidRoleError(
            f"role must be one of {', '.join(sorted(ROLES))}, not {message.role!r}"
        )
    if message.content is None:
        if not (message.role == "assistant" and message.tool_calls):
            raise InvalidContentError(
                "content may be None only for an assistant message with tool calls"
            )
    elif not isinstance(message.content, str):
        raise InvalidContentError(f"content must be a string, not {_type_name(message.content)}")
    if message.id is not None:
        _check_text("message id", message.id, max_chars=MAX_ID_CHARS)
    if message.created_at is not None and (
        isinstance(message.created_at, bool)
        or not isinstance(message.created_at, int | float)
        or not math.isfinite(message.created_at)
    ):
        raise InvalidContentError(f"created_at must be a finite number, not {message.created_at!r}")
    if not isinstance(message.tool_calls, tuple) or not all(
        isinstance(call, ToolCall) for call in message.tool_calls
    ):
        raise InvalidContentError("tool_calls must be a tuple of ToolCall")
    if message.tool_calls and message.role != "assistant":
        raise InvalidContentError("only an assistant message may carry tool calls")
    if message.role == "tool":
        if message.tool_call_id is None:
            raise InvalidContentError("a tool message needs the tool_call_id it answers")
        _check_text("tool_call_id", message.tool_call_id, max_chars=MAX_ID_CHARS)
    elif message.tool_call_id is not None:
        raise InvalidContentError("only a tool message may carry a tool_call_id")
    if message.name is not None:
        _check_text("name", message.name, max_chars=MAX_ID_CHARS)


def stored_message(
    *,
    role: Role,
    content: str | None,
    id: str | None,
    created_at: float | None,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: str | None,
    name: str | None,
) -> Message:
    """Build a :class:`Message` from fields the stored-entry decoder has already checked.

    Skips :func:`validate`, whose checks the decoder's types make: only the
    codec calls this, and only with what its msgspec types admitted.
    """
    message = object.__new__(Message)
    put = object.__setattr__  # the dataclass is frozen; this is what its __init__ does too
    put(message, "role", role)
    put(message, "content", content)
    put(message, "id", id)
    put(message, "created_at", created_at)
    put(message, "tool_calls", tool_calls)
    put(message, "tool_call_id", tool_call_id)
    put(message, "name", name)
    return message


def message_from_chat(data: Mapping[str, Any] | Message) -> Message:
    """Turn a chat-completions dict (or a :class:`Message`) into a checked :class:`Message`."""
    if isinstance(data, Message):
        return data
    if not isinstance(data, Mapping):
        raise InvalidContentError(f"a message must be a mapping, not {_type_name(data)}")
    known = {"role", "content", "id", "tool_calls", "tool_call_id", "name"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidContentError(f"unknown message field(s): {', '.join(map(str, unknown))}")
    if "role" not in data or "content" not in data:
        raise InvalidContentError("a message needs both 'role' and 'content'")
    raw_calls = data.get("tool_calls") or ()
    if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, str):
        raise InvalidContentError("tool_calls must be a list")
    return Message(
        role=data["role"],
        content=data["content"],
        id=data.get("id"),
        tool_calls=tuple(ToolCall.from_chat(call) for call in raw_calls),
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
    )


def _check_text(label: str, value: object, *, max_chars: int) -> None:
    if not isinstance(value, str):
        raise InvalidContentError(f"{label} must be a string, not {_type_name(value)}")
    if not 0 < len(value) <= max_chars:
        raise InvalidContentError(f"{label} must be 1 to {max_chars} characters long")


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__
