"""The memory service: append, load, trim, expire and clear a session's history."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import redis

from ._budget import TokenCounter, approximate_tokens, drop_orphan_tool_results, fit_to_budget
from ._codec import DecodeError, decode, encode
from ._keys import DEFAULT_NAMESPACE, KeyLayout, encode_session_id
from ._message import Message, Role, ToolCall, message_from_chat
from .exceptions import (
    CorruptEntryError,
    InvalidContentError,
    InvalidInputError,
    MessageTooLargeError,
    StorageError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
    check_whole_number,
)

if TYPE_CHECKING:
    from redis.commands.core import Script

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "MemoryService", "MessageInput"]

DEFAULT_MAX_MESSAGE_BYTES: Final = 1024 * 1024
_APPEND_LUA: Final = files("chat_memory").joinpath("append.lua").read_text(encoding="utf-8")

MessageInput: TypeAlias = Message | Mapping[str, Any]
"""A message to store: a :class:`Message` or a chat-completions dict."""


class MemoryService:
    """The conversation memory of every session, stored in Redis.

    ``client`` is a ``redis.Redis`` or ``redis.RedisCluster`` (with
    ``decode_responses`` either way). Each session keeps its newest
    ``max_history`` messages; with a ``ttl`` (seconds or a timedelta) a session
    expires after that long without a write. Every write is one atomic round
    trip (a Lua script), idempotent per message id.
    """

    def __init__(
        self,
        client: redis.Redis | redis.RedisCluster,
        max_history: int = 20,
        *,
        ttl: float | timedelta | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        clock: Callable[[], float] | None = None,
        token_counter: TokenCounter = approximate_tokens,
    ) -> None:
        """Configure the memory; nothing is sent to Redis until the first call."""
        check_whole_number("max_history", max_history, 1)
        check_whole_number("max_message_bytes", max_message_bytes, 1)
        self._client = client
        self._max_history = max_history
        self._ttl_ms = _ttl_ms(ttl)
        self._keys = KeyLayout(namespace)
        self._max_message_bytes = max_message_bytes
        self._clock = clock or time.time
        self._token_counter = token_counter
        self._append: Script = client.register_script(_APPEND_LUA)

    @property
    def max_history(self) -> int:
        """How many of the newest messages each session keeps."""
        return self._max_history

    @property
    def token_counter(self) -> TokenCounter:
        """How this memory counts the tokens of a message."""
        return self._token_counter

    @property
    def keys(self) -> KeyLayout:
        """The key layout of this memory's namespace."""
        return self._keys

    def add_message(
        self,
        session_id: str,
        role: Role,
        content: str | None,
        *,
        message_id: str | None = None,
        tool_calls: Iterable[ToolCall] = (),
        tool_call_id: str | None = None,
        name: str | None = None,
    ) -> Message:
        """Append one message and return it as stored (with its id and time).

        Passing the ``message_id`` of a message already stored appends nothing,
        so a call that failed with :class:`WriteOutcomeUnknownError` can be
        retried safely with the same id.
        """
        message = Message(
            role=role,
            content=content,
            id=message_id,
            tool_calls=tuple(tool_calls),
            tool_call_id=tool_call_id,
            name=name,
        )
        return self.add_messages(session_id, [message])[0]

    def add_messages(self, session_id: str, messages: Iterable[MessageInput]) -> list[Message]:
        """Append several messages (e.g. a whole turn) in one atomic round trip.

        Every message is checked first: if one is invalid, none is written.
        Returns the messages as stored, in order.
        """
        history_key, ids_key = self._session_keys(session_id)
        now = self._clock()
        stored = [self._stamp(message_from_chat(m), now) for m in messages]
        if not stored:
            raise InvalidContentError("add_messages needs at least one message")
        ids = [m.id for m in stored]
        if len(set(ids)) != len(ids):
            raise InvalidContentError("message ids must be unique within one call")
        args: list[str | int] = [self._max_history, self._ttl_ms or 0]
        for message in stored:
            entry = encode(message)
            size = len(entry.encode("utf-8", errors="strict"))
            if size > self._max_message_bytes:
                raise MessageTooLargeError(
                    f"a {message.role} message encodes to {size} bytes,"
                    f" over the limit of {self._max_message_bytes}"
                )
            args += [str(message.id), entry]
        with _wrap_redis_errors(write=True, messages=stored):
            self._append(keys=[history_key, ids_key], args=args)
        return stored

    def get_messages(self, session_id: str) -> list[Message]:
        """Return the session's stored messages, oldest first; ``[]`` if it has none.

        Raises :class:`CorruptEntryError` if any entry cannot be decoded.
        """
        history_key = self._keys.history(session_id)
        with _wrap_redis_errors(write=False):
            raw_entries = self._client.lrange(history_key, 0, -1)
        messages = []
        for position, raw in enumerate(raw_entries):
            try:
                messages.append(decode(raw))
            except DecodeError as exc:
                raise CorruptEntryError(session_id, position, str(exc)) from exc
        return messages

    def get_context(
        self, session_id: str, *, max_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """Return the session's history in the chat-completions shape, oldest first.

        A plain message is exactly ``{"role": ..., "content": ...}``. With
        ``max_tokens``, only the newest messages that fit are returned (counted
        with ``token_counter``), never splitting a tool call from its results.
        Tool results whose call the history limit trimmed away are left out,
        since a model API rejects a tool result that follows no call.
        """
        return [m.to_chat() for m in self.context_messages(session_id, max_tokens=max_tokens)]

    def context_messages(self, session_id: str, *, max_tokens: int | None = None) -> list[Message]:
        """Return the messages :meth:`get_context` would give, as :class:`Message` records."""
        messages = self.get_messages(session_id)
        if max_tokens is None:
            return drop_orphan_tool_results(messages)
        check_whole_number("max_tokens", max_tokens, 0)
        return fit_to_budget(messages, max_tokens, self._token_counter)

    def clear(self, session_id: str) -> None:
        """Forget everything the session stored."""
        keys = self._session_keys(session_id)
        with _wrap_redis_errors(write=True):
            self._client.delete(*keys)

    def ttl(self, session_id: str) -> float | None:
        """Return the seconds left before the session expires, or None if it never will.

        A session with nothing stored also gives None.
        """
        history_key = self._keys.history(session_id)
        with _wrap_redis_errors(write=False):
            pttl = int(self._client.pttl(history_key))
        return None if pttl < 0 else pttl / 1000

    def _session_keys(self, session_id: str) -> tuple[str, str]:
        encode_session_id(session_id)
        return self._keys.history(session_id), self._keys.ids(session_id)

    def _stamp(self, message: Message, now: float) -> Message:
        return Message(
            role=message.role,
            content=message.content,
            id=message.id or uuid.uuid4().hex,
            created_at=message.created_at if message.created_at is not None else now,
            tool_calls=message.tool_calls,
            tool_call_id=message.tool_call_id,
            name=message.name,
        )


def _ttl_ms(ttl: float | timedelta | None) -> int | None:
    if ttl is None:
        return None
    seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        raise InvalidInputError(f"ttl must be a positive number of seconds or None, not {ttl!r}")
    return max(1, round(seconds * 1000))


@contextmanager
def _wrap_redis_errors(*, write: bool, messages: list[Message] | None = None) -> Iterator[None]:
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        error: StorageError
        if write:
            error = WriteOutcomeUnknownError(
                f"Redis did not answer the write ({exc}); it may or may not have happened",
                messages or (),
            )
        else:
            error = StorageUnavailableError(f"Redis could not be reached ({exc})")
        raise error from exc
    except redis.RedisError as exc:
        raise StorageUnavailableError(f"Redis refused the command ({exc})") from exc
