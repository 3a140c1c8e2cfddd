"""A writer of the previous version of chat-memory, for the scenarios of a rolling upgrade.

The previous version's append script (``previous_append.lua``, kept byte for
byte as it was released) remembered the ids of the newest 1,000 messages of a
session in a list beside the hash of their fingerprints, whatever the history
limit. The entry format is unchanged. :func:`previous_append` stores messages
exactly as a server still running that version would, so that a scenario can
run old and new writers on one session.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from typing import Any, Final

from chat_memory import Message
from chat_memory._codec import encode_for_storage
from chat_memory._keys import KeyLayout, encode_session_id

__all__ = ["PREVIOUS_APPEND", "PREVIOUS_WINDOW", "previous_append"]

PREVIOUS_APPEND: Final = (
    files("chat_memory_suite").joinpath("previous_append.lua").read_text(encoding="utf-8")
)
PREVIOUS_WINDOW: Final = 1000
"""How many ids the previous version remembered by default."""


def previous_append(
    client: Any,
    keys: KeyLayout,
    session_id: str,
    messages: Sequence[Message],
    *,
    max_history: int,
    ttl_ms: int | None,
    now: float,
) -> list[bool]:
    """Append ``messages`` (ids and times set) as the previous version; return which were new."""
    index = keys.index()
    session_keys = (*keys.all(session_id), *([index] if index is not None else []))
    args: list[bytes] = [
        str(max_history).encode(),
        str(ttl_ms or 0).encode(),
        str(max(PREVIOUS_WINDOW, max_history)).encode(),
        str(round(now * 1000)).encode(),
        encode_session_id(session_id).encode(),
    ]
    for message in messages:
        item = encode_for_storage(message)
        args += [str(message.id).encode("utf-8"), item.fingerprint, item.entry]
    reply = client.eval(PREVIOUS_APPEND, len(session_keys), *session_keys, *args)
    return [outcome == 1 for outcome in reply]
