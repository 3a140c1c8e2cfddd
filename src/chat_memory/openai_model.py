"""Adapters for OpenAI-compatible chat-completions endpoints (``pip install chat-memory[openai]``).

::

    from openai import AsyncOpenAI, OpenAI
    from chat_memory import AsyncChatService, ChatService, MemoryService
    from chat_memory.openai_model import AsyncOpenAIChatModel, OpenAIChatModel

    model = OpenAIChatModel(OpenAI(base_url=..., api_key=...), model="gpt-4o-mini")
    chat = ChatService(MemoryService(redis_client), model, system_prompt="Be brief.")

    amodel = AsyncOpenAIChatModel(AsyncOpenAI(...), model="gpt-4o-mini")

Both answer with the reply text, or with an assistant
:class:`~chat_memory.Message` carrying the API's ``tool_calls`` exactly; both
stream (``stream=True`` requests), chunk by chunk.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from ._message import Message, ToolCall

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

__all__ = ["AsyncOpenAIChatModel", "OpenAIChatModel"]


class _Adapter:
    """What the sync and async adapters share: the request and the mapping of the answer."""

    def __init__(self, client: Any, model: str, **create_options: Any) -> None:
        """Call ``model`` through ``client``; ``create_options`` go to every request."""
        self._client = client
        self._model = model
        self._options = create_options

    def _request(self, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {"model": self._model, "messages": messages, **self._options, **extra}


def answer_of(response: Any) -> str | Message:
    """Map the first choice of a chat-completions response to a reply.

    A text answer is its text ("" if it has none); an answer with tool calls is
    an assistant :class:`~chat_memory.Message` carrying them exactly (and the
    text, if any).
    """
    answer = response.choices[0].message
    calls = getattr(answer, "tool_calls", None) or ()
    if not calls:
        return answer.content or ""
    return Message(
        "assistant",
        answer.content,
        tool_calls=tuple(
            ToolCall(call.id, call.function.name, call.function.arguments) for call in calls
        ),
    )


def _text_of(chunk: Any) -> str:
    """Return the text a streamed chunk adds ("" for a chunk without any)."""
    return (chunk.choices[0].delta.content or "") if chunk.choices else ""


class OpenAIChatModel(_Adapter):
    """A :class:`~chat_memory.ChatModel` backed by ``openai.OpenAI().chat.completions``."""

    def __init__(self, client: OpenAI, model: str, **create_options: Any) -> None:
        """Call ``model`` through ``client``; ``create_options`` go to every request."""
        super().__init__(client, model, **create_options)

    def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Send ``messages`` and return the first choice's reply (see :func:`answer_of`)."""
        return answer_of(self._client.chat.completions.create(**self._request(messages)))

    def stream(self, messages: list[dict[str, Any]]) -> Iterator[str]:
        """Send ``messages`` with ``stream=True`` and yield the reply's text as it comes."""
        for chunk in self._client.chat.completions.create(**self._request(messages, stream=True)):
            yield _text_of(chunk)


class AsyncOpenAIChatModel(_Adapter):
    """An :class:`~chat_memory.AsyncChatModel` backed by ``openai.AsyncOpenAI()``."""

    def __init__(self, client: AsyncOpenAI, model: str, **create_options: Any) -> None:
        """Call ``model`` through ``client``; ``create_options`` go to every request."""
        super().__init__(client, model, **create_options)

    async def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Send ``messages`` and return the first choice's reply (see :func:`answer_of`)."""
        return answer_of(await self._client.chat.completions.create(**self._request(messages)))

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Send ``messages`` with ``stream=True`` and yield the reply's text as it comes."""
        response = await self._client.chat.completions.create(
            **self._request(messages, stream=True)
        )
        async for chunk in response:
            yield _text_of(chunk)
