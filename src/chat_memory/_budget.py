"""Token budgets: keep the newest messages that fit, never splitting a tool call from its results.

The default :func:`approximate_tokens` needs no tokenizer and no network: it
counts a message as 4 tokens of overhead, plus one token per 4 ASCII
characters (rounded up) and one token per non-ASCII character of its text
(content, tool-call names and arguments). That is close for English and errs
on the generous side for Chinese, Japanese and emoji, so a prompt it admits
rarely exceeds a real tokenizer's count by much. Pass any
``Callable[[dict], int]`` (e.g. one built on tiktoken) to count exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from ._message import Message

__all__ = [
    "TokenCounter",
    "approximate_tokens",
    "drop_orphan_tool_results",
    "fit_to_budget",
    "within_budget",
]

TokenCounter: TypeAlias = Callable[[Mapping[str, Any]], int]
"""Counts the tokens of one message in the chat-completions shape."""

_MESSAGE_OVERHEAD = 4


def approximate_tokens(message: Mapping[str, Any]) -> int:
    """Estimate the tokens of one chat-completions message, without a tokenizer."""
    texts = [message.get("content") or ""]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        texts += [function.get("name", ""), function.get("arguments", "")]
    text = "".join(texts)
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return _MESSAGE_OVERHEAD + math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def _groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Split messages into units that trimming keeps whole (a tool call with its results)."""
    groups: list[list[Message]] = []
    for message in messages:
        answers_open_call = (
            message.role == "tool"
            and groups
            and groups[-1][0].tool_calls
            and message.tool_call_id in {call.id for call in groups[-1][0].tool_calls}
        )
        if answers_open_call:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def drop_orphan_tool_results(messages: Sequence[Message]) -> list[Message]:
    """Leave out every tool result whose call is not before it.

    The history limit trims by position and may cut an assistant tool call
    away from its results (a chat-completions history only at its start; an
    Agents SDK session, whose parallel calls are items of their own, anywhere);
    model APIs reject a tool result that follows no call, so such leftovers
    never reach a prompt.
    """
    calls: set[str] = set()
    kept = []
    for message in messages:  # on every read: kept to one check for most messages
        if message.tool_calls:
            calls.update(call.id for call in message.tool_calls)
        elif message.role == "tool" and message.tool_call_id not in calls:
            continue
        kept.append(message)
    return kept


def fit_to_budget(
    messages: Sequence[Message], max_tokens: int, count: TokenCounter
) -> list[Message]:
    """Return the newest messages whose tokens add up to at most ``max_tokens``, in order.

    A tool call and its results are kept or dropped together; the result is
    always an unbroken run of the newest messages.
    """
    kept: list[list[Message]] = []
    total = 0
    for group in reversed(_groups(drop_orphan_tool_results(messages))):
        cost = sum(count(message.to_chat()) for message in group)
        if total + cost > max_tokens:
            break
        kept.append(group)
        total += cost
    return [message for group in reversed(kept) for message in group]


def within_budget(
    messages: Sequence[Message], budget: int | None, count: TokenCounter
) -> list[Message]:
    """Return what a model is given of ``messages``: all of them, or the newest within ``budget``.

    Either way tool results whose call is missing are left out.
    """
    if budget is None:
        return drop_orphan_tool_results(messages)
    return fit_to_budget(messages, budget, count)
