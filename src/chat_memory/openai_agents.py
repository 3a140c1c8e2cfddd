"""chat-memory as an OpenAI Agents SDK session (``pip install "chat-memory[agents]"``).

:class:`ChatMemorySession` implements the SDK's ``Session`` protocol over an
:class:`~chat_memory.AsyncMemoryService`, so an agent remembers through it::

    from agents import Agent, Runner
    from chat_memory import AsyncMemoryService
    from chat_memory.openai_agents import ChatMemorySession

    memory = AsyncMemoryService(redis.asyncio.Redis(), max_history=200, ttl=1800)
    result = await Runner.run(agent, "Hi", session=ChatMemorySession(memory, "alice"))

- **Lossless**: each Responses API item is stored whole, as its JSON text, and
  comes back equal to what was added, whatever its type (messages, function
  calls and their outputs, reasoning, ...).
- **Retries are stored once**: an item with an ``id`` (every item a model
  produces has one) is stored once however often it is added, in one atomic
  write per ``add_items``; so is a call's output, which has no ``id`` but
  answers one call (its ``call_id``). Give input messages an ``id`` too to
  make their retries safe: a message without one is stored each time it is
  added, since two equal messages may well be two turns.
- **The memory's history limit and TTL apply**; a function call's output whose
  call the limit trimmed away (or a ``limit`` on ``get_items`` left out) is
  left out of ``get_items``, since the Responses API rejects an output that
  follows no call. Parallel calls are items of their own, so the limit may
  keep some of them: each output is kept only with its own call.
- ``pop_item`` removes the newest item and forgets its id, so the same item
  can be added again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ._async import AsyncMemoryService
from ._budget import drop_orphan_tool_results
from ._message import MAX_ID_CHARS, Message, Role, ToolCall

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings

__all__ = ["ChatMemorySession", "item_of", "message_of"]


def message_of(item: Mapping[str, Any]) -> Message:
    """Return the stored form of one Responses API item: its whole JSON as the content.

    The role follows the item (a call's output is a ``tool`` message naming
    its call; a call is an ``assistant`` message carrying it), so the memory
    keeps a call and its output together when it trims. An output that names
    no call is kept as it is, an ``assistant`` message like any other item.
    """
    kind = str(item.get("type", "message"))
    text = json.dumps(item, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    call_id = item.get("call_id")
    # An output names the call it answers by its call_id; a local shell call's output, by its id.
    answers = call_id if isinstance(call_id, str) else item_id
    if kind.endswith("_output") and answers is not None:
        if item_id is None:
            # A call has one output: a retry of it is the same output, stored once.
            derived = f"{answers}:output"
            item_id = derived if len(derived) <= MAX_ID_CHARS else None
        return Message("tool", text, id=item_id, tool_call_id=answers)
    if kind.endswith("_call") and isinstance(call_id, str):
        arguments = item.get("arguments")
        call = ToolCall(
            id=call_id,
            name=str(item.get("name", kind)),
            arguments=arguments if isinstance(arguments, str) else "",
        )
        return Message("assistant", text, id=item_id, tool_calls=(call,))
    role = item.get("role")
    chat_role: Role = (
        "user" if role == "user" else "system" if role in ("system", "developer") else "assistant"
    )
    return Message(chat_role, text, id=item_id)


def item_of(message: Message) -> dict[str, Any]:
    """Return the Responses API item a stored message holds, exactly as it was added.

    A message the session holds that no agent added (a compaction's summary,
    or one stored through the memory's own API) is given as the input
    message it is: ``{"role": ..., "content": ...}``.
    """
    try:
        item = json.loads(message.content) if message.content else None
    except ValueError:
        item = None
    if isinstance(item, dict):
        return item
    return {"role": message.role, "content": message.content or ""}


class ChatMemorySession:
    """One session of an :class:`~chat_memory.AsyncMemoryService`, as an Agents SDK session."""

    def __init__(
        self,
        memory: AsyncMemoryService,
        session_id: str,
        *,
        session_settings: SessionSettings | None = None,
    ) -> None:
        """Store the items of ``session_id`` in ``memory``."""
        self.memory = memory
        self.session_id = session_id
        self.session_settings = session_settings

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """Return the session's items, oldest first; with ``limit``, only the newest ``limit``."""
        messages = await self.memory.context_messages(self.session_id)
        if limit is not None:
            messages = messages[max(0, len(messages) - limit) :] if limit > 0 else []
        return [cast("TResponseInputItem", item_of(m)) for m in drop_orphan_tool_results(messages)]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store the items in one atomic write; an item whose id is stored already is kept once."""
        messages = [message_of(cast(Mapping[str, Any], item)) for item in items]
        if messages:
            await self.memory.add_messages(self.session_id, messages)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (its id is forgotten); None if there is none."""
        message = await self.memory.pop_message(self.session_id)
        return None if message is None else cast("TResponseInputItem", item_of(message))

    async def clear_session(self) -> None:
        """Forget every item of the session."""
        await self.memory.clear(self.session_id)
