"""Steps about compaction: folding old messages into one summary.

Usage::

    When the session is compacted, keeping the newest 2 messages
    When the session is compacted into the summary "Ada (42), from Paris.", keeping the newest 1 message
    When the session is compacted while the user says "And I love museums.", keeping the newest 1 message
    When the app tries to compact the session, keeping the newest 1 message
    When the app compacts the session with no summarizer, keeping the newest 1 message
    Then the compaction folded 3 messages

The summarizer is a stand-in for a model call: it writes "Summary:" and the
folded messages' texts, joined by " / ", so a scenario can say what it holds.
Through the asyncio API, the usual compaction's summarizer is a coroutine
function, as an asyncio app's model call is; the others stay plain functions,
which the asyncio API takes too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import cast

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    SUMMARY_NAME,
    CompactionConflictError,
    CompactResult,
    CorruptEntryError,
    MemoryService,
    Message,
)
from chat_memory_suite.apis import Services
from chat_memory_suite.backends import RedisClient

from .context import expect_corrupt_entry
from .conversation import Attempt
from .sessions import MemorySettings

REQUIRES = ("compaction",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""


def summarize(messages: list[Message]) -> str:
    """Summarize messages the way the scenarios read: their texts, in order."""
    texts = [m.content or ", ".join(c.name for c in m.tool_calls) for m in messages]
    return "Summary: " + " / ".join(texts)


def app_summarizer(services: Services) -> Callable[[list[Message]], str]:
    """:func:`summarize`, as a coroutine function through the asyncio API (as a model call is)."""
    if services.api != "async":
        return summarize

    async def summarize_awaited(messages: list[Message]) -> str:
        return summarize(messages)

    awaited: Callable[[list[Message]], Awaitable[str]] = summarize_awaited
    return cast(Callable[[list[Message]], str], awaited)  # the blocking view passes it on


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
    memory: MemoryService,
    services: Services,
    session_id: str,
    compactions: list[CompactResult],
    keep: int,
) -> None:
    """The app folds all but the newest messages of the session into one summary.

    The summary's text is "Summary: " and the folded messages' texts joined by
    " / " (a tool call's tool names instead of its empty text): folding
    "hello" and "hi" gives "Summary: hello / hi". It is stored as a system
    message named "summary", before the messages kept.

    Given the session was compacted, keeping the newest 2 messages
    When the session is compacted, keeping the newest 2 messages
    """
    compactions.append(memory.compact(session_id, app_summarizer(services), keep_last=keep))


@given(
    parsers.re(
        r'the session was compacted into the summary "(?P<text>[^"]*)",'
        r" keeping the newest (?P<keep>\d+) messages?"
    ),
    converters={"keep": int},
)
@when(
    parsers.re(
        r'the session is compacted into the summary "(?P<text>[^"]*)",'
        r" keeping the newest (?P<keep>\d+) messages?"
    ),
    converters={"keep": int},
)
def session_compacted_into(
    memory: MemoryService,
    session_id: str,
    compactions: list[CompactResult],
    text: str,
    keep: int,
) -> None:
    """The app folds all but the newest messages into a summary with exactly this text.

    Given the session was compacted into the summary "Ada, who lives in Paris.", keeping the newest 0 messages
    When the session is compacted into the summary "Ada (42), from Paris.", keeping the newest 1 message
    """
    compactions.append(memory.compact(session_id, lambda _: text, keep_last=keep))


@when(
    parsers.re(r"the app tries to compact the session, keeping the newest (?P<keep>\d+) messages?"),
    converters={"keep": int},
)
def app_tries_to_compact(
    memory: MemoryService,
    session_id: str,
    compactions: list[CompactResult],
    attempt: Attempt,
    keep: int,
) -> None:
    """The app folds all but the newest messages; a failure is kept for a Then step.

    When the app tries to compact the session, keeping the newest 1 message
    """
    attempt.make(lambda: compactions.append(memory.compact(session_id, summarize, keep_last=keep)))


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

    When the session is compacted while the user says "And I love museums.", keeping the newest 1 message
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


@when("the session is compacted while the user keeps talking")
def session_compacted_while_talking(
    memory: MemoryService,
    redis_client: RedisClient,
    memory_settings: MemorySettings,
    namespace: str,
    session_id: str,
    attempt: Attempt,
    summaries: list[int],
) -> None:
    """Another app worker appends a message during every summary, so the session never settles.

    When the session is compacted while the user keeps talking
    """
    other_worker = MemoryService(
        redis_client, namespace=namespace, **memory_settings.service_settings()
    )

    def busy_summarize(messages: list[Message]) -> str:
        summaries.append(len(messages))
        other_worker.add_message(session_id, "user", f"one more thing ({len(summaries)})")
        return summarize(messages)

    attempt.make(lambda: memory.compact(session_id, busy_summarize, keep_last=1))


@when("the session is compacted by a summarizer that returns nothing")
def session_compacted_by_empty_summarizer(
    memory: MemoryService, session_id: str, attempt: Attempt
) -> None:
    """The app's summarizer (a model call) comes back empty.

    When the session is compacted by a summarizer that returns nothing
    """
    attempt.make(lambda: memory.compact(session_id, lambda _: "", keep_last=1))


@when(
    parsers.re(
        r"the app compacts the session with no summarizer, keeping the newest (?P<keep>\d+) messages?"
    ),
    converters={"keep": int},
)
def app_compacts_without_summarizer(
    memory: MemoryService, session_id: str, attempt: Attempt, keep: int
) -> None:
    """The app passes None where its summarizer goes (a model client that failed to load).

    When the app compacts the session with no summarizer, keeping the newest 1 message
    """
    no_summarizer = cast(Callable[[list[Message]], str], None)
    attempt.make(lambda: memory.compact(session_id, no_summarizer, keep_last=keep))


@pytest.fixture
def summaries() -> list[int]:
    """How many messages each summary of the scenario was asked to fold."""
    return []


@then(parsers.re(r"the compaction gave up after (?P<count>\d+) summaries, folding nothing"))
def compaction_gave_up(attempt: Attempt, summaries: list[int], count: str) -> None:
    """Every attempt found the session changed: the app is told, and nothing was folded.

    Then the compaction gave up after 3 summaries, folding nothing
    """
    assert isinstance(attempt.error, CompactionConflictError), f"got {attempt.error!r}"
    assert len(summaries) == int(count), summaries


@then(parsers.parse("the summary is stored as sent at {moment:ti} UTC"))
def summary_stored_at(
    memory: MemoryService, session_id: str, compactions: list[CompactResult], moment: datetime
) -> None:
    """The summary, first in the history, carries the time the compaction made it.

    Then the summary is stored as sent at 2026-12-02 10:05:00 UTC
    """
    first = memory.get_messages(session_id)[0]
    assert compactions, "no step compacted a session"
    expected = moment.replace(tzinfo=UTC).timestamp()
    assert (first.name, first.created_at) == (SUMMARY_NAME, expected), first
    assert compactions[-1].summary == first


@then(parsers.re(r"the compaction folded (?P<count>\d+) messages?"), converters={"count": int})
def compaction_folded(compactions: list[CompactResult], count: int) -> None:
    """The last compaction replaced this many messages with its summary.

    Then the compaction folded 3 messages
    """
    assert compactions, "no step compacted a session"
    assert compactions[-1].folded == count, compactions[-1]


@then(parsers.parse("compacting the session fails, naming entry {number:d} as corrupt"))
def compaction_fails_on_corrupt_entry(memory: MemoryService, session_id: str, number: int) -> None:
    """The compaction is refused before any summary, naming the entry that cannot be read.

    Then compacting the session fails, naming entry 2 as corrupt
    """
    with pytest.raises(CorruptEntryError) as failure:
        memory.compact(session_id, summarize, keep_last=0)
    expect_corrupt_entry(failure.value, session_id, number)
