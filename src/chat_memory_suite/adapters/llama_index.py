"""llama-index's ``RedisChatStore`` under chat-memory's scenarios.

One Redis list per key, a JSON ``ChatMessage`` ``RPUSH``-ed per message and an
``EXPIRE`` after each when it has a TTL; no history limit, no notion of a
retried message. Tool calls travel in ``additional_kwargs``, the way
llama-index's OpenAI integration puts them there::

    pytest --chat-memory-suite --memory-adapter chat_memory_suite.adapters.llama_index:make_memory
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import redis.asyncio
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.storage.chat_store.redis import RedisChatStore

from chat_memory import Message, Role, ToolCall

from ..adapter import MemoryConfig, adapter


def _to_llama(message: Message) -> ChatMessage:
    # the tool fields, in the chat-completions shape llama-index's OpenAI integration uses
    extra = {k: v for k, v in message.to_chat().items() if k not in ("role", "content")}
    return ChatMessage(
        role=MessageRole(message.role), content=message.content, additional_kwargs=extra
    )


def _from_llama(message: ChatMessage) -> Message:
    extra = message.additional_kwargs
    return Message(
        role=cast(Role, message.role.value),
        content=message.content,
        tool_calls=tuple(ToolCall.from_chat(call) for call in extra.get("tool_calls", ())),
        tool_call_id=extra.get("tool_call_id"),
        name=extra.get("name"),
    )


class LlamaIndexMemory:
    """A ``RedisChatStore`` over the scenario's Redis client, one key per session."""

    def __init__(self, config: MemoryConfig) -> None:
        """Build the store over the scenario's client, with its TTL in whole seconds."""
        self.config = config
        ttl = None if config.ttl is None else max(1, round(config.ttl.total_seconds()))
        self.store = RedisChatStore(
            redis_client=config.redis, aredis_client=redis.asyncio.Redis(), ttl=ttl
        )

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Add each message with the store's ``add_message``."""
        for message in messages:
            self.store.add_message(self.config.key_prefix + session_id, _to_llama(message))

    def get_messages(self, session_id: str) -> list[Message]:
        """The store's messages for the session, oldest first."""
        return [
            _from_llama(m) for m in self.store.get_messages(self.config.key_prefix + session_id)
        ]

    def clear(self, session_id: str) -> None:
        """The store's ``delete_messages``."""
        self.store.delete_messages(self.config.key_prefix + session_id)

    def ttl(self, session_id: str) -> float | None:
        """The seconds left on the session's list, read from Redis (the store has no reader)."""
        left = int(self.config.redis.ttl(self.config.key_prefix + session_id))
        return None if left < 0 else float(left)


@adapter(capabilities={"ttl", "system_role", "tool_calls", "names", "readable_storage"})
def make_memory(config: MemoryConfig) -> LlamaIndexMemory:
    """llama-index's Redis chat store over the scenario's Redis."""
    return LlamaIndexMemory(config)
