"""chat-memory as a LangChain chat message history (``pip install "chat-memory[langchain]"``).

:class:`ChatMemoryHistory` is a ``BaseChatMessageHistory``, so it works
wherever LangChain takes one, ``RunnableWithMessageHistory`` included::

    from chat_memory import AsyncMemoryService, MemoryService
    from chat_memory.langchain import ChatMemoryHistory

    memory = MemoryService(redis.Redis(), max_history=50, ttl=1800)
    history = ChatMemoryHistory(memory, "alice")
    chain = RunnableWithMessageHistory(
        model, lambda session_id: ChatMemoryHistory(memory, session_id)
    )

What LangChain's messages carry is stored exactly: an ``AIMessage``'s
``tool_calls``, a ``ToolMessage``'s ``tool_call_id`` and every message's
``id``. The history limit never leaves a ``ToolMessage`` whose call it
trimmed away at the start of ``messages``, where a chat model would refuse it.
A batch of messages is one atomic write, so a retried turn whose
messages keep their ids is not stored twice. The async methods
(``aget_messages``, ``aadd_messages``, ``aclear``) use an
:class:`~chat_memory.AsyncMemoryService` when one is given, as
``async_memory``, and never block the event loop on Redis.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall as LangChainToolCall

from ._async import AsyncMemoryService
from ._message import Message, ToolCall
from ._service import MemoryService
from .exceptions import InvalidContentError, InvalidRoleError

__all__ = ["ChatMemoryHistory", "from_langchain", "to_langchain"]


def from_langchain(message: BaseMessage) -> Message:
    """Return the chat-memory message of a LangChain one, refusing what it cannot store exactly.

    Raises :class:`~chat_memory.InvalidRoleError` for a message type other than
    human, AI, system or tool, and :class:`~chat_memory.InvalidContentError` for
    content that is not text (a list of content blocks).
    """
    content = message.content
    if not isinstance(content, str):
        raise InvalidContentError(
            f"content must be text to be stored exactly, got {type(content).__name__}"
        )
    name = message.name
    if isinstance(message, HumanMessage):
        return Message("user", content, id=message.id, name=name)
    if isinstance(message, SystemMessage):
        return Message("system", content, id=message.id, name=name)
    if isinstance(message, ToolMessage):
        return Message("tool", content, id=message.id, tool_call_id=message.tool_call_id, name=name)
    if isinstance(message, AIMessage):
        calls = tuple(
            ToolCall(id=str(call["id"]), name=call["name"], arguments=json.dumps(call["args"]))
            for call in message.tool_calls
        )
        text = None if calls and content == "" else content
        return Message("assistant", text, id=message.id, tool_calls=calls, name=name)
    raise InvalidRoleError(
        f"a {type(message).__name__} cannot be stored: use a human, AI, system or tool message"
    )


def to_langchain(message: Message) -> BaseMessage:
    """Return the LangChain message of a stored one, with its id, tool calls and tool call id."""
    content = message.content or ""
    if message.role == "user":
        return HumanMessage(content, id=message.id, name=message.name)
    if message.role == "system":
        return SystemMessage(content, id=message.id, name=message.name)
    if message.role == "tool":
        assert message.tool_call_id is not None, "a stored tool message has its call's id"
        return ToolMessage(
            content, tool_call_id=message.tool_call_id, id=message.id, name=message.name
        )
    calls = [
        LangChainToolCall(name=call.name, args=json.loads(call.arguments), id=call.id)
        for call in message.tool_calls
    ]
    return AIMessage(content, tool_calls=calls, id=message.id, name=message.name)


class ChatMemoryHistory(BaseChatMessageHistory):
    """One session of a chat-memory service, as a LangChain chat message history."""

    def __init__(
        self,
        memory: MemoryService | None,
        session_id: str,
        *,
        async_memory: AsyncMemoryService | None = None,
    ) -> None:
        """Read and write ``session_id`` through ``memory``, and ``async_memory`` when async."""
        if memory is None and async_memory is None:
            raise ValueError("give a MemoryService, an AsyncMemoryService, or both")
        self.memory = memory
        self.async_memory = async_memory
        self.session_id = session_id

    def _sync(self) -> MemoryService:
        if self.memory is None:
            raise RuntimeError("this history has only an AsyncMemoryService: use its a* methods")
        return self.memory

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages, oldest first, as a model may be given them.

        A tool result whose call the history limit trimmed away is left out:
        chat models refuse a tool message that answers no call.
        """
        return [to_langchain(m) for m in self._sync().context_messages(self.session_id)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages in one atomic write; ones whose id is stored already are kept once."""
        self._sync().add_messages(self.session_id, [from_langchain(m) for m in messages])

    def clear(self) -> None:
        """Forget the session."""
        self._sync().clear(self.session_id)

    async def aget_messages(self) -> list[BaseMessage]:
        """Return the session's messages as ``messages`` does, through the async service if any."""
        if self.async_memory is None:
            return await super().aget_messages()
        messages = await self.async_memory.context_messages(self.session_id)
        return [to_langchain(m) for m in messages]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages in one atomic write, through the async service when there is one."""
        if self.async_memory is None:
            await super().aadd_messages(messages)
            return
        await self.async_memory.add_messages(self.session_id, [from_langchain(m) for m in messages])

    async def aclear(self) -> None:
        """Forget the session, through the async service when there is one."""
        if self.async_memory is None:
            await super().aclear()
            return
        await self.async_memory.clear(self.session_id)
