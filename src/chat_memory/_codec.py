"""The stored format of one history entry: versioned JSON, UTF-8, not ASCII-escaped.

An entry written by this version looks like (keys in this order)::

    {"v":1,"id":"6f1c…","role":"user","content":"我叫张三","created_at":1796205600.0}

with ``tool_calls`` (chat-completions shape), ``tool_call_id`` and ``name``
added only when set. Entries in the earlier plain shape
``{"role": "user", "content": "hi"}`` (no ``v``) still decode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from hashlib import blake2b
from typing import Annotated, ClassVar, Final, Literal

import msgspec

from ._message import MAX_ID_CHARS, Message, Role, ToolCall, stored_message
from .exceptions import ChatMemoryError, InvalidContentError

__all__ = ["FORMAT_VERSION", "DecodeError", "Encoded", "decode", "encode", "encode_for_storage"]

FORMAT_VERSION: Final = 1


class DecodeError(Exception):
    """Internal: an entry cannot be decoded; the service adds the session and position."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """A message ready for the append script: its entry and its fingerprint, UTF-8 bytes."""

    message: Message
    entry: bytes
    fingerprint: bytes


def encode(message: Message) -> str:
    """Return the stored JSON text of ``message``."""
    head, created_at, tail = _parts(message)
    return f"{head}{created_at}{tail}"


def encode_for_storage(message: Message) -> Encoded:
    """Return the entry and fingerprint of ``message`` as the bytes Redis will hold.

    The fingerprint is ``<digest> <created_at>``: the digest (BLAKE2b, 128 bits,
    hex) covers the entry without its ``created_at``, so a retry of the same
    message matches it whatever time it was stamped with.
    Raises :class:`InvalidContentError` for text that is not valid UTF-8.
    """
    head, created_at, tail = _parts(message)
    try:
        body = (head + tail).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidContentError(
            f"the {_field_not_utf8(message)} of the {message.role} message is not valid UTF-8"
            " text (it holds a lone surrogate, e.g. half an emoji)"
        ) from exc
    stamp = created_at.removeprefix(',"created_at":').encode("ascii")
    split = len(head.encode("utf-8"))
    return Encoded(
        message=message,
        entry=body[:split] + created_at.encode("ascii") + body[split:],
        fingerprint=blake2b(body, digest_size=16).hexdigest().encode("ascii") + b" " + stamp,
    )


def _parts(message: Message) -> tuple[str, str, str]:
    """Split the entry into the text before ``created_at``, that field, and the rest."""
    head = (
        f'{{"v":{FORMAT_VERSION},"id":{dumps(message.id)},"role":{dumps(message.role)},'
        f'"content":{dumps(message.content)}'
    )
    tail = ""
    if message.tool_calls:
        tail += f',"tool_calls":{dumps([call.to_chat() for call in message.tool_calls])}'
    if message.tool_call_id is not None:
        tail += f',"tool_call_id":{dumps(message.tool_call_id)}'
    if message.name is not None:
        tail += f',"name":{dumps(message.name)}'
    return head, f',"created_at":{dumps(message.created_at)}', tail + "}"


def _field_not_utf8(message: Message) -> str:
    fields = {
        "content": message.content,
        "id": message.id,
        "tool_call_id": message.tool_call_id,
        "name": message.name,
    }
    for call in message.tool_calls:
        fields |= {
            "tool call id": call.id,
            "tool name": call.name,
            "tool arguments": call.arguments,
        }
    for label, value in fields.items():
        if value is not None and not _is_utf8(value):
            return label
    return "text"


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def dumps(value: object) -> str:
    """Serialise ``value`` as compact JSON with non-ASCII characters kept as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def decode(raw: str | bytes) -> Message:
    """Decode one stored entry, raising :class:`DecodeError` with the reason if it is bad.

    An entry of the current format is parsed and checked in one pass by
    msgspec, against the types below, which admit only what
    :func:`~chat_memory._message.validate` admits. Anything else (an entry in
    the earlier plain shape, or a bad one) goes through :func:`_decode_checked`,
    which accepts the legacy shape and names what is wrong with a bad entry.
    msgspec itself refuses what JSON cannot hold (``1e999`` and the like); an
    entry with neither content nor tool calls takes the checked path, for its
    reason.
    """
    try:
        entry = _ENTRY.decode(raw)
    except msgspec.MsgspecError:
        return _decode_checked(raw)
    calls = entry.tool_calls if isinstance(entry, _Assistant) else []
    if entry.content is None and not calls:
        return _decode_checked(raw)
    return stored_message(
        role=entry.role,
        content=entry.content,
        id=entry.id,
        created_at=entry.created_at,
        tool_calls=tuple(ToolCall(c.id, c.function.name, c.function.arguments) for c in calls)
        if calls
        else (),
        tool_call_id=entry.tool_call_id if isinstance(entry, _Tool) else None,
        name=entry.name,
    )


_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID_CHARS)]


class _Function(msgspec.Struct, frozen=True):
    name: str
    arguments: str


class _Call(msgspec.Struct, frozen=True):
    id: str
    function: _Function
    type: Literal["function"] = "function"


class _Entry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="role"):
    """A current-format entry; the ``role`` field picks the subclass."""

    role: ClassVar[Role]
    v: Literal[1]
    content: str | None
    id: _Text | None = None
    created_at: float | None = None
    name: _Text | None = None


class _System(_Entry, frozen=True, tag="system"):
    role: ClassVar[Role] = "system"
    content: str


class _User(_Entry, frozen=True, tag="user"):
    role: ClassVar[Role] = "user"
    content: str


class _Assistant(_Entry, frozen=True, tag="assistant"):
    role: ClassVar[Role] = "assistant"
    tool_calls: list[_Call] = []


class _Tool(_Entry, frozen=True, kw_only=True, tag="tool"):
    role: ClassVar[Role] = "tool"
    content: str
    tool_call_id: _Text


_ENTRY: Final = msgspec.json.Decoder(_System | _User | _Assistant | _Tool)


def _decode_checked(raw: str | bytes) -> Message:
    """Decode an entry field by field: the legacy shape, and the reason a bad entry is bad."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise DecodeError(f"expected a JSON object, got {type(data).__name__}")
    version = data.get("v")
    if version is None:
        allowed = {"role", "content"}
    elif version == FORMAT_VERSION:
        allowed = {"v", "id", "role", "content", "created_at", "tool_calls", "tool_call_id", "name"}
    else:
        raise DecodeError(f"unsupported format version {version!r}")
    unexpected = sorted(set(data) - allowed)
    if unexpected:
        raise DecodeError(f"unexpected field(s) {', '.join(unexpected)}")
    if "role" not in data or "content" not in data:
        raise DecodeError("missing 'role' or 'content'")
    try:
        return Message(
            role=data["role"],
            content=data["content"],
            id=data.get("id"),
            created_at=data.get("created_at"),
            tool_calls=tuple(ToolCall.from_chat(call) for call in _list(data.get("tool_calls"))),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )
    except ChatMemoryError as exc:
        raise DecodeError(str(exc)) from exc


def _list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidContentError("tool_calls must be a list")
    return value
