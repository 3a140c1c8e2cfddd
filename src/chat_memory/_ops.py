"""Every memory operation, written once, without I/O: generators that yield what to send.

An operation yields a request (run the append script, send a command, ask the
model) and receives its reply; a redis-py exception is thrown back into it, so
that the operation, not the shell, decides what it means. The sync and async
services only perform requests (:func:`run` and :func:`arun`), the way a
sans-I/O core serves both worlds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeVar

from ._codec import DecodeError, decode, encode_for_storage
from ._compat import REDIS_EXCEPTIONS, internal_failure, redirected_in_vain
from ._core import AppendCall, AppendResult, MemoryCore, MessageInput, seconds_left
from ._errors import Op, script_error, storage_error, wrong_type_key
from ._keys import as_stored, encode_session_id, listed_session_id
from ._message import Message
from ._users import (
    CompactResult,
    ForgetResult,
    ImportResult,
    SessionInfo,
    decode_metadata,
    encode_metadata,
    parse_export,
    read_listing,
    render_export,
)
from .exceptions import (
    CompactionConflictError,
    CorruptEntryError,
    InvalidInputError,
    NotReplicatedError,
    SessionChangedError,
    SessionExistsError,
    StorageError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
    WrongKeyTypeError,
    check_whole_number,
)

MAX_LISTING = 1000
"""The most sessions one listing call returns."""

__all__ = [
    "Ask",
    "Command",
    "Operation",
    "Request",
    "RunScript",
    "Summarize",
    "add_messages",
    "arun",
    "clear",
    "compact",
    "context_messages",
    "export_session",
    "forget_user",
    "get_messages",
    "get_metadata",
    "import_session",
    "list_sessions",
    "pop_message",
    "run",
    "set_metadata",
    "ttl",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunScript:
    """Run one of the memory's scripts ("append" or "sessions") with these keys and arguments."""

    keys: tuple[str, ...]
    args: list[bytes]
    script: str = "append"
    writes: bool = True
    """Whether it may change data: with a durability setting, replicas must confirm it."""


@dataclass(frozen=True, slots=True)
class Confirm:
    """With a durability setting, run ``barrier``; without one, send nothing.

    For a retry that found every message stored and so wrote nothing: a
    ``WAIT`` after no write counts the replicas that hold nothing of this
    connection's, which says nothing about the stored messages. The barrier
    (the append script without messages, see append.lua) writes the session's
    expiry again, as an append would, which the replicas receive after every
    earlier write of the session; the shell then waits for them.
    """

    barrier: RunScript


@dataclass(frozen=True, slots=True)
class Command:
    """Send one Redis command; ``raw`` asks for the reply's bytes, undecoded."""

    args: tuple[Any, ...]
    raw: bool = False
    writes: bool = False
    """Whether it changes data: with a durability setting, replicas must confirm it."""


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the chat model for its reply to ``messages``; its errors reach the caller unchanged."""

    messages: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Summarize:
    """Ask the caller's summarizer for the summary of ``messages`` (a compaction)."""

    messages: list[Message]


Request: TypeAlias = RunScript | Command | Ask | Summarize | Confirm
Operation: TypeAlias = Generator[Request, Any, T]


def add_messages(
    core: MemoryCore, session_id: str, messages: Iterable[MessageInput]
) -> Operation[AppendResult]:
    """Append messages in one atomic script; see ``MemoryService.add_messages``."""
    call = core.plan_append(session_id, messages)
    try:
        reply = yield RunScript(call.keys, call.sent)
    except NotReplicatedError as short:
        core.checked = False  # a failed append: the next one asks about permissions again
        raise short.with_messages(call.messages) from None
    except REDIS_EXCEPTIONS as exc:
        core.checked = False  # the next append asks about permissions: another server may answer
        if not redirected_in_vain(exc):
            raise script_error(exc, keys=call.keys, messages=call.messages) from exc
        call, reply = yield from _declaring_what_exists(call)
    result = core.finish_append(call, reply)
    if not result.appended:  # a retry of stored messages: are they on the replicas?
        try:
            yield Confirm(RunScript(call.keys, call.barrier))
        except NotReplicatedError as short:
            raise short.with_messages(call.messages) from None
        except REDIS_EXCEPTIONS as exc:
            # This call found them stored, perhaps by an earlier attempt of its own whose
            # answer was lost: an error saying nothing was written would be false.
            failed = script_error(exc, keys=call.keys, messages=call.messages)
            raise WriteOutcomeUnknownError(
                "the messages are stored (this call found them all stored), but the write"
                f" its wait for the replicas follows failed ({failed}); sending them again"
                " is safe",
                call.messages,
            ) from exc
    return result


_TYPES: Final = {"h": "list", "s": "hash", "i": "list", "m": "hash", "x": "zset"}
"""The type of the key each role letter of an append names (see append.lua)."""


def _declaring_what_exists(call: AppendCall) -> Operation[tuple[AppendCall, Any]]:
    """Run the append again, declaring only the keys the session has; return it and its reply.

    The session's slot is being migrated and a key the call declared is missing
    on a node: nothing ran. A key of another type is refused here, before any
    step writes. A user's session, or a brand-new one, is written in steps (see
    :func:`_in_steps`).
    """
    present = []
    for key, role in zip(call.keys, call.roles, strict=True):
        try:
            found = yield from _read(Command(("TYPE", key)), key)
        except StorageError as failed:  # the redirected attempts may have written: say so
            raise WriteOutcomeUnknownError(
                f"the cluster kept redirecting the append, then reading its keys failed"
                f" ({failed}): it may or may not have happened, and a retry is safe",
                call.messages,
            ) from failed
        kind = found.decode() if isinstance(found, bytes) else str(found)
        if kind not in ("none", _TYPES[role]):
            raise WrongKeyTypeError(key, kind)
        if kind != "none":
            present.append(key)
    if "x" in call.roles or call.keys[0] not in present:
        return (yield from _in_steps(call, present))
    call = call.declaring(present)
    return call, (yield from _append_script(call))


def _in_steps(call: AppendCall, present: list[str]) -> Operation[tuple[AppendCall, Any]]:
    """Append in steps, each declaring keys that one node holds: index, metadata, history, ids.

    While a slot migrates, Redis refuses (TRYAGAIN) a script that declares keys
    missing on a node beside ones it has, and redis-py's retries end without
    anything written. A user's index and sessions, and a brand-new session's
    keys (missing) beside the others, may be on two nodes, so:

    - a user's session is listed in the index first (or has its last activity
      moved on), so that nothing is ever stored that the user's listing and
      erasure cannot reach; a brand-new one gets its created_at, and is listed
      again (a listing in between found no metadata and dropped it);
    - a brand-new session without a user has its metadata's TTL restarted, if
      it has metadata;
    - the append declares the keys the session has, never the index (a
      brand-new session: its history alone);
    - a brand-new session's ids follow, in its hash (without the field '', so
      the next append reads the history once and completes it) and in its list
      of ids (a retry window longer than the history), so that its next message,
      and a resent one, declare them beside the history;
    - the index last, for a TTL no shorter than the session's, whatever failed.

    A step that wrote but was not confirmed by the replicas (a durability
    setting) does not stop the others: the call ends with NotReplicatedError.
    """
    keys = dict(zip(call.roles, call.keys, strict=True))
    ttl, window, now, member = call.args[1], call.args[2], call.args[3], call.args[4]
    new = keys["h"] not in present
    user = "x" in keys
    enlist = ((keys.get("x", ""),), [b"enlist", member, ttl, now])  # a user's session only
    short: list[NotReplicatedError] = []
    if user:
        yield from _alone(*enlist, call, short)
    if new and (user or keys.get("m") in present):
        yield from _alone((keys["m"],), [b"created", ttl, now if user else b""], call, short)
        if user:
            yield from _alone(*enlist, call, short)
    narrowed = call.declaring(() if new else present, without_index=True)
    try:
        reply = yield from _going_on(_append_script(narrowed), short)
        if new:
            stored = [item for item, done in zip(call.encoded, reply, strict=True) if done == 1]
            ids = [str(item.message.id).encode() for item in stored]
            pairs = [part for item, id_ in zip(stored, ids, strict=True)
                     for part in (id_, item.fingerprint)]  # fmt: skip
            if ids:
                yield from _alone((keys["s"],), [b"remember", ttl, *pairs], call, short, True)
            if ids and "i" in keys:
                yield from _alone((keys["i"],), [b"ids", ttl, window, *ids], call, short, True)
    except Exception:
        if user:  # the index's TTL all the same; the call fails with its own error, and
            # whatever this step raises or leaves unconfirmed is dropped
            with suppress(Exception):
                yield from _alone(*enlist, call, [], True)
        raise
    if user:
        yield from _alone(*enlist, call, short, True)
    if short:
        raise short[0].with_messages(call.messages)
    return narrowed, reply


def _alone(
    keys: tuple[str, ...],
    args: list[bytes],
    call: AppendCall,
    short: list[NotReplicatedError],
    stored: bool = False,
) -> Operation[None]:
    """Run one operation of the sessions script for ``call``'s session (see sessions.lua).

    A write the replicas did not confirm is added to ``short``. ``stored``: the
    call's messages are stored already, whatever this step's fate.
    """
    try:
        yield RunScript(keys, args, script="sessions", writes=True)
    except NotReplicatedError as unconfirmed:
        short.append(unconfirmed)
    except REDIS_EXCEPTIONS as exc:
        if stored:
            raise WriteOutcomeUnknownError(
                f"the messages were stored, but the next step of the write ({args[0].decode()})"
                f" failed ({type(exc).__name__}: {exc}): resending them is safe, and stores"
                " nothing twice",
                call.messages,
            ) from exc
        raise script_error(exc, keys=keys, messages=call.messages) from exc


def _going_on(write: Operation[Any], short: list[NotReplicatedError]) -> Operation[Any]:
    """Run one write of a call that goes on when the replicas did not confirm a write.

    Such a write is done on the primary: it is added to ``short``, and its reply
    (``NotReplicatedError.reply``) is returned; the call ends with the first.
    """
    try:
        return (yield from write)
    except NotReplicatedError as unconfirmed:
        short.append(unconfirmed)
        return unconfirmed.reply


def _append_script(call: AppendCall) -> Operation[Any]:
    """Run the append script once more; its failure is the call's."""
    try:
        return (yield RunScript(call.keys, call.sent))
    except NotReplicatedError as short:
        raise short.with_messages(call.messages) from None
    except REDIS_EXCEPTIONS as again:
        raise script_error(again, keys=call.keys, messages=call.messages) from again


def get_messages(core: MemoryCore, session_id: str) -> Operation[list[Message]]:
    """Load and decode the session's entries, oldest first."""
    key = core.keys.history(session_id)
    raw = yield from _read(Command(("LRANGE", key, 0, -1), raw=True), key)
    return core.decode_history(session_id, raw)


def context_messages(
    core: MemoryCore, session_id: str, max_tokens: int | None
) -> Operation[list[Message]]:
    """Load the messages a model is given (whole tool exchanges, within ``max_tokens``)."""
    return core.context((yield from get_messages(core, session_id)), max_tokens)


def ttl(core: MemoryCore, session_id: str) -> Operation[float | None]:
    """Return the seconds left before the session expires, or None."""
    key = core.keys.history(session_id)
    return seconds_left(int((yield from _read(Command(("PTTL", key)), key))))


def clear(core: MemoryCore, session_id: str) -> Operation[None]:
    """Delete every key of the session (and its entry in its user's index)."""
    keys = core.session_keys(session_id)
    if core.keys.index() is None:
        try:
            yield Command(("DEL", *keys), writes=True)
        except REDIS_EXCEPTIONS as exc:
            raise storage_error(exc, op=Op.WRITE) from exc
        return
    member = encode_session_id(session_id).encode()
    yield from _sessions_script(keys, [b"clear", member])


def pop_message(core: MemoryCore, session_id: str, *, attempts: int) -> Operation[Message | None]:
    """Remove the newest message and forget its id, if it is still the newest when removed."""
    key = core.keys.history(session_id)
    for _ in range(attempts):
        newest = yield from _read(Command(("LRANGE", key, -1, -1), raw=True), key)
        if not newest:
            return None
        try:
            message = decode(newest[0])
        except DecodeError as exc:  # never removed unread: the caller learns which entry
            length = int((yield from _read(Command(("LLEN", key)), key)))
            raise CorruptEntryError(session_id, length - 1, str(exc)) from exc
        args = [b"pop", newest[0], (message.id or "").encode()]
        if (yield from _done_unless_changed(core.keys.all(session_id), args, message)):
            return message
    raise SessionChangedError(
        f"session {session_id!r} changed during each of {attempts} attempts to remove its"
        " newest message; nothing was removed"
    )


def _done_unless_changed(
    keys: tuple[str, ...], args: list[bytes], result: object
) -> Operation[bool]:
    """Run a write of the sessions script that answers 1 if done, 0 if the session changed first.

    A write the replicas did not confirm (a durability setting) was done on the
    primary if it answered 1: its NotReplicatedError then carries ``result``, what
    the call returns. Answered 0, it wrote nothing, whatever the replicas: False,
    for the caller to read the session again.
    """
    try:
        return bool((yield from _sessions_script(keys, args)) == 1)
    except NotReplicatedError as short:
        if short.reply != 1:
            return False
        raise short.with_reply(result) from None


def set_metadata(core: MemoryCore, session_id: str, metadata: object) -> Operation[None]:
    """Store the session's metadata document, atomically with the session (same TTL)."""
    doc = encode_metadata(metadata)
    member = encode_session_id(session_id).encode()
    ttl = str(core.ttl_ms or 0).encode()
    keys = core.session_keys(session_id)
    yield from _sessions_script(keys, [b"meta", member, ttl, core.now_ms(), doc])


def get_metadata(core: MemoryCore, session_id: str) -> Operation[dict[str, Any]]:
    """Return the session's metadata document (``{}`` if none was set)."""
    key = core.keys.meta(session_id)
    raw = yield from _read(Command(("HGET", key, "doc"), raw=True), key)
    return decode_metadata(session_id, raw)


def list_sessions(core: MemoryCore, *, offset: int, limit: int) -> Operation[list[SessionInfo]]:
    """Return the user's live sessions, most recently active first."""
    index = core.keys.index()
    if index is None:
        raise InvalidInputError("list_sessions needs a user's memory: memory.for_user(user_id)")
    check_whole_number("offset", offset, 0)
    check_whole_number("limit", limit, 1, MAX_LISTING)
    prefix = core.keys.session_prefix().encode()
    cluster = b"1" if core.on_cluster else b"0"
    args = [b"list", prefix, str(offset).encode(), str(limit).encode(), cluster]
    reply = yield from _sessions_script((index,), args)
    return read_listing(reply)


def forget_user(core: MemoryCore, *, batch: int) -> Operation[ForgetResult]:
    """Delete every session of the user and its index, ``batch`` sessions per script run."""
    index = core.keys.index()
    assert index is not None, "only a user's memory forgets"
    assert core.keys.user_id is not None
    prefix = core.keys.session_prefix().encode()
    sessions: list[str] = []
    deleted = 0
    cluster = b"1" if core.on_cluster else b"0"
    short: list[NotReplicatedError] = []
    while True:
        args = [b"forget", prefix, str(batch).encode(), cluster]
        try:  # a batch erased on the primary but unconfirmed: erase the rest
            reply = yield from _going_on(_sessions_script((index,), args), short)
        except StorageUnavailableError as refused:  # nothing done by this batch: say the rest
            if not sessions:
                raise
            raise WriteOutcomeUnknownError(
                f"the erasure stopped after {len(sessions)} session(s) of the user were"
                f" erased ({refused}); asking again finishes it"
            ) from refused
        deleted += int(reply[0])
        sessions += [_erased_id(member) for member in reply[2:]]
        if int(reply[1]) == 0:
            result = ForgetResult(core.keys.user_id, sessions, deleted)
            if short:
                raise short[0].with_reply(result)
            return result


def _erased_id(member: bytes) -> str:
    """Return the id of a session an erasure removed; one we never write, as stored."""
    try:
        return listed_session_id(member)
    except ValueError:
        return as_stored(member)


def export_session(core: MemoryCore, session_id: str) -> Operation[str]:
    """Return the session as JSON Lines, read in one snapshot."""
    entries, doc = yield from _sessions_script(core.keys.all(session_id), [b"export"])
    messages = core.decode_history(session_id, entries)
    return render_export(session_id, messages, decode_metadata(session_id, doc))


def import_session(
    core: MemoryCore, session_id: str, export: str, *, append: bool
) -> Operation[ImportResult]:
    """Store an export in the session; see ``MemoryService.import_session``."""
    metadata, messages = parse_export(export)
    entries, doc = yield from _sessions_script(core.keys.all(session_id), [b"export"])
    if (entries or doc) and not append:
        raise SessionExistsError(
            f"session {session_id!r} already holds messages or metadata: import with"
            " append=True to add to it"
        )
    known = {m.id for m in core.decode_history(session_id, entries)}
    fresh = [m for m in messages if m.id not in known]
    result = ImportResult(imported=fresh, skipped=[m for m in messages if m.id in known])
    short: list[NotReplicatedError] = []
    writes: list[Operation[object]] = [
        add_messages(core, session_id, fresh[start : start + core.idempotency_window])
        for start in range(0, len(fresh), core.idempotency_window)
    ]
    if metadata and not doc:
        writes.append(set_metadata(core, session_id, metadata))
    for done, write in enumerate(writes):
        try:  # a write stored on the primary but unconfirmed: store the rest
            yield from _going_on(write, short)
        except StorageError as failed:
            if len(writes) == 1 or (done == 0 and not failed.may_have_written):
                raise  # the call's own error: nothing else was written
            raise WriteOutcomeUnknownError(
                f"the import stopped after {done} of its {len(writes)} writes ({failed}): it"
                " may or may not have been stored in part; importing again with append=True"
                " finishes it, and stores nothing twice"
            ) from failed
    if short:
        raise short[0].with_reply(result)
    return result


def compact(
    core: MemoryCore, session_id: str, *, keep_last: int, attempts: int
) -> Operation[CompactResult]:
    """Fold all but the newest ``keep_last`` messages into one summary, if nothing changed."""
    check_whole_number("keep_last", keep_last, 0)
    keys = core.keys.all(session_id)
    for _ in range(attempts):
        entries, _doc = yield from _sessions_script(keys, [b"export"])
        history = core.decode_history(session_id, entries)
        fold = len(entries) - keep_last
        # Never fold a tool call away from its results: keep the whole exchange.
        while 0 < fold < len(history) and history[fold].role == "tool":
            fold -= 1
        if fold <= 0:
            return CompactResult(folded=0, summary=None)
        folded = history[:fold]
        text = yield Summarize(folded)
        summary = core.summary(text)
        item = encode_for_storage(summary)
        args = [
            b"compact",
            b"",
            str(core.ttl_ms or 0).encode(),
            core.window_arg,
            str(len(entries)).encode(),
            entries[0],
            entries[-1],
            str(fold).encode(),
            str(summary.id).encode(),
            item.fingerprint,
            item.entry,
        ]
        result = CompactResult(folded=fold, summary=summary)
        if (yield from _done_unless_changed(keys, args, result)):
            return result
    raise CompactionConflictError(
        f"session {session_id!r} changed during each of {attempts} attempts to compact it;"
        " nothing was folded"
    )


# The sessions script's actions the caller sees as reads: a failure of one changed
# nothing (list also drops expired sessions from the index, which no caller can
# tell apart from their expiry).
_READ_ACTIONS: Final = frozenset({b"export", b"list"})


def _sessions_script(keys: tuple[str, ...], args: list[bytes]) -> Operation[Any]:
    """Run the sessions script; its reply is raw bytes, whatever the client decodes."""
    op = Op.READ if args[0] in _READ_ACTIONS else Op.SCRIPT
    try:
        return (yield RunScript(keys, args, script="sessions", writes=op is not Op.READ))
    except REDIS_EXCEPTIONS as exc:
        raise script_error(exc, keys=keys, messages=[], op=op) from exc


def _read(command: Command, key: str) -> Operation[Any]:
    """Send a read; a key of another type is named, with its type."""
    try:
        return (yield command)
    except REDIS_EXCEPTIONS as exc:
        if not wrong_type_key(exc):
            raise storage_error(exc, op=Op.READ) from exc
        try:
            found = yield Command(("TYPE", key))
        except REDIS_EXCEPTIONS:
            found = "value of another type"
        text = found.decode() if isinstance(found, bytes) else str(found)
        raise WrongKeyTypeError(key, text) from exc


_THROWN_IN: Final[tuple[type[Exception], ...]] = (*REDIS_EXCEPTIONS, NotReplicatedError)
"""What a request may fail with that the operation, not the shell, decides the meaning of."""


def run(operation: Operation[T], perform: Callable[[Request], Any]) -> T:
    """Drive an operation with blocking I/O: ``perform`` sends each request."""
    reply: Any = None
    error: Exception | None = None
    while True:
        try:
            request = operation.send(reply) if error is None else operation.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            reply, error = perform(request), None
        except _THROWN_IN as exc:
            reply, error = None, exc
        except Exception as exc:  # only redis-py's own internal failures, see _compat
            reply, error = None, internal_failure(exc)
            if error is None:
                raise


async def arun(operation: Operation[T], perform: Callable[[Request], Awaitable[Any]]) -> T:
    """Drive an operation with asyncio: ``perform`` sends each request and is awaited."""
    reply: Any = None
    error: Exception | None = None
    while True:
        try:
            request = operation.send(reply) if error is None else operation.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            reply, error = await perform(request), None
        except _THROWN_IN as exc:
            reply, error = None, exc
        except Exception as exc:  # only redis-py's own internal failures, see _compat
            reply, error = None, internal_failure(exc)
            if error is None:
                raise
