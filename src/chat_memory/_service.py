"""The memory service: append, load, trim, expire and clear a session's history.

A thin shell over :mod:`chat_memory._core`: it sends what the core prepares
and hands back what Redis answered; every redis-py exception becomes one of
the library's own (:mod:`chat_memory._errors`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar

import redis

from . import _ops as ops
from ._compat import RAW, REDIRECTED, REDIS_EXCEPTIONS
from ._core import AppendResult, MessageInput
from ._durability import confirmed, unconfirmed
from ._message import Message, Role, ToolCall, message_for
from ._shell import MemoryShell
from ._users import CompactResult, ForgetResult, ImportResult, SessionInfo

if TYPE_CHECKING:
    from ._chat import ChatModel

T = TypeVar("T")

FORGET_BATCH = 100
"""How many sessions one erasure script removes: it blocks Redis only that long."""
POP_ATTEMPTS = 10
"""How many times ``pop_message`` reads the newest message again when a write beat it."""

__all__ = ["MemoryService"]


class MemoryService(MemoryShell[redis.Redis | redis.RedisCluster]):
    """The conversation memory of every session, stored in Redis.

    ``client`` is a ``redis.Redis`` or ``redis.RedisCluster``, with any
    ``encoding`` and ``decode_responses``: the memory sends and reads UTF-8
    bytes itself. Each session keeps its newest ``max_history`` messages; with
    a ``ttl`` (seconds or a timedelta) a session expires after that long
    without a write, and with ``ttl=None`` it is made persistent on its next
    write. Every write is one atomic round trip (a Lua script), idempotent per
    message id for the ``idempotency_window`` newest ids of the session
    (default: ``max_history``, or 20 if that is larger: every message still in
    the history; a longer window is an opt-in that costs memory per id).
    With ``durability`` (a :class:`Durability`), every write waits until that
    many replicas confirm it, or raises :class:`NotReplicatedError`.
    """

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

        Passing the ``message_id`` of a message already stored appends nothing
        and returns the stored message, so a call that failed with
        :class:`WriteOutcomeUnknownError` can be retried safely with the same
        id. The same id with other content is :class:`MessageIdConflictError`.
        """
        message = message_for(
            role,
            content,
            message_id=message_id,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            name=name,
        )
        return self.add_messages(session_id, [message])[0]

    def add_messages(self, session_id: str, messages: Iterable[MessageInput]) -> AppendResult:
        """Append several messages (e.g. a whole turn) in one atomic round trip.

        Every message is checked first: if one is invalid, none is written.
        Returns the messages as stored, in order; ``.appended`` and
        ``.already_stored`` tell which ids were new.
        """
        return self._run(ops.add_messages(self._core, session_id, messages))

    def get_messages(self, session_id: str) -> list[Message]:
        """Return the session's stored messages, oldest first; ``[]`` if it has none.

        Raises :class:`CorruptEntryError` if any entry cannot be decoded.
        """
        return self._run(ops.get_messages(self._core, session_id))

    def get_context(
        self, session_id: str, *, max_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """Return the session's history in the chat-completions shape, oldest first.

        A plain message is exactly ``{"role": ..., "content": ...}``. With
        ``max_tokens``, only the newest messages that fit are returned (counted
        with ``token_counter``), never splitting a tool call from its results.
        A tool result that follows no call of its own (the history limit
        trimmed it away, or it was never stored) is left out, since a model API
        rejects it.
        """
        return [m.to_chat() for m in self.context_messages(session_id, max_tokens=max_tokens)]

    def context_messages(self, session_id: str, *, max_tokens: int | None = None) -> list[Message]:
        """Return the messages :meth:`get_context` would give, as :class:`Message` records."""
        return self._run(ops.context_messages(self._core, session_id, max_tokens))

    def clear(self, session_id: str) -> None:
        """Forget everything the session stored."""
        self._run(ops.clear(self._core, session_id))

    def pop_message(self, session_id: str) -> Message | None:
        """Remove and return the session's newest message; None if it has none.

        Its id is forgotten with it, so the same message can be stored again
        (an app correcting its last turn). A newer message stored meanwhile is
        never removed: the read is retried, and after a few attempts
        :class:`SessionChangedError` says nothing was removed. A corrupt newest
        entry is :class:`CorruptEntryError`, and stays stored.
        """
        return self._run(ops.pop_message(self._core, session_id, attempts=POP_ATTEMPTS))

    def ttl(self, session_id: str) -> float | None:
        """Return the seconds left before the session expires, or None if it never will.

        A session with nothing stored also gives None.
        """
        return self._run(ops.ttl(self._core, session_id))

    def set_metadata(self, session_id: str, metadata: Mapping[str, Any]) -> None:
        """Store the session's metadata: a JSON object (e.g. ``{"title": ...}``), replacing any.

        It is written atomically with the session, expires with it, and is
        refused (:class:`InvalidContentError`, nothing written) unless it is
        plain JSON of at most 16 KiB. ``"title"`` is shown by :meth:`list_sessions`.
        """
        self._run(ops.set_metadata(self._core, session_id, metadata))

    def get_metadata(self, session_id: str) -> dict[str, Any]:
        """Return the session's metadata (``{}`` if none was set)."""
        return self._run(ops.get_metadata(self._core, session_id))

    def list_sessions(self, *, limit: int = 20, offset: int = 0) -> list[SessionInfo]:
        """Return this user's live sessions, most recently active first (needs :meth:`for_user`).

        Exact: a session that expired or was cleared is never listed, and every
        live one is. ``offset`` skips that many; ``limit`` is 1 to 1000.
        """
        return self._run(ops.list_sessions(self._core, offset=offset, limit=limit))

    def forget_user(self, user_id: str) -> ForgetResult:
        """Erase every session of ``user_id`` and its index; return what was removed.

        Safe to repeat, and bounded: the sessions go 100 at a time, each batch
        atomically (a listing never shows a half-erased session). Other users,
        and sessions without a user, are untouched.
        """
        user = self._core.for_user(user_id)
        return self._run(ops.forget_user(user, batch=FORGET_BATCH))

    def export_session(self, session_id: str) -> str:
        """Return the session as JSON Lines: a header with its metadata, then every message.

        Lossless (ids, times, tool calls, metadata) and read in one snapshot;
        :meth:`import_session` reads it back.
        """
        return self._run(ops.export_session(self._core, session_id))

    def import_session(self, session_id: str, export: str, *, append: bool = False) -> ImportResult:
        """Store an export (from :meth:`export_session`) as ``session_id``, ids and times kept.

        Refused with :class:`SessionExistsError` if the session holds anything,
        unless ``append``: then messages whose id the session already holds are
        skipped, and its metadata is kept. Every line is checked before anything
        is written; the history limit applies as to any append.
        """
        return self._run(ops.import_session(self._core, session_id, export, append=append))

    def compact(
        self,
        session_id: str,
        summarize: Callable[[list[Message]], str],
        *,
        keep_last: int,
        attempts: int = 3,
    ) -> CompactResult:
        """Fold every message but the newest ``keep_last`` into one summary message.

        ``summarize(messages)`` returns the summary text; it runs outside
        Redis. The summary (a system message named ``"summary"``) replaces the
        folded messages only if the session did not change meanwhile; otherwise
        the session is read and summarized again, up to ``attempts`` times, and
        then :class:`CompactionConflictError` says nothing was folded. A message
        appended meanwhile is never lost. A ``summarize`` that cannot be called
        is refused with :class:`InvalidInputError` before anything is read.
        """
        operation = self._compaction(session_id, summarize, keep_last=keep_last, attempts=attempts)
        return self._run(operation, summarize=summarize)

    def _run(
        self,
        operation: ops.Operation[T],
        llm: ChatModel | None = None,
        summarize: Callable[[list[Message]], str] | None = None,
    ) -> T:
        """Drive one operation of :mod:`chat_memory._ops` over this memory's client (internal)."""

        def perform(request: ops.Request) -> Any:
            if isinstance(request, ops.Confirm):  # a retry's barrier, sent only to be confirmed
                if self._durability is None:
                    return None
                request = request.barrier
            if isinstance(request, ops.RunScript):
                # Raw bytes (see _evalsha); a server without the script (restarted, failed
                # over) is given it, as redis-py's Script does.
                try:
                    return self._send(
                        self._evalsha(request), RAW, request.keys[0], writes=request.writes
                    )
                except redis.exceptions.NoScriptError:
                    script = self._script(request.script)
                    script.sha = self._client.script_load(script.script)
                    return self._send(
                        self._evalsha(request), RAW, request.keys[0], writes=request.writes
                    )
            if isinstance(request, ops.Ask):
                # Only a turn asks, with its chat's model: ChatShell refuses one without complete.
                assert llm is not None, "only a chat turn asks the model"
                return llm.complete(request.messages)
            if isinstance(request, ops.Summarize):
                # Only compact summarizes, after _compaction refused what it cannot call.
                assert summarize is not None, "only a compaction summarizes"
                return summarize(request.messages)
            options = RAW if request.raw else {}
            return self._send(request.args, options, request.args[1], writes=request.writes)

        return ops.run(operation, perform)

    def _node_client(self, key: str) -> redis.Redis:
        """Return the client of the node holding ``key`` on a cluster, else the memory's own."""
        if isinstance(self._client, redis.RedisCluster):
            node = self._client.get_node_from_key(key)  # type: ignore[no-untyped-call]
            return self._client.get_redis_connection(node)
        return self._client

    def _send(
        self, command: tuple[Any, ...], options: Mapping[str, Any], key: str, *, writes: bool
    ) -> Any:
        """Send one command; a write with a durability setting is followed by its WAIT.

        The WAIT goes on the same connection, in one pipeline: it counts the
        replicas that have every write of its own connection. On a cluster,
        that is a connection of the node holding ``key``.
        """
        durability = self._durability
        if durability is None or not writes:
            return self._client.execute_command(*command, **options)  # type: ignore[no-untyped-call]
        node_client = self._node_client(key)
        pipe = node_client.pipeline(transaction=False)
        pipe.execute_command(*command, **options)  # type: ignore[no-untyped-call]
        pipe.execute_command(*durability.wait_command())  # type: ignore[no-untyped-call]
        try:
            replies = pipe.execute(raise_on_error=False)
        except REDIS_EXCEPTIONS:
            if isinstance(self._client, redis.RedisCluster):
                # The node may be gone (its replica promoted): a keyed read through the
                # cluster client makes it look the slot's master up again, for the retry.
                with suppress(*REDIS_EXCEPTIONS):
                    self._client.execute_command("EXISTS", key)  # type: ignore[no-untyped-call]
            raise
        if isinstance(self._client, redis.RedisCluster) and isinstance(replies[0], REDIRECTED):
            # The slot is elsewhere or moving: nothing ran on that node. The cluster
            # client finds the node and writes, but its WAIT would ask another connection.
            reply: Any
            try:
                reply = self._client.execute_command(*command, **options)  # type: ignore[no-untyped-call]
            except redis.exceptions.ResponseError as refused:
                reply = refused  # confirmed() raises it: with the count if the script wrote
            replies = [reply, redis.exceptions.ResponseError(f"the slot of {key!r} moved")]
        elif unconfirmed(durability, replies):
            with suppress(TypeError):  # redis-py 5's BlockingConnectionPool: no such argument
                node_client.connection_pool.disconnect(inuse_connections=False)
        return confirmed(durability, replies)
