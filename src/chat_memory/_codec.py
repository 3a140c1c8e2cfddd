"""The stored format of one history entry: versioned JSON, UTF-8, not ASCII-escaped.

An entry written by this version looks like (keys in this order)::

    {"v":1,"id":"6f1c…","role":"user","content":"我叫张三","created_at":1796205600.0}

with ``tool_calls`` (chat-completions shape), ``tool_call_id`` and ``name``
added only when set. Entries in the earlier plain shape
``{"role": "user", "content": "hi"}`` (no ``v``) still decode.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ._message import Message, ToolCall
from .exceptions import ChatMemoryError, InvalidContentError

__all__ = ["FORMAT_VERSION", "DecodeError", "decode", "encode"]

FORMAT_VERSION: Final = 1


class DecodeError(Exception):
    """Internal: an entry cannot be decoded; the service adds the session and position."""


def encode(message: Message) -> str:
    """Return the stored JSON text of ``message``."""
    entry: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "created_at": message.created_at,
    }
    if message.tool_calls:
        entry["tool_calls"] = [call.to_chat() for call in message.tool_calls]
    if message.tool_call_id is not None:
        entry["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        entry["name"] = message.name
    return dumps(entry)


def dumps(value: object) -> str:
    """Serialise ``value`` as compact JSON with non-ASCII characters kept as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def decode(raw: str | bytes) -> Message:
    """Decode one stored entry, raising :class:`DecodeError` with the reason if it is bad."""
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
