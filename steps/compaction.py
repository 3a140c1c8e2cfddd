"""Steps about compaction: folding old messages into one summary.

Usage::

    When the session is compacted, keeping the newest 2 messages
    When the session is compacted while the user says "wait!", keeping the newest 2 messages
    Then the compaction folded 3 messages

The summarizer is a stand-in for a model call: it writes "Summary:" and the
folded messages' texts, joined by " / ", so a scenario can say what it holds.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import CompactResult, MemoryService, Message

from ._backends import RedisClient
from .sessions import MemorySettings


def summarize(messages: list[Message]) -> str:
    """Summarize messages the way the scenarios read: their texts, in order."""
    texts = [m.content or ", ".join(c.name for c in m.tool_calls) for m in messages]
    return "Summary: " + " / ".join(texts)


@pytest.fixture
def compactions() -> list[CompactResult]:
    """The scenario's compactions, in order."""
    return []


@given(
    parsers.re(r"the session was compacted, keeping the newest (?P<keep>\d+) messages?"),
    converters={"keep": int},
)
@when(
    parsers.re(r"the session is compacted, keeping the newest (?P<keep>\d+) messages?"),
    converters={"keep": int},
)
def session_compacted(
    memory: MemoryService, session_id: str, compactions: list[CompactResult], keep: int
) -> None:
    """The app folds all but the newest messages of the session into one summary.

    Given the session was compacted, keeping the newest 2 messages
    When the session is compacted, keeping the newest 2 messages
    """
    compactions.append(memory.compact(session_id, summarize, keep_last=keep))


@when(
    parsers.re(
        r'the session is compacted while the user says "(?P<text>[^"]*)",'
        r" keeping the newest (?P<keep>\d+) messages?"
    ),
    converters={"keep": int},
)
def session_compacted_during_append(
    memory: MemoryService,
    redis_client: RedisClient,
    memory_settings: MemorySettings,
    namespace: str,
    session_id: str,
    compactions: list[CompactResult],
    text: str,
    keep: int,
) -> None:
    """A message arrives (from another app worker) while the summary is being written.

    When the session is compacted while the user says "wait!", keeping the newest 2 messages
    """
    other_worker = MemoryService(
        redis_client, namespace=namespace, **memory_settings.service_settings()
    )
    arrived: list[Message] = []

    def slow_summarize(messages: list[Message]) -> str:
        if not arrived:
            arrived.append(other_worker.add_message(session_id, "user", text))
        return summarize(messages)

    summarizer: Callable[[list[Message]], str] = slow_summarize
    compactions.append(memory.compact(session_id, summarizer, keep_last=keep))
    assert arrived, "the other worker's message was not sent"


@then(parsers.re(r"the compaction folded (?P<count>\d+) messages?"), converters={"count": int})
def compaction_folded(compactions: list[CompactResult], count: int) -> None:
    """The last compaction replaced this many messages with its summary.

    Then the compaction folded 3 messages
    """
    assert compactions, "no step compacted a session"
    assert compactions[-1].folded == count, compactions[-1]
