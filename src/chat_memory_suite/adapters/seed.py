"""The seed article's memory: a JSON entry ``RPUSH``-ed per message, then ``LTRIM`` and ``EXPIRE``.

What every team writes first, three commands in three round trips, storing
only each message's role and text::

    pytest --chat-memory-suite --memory-adapter chat_memory_suite.adapters.seed:make_memory
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import redis

from chat_memory import Message

from ..adapter import MemoryConfig, adapter


class SeedMemory:
    """One Redis list per session; the newest ``max_history`` entries kept; a sliding TTL."""

    def __init__(self, client: redis.Redis | redis.RedisCluster, config: MemoryConfig) -> None:
        """Store through ``client``, under ``config.key_prefix``, with its limit and TTL."""
        self.client = client
        self.prefix = config.key_prefix
        self.max_history = config.max_history or 20
        self.expiry = config.ttl

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Push each message's role and text, then trim the list and renew its expiry."""
        key = self.prefix + session_id
        for message in messages:
            self.client.rpush(key, json.dumps({"role": message.role, "content": message.content}))
        self.client.ltrim(key, -self.max_history, -1)
        if self.expiry is not None:
            self.client.expire(key, self.expiry)

    def get_messages(self, session_id: str) -> list[Message]:
        """Every entry of the session's list, oldest first."""
        entries = self.client.lrange(self.prefix + session_id, 0, -1)
        return [Message(**json.loads(entry)) for entry in entries]

    def ttl(self, session_id: str) -> float | None:
        """The seconds left before the session's list expires; None if it never will."""
        left = int(self.client.ttl(self.prefix + session_id))
        return None if left < 0 else float(left)

    def clear(self, session_id: str) -> None:
        """Delete the session's list."""
        self.client.delete(self.prefix + session_id)


@adapter(capabilities={"history_limit", "ttl", "system_role", "readable_storage"})
def make_memory(config: MemoryConfig) -> SeedMemory:
    """The seed service over the scenario's Redis."""
    return SeedMemory(config.redis, config)
