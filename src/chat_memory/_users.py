"""Users' sessions and session metadata, without I/O: what to send and how to read it.

See :mod:`chat_memory._keys` for the layout and ``sessions.lua`` for the
scripts that list, erase and annotate sessions atomically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._codec import DecodeError, decode, encode
from ._keys import as_stored, listed_session_id
from ._message import Message, validate
from .exceptions import CorruptMetadataError, InvalidContentError, InvalidInputError

__all__ = [
    "EXPORT_FORMAT",
    "MAX_METADATA_BYTES",
    "SUMMARY_NAME",
    "CompactResult",
    "ForgetResult",
    "ImportResult",
    "SessionInfo",
    "decode_metadata",
    "encode_metadata",
    "parse_export",
    "read_listing",
    "render_export",
]

MAX_METADATA_BYTES: Final = 16 * 1024
"""The largest metadata document a session may carry, as UTF-8 JSON."""

EXPORT_FORMAT: Final = 1
"""The version of the JSON Lines export; its first line says it (``"chat_memory_export"``)."""

SUMMARY_NAME: Final = "summary"
"""The ``name`` of the system message a compaction stores in place of the messages it folds."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One of a user's sessions, as a listing shows it.

    Times are seconds since the epoch; ``message_count`` counts the messages
    the session keeps (at most the history limit); ``title`` is the metadata's
    ``"title"``, if it is a string.
    """

    session_id: str
    created_at: float | None
    last_active_at: float
    message_count: int
    title: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What :meth:`~chat_memory.MemoryService.forget_user` removed."""

    user_id: str
    sessions: list[str]
    keys_deleted: int


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :meth:`~chat_memory.MemoryService.import_session` stored and skipped."""

    imported: list[Message]
    skipped: list[Message]


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What :meth:`~chat_memory.MemoryService.compact` did: how many messages it folded."""

    folded: int
    summary: Message | None


def render_export(session_id: str, messages: Sequence[Message], metadata: Mapping[str, Any]) -> str:
    """Return a session as JSON Lines: a header, then each message as stored (format v1)."""
    header = {"chat_memory_export": EXPORT_FORMAT, "session_id": session_id, "metadata": metadata}
    lines = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
    lines += [encode(message) for message in messages]
    return "\n".join(lines) + "\n"


def parse_export(text: str) -> tuple[dict[str, Any], list[Message]]:
    """Read an export: its metadata and its messages, each checked as a stored entry is."""
    if not isinstance(text, str):
        raise InvalidContentError(f"an export is text (JSON Lines), not {type(text).__name__}")
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError as exc:
        raise InvalidContentError(f"line 1 of the export is not JSON ({exc})") from exc
    if not isinstance(header, dict) or header.get("chat_memory_export") != EXPORT_FORMAT:
        raise InvalidContentError(
            f'line 1 of the export must be the header {{"chat_memory_export": {EXPORT_FORMAT},'
            " ...}"
        )
    metadata = header.get("metadata") or {}
    encode_metadata(metadata)
    messages = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            message = decode(line)
            validate(message)
        except (DecodeError, InvalidInputError) as exc:
            raise InvalidContentError(f"line {number} of the export: {exc}") from exc
        if message.id is None or message.created_at is None:
            raise InvalidContentError(f"line {number} of the export has no id or created_at")
        messages.append(message)
    return dict(metadata), messages


def encode_metadata(metadata: object) -> bytes:
    """Check a metadata document and return its stored JSON; refuse what cannot round-trip."""
    if not isinstance(metadata, Mapping):
        raise InvalidContentError(
            f"metadata must be a JSON object (a dict), not {type(metadata).__name__}"
        )
    try:
        text = json.dumps(
            dict(metadata), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
        data = text.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidContentError(f"metadata must be plain JSON: {exc}") from exc
    if json.loads(text) != metadata:
        raise InvalidContentError("metadata must be plain JSON with string keys")
    if len(data) > MAX_METADATA_BYTES:
        raise InvalidContentError(
            f"metadata encodes to {len(data)} bytes, over the limit of {MAX_METADATA_BYTES}"
        )
    return data


def decode_metadata(session_id: str, raw: bytes | None) -> dict[str, Any]:
    """Read a stored metadata document, as raw bytes (``{}`` if there is none)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CorruptMetadataError(session_id, f"not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise CorruptMetadataError(session_id, f"not a JSON object but {type(data).__name__}")
    return data


def read_listing(reply: Sequence[Any]) -> list[SessionInfo]:
    """Read the ``list`` script's reply: five fields per session."""
    listed = []
    for at in range(0, len(reply), 5):
        member, score, created, count, doc = reply[at : at + 5]
        try:
            session_id = listed_session_id(member)
        except ValueError:  # another program's entry: never listed under a guess
            raise CorruptMetadataError(
                as_stored(member),
                "its entry in the user's index is not a session id chat-memory writes"
                " (the percent-encoding of the id's UTF-8, written one way)",
            ) from None
        metadata = decode_metadata(session_id, doc)
        title = metadata.get("title")
        listed.append(
            SessionInfo(
                session_id=session_id,
                created_at=_seconds(created),
                last_active_at=_seconds(score) or 0.0,
                message_count=int(count),
                title=title if isinstance(title, str) else None,
                metadata=metadata,
            )
        )
    return listed


def _seconds(milliseconds: bytes | None) -> float | None:
    if not milliseconds:
        return None
    value = float(milliseconds)
    return value / 1000 if math.isfinite(value) else None
