"""The asyncio shells: the same operations as the sync services, awaited.

Everything but the I/O is shared with :mod:`chat_memory._service` and
:mod:`chat_memory._chat` (the operations in :mod:`chat_memory._ops`, the
settings and codec in :mod:`chat_memory._core`), so both APIs store, read,
refuse and report exactly alike. Build one service per process and share it
between tasks: the client's connection pool is what tasks share.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import redis.asyncio

from . import _ops as ops
from ._chat import text_chunk
from ._compat import RAW
from ._core import AppendResult, MessageInput
from ._durability import confirmed, unconfirmed
from ._message import Message, Role, ToolCall, message_for
from ._service import FORGET_BATCH, POP_ATTEMPTS
from ._shell import ChatShell, MemoryShell
from ._users import CompactResult, ForgetResult, ImportResult, SessionInfo
from .exceptions import InvalidInputError

if TYPE_CHECKING:
    pass

__all__ = ["AsyncChatModel", "AsyncChatService", "AsyncMemoryService", "AsyncStreamingChatModel"]

T = TypeVar("T")


@runtime_checkable
class AsyncChatModel(Protocol):
    """A language model with an async ``complete``: the reply text or an assistant Message."""

    async def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Return the model's reply to ``messages`` (oldest first)."""
        ...


@runtime_checkable
class AsyncStreamingChatModel(AsyncChatModel, Protocol):
    """An async language model that can also stream its reply, chunk by chunk."""

    def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Yield the reply to ``messages`` in chunks of text."""
        ...


class AsyncMemoryService(MemoryShell[redis.asyncio.Redis | redis.asyncio.RedisCluster]):
    """The conversation memory, for asyncio: :class:`~chat_memory.MemoryService`, awaited.

    ``client`` is a ``redis.asyncio.Redis`` or ``redis.asyncio.RedisCluster``;
    the settings, storage, errors and guarantees are those of
    :class:`~chat_memory.MemoryService`, and a session written by one reads
    back identically through the other. Build it once per process and share
    it: every call borrows a connection from the client's pool.
    """

    async def add_message(
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
        """Append one message and return it as stored; see ``MemoryService.add_message``."""
        message = message_for(
            role,
            content,
            message_id=message_id,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            name=name,
        )
        return (await self.add_messages(session_id, [message]))[0]

    async def add_messages(self, session_id: str, messages: Iterable[MessageInput]) -> AppendResult:
        """Append several messages in one atomic round trip; see ``MemoryService.add_messages``."""
        return await self._run(ops.add_messages(self._core, session_id, messages))

    async def get_messages(self, session_id: str) -> list[Message]:
        """Return the session's stored messages, oldest first; ``[]`` if it has none."""
        return await self._run(ops.get_messages(self._core, session_id))

    async def get_context(
        self, session_id: str, *, max_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """Return the history in the chat-completions shape; see ``MemoryService.get_context``."""
        messages = await self.context_messages(session_id, max_tokens=max_tokens)
        return [m.to_chat() for m in messages]

    async def context_messages(
        self, session_id: str, *, max_tokens: int | None = None
    ) -> list[Message]:
        """Return the messages :meth:`get_context` would give, as :class:`Message` records."""
        return await self._run(ops.context_messages(self._core, session_id, max_tokens))

    async def clear(self, session_id: str) -> None:
        """Forget everything the session stored."""
        await self._run(ops.clear(self._core, session_id))

    async def pop_message(self, session_id: str) -> Message | None:
        """Remove and return the session's newest message; None if it has none.

        Its id is forgotten with it, so the same message can be stored again
        (an app correcting its last turn). A newer message stored meanwhile is
        never removed: the read is retried, and after a few attempts
        :class:`SessionChangedError` says nothing was removed. A corrupt newest
        entry is :class:`CorruptEntryError`, and stays stored.
        """
        return await self._run(ops.pop_message(self._core, session_id, attempts=POP_ATTEMPTS))

    async def ttl(self, session_id: str) -> float | None:
        """Return the seconds left before the session expires, or None if it never will."""
        return await self._run(ops.ttl(self._core, session_id))

    async def set_metadata(self, session_id: str, metadata: Mapping[str, Any]) -> None:
        """Store the session's metadata: a JSON object (e.g. ``{"title": ...}``), replacing any.

        It is written atomically with the session, expires with it, and is
        refused (:class:`InvalidContentError`, nothing written) unless it is
        plain JSON of at most 16 KiB. ``"title"`` is shown by :meth:`list_sessions`.
        """
        await self._run(ops.set_metadata(self._core, session_id, metadata))

    async def get_metadata(self, session_id: str) -> dict[str, Any]:
        """Return the session's metadata (``{}`` if none was set)."""
        return await self._run(ops.get_metadata(self._core, session_id))

    async def list_sessions(self, *, limit: int = 20, offset: int = 0) -> list[SessionInfo]:
        """Return this user's live sessions, most recently active first (needs :meth:`for_user`).

        Exact: a session that expired or was cleared is never listed, and every
        live one is. ``offset`` skips that many; ``limit`` is 1 to 1000.
        """
        return await self._run(ops.list_sessions(self._core, offset=offset, limit=limit))

    async def forget_user(self, user_id: str) -> ForgetResult:
        """Erase every session of ``user_id`` and its index; return what was removed.

        Safe to repeat, and bounded: the sessions go 100 at a time, each batch
        atomically (a listing never shows a half-erased session). Other users,
        and sessions without a user, are untouched.
        """
        user = self._core.for_user(user_id)
        return await self._run(ops.forget_user(user, batch=FORGET_BATCH))

    async def export_session(self, session_id: str) -> str:
        """Return the session as JSON Lines: a header with its metadata, then every message.

        Lossless (ids, times, tool calls, metadata) and read in one snapshot;
        :meth:`import_session` reads it back.
        """
        return await self._run(ops.export_session(self._core, session_id))

    async def import_session(
        self, session_id: str, export: str, *, append: bool = False
    ) -> ImportResult:
        """Store an export (from :meth:`export_session`) as ``session_id``, ids and times kept.

        Refused with :class:`SessionExistsError` if the session holds anything,
        unless ``append``: then messages whose id the session already holds are
        skipped, and its metadata is kept. Every line is checked before anything
        is written; the history limit applies as to any append.
        """
        return await self._run(ops.import_session(self._core, session_id, export, append=append))

    async def compact(
        self,
        session_id: str,
        summarize: Callable[[list[Message]], str | Awaitable[str]],
        *,
        keep_last: int,
        attempts: int = 3,
    ) -> CompactResult:
        """Fold every message but the newest ``keep_last`` into one summary message.

        ``summarize(messages)`` returns the summary text (or an awaitable of it); it runs outside
        Redis. The summary (a system message named ``"summary"``) replaces the
        folded messages only if the session did not change meanwhile; otherwise
        the session is read and summarized again, up to ``attempts`` times, and
        then :class:`CompactionConflictError` says nothing was folded. A message
        appended meanwhile is never lost. A ``summarize`` that cannot be called
        is refused with :class:`InvalidInputError` before anything is read.
        """
        operation = self._compaction(session_id, summarize, keep_last=keep_last, attempts=attempts)
        return await self._run(operation, summarize=summarize)

    async def _run(
        self,
        operation: ops.Operation[T],
        llm: AsyncChatModel | None = None,
        summarize: Callable[[list[Message]], str | Awaitable[str]] | None = None,
    ) -> T:
        """Drive one operation of :mod:`chat_memory._ops` over this memory's client (internal)."""

        async def perform(request: ops.Request) -> Any:
            if isinstance(request, ops.Confirm):  # a retry's barrier, sent only to be confirmed
                if self._durability is None:
                    return None
                request = request.barrier
            if isinstance(request, ops.RunScript):
                # As the sync service: raw bytes, and the script loaded on a server without it.
                try:
                    return await self._send(self._evalsha(request), RAW, writes=request.writes)
                except redis.exceptions.NoScriptError:
                    script = self._script(request.script)
                    script.sha = await self._client.script_load(script.script)
                    return await self._send(self._evalsha(request), RAW, writes=request.writes)
            if isinstance(request, ops.Ask):
                # Only a turn asks, with its chat's model: ChatShell refuses one without complete.
                assert llm is not None, "only a chat turn asks the model"
                return await llm.complete(request.messages)
            if isinstance(request, ops.Summarize):
                # Only compact summarizes, after _compaction refused what it cannot call.
                assert summarize is not None, "only a compaction summarizes"
                summary = summarize(request.messages)
                return await summary if inspect.isawaitable(summary) else summary
            options = RAW if request.raw else {}
            return await self._send(request.args, options, writes=request.writes)

        return await ops.arun(operation, perform)

    async def _send(
        self, command: tuple[Any, ...], options: Mapping[str, Any], *, writes: bool
    ) -> Any:
        """Send one command; a write with a durability setting is followed by its WAIT.

        As the sync service: one pipeline, so the WAIT counts this connection's
        writes (a durability setting is refused for an asyncio cluster client).
        """
        durability = self._durability
        if durability is None or not writes:
            return await self._client.execute_command(*command, **options)
        pipe = self._client.pipeline(transaction=False)
        pipe.execute_command(*command, **options)
        pipe.execute_command(*durability.wait_command())
        replies = await pipe.execute(raise_on_error=False)
        if unconfirmed(durability, replies):
            with suppress(TypeError):  # redis-py 5's BlockingConnectionPool: no such argument
                await self._client.connection_pool.disconnect(inuse_connections=False)  # type: ignore[union-attr]
        return confirmed(durability, replies)


class AsyncChatService(ChatShell[AsyncMemoryService, AsyncChatModel]):
    """Chat turns for asyncio: :class:`~chat_memory.ChatService` over an async model, awaited."""

    async def prompt(self, session_id: str, user_text: str) -> list[dict[str, Any]]:
        """Return the exact prompt a turn with ``user_text`` would send to the model."""
        return await self._memory._run(self._core.prompt(session_id, Message("user", user_text)))

    async def reply(self, session_id: str, user_text: str) -> str:
        """Run one turn and return the answer's text; see ``ChatService.reply``."""
        return (await self.respond(session_id, user_text)).content or ""

    async def respond(self, session_id: str, user_text: str) -> Message:
        """Run one turn and return the answer as stored; see ``ChatService.respond``."""
        return await self._memory._run(self._core.respond(session_id, user_text), self._llm)

    async def stream(self, session_id: str, user_text: str) -> AsyncGenerator[str, None]:
        """Run one turn, yielding the reply chunk by chunk; see ``ChatService.stream``.

        The turn is stored whole once the stream has ended, and not at all if
        the stream fails, the caller stops reading early, or the task is cancelled.
        """
        if not isinstance(self._llm, AsyncStreamingChatModel):
            raise InvalidInputError("the model cannot stream: it has no stream(messages) method")
        user = Message("user", user_text)
        chunks: list[str] = []
        async for chunk in self._llm.stream(await self.prompt(session_id, user_text)):
            chunks.append(text_chunk(chunk))
            yield chunk
        await self._memory._run(self._core.store(session_id, user, "".join(chunks)))
