"""chat-memory through LangChain: ``chat_memory.langchain.ChatMemoryHistory`` under our scenarios.

Every message goes through LangChain's own types and back, so the suite
checks what a LangChain app gets: tool calls, tool call ids and message ids
kept exactly, retries stored once, the limit and the TTL applied.
``make_memory`` calls the history's sync methods, ``make_async_memory`` its
async ones (``aadd_messages``, ``aget_messages``, ``aclear``) over an
``AsyncMemoryService``::

    pytest --chat-memory-suite \
        --memory-adapter chat_memory_suite.adapters.langchain_history:make_memory
    pytest --chat-memory-suite \
        --memory-adapter chat_memory_suite.adapters.langchain_history:make_async_memory
"""

from __future__ import annotations

from collections.abc import Sequence

from chat_memory import MemoryService, Message
from chat_memory.langchain import ChatMemoryHistory, from_langchain, to_langchain

from ..adapter import MemoryConfig, adapter
from .chat_memory import LARGEST_CONTENT, AsyncServiceMemory, service_for

CAPABILITIES = {
    "history_limit",
    "ttl",
    "millisecond_expiry",
    "system_role",
    "message_ids",
    "tool_calls",
    "names",
    "atomic_turns",
    "readable_storage",
}


class LangChainHistoryMemory:
    """A ``ChatMemoryHistory`` per session, over one ``MemoryService``."""

    def __init__(self, memory: MemoryService) -> None:
        """Serve every session of ``memory``."""
        self.memory = memory

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """The history's ``add_messages``, given LangChain messages."""
        history = ChatMemoryHistory(self.memory, session_id)
        history.add_messages([to_langchain(m) for m in messages])

    def get_messages(self, session_id: str) -> list[Message]:
        """The history's ``messages``, read back from LangChain's types."""
        return [from_langchain(m) for m in ChatMemoryHistory(self.memory, session_id).messages]

    def clear(self, session_id: str) -> None:
        """The history's ``clear``."""
        ChatMemoryHistory(self.memory, session_id).clear()

    def ttl(self, session_id: str) -> float | None:
        """The service's own reading of the time left."""
        return self.memory.ttl(session_id)


class AsyncLangChainHistoryMemory(AsyncServiceMemory):
    """A ``ChatMemoryHistory`` per session, called through its async methods only."""

    def _history(self, session_id: str) -> ChatMemoryHistory:
        return ChatMemoryHistory(None, session_id, async_memory=self.memory)

    async def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """The history's ``aadd_messages``, given LangChain messages."""
        await self._history(session_id).aadd_messages([to_langchain(m) for m in messages])

    async def get_messages(self, session_id: str) -> list[Message]:
        """The history's ``aget_messages``, read back from LangChain's types."""
        return [from_langchain(m) for m in await self._history(session_id).aget_messages()]

    async def clear(self, session_id: str) -> None:
        """The history's ``aclear``."""
        await self._history(session_id).aclear()


@adapter(capabilities=CAPABILITIES, max_message_bytes=LARGEST_CONTENT)
def make_memory(config: MemoryConfig) -> LangChainHistoryMemory:
    """chat-memory's LangChain history over the scenario's Redis."""
    return LangChainHistoryMemory(service_for(config))


@adapter(capabilities=CAPABILITIES, max_message_bytes=LARGEST_CONTENT)
def make_async_memory(config: MemoryConfig) -> AsyncLangChainHistoryMemory:
    """chat-memory's LangChain history, used the async way, over the scenario's Redis."""
    return AsyncLangChainHistoryMemory.of(config)
