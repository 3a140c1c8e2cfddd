"""The one place chat-memory leans on redis-py beyond its documented API.

- ``NEVER_DECODE``: the per-command option redis-py's own ``DUMP`` and
  ``FT.SEARCH`` use to get a reply's raw bytes whatever the client's
  ``decode_responses``; chat-memory decodes its entries itself, as UTF-8.
- ``REDIS_EXCEPTIONS``: the roots of every exception redis-py raises. Most
  derive from ``RedisError``; some cluster ones (``RedisClusterException`` and
  its children) and a few others derive from ``Exception`` only.

``tests/unit/test_compat.py`` fails when either stops being true.
"""

from __future__ import annotations

from typing import Final

import redis.exceptions
from redis.client import NEVER_DECODE as _NEVER_DECODE

__all__ = ["NEVER_DECODE", "RAW", "REDIS_EXCEPTIONS"]

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
