"""chat-memory's own ``MemoryService`` through the adapter protocol, like any other memory.

It declares every capability the protocol can carry; the scenarios that need
chat-memory's own API (users, export, compaction, the chat turn, ...) are
run without an adapter, by ``pytest features/`` in this repository::

    pytest --chat-memory-suite --memory-adapter chat_memory_suite.adapters.chat_memory:make_memory
"""

from __future__ import annotations

from chat_memory import MemoryService

from ..adapter import MemoryConfig, adapter


@adapter(
    capabilities={
        "history_limit",
        "ttl",
        "message_ids",
        "timestamps",
        "tool_calls",
        "atomic_turns",
        "pop_message",
    }
)
def make_memory(config: MemoryConfig) -> MemoryService:
    """A ``MemoryService`` over the scenario's Redis; its keys under the scenario's prefix."""
    return service_for(config)


def service_for(config: MemoryConfig) -> MemoryService:
    """The ``MemoryService`` a scenario's config describes: its client, prefix, limit and TTL."""
    namespace = config.key_prefix.removesuffix(":session:")
    if config.max_history is None:
        return MemoryService(config.redis, namespace=namespace, ttl=config.ttl)
    return MemoryService(
        config.redis, namespace=namespace, ttl=config.ttl, max_history=config.max_history
    )
