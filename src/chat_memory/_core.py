"""Everything the memory does that is not I/O, written once for every service.

Settings, key names, the append script's arguments and the reading of its
reply, the decoding of stored entries and the context a model is given: plain
functions and values. A service only sends what this module prepares and
hands back what Redis answered.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from importlib.resources import files
from typing import Any, Final, TypeAlias

from ._budget import TokenCounter, within_budget
from ._codec import DecodeError, Encoded, decode, encode_for_storage
from ._keys import KeyLayout, encode_session_id
from ._message import Message, message_from_chat, new_message_id, validate
from ._users import SUMMARY_NAME
from .exceptions import (
    ChatMemoryError,
    CorruptEntryError,
    InvalidContentError,
    InvalidInputError,
    MessageTooLargeError,
    check_whole_number,
)

__all__ = [
    "APPEND_LUA",
    "DEFAULT_IDEMPOTENCY_WINDOW",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "MAX_TTL",
    "SESSIONS_LUA",
    "AppendCall",
    "AppendResult",
    "MemoryCore",
    "MessageInput",
]

APPEND_LUA: Final = files("chat_memory").joinpath("append.lua").read_text(encoding="utf-8")
SESSIONS_LUA: Final = files("chat_memory").joinpath("sessions.lua").read_text(encoding="utf-8")
DEFAULT_MAX_MESSAGE_BYTES: Final = 1024 * 1024
MAX_MESSAGE_BYTES: Final = 512 * 1024 * 1024  # Redis's largest string (proto-max-bulk-len)
DEFAULT_IDEMPOTENCY_WINDOW: Final = 20
"""The fewest message ids a session remembers by default: the default window is this or
``max_history``, whichever is larger, so that every message still in the history (and
every message of a call of up to 20) is recognised when retried. Earlier releases
remembered 1,000 ids whatever the history; pass ``idempotency_window=1000`` to keep that
(it costs about 155 bytes of Redis memory per id, see the README)."""
MAX_TTL: Final = timedelta(days=36525)
"""The longest session TTL accepted: 100 years (Redis itself stops near 292 million)."""
_REDIS_MAX_INT: Final = 2**63 - 1

_ROLES_ARG: Final = 5
"""Where the append script's arguments name its keys (``ARGV[6]``)."""
_WINDOW_ARG: Final = 2
"""Where they give the retry window (``ARGV[3]``; ``0`` for the history itself)."""

MessageInput: TypeAlias = Message | Mapping[str, Any]
"""A message to store: a :class:`Message` or a chat-completions dict."""


class AppendResult(list[Message]):
    """The messages of one append, as stored, in the order given.

    It is a plain list of :class:`Message`; ``appended`` and ``already_stored``
    split it by what the write did. A message whose id the session already
    remembered comes back as stored the first time (its original
    ``created_at``), and was not appended again.
    """

    def __init__(self, messages: Iterable[Message], stored_before: Iterable[bool]) -> None:
        """Keep ``messages`` and, for each, whether its id was already stored."""
        super().__init__(messages)
        self._stored_before = tuple(stored_before)

    @property
    def appended(self) -> list[Message]:
        """The messages this call appended."""
        return [m for m, before in zip(self, self._stored_before, strict=True) if not before]

    @property
    def already_stored(self) -> list[Message]:
        """The messages whose id was already stored: nothing was appended for them."""
        return [m for m, before in zip(self, self._stored_before, strict=True) if before]


@dataclass(frozen=True, slots=True)
class AppendCall:
    """One call of the append script: its keys, its arguments and the messages it carries."""

    keys: tuple[str, ...]
    args: list[bytes]
    encoded: list[Encoded]
    roles: str = ""
    """One letter a key, as the script takes them in ``ARGV[6]`` (see append.lua)."""
    checked: bool = False
    """Whether an earlier append of the service stored messages through the script's
    general way, which asks about every write's permission in advance: only then is the
    short form sent, whose short way asks none (see append.lua)."""

    def declaring(self, present: Iterable[str], *, without_index: bool = False) -> AppendCall:
        """Return this call declaring only the history and the keys in ``present``.

        In a cluster slot being migrated, Redis refuses (TRYAGAIN) a script that
        declares a key missing on the node beside ones it has; the script
        creates the history, and keeps up only the other keys it is given. A
        user's session keeps its index and metadata whatever: written without
        them, it would be missing from the user's listing and erasure. With
        ``without_index`` (the index written on its own), it declares neither the
        index nor, unless present, the metadata.
        """
        user = "x" in self.roles and not without_index
        kept = {k for k, r in zip(self.keys, self.roles, strict=True) if r != "x" or user}
        kept &= set(present)
        always = "hmx" if user else "h"
        pairs = [
            (k, r) for k, r in zip(self.keys, self.roles, strict=True) if r in always or k in kept
        ]
        roles = "".join(r for _, r in pairs)
        args = [*self.args[:_ROLES_ARG], roles.encode(), *self.args[_ROLES_ARG + 1 :]]
        return AppendCall(tuple(k for k, _ in pairs), args, self.encoded, roles, self.checked)

    @property
    def sent(self) -> list[bytes]:
        """The arguments as sent: the short form for one message of a plain session.

        The usual call (``roles`` ``hsm``, one message) leaves out the arguments only a
        user's session or a longer retry window reads (see append.lua): each one
        costs the server time before the script starts. A service's first append is
        sent in the long form all the same (see ``checked``).
        """
        if self.short:
            return [*self.args[:2], *self.args[_ROLES_ARG + 1 :]]
        return self.args

    @property
    def barrier(self) -> list[bytes]:
        """The arguments of the call without its messages: a retry's barrier (see append.lua).

        With a durability setting, a retry whose messages were all stored sends it
        before its ``WAIT``: it writes the session's expiry again, which the
        replicas receive after every earlier write of the session.
        """
        return self.args[: _ROLES_ARG + 1]

    @property
    def short(self) -> bool:
        """Whether the call is sent in the short form, whose way asks no permission.

        The short form leaves the window out, so it is only for the default window
        (``0``, the history itself): a longer window's call narrowed to ``hsm`` while
        a slot migrates goes in the long form, whose script then refuses it for
        want of the ids list (CHATMEM_MOVING) rather than forget ids a resend needs.
        """
        return (
            self.checked
            and self.roles == "hsm"
            and len(self.encoded) == 1
            and self.args[_WINDOW_ARG] == b"0"
        )

    @property
    def messages(self) -> list[Message]:
        """The messages of the call, ids and times set, as they would be stored."""
        return [e.message for e in self.encoded]


class MemoryCore:
    """Settings and every step of the memory that does not talk to Redis."""

    def __init__(
        self,
        max_history: int,
        *,
        ttl: float | timedelta | None,
        namespace: str,
        max_message_bytes: int,
        idempotency_window: int | None,
        clock: Callable[[], float] | None,
        token_counter: TokenCounter,
        on_cluster: bool,
    ) -> None:
        """Check every setting, naming the one Redis or the memory could not take."""
        self.max_history = check_whole_number("max_history", max_history, 1, _REDIS_MAX_INT)
        self.max_message_bytes = check_whole_number(
            "max_message_bytes", max_message_bytes, 1, MAX_MESSAGE_BYTES
        )
        if idempotency_window is None:
            idempotency_window = max(DEFAULT_IDEMPOTENCY_WINDOW, self.max_history)
        self.idempotency_window = check_whole_number(
            "idempotency_window", idempotency_window, self.max_history, _REDIS_MAX_INT
        )
        self.ttl_ms = ttl_milliseconds(ttl)
        self.keys = KeyLayout(namespace)
        self.clock = clock or time.time
        self.token_counter = token_counter
        self.on_cluster = on_cluster
        """Whether the client is a Redis Cluster's: a user's listing and erasure then ask
        whether the user's slot is being resharded."""
        self.checked = False
        """Whether an append has stored messages through the script's general way, which
        asks in advance whether each write is permitted (Redis 7 and newer; Redis 6
        cannot ask), declaring the history, its hash and its metadata: the later appends
        take the short way, which does not ask (see :attr:`AppendCall.checked`). A failed
        append makes the next one ask again: another server may answer it."""
        self._fixed_args = [
            str(self.max_history).encode(),
            str(self.ttl_ms or 0).encode(),
            self.window_arg,
        ]

    def for_user(self, user_id: str) -> MemoryCore:
        """Return this memory's core for the sessions of ``user_id`` (same settings)."""
        core = copy.copy(self)
        core.keys = self.keys.for_user(user_id)
        return core

    @property
    def keeps_id_list(self) -> bool:
        """Whether sessions keep a list of remembered ids: a window longer than the history.

        With the default window (the history itself), the ids to forget are those of the
        entries the history limit drops, and no list is kept.
        """
        return self.idempotency_window > self.max_history

    @property
    def window_arg(self) -> bytes:
        """The retry window as the scripts take it: ``0`` for the history itself."""
        return str(self.idempotency_window if self.keeps_id_list else 0).encode()

    def append_keys(self, session_id: str) -> tuple[tuple[str, ...], str]:
        """Return the keys an append declares, and their letters (see append.lua)."""
        history, ids, seen, meta = self.keys.all(session_id)
        keys, roles = [history, seen], "hs"
        if self.keeps_id_list:
            keys, roles = [*keys, ids], roles + "i"
        index = self.keys.index()
        keys, roles = [*keys, meta], roles + "m"
        if index is not None:
            keys, roles = [*keys, index], roles + "x"
        return tuple(keys), roles

    def session_keys(self, session_id: str) -> tuple[str, ...]:
        """Every key a write to the session touches: its own, and its user's index if any."""
        index = self.keys.index()
        own = self.keys.all(session_id)
        return own if index is None else (*own, index)

    def now_ms(self) -> bytes:
        """Return the clock's time in whole milliseconds since the epoch, as the scripts take it."""
        return str(round(self.clock() * 1000)).encode()

    def summary(self, text: object) -> Message:
        """Return the summary message a compaction stores, stamped now; check ``text``."""
        if not isinstance(text, str) or not text:
            raise InvalidContentError(
                f"summarize must return the summary as non-empty text, not {text!r:.80}"
            )
        summary = _stamp(Message("system", text, name=SUMMARY_NAME), self.clock())
        validate(summary)
        return summary

    def plan_append(self, session_id: str, messages: Iterable[MessageInput]) -> AppendCall:
        """Check and encode ``messages`` for one append; raise before anything is sent."""
        keys, roles = self.append_keys(session_id)
        member = encode_session_id(session_id).encode()
        now = self.clock()
        stamped = [_stamp(message_from_chat(m), now) for m in messages]
        if not stamped:
            raise InvalidContentError("add_messages needs at least one message")
        if len({m.id for m in stamped}) != len(stamped):
            raise InvalidContentError("message ids must be unique within one call")
        if len(stamped) > self.idempotency_window:
            raise InvalidContentError(
                f"one call may append at most idempotency_window ({self.idempotency_window})"
                f" messages, not {len(stamped)}: a retry could not recognise them all"
            )
        encoded = [encode_for_storage(m) for m in stamped]
        args = [*self._fixed_args, str(round(now * 1000)).encode(), member, roles.encode()]
        for item in encoded:
            if len(item.entry) > self.max_message_bytes:
                raise MessageTooLargeError(
                    item.message.role, len(item.entry), self.max_message_bytes
                )
            args += [str(item.message.id).encode("utf-8"), item.fingerprint, item.entry]
        return AppendCall(keys, args, encoded, roles, self.checked)

    def finish_append(self, call: AppendCall, reply: Sequence[Any] | int) -> AppendResult:
        """Read the script's reply: what was appended, and the stored version of the rest.

        The short way answers its one message, appended, with a bare 1 (see append.lua).
        """
        if isinstance(reply, int):
            reply = [reply]
        stored_before = [outcome != 1 for outcome in reply]
        if not all(stored_before) and not call.short and set("hsm") <= set(call.roles):
            self.checked = True  # a write whose general way asked about every key's writes
        messages = [
            _as_stored(item.message, outcome) if before else item.message
            for item, outcome, before in zip(call.encoded, reply, stored_before, strict=True)
        ]
        return AppendResult(messages, stored_before)

    def decode_history(self, session_id: str, raw_entries: Iterable[bytes]) -> list[Message]:
        """Decode stored entries, raising :class:`CorruptEntryError` at the first bad one."""
        messages = []
        for position, raw in enumerate(raw_entries):
            try:
                messages.append(decode(raw))
            except DecodeError as exc:
                raise CorruptEntryError(session_id, position, str(exc)) from exc
        return messages

    def context(self, messages: list[Message], max_tokens: int | None) -> list[Message]:
        """Return the messages a model is given: whole tool exchanges, within ``max_tokens``."""
        if max_tokens is not None:
            check_whole_number("max_tokens", max_tokens, 0)
        return within_budget(messages, max_tokens, self.token_counter)


def ttl_milliseconds(ttl: float | timedelta | None) -> int | None:
    """Return ``ttl`` in whole milliseconds (at least 1), or None; refuse what Redis cannot take."""
    if ttl is None:
        return None
    seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or not 0 < seconds <= MAX_TTL.total_seconds()
    ):
        raise InvalidInputError(
            f"ttl must be a positive, finite number of seconds (or a timedelta) of at most"
            f" {MAX_TTL.days} days, or None; not {ttl!r}"
        )
    return max(1, round(seconds * 1000))


def seconds_left(pttl: int) -> float | None:
    """Turn a ``PTTL`` reply into seconds, or None for a key without expiry or no key."""
    return None if pttl < 0 else pttl / 1000


def _milliseconds(now: float) -> float:
    return math.floor(now * 1000) / 1000


def _stamp(message: Message, now: float) -> Message:
    if message.id is not None and message.created_at is not None:
        return message
    return replace(
        message,
        id=message.id or new_message_id(),
        # Whole milliseconds, never ahead of the clock: further digits would only cost bytes.
        created_at=message.created_at if message.created_at is not None else _milliseconds(now),
    )


def _as_stored(message: Message, fingerprint: bytes) -> Message:
    """Return the message as first stored: same content (the digest matched), stored time.

    ``fingerprint`` is bytes: the services read every script reply raw.
    """
    text = fingerprint.decode("ascii", "replace")
    _, _, stamp = text.partition(" ")
    try:
        created_at = json.loads(stamp)
        return replace(message, created_at=created_at)
    except (ValueError, ChatMemoryError):
        # Remembered before fingerprints existed (or written by someone else): only the
        # id is known, so the message is returned as given.
        return message
