"""chat-memory through the OpenAI Agents SDK: ``ChatMemorySession`` under our scenarios.

Each message becomes a Responses API item (``{"role": ..., "content": ...,
"id": ...}``, the assistant's as an output message), goes through the
session's ``add_items``, and comes back from ``get_items``: what an agent
remembers. Tool calls travel as other items and are checked by the unit tests
of ``chat_memory.openai_agents``, so this adapter does not declare them::

    pytest --chat-memory-suite \
        --memory-adapter chat_memory_suite.adapters.openai_agents:make_memory
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chat_memory import AsyncMemoryService, Message
from chat_memory.openai_agents import ChatMemorySession

from ..adapter import MemoryConfig, adapter
from .chat_memory import settings_for


def _item(message: Message) -> Any:
    item: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant":
        item["type"] = "message"
    if message.id is not None:
        item["id"] = message.id
    return item


def _message(item: Any) -> Message:
    return Message(item["role"], item["content"], id=item.get("id"))


class AgentsSessionMemory:
    """A ``ChatMemorySession`` per session, over one ``AsyncMemoryService``."""

    def __init__(self, memory: AsyncMemoryService, client: Any) -> None:
        """Serve every session of ``memory``, whose asyncio client is ``client``."""
        self.memory = memory
        self.client = client

    async def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """The session's ``add_items``."""
        await ChatMemorySession(self.memory, session_id).add_items([_item(m) for m in messages])

    async def get_messages(self, session_id: str) -> list[Message]:
        """The session's ``get_items``, read back as messages."""
        items = await ChatMemorySession(self.memory, session_id).get_items()
        return [_message(item) for item in items]

    async def pop_message(self, session_id: str) -> Message | None:
        """The session's ``pop_item``."""
        item = await ChatMemorySession(self.memory, session_id).pop_item()
        return None if item is None else _message(item)

    async def clear(self, session_id: str) -> None:
        """The session's ``clear_session``."""
        await ChatMemorySession(self.memory, session_id).clear_session()

    async def ttl(self, session_id: str) -> float | None:
        """The service's own reading of the time left."""
        return await self.memory.ttl(session_id)

    async def aclose(self) -> None:
        """Close the asyncio client."""
        await self.client.aclose()


@adapter(capabilities={"history_limit", "ttl", "message_ids", "atomic_turns", "pop_message"})
def make_memory(config: MemoryConfig) -> AgentsSessionMemory:
    """chat-memory's Agents SDK session over an asyncio client of the scenario's Redis."""
    assert config.async_redis is not None, "the suite gives every scenario an asyncio client"
    client = config.async_redis()
    return AgentsSessionMemory(AsyncMemoryService(client, **settings_for(config)), client)
