"""Steps about a turn stored whole: several messages written together or not at all.

Usage::

    When a turn of 3 messages is stored while another worker reads the session at every step of the write
    Then every read saw the session as it was before the turn or with the whole turn
    When a turn of 3 messages is stored again and again, the connection lost at a later step of the write each time
    Then each cut-off write left its session with the whole turn or none of it

A step of the write is a command the memory sends to Redis (a pipeline or a
script is one command). The reader and the lost connection come between those,
through whatever client the memory uses, sync or asyncio: a memory that writes
a turn message by message is seen half-written, or is left half-written.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from pytest_bdd import parsers, then, when

from chat_memory import MemoryService, Message, Role
from chat_memory_suite._compat import before_each_send
from chat_memory_suite.adapter import AdaptedMemory

REQUIRES = ("atomic_turns",)
"""What every step here needs of the memory under test (see chat_memory_suite.adapter)."""

MAX_ATTEMPTS = 20
"""The most commands a turn's write is broken before: more is not a turn of a few messages."""


@dataclass
class TurnWatch:
    """What the reader saw, or what each broken attempt left, while a turn was stored."""

    before: list[str] = field(default_factory=list)
    turn: list[str] = field(default_factory=list)
    looks: list[list[str]] = field(default_factory=list)
    attempts: list[tuple[int, str, list[str]]] = field(default_factory=list)
    """Per attempt: the command it broke before, how the write ended, what the session held."""


@pytest.fixture
def turn_watch() -> TurnWatch:
    """The scenario's turn and what was seen of it."""
    return TurnWatch()


def _turn(count: int) -> list[Message]:
    roles: tuple[Role, Role] = ("user", "assistant")
    return [Message(roles[n % 2], f"Turn message {n + 1}.") for n in range(count)]


def _readers(memory: Any) -> tuple[Callable[[str], list[str]], Callable[[str], Awaitable[Any]]]:
    """Read a session's contents through the memory itself, from a sync and an async hook.

    The memory under test is chat-memory's own service, its async service seen through
    blocking calls (``target``), or an adapted memory (``memory``), sync or async.
    """
    store = (
        memory.memory if isinstance(memory, AdaptedMemory) else getattr(memory, "target", memory)
    )

    def read(session_id: str) -> list[str]:
        return [m.content or "" for m in store.get_messages(session_id)]

    async def aread(session_id: str) -> list[str]:
        found = store.get_messages(session_id)
        return [m.content or "" for m in (await found if inspect.isawaitable(found) else found)]

    return read, aread


@when(
    parsers.parse(
        "a turn of {count:d} messages is stored while another worker reads the session"
        " at every step of the write"
    )
)
def stored_while_read(
    memory: MemoryService, session_id: str, turn_watch: TurnWatch, count: int
) -> None:
    """Store the turn in one call; before each command it sends, read the session.

    When a turn of 3 messages is stored while another worker reads the session at every step of the write
    """
    turn = _turn(count)
    turn_watch.before = [m.content or "" for m in memory.get_messages(session_id)]
    turn_watch.turn = [m.content or "" for m in turn]
    read, aread = _readers(memory)

    async def look() -> None:
        turn_watch.looks.append(await aread(session_id))

    with before_each_send(lambda: turn_watch.looks.append(read(session_id)), look):
        memory.add_messages(session_id, turn)
    turn_watch.looks.append([m.content or "" for m in memory.get_messages(session_id)])


@then("every read saw the session as it was before the turn or with the whole turn")
def looks_saw_whole_turns(turn_watch: TurnWatch) -> None:
    """No read, between the write's commands or after it, found part of the turn.

    Then every read saw the session as it was before the turn or with the whole turn
    """
    whole = turn_watch.before + turn_watch.turn
    assert turn_watch.looks[-1] == whole, "after the write the session lacks the turn"
    halves = [look for look in turn_watch.looks if look not in (turn_watch.before, whole)]
    assert halves == [], f"a reader saw part of the turn: {halves[0]}"


class _Broken(redis.ConnectionError):
    """The connection the suite broke before a command of the write."""


@when(
    parsers.parse(
        "a turn of {count:d} messages is stored again and again, the connection lost at a"
        " later step of the write each time"
    )
)
def stored_with_breaks(
    memory: MemoryService, session_id: str, turn_watch: TurnWatch, count: int
) -> None:
    """Attempt n, on a session of its own, has its n-th command and every later one fail.

    The connection stays broken, as a server that went away, so a client's retries
    fail too. The attempts stop at the first one whose write sends fewer commands.

    When a turn of 3 messages is stored again and again, the connection lost at a later step of the write each time
    """
    turn = _turn(count)
    turn_watch.turn = [m.content or "" for m in turn]
    # One turn stored unbroken first, in a session of its own: what a store does once
    # (load a script, open a connection) is done, and the commands counted below are
    # those of every write.
    memory.add_messages(f"{session_id}-warm-up", _turn(count))
    for attempt in range(1, MAX_ATTEMPTS + 1):
        sent = 0

        def count_and_break(broken_at: int = attempt) -> None:
            nonlocal sent
            sent += 1
            if sent >= broken_at:  # and stays broken: a client's retries fail too
                raise _Broken(f"the suite broke the connection before command {broken_at}")

        async def async_count_and_break(broken_at: int = attempt) -> None:
            count_and_break(broken_at)

        session = f"{session_id}-attempt-{attempt}"
        # A read first: a connection broken by the attempt before is set up again here,
        # so the commands counted below are the write's own.
        assert memory.get_messages(session) == [], f"session {session!r} is not new"
        try:
            with before_each_send(count_and_break, async_count_and_break):
                memory.add_messages(session, turn)
            ended = "stored"
        except Exception as exc:  # whatever the memory raises is its report of the failure
            ended = f"raised {type(exc).__name__}"
        held = [m.content or "" for m in memory.get_messages(session)]
        turn_watch.attempts.append((attempt, ended, held))
        if sent < attempt:
            return


@then("each cut-off write left its session with the whole turn or none of it")
def attempts_all_or_nothing(turn_watch: TurnWatch) -> None:
    """Every broken write stored the turn whole (after a retry) or not at all.

    Then each cut-off write left its session with the whole turn or none of it
    """
    broken = turn_watch.attempts[:-1]  # the last attempt's write sent too few commands to break
    assert broken, "no command of the write was ever broken: the memory sends nothing to Redis?"
    halves = [(n, ended, held) for n, ended, held in broken if held not in ([], turn_watch.turn)]
    assert halves == [], (
        "a write broken before one of its commands left part of the turn: "
        + "; ".join(
            f"broken before command {n} ({ended}), the session holds {held}"
            for n, ended, held in halves
        )
    )
