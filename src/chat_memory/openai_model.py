"""Adapter for OpenAI-compatible chat-completions endpoints (``pip install chat-memory[openai]``).

::

    from openai import OpenAI
    from chat_memory import ChatService, MemoryService
    from chat_memory.openai_model import OpenAIChatModel

    model = OpenAIChatModel(OpenAI(base_url=..., api_key=...), model="gpt-4o-mini")
    chat = ChatService(MemoryService(redis_client), model, system_prompt="Be brief.")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._message import Message, ToolCall

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = ["OpenAIChatModel"]


class OpenAIChatModel:
    """A :class:`~chat_memory.ChatModel` backed by ``openai.OpenAI().chat.completions``."""

    def __init__(self, client: OpenAI, model: str, **create_options: Any) -> None:
        """Call ``model`` through ``client``; ``create_options`` go to every request."""
        self._client = client
        self._model = model
        self._options = create_options

    def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Send ``messages`` and return the first choice's reply.

        A text answer is its text ("" if it has none); an answer with tool
        calls is an assistant :class:`~chat_memory.Message` carrying them
        exactly (and the text, if any).
        """
        response = self._client.chat.completions.create(
            model=self._model,
            messages=messages,  # type: ignore[arg-type]
            **self._options,
        )
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
