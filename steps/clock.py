"""Steps about time passing.

Usage::

    Given the time is 2026-12-02 10:00:00 UTC
    When 31 minutes pass
    When 1799 seconds pass

The application clock is frozen (freezegun) by the first step that needs time,
so scenarios that never mention time pay nothing for it. It moves only when a
step says so. On a real server, whose clock freezegun cannot move, the
remaining time to live of the scenario's keys is shortened by the same amount.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time
from pytest_bdd import given, parsers, when

from chat_memory_suite._compat import (
    FreezeTime,
    FrozenDateTimeFactory,
    StepTickTimeFactory,
    TickingDateTimeFactory,
)
from chat_memory_suite.backends import Backend, RedisClient, shift_expiry

_Factory = FrozenDateTimeFactory | StepTickTimeFactory | TickingDateTimeFactory


class ScenarioClock:
    """The scenario's application clock: real until started, then frozen until moved."""

    def __init__(self, backend: Backend, client: RedisClient, namespace: str) -> None:
        """Prepare a clock for one scenario; nothing is frozen yet."""
        self._backend = backend
        self._client = client
        self._namespace = namespace
        self._freezer: FreezeTime | None = None
        self._frozen: _Factory | None = None

    def start(self, at: datetime | None = None) -> None:
        """Freeze the clock at ``at`` (default: now), once per scenario."""
        if self._frozen is not None:
            if at is not None:
                raise AssertionError("the time must be set before anything else uses the clock")
            return
        # pytest's own timing (--durations, junitxml) must keep the real clock.
        self._freezer = freeze_time(at or datetime.now(UTC), tick=False, ignore=["_pytest.timing"])
        self._frozen = self._freezer.start()

    def advance(self, elapsed: timedelta) -> None:
        """Move the application clock, and the server's expiry, forward by ``elapsed``."""
        self.start()
        assert self._frozen is not None
        self._frozen.tick(elapsed)
        # fakeredis reads the frozen clock itself; a real server's keys are shortened instead.
        # Either way a session whose expiry time is reached exactly is gone.
        shifted = elapsed if self._backend.kind != "fakeredis" else timedelta(0)
        shift_expiry(self._client, self._namespace, shifted)

    def stop(self) -> None:
        """Give the real clock back."""
        if self._freezer is not None:
            self._freezer.stop()


@pytest.fixture
def clock(
    redis_backend: Backend, redis_client: RedisClient, namespace: str
) -> Iterator[ScenarioClock]:
    """The scenario's clock, frozen only once a step asks for it."""
    scenario_clock = ScenarioClock(redis_backend, redis_client, namespace)
    yield scenario_clock
    scenario_clock.stop()


@given(parsers.parse("the time is {moment:ti} UTC"))
def the_time_is(clock: ScenarioClock, moment: datetime) -> None:
    """Freeze the clock at a known moment, so stored times are exact.

    Given the time is 2026-12-02 10:00:00 UTC
    """
    clock.start(moment.replace(tzinfo=UTC))


@given(parsers.parse("{minutes:d} minutes passed"))
@when(parsers.parse("{minutes:d} minutes pass"))
def minutes_pass(clock: ScenarioClock, minutes: int) -> None:
    """Let time pass with nobody talking.

    Given 20 minutes passed
    When 31 minutes pass
    """
    clock.advance(timedelta(minutes=minutes))


@when(parsers.parse("{seconds:d} seconds pass"))
def seconds_pass(clock: ScenarioClock, seconds: int) -> None:
    """Let time pass with nobody talking, to the second.

    When 1799 seconds pass
    """
    clock.advance(timedelta(seconds=seconds))


@when(parsers.parse("{milliseconds:d} milliseconds really pass"))
def milliseconds_really_pass(milliseconds: int) -> None:
    """Wait for real, without the frozen clock: for the server's own expiry (keep it short).

    When 800 milliseconds really pass
    """
    assert milliseconds <= 5000, "a real wait longer than 5 seconds slows every run"
    time.sleep(milliseconds / 1000)
