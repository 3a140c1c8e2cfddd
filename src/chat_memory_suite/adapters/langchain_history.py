"""chat-memory through LangChain: ``chat_memory.langchain.ChatMemoryHistory`` under our scenarios.

Every message goes through LangChain's own types and back, so the suite
checks what a LangChain app gets: tool calls, tool call ids and message ids
kept exactly, retries stored once, the limit and the TTL applied::

    pytest --chat-memory-suite \
        --memory-adapter chat_memory_suite.adapters.langchain_history:make_memory
"""

from __future__ import annotations

from collections.abc import Sequence

from chat_memory import MemoryService, Message
from chat_memory.langchain import ChatMemoryHistory, from_langchain, to_langchain

from ..adapter import MemoryConfig, adapter
from .chat_memory import service_for


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


@adapter(capabilities={"history_limit", "ttl", "message_ids", "tool_calls", "atomic_turns"})
def make_memory(config: MemoryConfig) -> LangChainHistoryMemory:
    """chat-memory's LangChain history over the scenario's Redis."""
    return LangChainHistoryMemory(service_for(config))
