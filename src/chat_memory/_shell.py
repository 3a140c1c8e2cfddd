"""What the sync and async services have in common: settings, properties, the script.

Each service adds only its I/O: blocking calls in :mod:`chat_memory._service`
and :mod:`chat_memory._chat`, awaited ones in :mod:`chat_memory._async`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import redis
import redis.asyncio

from . import _ops
from ._budget import TokenCounter, approximate_tokens
from ._core import APPEND_LUA, DEFAULT_MAX_MESSAGE_BYTES, SESSIONS_LUA, MemoryCore
from ._durability import Durability
from ._keys import DEFAULT_NAMESPACE, KeyLayout
from ._message import _type_name
from .exceptions import InvalidInputError

if TYPE_CHECKING:
    from ._chat import ChatCore
    from ._ops import Operation, RunScript
    from ._users import CompactResult

__all__ = ["ChatShell", "MemoryShell"]

ClientT = TypeVar(
    "ClientT", redis.Redis | redis.RedisCluster, redis.asyncio.Redis | redis.asyncio.RedisCluster
)
MemoryT = TypeVar("MemoryT", bound="MemoryShell[Any]")
ModelT = TypeVar("ModelT")


class MemoryShell(Generic[ClientT]):
    """Settings and properties of a memory service, over a client of its kind."""

    def __init__(
        self,
        client: ClientT,
        max_history: int = 20,
        *,
        ttl: float | timedelta | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        idempotency_window: int | None = None,
        clock: Callable[[], float] | None = None,
        token_counter: TokenCounter = approximate_tokens,
        durability: Durability | None = None,
    ) -> None:
        """Check the settings (:class:`InvalidInputError` names a bad one); nothing is sent yet."""
        self._core = MemoryCore(
            max_history,
            ttl=ttl,
            namespace=namespace,
            max_message_bytes=max_message_bytes,
            idempotency_window=idempotency_window,
            clock=clock,
            token_counter=token_counter,
            on_cluster=isinstance(client, redis.RedisCluster | redis.asyncio.RedisCluster),
        )
        if durability is not None and not isinstance(durability, Durability):
            raise InvalidInputError(f"durability must be a Durability or None, not {durability!r}")
        if durability is not None and isinstance(client, redis.asyncio.RedisCluster):
            raise InvalidInputError(
                "durability needs WAIT on the connection that wrote, which redis-py's asyncio"
                " cluster client does not expose: use a durability setting with"
                " redis.RedisCluster, redis.asyncio.Redis or a Sentinel client"
            )
        self._durability = durability
        self._client: ClientT = client
        self._append: Any = client.register_script(APPEND_LUA)
        self._sessions: Any = client.register_script(SESSIONS_LUA)

    def _script(self, name: str) -> Any:
        """Return the registered script of that exact name ("append" or "sessions"), read now."""
        return {"append": self._append, "sessions": self._sessions}[name]

    def _evalsha(self, request: RunScript) -> tuple[Any, ...]:
        """Return the EVALSHA command that runs ``request``'s script with its keys and arguments.

        The services send it with redis-py's ``NEVER_DECODE``, as every read: the
        reply is bytes whatever the client decodes, so an entry or a metadata
        document that is not UTF-8 is reported as corrupt by chat-memory, not
        lost in redis-py's decoder as a failed connection.
        """
        script = self._script(request.script)
        return ("EVALSHA", script.sha, len(request.keys), *request.keys, *request.args)

    def _compaction(
        self, session_id: str, summarize: object, *, keep_last: int, attempts: int
    ) -> Operation[CompactResult]:
        """Return the compaction of a session; refuse a ``summarize`` that cannot be called."""
        if not callable(summarize):
            raise InvalidInputError(
                "summarize must be a function of the messages that returns the summary text,"
                f" not {_type_name(summarize)}"
            )
        return _ops.compact(self._core, session_id, keep_last=keep_last, attempts=attempts)

    def for_user(self: MemoryT, user_id: str) -> MemoryT:
        """Return this memory for the sessions of ``user_id``: same client, same settings.

        Its sessions belong to the user: they are listed by :meth:`list_sessions`
        and erased by ``forget_user``, and they live apart from sessions of the
        same id without a user (or of another user).
        """
        scoped = copy.copy(self)
        scoped._core = self._core.for_user(user_id)
        return scoped

    @property
    def user_id(self) -> str | None:
        """The user whose sessions this memory holds (None: sessions without a user)."""
        return self._core.keys.user_id

    @property
    def max_history(self) -> int:
        """How many of the newest messages each session keeps."""
        return self._core.max_history

    @property
    def max_message_bytes(self) -> int:
        """The most bytes one message may take once encoded for storage."""
        return self._core.max_message_bytes

    @property
    def idempotency_window(self) -> int:
        """How many of a session's newest message ids are remembered, to skip retries."""
        return self._core.idempotency_window

    @property
    def durability(self) -> Durability | None:
        """How many replicas confirm each write before it returns (None: no wait)."""
        return self._durability

    @property
    def token_counter(self) -> TokenCounter:
        """How this memory counts the tokens of a message."""
        return self._core.token_counter

    @property
    def core(self) -> MemoryCore:
        """Everything of this memory that is not I/O (settings, keys, codec); internal."""
        return self._core

    @property
    def keys(self) -> KeyLayout:
        """The key layout of this memory's namespace."""
        return self._core.keys


class ChatShell(Generic[MemoryT, ModelT]):
    """Settings of a chat service over a memory and a model of its kind."""

    def __init__(
        self,
        memory: MemoryT,
        llm: ModelT,
        *,
        system_prompt: str | None = None,
        max_prompt_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Configure the turn; nothing is sent until the first turn.

        A model without a callable ``complete`` is refused here, with
        :class:`~chat_memory.InvalidInputError`.
        """
        from ._chat import ChatCore

        if not callable(getattr(llm, "complete", None)):
            raise InvalidInputError("the model cannot answer: it has no complete(messages) method")
        self._core: ChatCore = ChatCore(
            memory.core,
            system_prompt=system_prompt,
            max_prompt_tokens=max_prompt_tokens,
            token_counter=token_counter,
        )
        self._memory = memory
        self._llm = llm
