"""Test doubles for applications and suites that use chat-memory.

:class:`FakeLLM` is a scripted chat model that records every prompt it gets::

    model = FakeLLM(replies=["Hello Ada!"])
    chat = ChatService(memory, model)
    chat.reply("alice", "I am Ada")      # "Hello Ada!"
    model.prompts[-1]                    # the exact messages the model saw
    model.fail_next()                    # the next call raises FakeLLMError
    chat.reply("alice", "Again?")        # FakeLLMExhausted: no scripted reply left

An echo of the last user message is there only when asked for:
``FakeLLM(echo=True)`` answers ``"echo: <text>"`` whenever no scripted reply is left.
"""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from ._message import Message

__all__ = ["AsyncFakeLLM", "FakeLLM", "FakeLLMError", "FakeLLMExhausted", "count_words"]


class FakeLLMError(Exception):
    """The failure a :class:`FakeLLM` was told to raise."""


class FakeLLMExhausted(AssertionError):
    """A :class:`FakeLLM` without ``echo`` ran out of scripted replies: a mistake in a test."""


class _ScriptedModel:
    """What :class:`FakeLLM` and :class:`AsyncFakeLLM` share: the script and the record."""

    def __init__(self, replies: Iterable[str | Message] = (), *, echo: bool = False) -> None:
        """Start with ``replies`` queued, oldest first (text, or an assistant Message)."""
        self._replies: deque[str | Message] = deque(replies)
        self._echo = echo
        self._failures: deque[Exception] = deque()
        self._stream_failures: deque[tuple[int, Exception]] = deque()
        self.prompts: list[list[dict[str, Any]]] = []

    def will_reply(self, *replies: str | Message) -> None:
        """Queue replies for the next calls."""
        self._replies.extend(replies)

    def fail_next(self, error: Exception | None = None) -> None:
        """Make the next call raise ``error`` (default: a :class:`FakeLLMError`)."""
        self._failures.append(error or FakeLLMError("the model is unavailable"))

    def fail_stream_after(self, chunks: int, error: Exception | None = None) -> None:
        """Make the next stream yield ``chunks`` chunks of its reply, then raise ``error``."""
        failure = error or FakeLLMError("the model stopped streaming")
        self._stream_failures.append((chunks, failure))

    @property
    def last_prompt(self) -> list[dict[str, Any]]:
        """The messages of the most recent call."""
        if not self.prompts:
            raise AssertionError("the model was never prompted")
        return self.prompts[-1]

    def _reply(self, messages: list[dict[str, Any]]) -> str | Message:
        """Record ``messages`` and return the next scripted reply, or an echo."""
        self.prompts.append(copy.deepcopy(messages))
        if self._failures:
            raise self._failures.popleft()
        if self._replies:
            return self._replies.popleft()
        if not self._echo:
            raise FakeLLMExhausted(
                f"{type(self).__name__} has no scripted reply left for call {len(self.prompts)}:"
                f" script more with will_reply(...), or build it with"
                f" {type(self).__name__}(echo=True) to echo the user"
            )
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        return f"echo: {last_user}"

    def _chunks(self, messages: list[dict[str, Any]]) -> tuple[list[str], Exception | None]:
        """Return the next reply cut into chunks (words with their spaces), and its failure."""
        reply = self._reply(messages)
        text = reply if isinstance(reply, str) else reply.content or ""
        chunks = re.findall(r"\S+\s*|\s+", text) or [""]
        if self._stream_failures:
            keep, error = self._stream_failures.popleft()
            return chunks[:keep], error
        return chunks, None


class FakeLLM(_ScriptedModel):
    """A chat model for tests: scripted replies (text or Messages), every prompt recorded.

    A call with no scripted reply left raises :class:`FakeLLMExhausted`, unless
    the model was built with ``echo=True``: it then answers
    ``"echo: <last user message>"``. :meth:`stream` gives the same reply word
    by word; :meth:`fail_stream_after` makes a stream break halfway.
    """

    def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Record ``messages`` and return the next scripted reply, or an echo."""
        return self._reply(messages)

    def stream(self, messages: list[dict[str, Any]]) -> Iterator[str]:
        """Record ``messages`` and yield the next reply word by word."""
        chunks, error = self._chunks(messages)
        yield from chunks
        if error is not None:
            raise error


class AsyncFakeLLM(_ScriptedModel):
    """:class:`FakeLLM` for asyncio: the same script and record, ``complete`` awaited."""

    async def complete(self, messages: list[dict[str, Any]]) -> str | Message:
        """Record ``messages`` and return the next scripted reply, or an echo."""
        return self._reply(messages)

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Record ``messages`` and yield the next reply word by word."""
        chunks, error = self._chunks(messages)
        for chunk in chunks:
            yield chunk
        if error is not None:
            raise error


def count_words(message: Mapping[str, Any]) -> int:
    """Count a message as one token per whitespace-separated word (at least one).

    A token counter whose arithmetic a scenario's reader can do in their head.
    """
    words = len((message.get("content") or "").split())
    for call in message.get("tool_calls") or ():
        words += len(call["function"]["arguments"].split()) + 1
    return max(words, 1)
