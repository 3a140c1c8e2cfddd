"""chat-memory's own ``MemoryService`` through the adapter protocol, like any other memory.

It declares every capability the protocol can carry; the scenarios that need
chat-memory's own API (users, export, compaction, the chat turn, ...) are
run without an adapter, by ``pytest features/`` in this repository::

    pytest --chat-memory-suite --memory-adapter chat_memory_suite.adapters.chat_memory:make_memory
"""

from __future__ import annotations

from typing import Any

from chat_memory import MemoryService

from ..adapter import MemoryConfig, adapter


@adapter(
    capabilities={
        "history_limit",
        "ttl",
        "message_ids",
        "timestamps",
        "tool_calls",
        "names",
        "atomic_turns",
        "pop_message",
    }
)
def make_memory(config: MemoryConfig) -> MemoryService:
    """A ``MemoryService`` over the scenario's Redis; its keys under the scenario's prefix."""
    return service_for(config)


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
