"""The chat turn: the model always sees the whole remembered session.

``ChatService.reply`` loads the context, builds the prompt (system prompt,
history oldest first, the new user message), calls the model, and only then
stores the user message and the reply, together, in one atomic write. If the
model fails, nothing of the turn is stored and its error reaches the caller
unchanged. If the model answered but the turn cannot be stored,
:class:`~chat_memory.ReplyNotStoredError` carries the answer.

The model is anything with ``complete(messages) -> str | Message``: the reply
text, or an assistant :class:`~chat_memory.Message` (e.g. one with tool calls).
A model that also has ``stream(messages) -> Iterator[str]`` can stream turns
(:meth:`ChatService.stream`): the whole turn is stored once the stream ends,
and nothing of it if the stream fails or the caller stops reading early.
An OpenAI-style client fits in a few lines
(:class:`chat_memory.openai_model.OpenAIChatModel` is one)::

    class MyModel:
        def complete(self, messages: list[dict[str, Any]]) -> str:
            response = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
            return response.choices[0].message.content or ""
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from . import _ops as ops
from ._budget import TokenCounter, within_budget
from ._core import MemoryCore
from ._message import Message, new_message_id
from ._service import MemoryService
from ._shell import ChatShell
from .exceptions import (
    ChatMemoryError,
    InvalidContentError,
    InvalidInputError,
    PromptTooLargeError,
    ReplyNotStoredError,
    check_whole_number,
)

__all__ = ["ChatCore", "ChatModel", "ChatService", "StreamingChatModel", "text_chunk"]


@runtime_checkable
class ChatModel(Protocol):
    """A language model: takes chat-completions messages, returns its reply.

    The reply is its text, or an assistant :class:`~chat_memory.Message` when
    it carries more (tool calls, a name).
    """

    def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Return the model's reply to ``messages`` (oldest first)."""
        ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A language model that can also give its reply as it is produced, chunk by chunk."""

    def stream(self, messages: list[dict[str, Any]]) -> Iterator[str]:
        """Yield the reply to ``messages`` in chunks of text."""
        ...


class ChatCore:
    """The chat turn's settings and every step of it that does not talk to anything."""

    def __init__(
        self,
        memory: MemoryCore,
        *,
        system_prompt: str | None,
        max_prompt_tokens: int | None,
        token_counter: TokenCounter | None,
    ) -> None:
        """Check the settings; see :class:`ChatService`."""
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise InvalidContentError("system_prompt must be a string or None")
        if max_prompt_tokens is not None:
            check_whole_number("max_prompt_tokens", max_prompt_tokens, 1)
        self.memory = memory
        self.system = Message("system", system_prompt) if system_prompt is not None else None
        self.max_prompt_tokens = max_prompt_tokens
        self.count = token_counter or memory.token_counter

    def prompt(self, session_id: str, user: Message) -> ops.Operation[list[dict[str, Any]]]:
        """Build the prompt of a turn: system prompt, remembered history, the new message."""
        fixed = [m.to_chat() for m in (self.system, user) if m is not None]
        budget = None
        if self.max_prompt_tokens is not None:
            budget = self.max_prompt_tokens - sum(self.count(m) for m in fixed)
            if budget < 0:
                raise PromptTooLargeError(
                    f"the system prompt and the new message need {-budget} tokens more"
                    f" than the budget of {self.max_prompt_tokens}"
                )
        stored = yield from ops.get_messages(self.memory, session_id)
        history = within_budget(stored, budget, self.count)
        return fixed[:-1] + [m.to_chat() for m in history] + fixed[-1:]

    def respond(self, session_id: str, user_text: str) -> ops.Operation[Message]:
        """Run a whole turn: prompt, ask the model, store both sides together."""
        user = Message("user", user_text)
        answer = yield ops.Ask((yield from self.prompt(session_id, user)))
        return (yield from self.store(session_id, user, answer))

    def store(self, session_id: str, user: Message, answer: object) -> ops.Operation[Message]:
        """Store the user message and the answer in one write; return the answer as stored."""
        # Ids now, so that the turn an error hands back can be retried safely.
        turn = [_with_id(user), _with_id(_assistant_message(answer))]
        try:
            stored = yield from ops.add_messages(self.memory, session_id, turn)
        except ChatMemoryError as exc:
            reply = answer if isinstance(answer, str) else turn[1]
            raise ReplyNotStoredError(reply, turn, exc) from exc
        return stored[1]


class ChatService(ChatShell[MemoryService, ChatModel]):
    """Runs chat turns over a :class:`MemoryService` and a :class:`ChatModel`.

    The ``system_prompt`` is never stored in the history, so neither the
    history limit nor the token budget can trim it: it always comes first.
    With ``max_prompt_tokens``, the prompt keeps the system prompt, the new
    message and the newest history that fits (counted with the memory's
    ``token_counter``, or ``token_counter`` if given).
    """

    def prompt(self, session_id: str, user_text: str) -> list[dict[str, Any]]:
        """Return the exact prompt a turn with ``user_text`` would send to the model."""
        return self._memory._run(self._core.prompt(session_id, Message("user", user_text)))

    def reply(self, session_id: str, user_text: str) -> str:
        """Run one turn and return the answer's text ("" for an answer of tool calls only).

        See :meth:`respond` for what is stored and raised.
        """
        return self.respond(session_id, user_text).content or ""

    def respond(self, session_id: str, user_text: str) -> Message:
        """Run one turn: prompt the model with the remembered session, then remember both sides.

        Returns the answer as stored (tool calls included). Raises whatever the
        model raises, unchanged, after storing nothing; if the answer cannot
        be stored, :class:`ReplyNotStoredError` carries it.
        """
        return self._memory._run(self._core.respond(session_id, user_text), self._llm)

    def stream(self, session_id: str, user_text: str) -> Generator[str, None, None]:
        """Run one turn, yielding the model's reply chunk by chunk as it streams.

        The user message and the whole reply are stored together, in one
        write, once the stream has ended. If the stream fails, or the caller
        stops reading early, nothing of the turn is stored.
        """
        if not isinstance(self._llm, StreamingChatModel):
            raise InvalidInputError("the model cannot stream: it has no stream(messages) method")
        user = Message("user", user_text)
        chunks: list[str] = []
        for chunk in self._llm.stream(self.prompt(session_id, user_text)):
            chunks.append(text_chunk(chunk))
            yield chunk
        self._memory._run(self._core.store(session_id, user, "".join(chunks)))


def text_chunk(chunk: object) -> str:
    """Return a streamed chunk, refusing anything but text (nothing is stored then)."""
    if not isinstance(chunk, str):
        raise InvalidContentError(f"the model streamed {type(chunk).__name__}, not text")
    return chunk


def _with_id(message: Message) -> Message:
    return message if message.id is not None else replace(message, id=new_message_id())


def _assistant_message(answer: object) -> Message:
    """Return the model's answer as an assistant message, refusing anything else."""
    if isinstance(answer, str):
        return Message("assistant", answer)
    if isinstance(answer, Message) and answer.role == "assistant":
        return answer
    raise InvalidContentError(
        f"the model returned {type(answer).__name__}, not a string or an assistant Message"
    )
