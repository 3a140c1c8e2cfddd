"""chat-memory through the OpenAI Agents SDK: ``ChatMemorySession`` under our scenarios.

Each message becomes the Responses API items an agent would store, goes
through the session's ``add_items``, and comes back from ``get_items``: what an
agent remembers. A user or system message is one message item; an
assistant's reply is an output message item, followed by one
``function_call`` item per tool it calls (only those, if it says nothing); a
tool's result is a ``function_call_output`` item. Reading back folds an
output message and the function calls right after it into one message, as
the model produced them::

    pytest --chat-memory-suite \
        --memory-adapter chat_memory_suite.adapters.openai_agents:make_memory

The Agents SDK counts items, not messages: an assistant message with tool calls
is several items, so the history limit keeps fewer such messages than the
same limit on chat-memory's own service would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from chat_memory import Message, ToolCall
from chat_memory.openai_agents import ChatMemorySession, item_of

from ..adapter import MemoryConfig, adapter
from .chat_memory import LARGEST_CONTENT, AsyncServiceMemory

_CALL = "function_call"
_OUTPUT = "function_call_output"


def _items(message: Message) -> list[dict[str, Any]]:
    """The Responses API items of one message."""
    if message.role == "tool":
        output: dict[str, Any] = {
            "type": _OUTPUT,
            "call_id": message.tool_call_id,
            "output": message.content,
        }
        if message.id is not None:
            output["id"] = message.id
        return [output]
    items: list[dict[str, Any]] = []
    if message.content is not None or not message.tool_calls:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.role == "assistant":
            item["type"] = "message"
        if message.id is not None:
            item["id"] = message.id
        items.append(item)
    for number, call in enumerate(message.tool_calls):
        function_call = {
            "type": _CALL,
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        if message.id is not None:
            function_call["id"] = f"{message.id}#{number}"
        items.append(function_call)
    return items


def _owner(item: dict[str, Any]) -> str | None:
    """The id of the message a function call belongs to, from the id ``_items`` gave it."""
    owner, mark, _ = str(item.get("id", "")).rpartition("#")
    return owner if mark else None


def _messages(items: Sequence[Any]) -> list[tuple[Message, int]]:
    """Read items back as messages, each with how many items it took.

    An output message and the function calls right after it are one reply,
    told apart from a later reply of calls only by the ids ``_items`` gave
    them: without ids, the two read back as one message.
    """
    messages: list[tuple[Message, int]] = []
    open_reply: str | None = None  # the id of the reply the next function call may join
    replying = False
    for item in items:
        kind = item.get("type", "message")
        if kind == _CALL:
            call = ToolCall(id=item["call_id"], name=item["name"], arguments=item["arguments"])
            owner = _owner(item)
            if replying and owner == open_reply:
                last, count = messages[-1]
                messages[-1] = (replace(last, tool_calls=(*last.tool_calls, call)), count + 1)
            else:
                messages.append((Message("assistant", None, id=owner, tool_calls=(call,)), 1))
                open_reply, replying = owner, True
            continue
        if kind == _OUTPUT:
            # An output item keeps no name of its own (the SDK has no names: the store
            # lacks the capability), so none is made up from its call.
            message = Message(
                "tool", item["output"], id=item.get("id"), tool_call_id=item["call_id"]
            )
        else:
            message = Message(item["role"], item["content"], id=item.get("id"))
        messages.append((message, 1))
        open_reply, replying = message.id, message.role == "assistant"
    return messages


class AgentsSessionMemory(AsyncServiceMemory):
    """A ``ChatMemorySession`` per session, over one ``AsyncMemoryService``."""

    async def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """The session's ``add_items``, with every item of the messages at once."""
        items = [item for message in messages for item in _items(message)]
        await ChatMemorySession(self.memory, session_id).add_items(items)  # type: ignore[arg-type]

    async def get_messages(self, session_id: str) -> list[Message]:
        """The session's ``get_items``, read back as messages."""
        items = await ChatMemorySession(self.memory, session_id).get_items()
        return [message for message, _ in _messages(items)]

    async def pop_message(self, session_id: str) -> Message | None:
        """The session's ``pop_item``, once for each item of the newest message."""
        session = ChatMemorySession(self.memory, session_id)
        # what is stored, not what get_items gives: pop_item takes the newest stored item
        stored = await self.memory.get_messages(session_id)
        messages = _messages([item_of(message) for message in stored])
        if not messages:
            return None
        newest, count = messages[-1]
        for _ in range(count):
            await session.pop_item()
        return newest

    async def clear(self, session_id: str) -> None:
        """The session's ``clear_session``."""
        await ChatMemorySession(self.memory, session_id).clear_session()


@adapter(
    max_message_bytes=LARGEST_CONTENT,
    capabilities={
        "history_limit",
        "ttl",
        "millisecond_expiry",
        "system_role",
        "message_ids",
        "atomic_turns",
        "pop_message",
        "tool_calls",
        "readable_storage",
    },
)
def make_memory(config: MemoryConfig) -> AgentsSessionMemory:
    """chat-memory's Agents SDK session over an asyncio client of the scenario's Redis."""
    return AgentsSessionMemory.of(config)
