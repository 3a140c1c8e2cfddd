"""chat-memory in LangChain (``pip install "chat-memory[langchain]"``).

:class:`RunnableWithChatMemory` wraps a chain: it loads the session's history,
invokes the chain, and stores the whole turn (the input and the answer) in one
atomic write, raising a typed error when it cannot::

    chain = RunnableWithChatMemory(prompt | model, memory, input_messages_key="question",
                                   history_messages_key="history")
    chain.invoke({"question": "Hi"}, config={"configurable": {"session_id": "alice"}})

Use it rather than LangChain's ``RunnableWithMessageHistory``, which stores a
turn from a tracer callback: LangChain logs an error raised there and returns
the answer as if all were well, so a failed write (an outage, a full server, a
missing permission) forgets the turn silently.

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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall as LangChainToolCall
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import Runnable, RunnableConfig

from ._async import AsyncMemoryService
from ._message import Message, ToolCall, new_message_id
from ._service import MemoryService
from .exceptions import ChatMemoryError, InvalidContentError, InvalidRoleError, ReplyNotStoredError

__all__ = ["ChatMemoryHistory", "RunnableWithChatMemory", "from_langchain", "to_langchain"]


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
        # A call whose arguments LangChain could not parse is an invalid tool call: kept,
        # with its arguments as the model wrote them.
        calls = tuple(
            ToolCall(id=str(call["id"]), name=call["name"], arguments=json.dumps(call["args"]))
            for call in message.tool_calls
        ) + tuple(
            ToolCall(
                id=call.get("id") or "", name=call.get("name") or "", arguments=call["args"] or ""
            )
            for call in message.invalid_tool_calls
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
    calls, invalid = [], []
    for call in message.tool_calls:
        args = _json_object(call.arguments)
        if args is None:  # not a JSON object: what LangChain calls an invalid tool call
            invalid.append(invalid_tool_call(name=call.name, args=call.arguments, id=call.id))
        else:
            calls.append(LangChainToolCall(name=call.name, args=args, id=call.id))
    return AIMessage(
        content, tool_calls=calls, invalid_tool_calls=invalid, id=message.id, name=message.name
    )


def _json_object(text: str) -> dict[str, Any] | None:
    """Return the JSON object ``text`` holds, or None when it holds anything else."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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


class RunnableWithChatMemory(Runnable[Any, Any]):
    """A chain that remembers: each turn is loaded, answered and stored in one atomic write.

    The session is ``config["configurable"]["session_id"]``, as for
    LangChain's ``RunnableWithMessageHistory``, and the keys mean the same:
    ``input_messages_key`` names the input's new message(s) (a string, a
    message or a list of messages; the whole input when None),
    ``history_messages_key`` the input key the history goes under (when None,
    the history is put before the new messages), ``output_messages_key`` the
    output's answer (the whole output when None).

    If the turn cannot be stored, the call raises
    :class:`~chat_memory.ReplyNotStoredError`: ``reply`` is the answer,
    ``messages`` the turn with its ids (``memory.add_messages(session_id,
    error.messages)`` stores it, once however often it is retried) and
    ``may_have_written`` whether the failed write could have happened. A
    history that cannot be read raises before the chain is invoked.
    ``ainvoke`` goes through ``async_memory`` when one is given.
    """

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        memory: MemoryService | None,
        *,
        async_memory: AsyncMemoryService | None = None,
        input_messages_key: str | None = None,
        history_messages_key: str | None = None,
        output_messages_key: str | None = None,
    ) -> None:
        """Wrap ``runnable``; its sessions live in ``memory`` (and ``async_memory``)."""
        if memory is None and async_memory is None:
            raise ValueError("give a MemoryService, an AsyncMemoryService, or both")
        self.runnable = runnable
        self.memory = memory
        self.async_memory = async_memory
        self.input_messages_key = input_messages_key
        self.history_messages_key = history_messages_key
        self.output_messages_key = output_messages_key

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Answer ``input`` with the session's history, then store the turn; raise if it is not."""
        if self.memory is None:
            raise RuntimeError("this chain has only an AsyncMemoryService: use ainvoke")
        session_id = _session_id(config)
        history = [to_langchain(m) for m in self.memory.context_messages(session_id)]
        new = self._new_messages(input)
        asked = _stamped(new)  # refused before the model is paid for, if it cannot be stored
        output = self.runnable.invoke(self._chain_input(input, history, new), config, **kwargs)
        turn = self._turn(asked, output)
        try:
            self.memory.add_messages(session_id, turn)
        except ChatMemoryError as exc:
            raise ReplyNotStoredError(_reply_of(turn), turn, exc) from exc
        return output

    async def ainvoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        """As :meth:`invoke`, through ``async_memory`` (or ``invoke`` in a thread without it)."""
        if self.async_memory is None:
            return await super().ainvoke(input, config, **kwargs)
        session_id = _session_id(config)
        stored = await self.async_memory.context_messages(session_id)
        history = [to_langchain(m) for m in stored]
        new = self._new_messages(input)
        asked = _stamped(new)
        chain_input = self._chain_input(input, history, new)
        output = await self.runnable.ainvoke(chain_input, config, **kwargs)
        turn = self._turn(asked, output)
        try:
            await self.async_memory.add_messages(session_id, turn)
        except ChatMemoryError as exc:
            raise ReplyNotStoredError(_reply_of(turn), turn, exc) from exc
        return output

    def _new_messages(self, input: Any) -> list[BaseMessage]:
        value = input
        if self.input_messages_key is not None:
            if not isinstance(input, Mapping) or self.input_messages_key not in input:
                raise InvalidContentError(
                    f"the chain's input has no {self.input_messages_key!r} (input_messages_key)"
                )
            value = input[self.input_messages_key]
        return _as_messages(value, HumanMessage, "input")

    def _chain_input(self, input: Any, history: list[BaseMessage], new: list[BaseMessage]) -> Any:
        if self.history_messages_key is not None:
            return {**input, self.history_messages_key: history}
        if self.input_messages_key is not None:
            return {**input, self.input_messages_key: [*history, *new]}
        return [*history, *new]

    def _turn(self, asked: list[Message], output: Any) -> list[Message]:
        """Return the turn to store; an answer that cannot be stored is handed back unstored."""
        try:
            return [*asked, *_stamped(self._answer(output))]
        except ChatMemoryError as exc:
            raise ReplyNotStoredError(_text_of(output), asked, exc) from exc

    def _answer(self, output: Any) -> list[BaseMessage]:
        value = output
        if self.output_messages_key is not None:
            value = output[self.output_messages_key]
        return _as_messages(value, AIMessage, "output")


def _session_id(config: RunnableConfig | None) -> str:
    configurable = (config or {}).get("configurable") or {}
    session_id = configurable.get("session_id")
    if session_id is None:
        raise InvalidContentError(
            'give the session: config={"configurable": {"session_id": "..."}}'
        )
    return str(session_id)


def _as_messages(value: Any, kind: type[BaseMessage], what: str) -> list[BaseMessage]:
    if isinstance(value, str):
        return [kind(value)]
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(m, BaseMessage) for m in value):
        return list(value)
    raise InvalidContentError(
        f"the chain's {what} must be text, a message or a list of messages,"
        f" not {type(value).__name__}"
    )


def _stamped(messages: list[BaseMessage]) -> list[Message]:
    """Return the messages as stored, each with an id (its own, or a new one) for a safe retry."""
    stored = [from_langchain(m) for m in messages]
    return [m if m.id else replace(m, id=new_message_id()) for m in stored]


def _text_of(output: Any) -> str:
    """Return the text an answer shows: its content, its content blocks' text, or its JSON."""
    content = getattr(output, "content", output)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", "")) if isinstance(block, dict) else str(block)
            for block in content
        )
    if isinstance(content, Mapping):  # a structured answer, e.g. a JSON output parser's
        return json.dumps(content, ensure_ascii=False, default=str)
    return str(content)


def _reply_of(turn: list[Message]) -> str | Message:
    """Return the answer as a chat turn hands it back: its text, or its message with tool calls."""
    reply = turn[-1]
    return reply.content if reply.content is not None and not reply.tool_calls else reply
