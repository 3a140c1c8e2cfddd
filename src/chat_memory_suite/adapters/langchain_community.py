r"""langchain-community's ``RedisChatMessageHistory`` under chat-memory's scenarios.

One Redis list per session, a JSON entry ``LPUSH``-ed per message and an
``EXPIRE`` after each when it has a TTL; it keeps every message (no limit)
and has no notion of a retried message. Messages go through LangChain's own
types (``chat_memory.langchain`` converts them)::

    pytest --chat-memory-suite --memory-adapter \\
         chat_memory_suite.adapters.langchain_community:make_memory
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, cast

with warnings.catch_warnings():
    # langchain-community warns on import that it is being sunset; it is still what teams run.
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.chat_message_histories import RedisChatMessageHistory

from chat_memory import Message
from chat_memory.langchain import from_langchain, to_langchain

from ..adapter import MemoryConfig, adapter


class LangChainCommunityMemory:
    """One ``RedisChatMessageHistory`` per session, over the scenario's Redis client."""

    def __init__(self, config: MemoryConfig) -> None:
        """Keep the scenario's client, key prefix and TTL (whole seconds, as the store takes)."""
        self.config = config
        self.seconds = None if config.ttl is None else max(1, round(config.ttl.total_seconds()))

    def _history(self, session_id: str) -> RedisChatMessageHistory:
        history = RedisChatMessageHistory(
            session_id,
            url=self.config.redis_url or "redis://",
            key_prefix=self.config.key_prefix,
            ttl=self.seconds,
        )
        # the scenario's server (fakeredis has no URL); typed Redis, but a cluster works too
        history.redis_client = cast(Any, self.config.redis)
        return history

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add the messages through the history's own ``add_messages``."""
        self._history(session_id).add_messages([to_langchain(m) for m in messages])

    def get_messages(self, session_id: str) -> list[Message]:
        """The history's messages, oldest first."""
        return [from_langchain(m) for m in self._history(session_id).messages]

    def clear(self, session_id: str) -> None:
        """The history's own ``clear``."""
        self._history(session_id).clear()

    def ttl(self, session_id: str) -> float | None:
        """The seconds left on the session's list, read from Redis (the store has no reader)."""
        left = int(self.config.redis.ttl(self._history(session_id).key))
        return None if left < 0 else float(left)


@adapter(capabilities={"ttl", "system_role", "tool_calls", "names", "readable_storage"})
def make_memory(config: MemoryConfig) -> LangChainCommunityMemory:
    """langchain-community's Redis history over the scenario's Redis."""
    return LangChainCommunityMemory(config)
