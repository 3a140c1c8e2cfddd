"""Turn every exception redis-py raises into the library's own, telling what was written.

Pure functions, no I/O: the sync and async services share them.

``may_have_written`` is about the whole call, redis-py's own retries included.
redis-py resends a command after a connection error or a timeout, and the
first attempt may have been applied though its answer was lost. So:

- a connection error or timeout of a write is :class:`WriteOutcomeUnknownError`,
  whatever the last attempt saw, except a connection refused at setup in a
  way that repeats on every attempt (a TLS certificate not accepted, a wrong
  password): nothing was sent;
- a refusal of a single-command write (``DEL``) or of the append script before
  its first write (its own checks, out of memory, a command the user may not
  run) is a :class:`StorageUnavailableError`: the session is unchanged. For
  the script this holds across retries too: an earlier attempt that was
  applied would have made every id of the call "already stored", and the
  script then writes nothing at all (not even the TTL) that could be refused
  (with a durability setting, the barrier after it says so when it fails: see
  ``_ops.add_messages``).
  A read-only replica is the exception: after a failover a retry may reach a
  replica that has not seen the earlier attempt, so it is outcome-unknown;
- a cluster client that gave up after MOVED, ASK or TRYAGAIN alone (a slot
  being migrated) is, for a read, :class:`StorageUnavailableError`; for a
  write, :class:`WriteOutcomeUnknownError` all the same: none of those
  attempts ran, but an earlier one that timed out may have;
- an unknown scripting command (plain fakeredis, a proxy without scripts) is
  :class:`ScriptingUnavailableError`: nothing ran;
- the append script's report of a write refused after it stored the messages
  (a permission missing on this server, or revoked since the service's first
  append checked them) is :class:`PartialWriteError`, naming the command. A
  retry after a lost answer then finds the messages stored and writes nothing:
  it reports them stored, though the refused write (a trim, a TTL) was not made;
  except after a refused ``hset`` whose undo was refused too: the id is not
  stored, and the retry stores the message again;
- anything else from the append script (it may have failed halfway) is
  :class:`WriteOutcomeUnknownError`.
"""

from __future__ import annotations

import enum
import re
import ssl
from collections.abc import Sequence
from typing import Final

import redis.exceptions as rx

from ._compat import no_free_connection, redirected_in_vain
from ._durability import RefusedUnconfirmed
from ._message import Message
from .exceptions import (
    ChatMemoryError,
    MessageIdConflictError,
    PartialWriteError,
    PermissionDeniedError,
    ScriptingUnavailableError,
    StorageError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
    WrongKeyTypeError,
)

__all__ = ["Op", "script_error", "storage_error", "wrong_type_key"]

_SCRIPT_REFUSAL: Final = re.compile(
    r"CHATMEM_(?P<code>[A-Z]+)(?=\s|$)(?: (?P<arg>\S+))?(?: (?P<more>\S+))?"
)
_COMMAND: Final = re.compile(r"run the '(?P<command>[^']+)' command")
# An unknown (or, at a proxy, unsupported) scripting command: Redis and fakeredis quote it
# with ' or `, in any case. Nothing ran.
_NO_SCRIPTING: Final = re.compile(
    r"(?:unknown|unsupported) command ['`](?:evalsha|eval|script)['`]", re.IGNORECASE
)


# Raised when taking a connection from the pool, before anything is sent (redis-py 5.1+).
_POOL_EXHAUSTED: Final = getattr(rx, "MaxConnectionsError", ())


class Op(enum.Enum):
    """What kind of call failed, which decides what a failure can have written."""

    READ = "read"
    WRITE = "write"  # one command: a refusal changed nothing
    SCRIPT = "script"  # a writing script: a refusal may come halfway, unless it says otherwise


def storage_error(exc: Exception, *, op: Op, messages: Sequence[Message] = ()) -> StorageError:
    """Return the library's error for ``exc``, raised by redis-py during a call of kind ``op``."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, _POOL_EXHAUSTED) or no_free_connection(exc):
        return StorageUnavailableError(
            f"the client's connection pool has no free connection ({detail}); nothing was"
            " sent: share a BlockingConnectionPool sized for your tasks (see the README)"
        )
    if redirected_in_vain(exc):
        moving = (
            f"the cluster kept redirecting the call or answering TRYAGAIN, as while a slot is"
            f" migrated between nodes ({detail})"
        )
        if op is Op.READ:
            return StorageUnavailableError(
                f"{moving}; nothing was read or written: try again shortly"
            )
        # None of those attempts ran the write; but redis-py resends a call that timed out
        # or lost its connection, and such an earlier attempt may have been applied.
        return WriteOutcomeUnknownError(
            f"{moving}; none of those attempts wrote anything, but an earlier one that lost"
            " its answer may have: it may or may not have happened, and a retry is safe",
            messages,
        )
    if isinstance(exc, rx.AuthenticationError) or _tls_refused(exc):
        return StorageUnavailableError(
            f"Redis refused the connection before any command ({detail}); nothing was sent"
        )
    if isinstance(exc, rx.ConnectionError | rx.TimeoutError):
        if op is Op.READ:
            return StorageUnavailableError(
                f"Redis could not be reached ({detail}); nothing was read or written"
            )
        return WriteOutcomeUnknownError(
            f"Redis did not answer the write ({detail}); it may or may not have happened",
            messages,
        )
    if isinstance(exc, rx.ResponseError) and _NO_SCRIPTING.search(str(exc)):
        return ScriptingUnavailableError(
            f"this Redis server cannot run scripts ({detail}); nothing was written."
            " chat-memory writes with Lua scripts (EVALSHA): use a Redis or Valkey server with"
            " scripting, fakeredis[lua] in tests (pip install 'fakeredis[lua]'), or a proxy"
            " that passes EVALSHA and SCRIPT LOAD through"
        )
    if isinstance(exc, rx.NoPermissionError) and not _inside_script(exc):
        return PermissionDeniedError(
            f"the Redis user may not run this command or touch this key ({exc});"
            " nothing was written"
        )
    if op is Op.WRITE and isinstance(exc, rx.ReadOnlyError | rx.ClusterDownError):
        # After a failover, a resend can reach a replica, or a cluster still promoting
        # one, that never saw an earlier attempt the old primary applied.
        return WriteOutcomeUnknownError(
            f"the write was refused ({detail}), as after a failover, where an earlier attempt"
            " may have been applied: it may or may not have happened",
            messages,
        )
    refused_before_writing = isinstance(exc, rx.OutOfMemoryError)
    if op is Op.SCRIPT and not refused_before_writing:
        return WriteOutcomeUnknownError(
            f"the write failed ({detail}); it may or may not have happened", messages
        )
    if isinstance(exc, rx.OutOfMemoryError):
        return StorageUnavailableError(
            f"Redis is out of memory (maxmemory reached) and refused the write ({exc});"
            " nothing was written"
        )
    return StorageUnavailableError(f"Redis refused the command ({detail}); nothing was changed")


def script_error(
    exc: Exception, *, keys: Sequence[str], messages: Sequence[Message], op: Op = Op.SCRIPT
) -> ChatMemoryError:
    """Return the error of a failed script: its own refusal, or :func:`storage_error`.

    ``op`` is :attr:`Op.READ` for a script run that only reads (an export, a
    listing): an outage then changed nothing, whatever redis-py retried.
    """
    found = _SCRIPT_REFUSAL.search(str(exc)) if isinstance(exc, rx.ResponseError) else None
    if found is None:
        return storage_error(exc, op=op, messages=messages)
    code, arg = found["code"], found["arg"]
    if code == "WRONGTYPE":
        return WrongKeyTypeError(keys[int(arg) - 1], found["more"] or "value of another type")
    if code == "CONFLICT":
        return MessageIdConflictError(str(messages[int(arg) - 1].id))
    if code == "RESHARDING":
        return StorageUnavailableError(
            "the user's cluster slot is being migrated between nodes, so their sessions may"
            " be on either: nothing was read or written; try again once it has moved"
        )
    if code == "UNSURE":
        return PermissionDeniedError(
            f"on a Redis Cluster, listing or erasing a user's sessions needs '{arg}', to tell"
            " whether the user's slot is being migrated (sessions out of sight would be taken"
            " for expired), and the Redis user may not run it (see the README's ACL SETUSER"
            " line); nothing was read or written"
        )
    if code == "PARTIAL":
        counted = exc.short.confirmation if isinstance(exc, RefusedUnconfirmed) else None
        return PartialWriteError(arg, messages, unconfirmed=counted)
    if code == "MOVING":
        return StorageUnavailableError(
            "the session's cluster slot is being migrated and its keys are split between two"
            " nodes; nothing was written: try again shortly"
        )
    return PermissionDeniedError(
        f"the Redis user may not run '{arg}' on this session's keys (see the README's"
        " ACL SETUSER line); nothing was written"
    )


def wrong_type_key(exc: Exception) -> bool:
    """Whether ``exc`` is Redis refusing a command on a key of another type."""
    return isinstance(exc, rx.ResponseError) and str(exc).startswith("WRONGTYPE")


def _tls_refused(exc: BaseException) -> bool:
    """Whether the connection failed because a TLS certificate was not accepted.

    Like a wrong password, that fails every attempt alike, so no attempt of the
    call reached Redis.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _inside_script(exc: Exception) -> bool:
    """Whether a permission error came from a command inside a script (which may follow writes)."""
    found = _COMMAND.search(str(exc))
    command = found["command"].lower() if found else ""
    return "script" in str(exc).lower() and not command.startswith(("eval", "script"))
