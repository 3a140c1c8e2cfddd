"""Where a session lives in Redis.

Every key of a session shares one Redis Cluster hash tag, the encoded session
id in braces, so one Lua script can touch all of them on any cluster node::

    {namespace}:session:{<encoded id>}:history   list of entries, oldest first
    {namespace}:session:{<encoded id>}:ids       ids of the newest appended messages, in order
    {namespace}:session:{<encoded id>}:seen      hash: each of those ids -> its fingerprint

The id is percent-encoded (UTF-8) except for ASCII letters, digits and
``-._~@``, so the encoding is injective (``%`` itself is encoded): no two ids
share a key, and no id can close the hash tag or leave the namespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from .exceptions import InvalidInputError, InvalidSessionIdError

__all__ = ["DEFAULT_NAMESPACE", "MAX_SESSION_ID_CHARS", "KeyLayout"]

DEFAULT_NAMESPACE: Final = "chat"
MAX_SESSION_ID_CHARS: Final = 256
_SAFE: Final = "-._~@"
_NAMESPACE_RE: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True, slots=True)
class KeyLayout:
    """The key names of every session under one namespace."""

    namespace: str = DEFAULT_NAMESPACE

    def __post_init__(self) -> None:
        """Refuse a namespace that could break the layout."""
        if not isinstance(self.namespace, str) or not _NAMESPACE_RE.fullmatch(self.namespace):
            raise InvalidInputError(
                "namespace must be 1 to 64 characters of letters, digits, '_', '.', ':' or '-',"
                f" not {self.namespace!r}"
            )

    def history(self, session_id: str) -> str:
        """Return the key of the session's list of entries."""
        return self.all(session_id)[0]

    def ids(self, session_id: str) -> str:
        """Return the key of the session's list of remembered message ids, oldest first."""
        return self.all(session_id)[1]

    def seen(self, session_id: str) -> str:
        """Return the key of the session's hash of remembered ids and their fingerprints."""
        return self.all(session_id)[2]

    def all(self, session_id: str) -> tuple[str, str, str]:
        """Return every key of the session: history, ids, seen (one hash slot)."""
        prefix = self._prefix(session_id)
        return f"{prefix}:history", f"{prefix}:ids", f"{prefix}:seen"

    def pattern(self) -> str:
        """Return a SCAN pattern matching every key of this namespace."""
        escaped = re.sub(r"([*?\[\]\\])", r"\\\1", self.namespace)
        return f"{escaped}:session:*"

    def _prefix(self, session_id: str) -> str:
        return f"{self.namespace}:session:{{{encode_session_id(session_id)}}}"


def encode_session_id(session_id: str) -> str:
    """Check ``session_id`` and return its key-safe, injective encoding."""
    if not isinstance(session_id, str):
        raise InvalidSessionIdError(f"session id must be a string, not {type(session_id).__name__}")
    if not 0 < len(session_id) <= MAX_SESSION_ID_CHARS:
        raise InvalidSessionIdError(
            f"session id must be 1 to {MAX_SESSION_ID_CHARS} characters long, not {len(session_id)}"
        )
    try:
        return quote(session_id, safe=_SAFE, encoding="utf-8", errors="strict")
    except UnicodeEncodeError as exc:
        raise InvalidSessionIdError("session id is not valid Unicode text") from exc
