"""Where a session lives in Redis.

Every key of a session shares one Redis Cluster hash tag, the encoded session
id in braces, so one Lua script can touch all of them on any cluster node::

    {namespace}:session:{<encoded id>}:history   list of entries, oldest first
    {namespace}:session:{<encoded id>}:seen      hash: each remembered id -> its fingerprint,
                                                 and '' once it holds every entry's id
    {namespace}:session:{<encoded id>}:ids       remembered ids, in order: only with a
                                                 retry window longer than the history
    {namespace}:session:{<encoded id>}:meta      hash: the session's metadata (only once set)

A session that belongs to a user lives under the user's hash tag instead, with
the user's index of sessions, so that one script changes a session and the
index together, on any node; all of one user's sessions share one hash slot::

    {namespace}:user:{<encoded user>}:sessions                      sorted set:
        encoded session id -> last activity (milliseconds since the epoch)
    {namespace}:user:{<encoded user>}:session:<encoded id>:history  as above
    {namespace}:user:{<encoded user>}:session:<encoded id>:seen
    {namespace}:user:{<encoded user>}:session:<encoded id>:ids
    {namespace}:user:{<encoded user>}:session:<encoded id>:meta     hash: created_at, doc

Ids are percent-encoded (UTF-8) except for ASCII letters, digits and
``-._~@``, so the encoding is injective (``%`` itself is encoded): no two ids
share a key, and no id can close the hash tag, add a ``:`` or leave the
namespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote

from .exceptions import InvalidInputError, InvalidSessionIdError

__all__ = ["DEFAULT_NAMESPACE", "MAX_SESSION_ID_CHARS", "MAX_USER_ID_CHARS", "KeyLayout"]

DEFAULT_NAMESPACE: Final = "chat"
MAX_SESSION_ID_CHARS: Final = 256
MAX_USER_ID_CHARS: Final = 256
_SAFE: Final = "-._~@"
_NAMESPACE_RE: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True, slots=True)
class KeyLayout:
    """The key names of every session under one namespace (and of one user's, if given)."""

    namespace: str = DEFAULT_NAMESPACE
    user_id: str | None = None

    def __post_init__(self) -> None:
        """Refuse a namespace that could break the layout."""
        if not isinstance(self.namespace, str) or not _NAMESPACE_RE.fullmatch(self.namespace):
            raise InvalidInputError(
                "namespace must be 1 to 64 characters of letters, digits, '_', '.', ':' or '-',"
                f" not {self.namespace!r}"
            )
        if self.user_id is not None:
            _encode_id("user id", self.user_id, MAX_USER_ID_CHARS, InvalidInputError)

    def history(self, session_id: str) -> str:
        """Return the key of the session's list of entries."""
        return self.all(session_id)[0]

    def ids(self, session_id: str) -> str:
        """Return the key of the session's list of remembered message ids, oldest first."""
        return self.all(session_id)[1]

    def seen(self, session_id: str) -> str:
        """Return the key of the session's hash of remembered ids and their fingerprints."""
        return self.all(session_id)[2]

    def meta(self, session_id: str) -> str:
        """Return the key of the session's metadata hash."""
        return self.all(session_id)[3]

    def all(self, session_id: str) -> tuple[str, str, str, str]:
        """Return every key of the session: history, ids, seen, meta (one hash slot)."""
        prefix = self._prefix(session_id)
        return f"{prefix}:history", f"{prefix}:ids", f"{prefix}:seen", f"{prefix}:meta"

    def index(self) -> str | None:
        """Return the key of the user's index of sessions (None without a user)."""
        if self.user_id is None:
            return None
        return f"{self._user_prefix()}:sessions"

    def session_prefix(self) -> str:
        """Return what precedes an encoded session id in the user's session keys."""
        return f"{self._user_prefix()}:session:"

    def for_user(self, user_id: str) -> KeyLayout:
        """Return the layout of ``user_id``'s sessions in this namespace (None is refused)."""
        _encode_id("user id", user_id, MAX_USER_ID_CHARS, InvalidInputError)
        return KeyLayout(self.namespace, user_id)

    def pattern(self) -> str:
        """Return a SCAN pattern matching every session key of this namespace without a user.

        A namespace is letters, digits and ``_.:-`` only: no glob character to escape.
        """
        return f"{self.namespace}:session:*"

    def patterns(self) -> tuple[str, str]:
        """Return the patterns of every key of this namespace: sessions, and users' sessions."""
        return f"{self.namespace}:session:*", f"{self.namespace}:user:*"

    def _user_prefix(self) -> str:
        assert self.user_id is not None
        user = _encode_id("user id", self.user_id, MAX_USER_ID_CHARS, InvalidInputError)
        return f"{self.namespace}:user:{{{user}}}"

    def _prefix(self, session_id: str) -> str:
        if self.user_id is None:
            return f"{self.namespace}:session:{{{encode_session_id(session_id)}}}"
        return f"{self.session_prefix()}{encode_session_id(session_id)}"


def encode_session_id(session_id: str) -> str:
    """Check ``session_id`` and return its key-safe, injective encoding."""
    return _encode_id("session id", session_id, MAX_SESSION_ID_CHARS, InvalidSessionIdError)


def decode_session_id(encoded: str) -> str:
    """Return the session id whose encoding is ``encoded``."""
    return unquote(encoded, errors="strict")  # UTF-8; never replace a bad byte silently


def listed_session_id(member: bytes) -> str:
    """Return the session id a user's index lists as ``member``.

    Raises :class:`ValueError` for a member chat-memory never writes, e.g. another
    program's: one that is not the encoding of a session id, exactly as
    :func:`encode_session_id` writes it (``a%2fb`` or ``a/b`` for ``a%2Fb``, bytes
    that are not UTF-8 once decoded, an empty one). See :func:`as_stored`.
    """
    text = member.decode("utf-8")
    session_id = decode_session_id(text)
    if encode_session_id(session_id) != text:  # another id's address, written otherwise
        raise ValueError(f"{text!r} is not a session id as chat-memory writes it")
    return session_id


def as_stored(member: bytes) -> str:
    """Return an index member as stored, to name one that is not a session id we write."""
    return member.decode("utf-8", "backslashreplace")


def _encode_id(label: str, value: object, longest: int, error: type[InvalidInputError]) -> str:
    if not isinstance(value, str):
        raise error(f"{label} must be a string, not {type(value).__name__}")
    if not 0 < len(value) <= longest:
        raise error(f"{label} must be 1 to {longest} characters long, not {len(value)}")
    try:
        return quote(value, safe=_SAFE)  # UTF-8, strict: a lone surrogate is refused
    except UnicodeEncodeError as exc:
        raise error(f"{label} is not valid Unicode text") from exc
