"""An opt-in durability setting: after a write, wait until replicas confirm it.

Redis replicates asynchronously: a primary acknowledges a write before any
replica has it, and a replica promoted by a failover (Sentinel, Redis Cluster,
a managed service) may not have it. With :class:`Durability`, every write of
the memory is followed by ``WAIT replicas timeout`` on the same connection, in
one round trip, and a write fewer replicas confirmed in time is
:class:`~chat_memory.NotReplicatedError`: stored on the primary, not confirmed,
and safe to retry with the same message ids.

``WAIT`` is best effort (Redis's documentation says so): it makes a confirmed
write survive a failover that promotes a replica which confirmed it, which is
the replica Sentinel and Redis Cluster promote; it cannot stop a partitioned
old primary from accepting writes no one will keep (``min-replicas-to-write``
bounds that), nor make a write durable on disk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import redis

from .exceptions import InvalidInputError, NotReplicatedError, check_whole_number

__all__ = ["Durability", "RefusedUnconfirmed", "confirmed", "unconfirmed"]

PARTIAL_WRITE: Final = "CHATMEM_PARTIAL"
"""The append script's reply when it stored the messages and a later write was refused."""
MAX_TIMEOUT_SECONDS = 3600.0
"""The longest wait for replicas that a setting may ask for."""


@dataclass(frozen=True)
class Durability:
    """Wait after every write until ``replicas`` replicas confirm it, at most ``timeout``.

    ``timeout`` is in seconds (or a timedelta), above 0 and at most an hour.
    Pass it as ``MemoryService(client, durability=Durability(replicas=1))``.
    """

    replicas: int = 1
    timeout: float | timedelta = 1.0

    def __post_init__(self) -> None:
        """Refuse a setting Redis's ``WAIT`` cannot take, naming it."""
        check_whole_number("durability replicas", self.replicas, 1)
        seconds = (
            self.timeout.total_seconds() if isinstance(self.timeout, timedelta) else self.timeout
        )
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or not 0 < seconds <= MAX_TIMEOUT_SECONDS
        ):
            raise InvalidInputError(
                "durability timeout must be a positive number of seconds (or a timedelta)"
                f" of at most {MAX_TIMEOUT_SECONDS:.0f}, not {self.timeout!r}"
            )

    @property
    def timeout_ms(self) -> int:
        """The timeout in whole milliseconds, at least 1 (``WAIT`` reads 0 as forever)."""
        seconds = (
            self.timeout.total_seconds() if isinstance(self.timeout, timedelta) else self.timeout
        )
        return max(1, round(seconds * 1000))

    def wait_command(self) -> tuple[Any, ...]:
        """Return the ``WAIT`` command that follows each write."""
        return ("WAIT", self.replicas, self.timeout_ms)


def unconfirmed(durability: Durability, replies: list[Any]) -> bool:
    """Whether the ``WAIT`` of a (write, WAIT) pipeline failed or counted too few replicas.

    Then the server may be no primary any more: one that a failover demoted
    refuses ``WAIT`` (yet answers a script that writes nothing, such as a
    retry of stored messages), and an old primary that was paused comes back
    believing it still is one, with no replica. The caller drops its idle
    connections, so that the next call asks Sentinel (or the cluster) again.
    """
    count = replies[1]
    return isinstance(count, Exception) or int(count) < durability.replicas


class RefusedUnconfirmed(redis.exceptions.ResponseError):
    """The append script's refusal after it stored (``CHATMEM_PARTIAL``), unconfirmed.

    Fewer replicas confirmed the write than asked: ``short`` is what the ``WAIT``
    counted, as :class:`NotReplicatedError` (``confirmed`` of ``wanted`` within
    ``timeout``, and why).
    """

    def __init__(self, refusal: Exception, short: NotReplicatedError) -> None:
        """Keep the script's refusal as the message and the replicas' count beside it."""
        super().__init__(str(refusal))
        self.short = short


def confirmed(durability: Durability, replies: list[Any]) -> Any:
    """Return the write's reply from a pipeline of (write, WAIT); raise what went wrong.

    The write's own error is raised as is (nothing to confirm), unless the append
    script stored the messages before a refusal (``CHATMEM_PARTIAL``) that fewer
    replicas confirmed than asked: then :class:`RefusedUnconfirmed`. A ``WAIT``
    that failed or counted fewer replicas than asked is :class:`NotReplicatedError`.
    """
    reply, count = replies
    short = None
    if unconfirmed(durability, replies):
        short = NotReplicatedError(
            confirmed=0 if isinstance(count, Exception) else int(count),
            wanted=durability.replicas,
            timeout=durability.timeout_ms / 1000,
            reply=reply,
            reason=str(count) if isinstance(count, Exception) else None,
        )
    if isinstance(reply, Exception):
        if short is not None and PARTIAL_WRITE in str(reply):
            raise RefusedUnconfirmed(reply, short) from reply
        raise reply
    if short is not None:
        raise short
    return reply
