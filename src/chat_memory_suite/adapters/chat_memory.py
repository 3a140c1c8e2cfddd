"""chat-memory's own ``MemoryService`` through the adapter protocol, like any other memory.

It declares every capability the protocol can carry; the scenarios that need
chat-memory's own API (users, export, compaction, the chat turn, ...) are
run without an adapter, by ``pytest features/`` in this repository::

    pytest --chat-memory-suite --memory-adapter chat_memory_suite.adapters.chat_memory:make_memory
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from chat_memory import DEFAULT_MAX_MESSAGE_BYTES, AsyncMemoryService, MemoryService, Message

from ..adapter import MemoryConfig, adapter

LARGEST_CONTENT = DEFAULT_MAX_MESSAGE_BYTES - 256
"""The largest message content chat-memory takes with its default settings, in UTF-8 bytes.

Its limit is on the stored entry (``max_message_bytes``): the content, and around it the
message's id, role, time and JSON, which take well under 256 bytes for a message without
tool calls or a name."""


@adapter(
    max_message_bytes=LARGEST_CONTENT,
    capabilities={
        "history_limit",
        "ttl",
        "millisecond_expiry",
        "system_role",
        "message_ids",
        "timestamps",
        "tool_calls",
        "names",
        "atomic_turns",
        "pop_message",
        "readable_storage",
    },
)
def make_memory(config: MemoryConfig) -> ServiceMemory:
    """A ``MemoryService`` over the scenario's Redis; its keys under the scenario's prefix."""
    return ServiceMemory(service_for(config))


class ServiceMemory:
    """A ``MemoryService`` as the protocol calls it: messages read as a model is given them."""

    def __init__(self, memory: MemoryService) -> None:
        """Serve every session of ``memory``."""
        self.memory = memory

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> list[Message]:
        """The service's ``add_messages``: the messages as stored."""
        return list(self.memory.add_messages(session_id, messages))

    def get_messages(self, session_id: str) -> list[Message]:
        """The service's ``context_messages`` (no tool result whose call was trimmed away)."""
        return self.memory.context_messages(session_id)

    def clear(self, session_id: str) -> None:
        """The service's ``clear``."""
        self.memory.clear(session_id)

    def ttl(self, session_id: str) -> float | None:
        """The service's ``ttl``."""
        return self.memory.ttl(session_id)

    def pop_message(self, session_id: str) -> Message | None:
        """The service's ``pop_message``."""
        return self.memory.pop_message(session_id)


def service_for(config: MemoryConfig) -> MemoryService:
    """The ``MemoryService`` a scenario's config describes: its client, prefix, limit and TTL."""
    return MemoryService(config.redis, **settings_for(config))


def settings_for(config: MemoryConfig) -> dict[str, Any]:
    """The settings of chat-memory's services (sync or async) that ``config`` describes.

    The namespace is the one whose session keys start with ``config.key_prefix``;
    no limit in the config leaves the service's default one.
    """
    settings: dict[str, Any] = {
        "namespace": config.key_prefix.removesuffix(":session:"),
        "ttl": config.ttl,
    }
    if config.max_history is not None:
        settings["max_history"] = config.max_history
    return settings


class AsyncServiceMemory:
    """The base of adapters over an ``AsyncMemoryService``: its time left, its client closed."""

    def __init__(self, memory: AsyncMemoryService, client: Any) -> None:
        """Serve every session of ``memory``, whose asyncio client is ``client``."""
        self.memory = memory
        self.client = client

    @classmethod
    def of(cls, config: MemoryConfig) -> Self:
        """An ``AsyncMemoryService`` a scenario's config describes, over a new asyncio client."""
        assert config.async_redis is not None, "the suite gives every scenario an asyncio client"
        client = config.async_redis()
        return cls(AsyncMemoryService(client, **settings_for(config)), client)

    async def ttl(self, session_id: str) -> float | None:
        """The service's own reading of the time left."""
        return await self.memory.ttl(session_id)

    async def aclose(self) -> None:
        """Close the asyncio client."""
        await self.client.aclose()
