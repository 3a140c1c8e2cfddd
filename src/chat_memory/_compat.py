"""The one place chat-memory leans on redis-py beyond its documented API.

- ``NEVER_DECODE``: the per-command option redis-py's own ``DUMP`` and
  ``FT.SEARCH`` use to get a reply's raw bytes whatever the client's
  ``decode_responses``; chat-memory decodes its entries itself, as UTF-8.
- ``REDIS_EXCEPTIONS``: the roots of every exception redis-py raises. Most
  derive from ``RedisError``; some cluster ones (``RedisClusterException`` and
  its children) and a few others derive from ``Exception`` only.

- :func:`no_free_connection`: a ``BlockingConnectionPool`` that waited in vain
  for a connection raises a plain ``ConnectionError("No connection available.")``
  before anything is sent; only its message tells it apart.
- :func:`redirected_in_vain`: redis-py's cluster clients give up with
  ``ClusterError("TTL exhausted.")`` only after their retry loop saw nothing
  but MOVED, ASK or TRYAGAIN (a slot being migrated), none of which ran the
  command (an attempt before them that timed out may have); only its message
  tells it apart.
- :func:`internal_failure`: redis-py's asyncio cluster client can fail with a
  bare ``AttributeError``/``TypeError`` from inside its connection code when a
  connection is torn down under concurrent tasks (redis-py issues #3546,
  #3835). Such a failure is a broken connection, and is reported as one.

``tests/unit/test_compat.py`` fails when any of this stops being true.
"""

from __future__ import annotations

from typing import Final

import redis.exceptions
from redis.client import NEVER_DECODE as _NEVER_DECODE

__all__ = [
    "NEVER_DECODE",
    "RAW",
    "REDIRECTED",
    "REDIS_EXCEPTIONS",
    "internal_failure",
    "no_free_connection",
    "redirected_in_vain",
]

REDIRECTED: Final = (
    redis.exceptions.MovedError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
)
"""A cluster node's answer that it ran nothing: the key's slot is served elsewhere."""

NEVER_DECODE: Final = _NEVER_DECODE
RAW: Final = {NEVER_DECODE: True}
"""Keyword arguments of ``execute_command`` for a reply in raw bytes."""

REDIS_EXCEPTIONS: Final[tuple[type[Exception], ...]] = tuple(
    cls
    for cls in (
        redis.exceptions.RedisError,
        getattr(redis.exceptions, "RedisClusterException", None),
        getattr(redis.exceptions, "ChildDeadlockedError", None),
        getattr(redis.exceptions, "IncorrectPolicyType", None),
    )
    if cls is not None
)


def internal_failure(exc: Exception) -> redis.exceptions.ConnectionError | None:
    """Return ``exc`` as a ConnectionError if redis-py raised it from inside its own code.

    Only a non-redis exception whose innermost frame is in the ``redis``
    package qualifies; anything raised by chat-memory or the caller does not.
    """
    if isinstance(exc, REDIS_EXCEPTIONS):
        return None
    frame = None
    tb = exc.__traceback__
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    module = str(frame.f_globals.get("__name__", "")) if frame is not None else ""
    if module != "redis" and not module.startswith("redis."):
        return None
    error = redis.exceptions.ConnectionError(
        f"redis-py failed inside its connection code: {type(exc).__name__}: {exc}"
    )
    error.__cause__ = exc
    return error


def no_free_connection(exc: Exception) -> bool:
    """Whether ``exc`` is a blocking pool giving up waiting for a connection (nothing sent)."""
    return isinstance(exc, redis.exceptions.ConnectionError) and str(exc) == (
        "No connection available."
    )


def redirected_in_vain(exc: Exception) -> bool:
    """Whether ``exc`` is a cluster client giving up after MOVED, ASK or TRYAGAIN alone."""
    return isinstance(exc, redis.exceptions.ClusterError) and str(exc) == "TTL exhausted."
