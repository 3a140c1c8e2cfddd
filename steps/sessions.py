"""Steps about sessions and how the memory is set up.

Usage::

    Given the history limit is 3 messages
    Given sessions expire after 30 minutes of inactivity
    Given a new session "alice"

Every scenario starts with empty memory and talks in a fresh session of its
own, named "default", unless ``Given a new session "<name>"`` names one.
Settings come before the first message of a scenario: the memory is built,
with them, the first time a step uses it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import Durability, InvalidInputError, MemoryService
from chat_memory_suite.adapter import requires
from chat_memory_suite.apis import Services
from chat_memory_suite.backends import ClientRecipe

from .clock import ScenarioClock


@dataclass
class MemorySettings:
    """What the scenario's Given steps configured; read once, when the memory is built.

    Only the settings a step changed reach the service: the others keep the
    library's own defaults, so a scenario without settings tests those.
    """

    changed: dict[str, Any] = field(default_factory=dict)
    decode_responses: bool = False
    built: bool = field(default=False, repr=False)

    def change(self, **values: object) -> None:
        """Change a setting, refusing once the memory exists."""
        if self.built:
            raise AssertionError("memory settings must come before the first message is sent")
        self.changed.update(values)

    def service_settings(self) -> dict[str, Any]:
        """The keyword arguments for the memory service: the changed settings only."""
        return dict(self.changed)


@pytest.fixture
def memory_settings() -> MemorySettings:
    """The memory settings of this scenario."""
    return MemorySettings()


@pytest.fixture
def memory(memory_settings: MemorySettings, services: Services, namespace: str) -> MemoryService:
    """The memory service under test (sync, or async seen through blocking calls)."""
    memory_settings.built = True
    return services.memory(
        decode_responses=memory_settings.decode_responses,
        namespace=namespace,
        **memory_settings.service_settings(),
    )


DEFAULT_SESSION = "default"
"""The session a scenario talks in when it names none: fresh in every scenario."""


@pytest.fixture
def session_id() -> str:
    """The session the scenario talks in: "default", or the one ``Given a new session`` names."""
    return DEFAULT_SESSION


@given(parsers.parse('a new session "{name}"'), target_fixture="session_id")
def a_new_session(name: str) -> str:
    """Start talking in a session nobody has used yet (the current session from now on).

    Given a new session "alice"
    """
    return name


@given(parsers.re(r"the history limit is (?P<limit>\d+) messages?"), converters={"limit": int})
@requires("history_limit")
def history_limit(memory_settings: MemorySettings, limit: int) -> None:
    """Keep only the newest ``limit`` messages of each session.

    Given the history limit is 10 messages
    """
    memory_settings.change(max_history=limit)


@given(parsers.parse("a message may take at most {size:d} bytes once stored"))
@requires("client_settings")
def message_size_limit(memory_settings: MemorySettings, size: int) -> None:
    """Refuse a message whose stored entry (JSON, with its id and time) is larger than this.

    Given a message may take at most 300 bytes once stored
    """
    memory_settings.change(max_message_bytes=size)


@given(
    parsers.re(r"message ids are remembered for the newest (?P<count>\d+) messages?"),
    converters={"count": int},
)
@requires("client_settings")
def ids_remembered_for(memory_settings: MemorySettings, count: int) -> None:
    """Recognise a retried message by its id only among the session's newest ``count``.

    Given message ids are remembered for the newest 20 messages
    """
    memory_settings.change(idempotency_window=count)


@given(parsers.parse("sessions expire after {minutes:d} minutes of inactivity"))
@requires("ttl")
def sessions_expire(memory_settings: MemorySettings, clock: ScenarioClock, minutes: int) -> None:
    """Forget a session after this long without a new message (and freeze the clock).

    Given sessions expire after 30 minutes of inactivity
    """
    clock.start()
    memory_settings.change(ttl=timedelta(minutes=minutes))


@given("the app was restarted", target_fixture="memory")
def app_restarted(
    memory_settings: MemorySettings, services: Services, namespace: str
) -> MemoryService:
    """The app starts again with the same settings: a new memory over the same store.

    Given the app was restarted
    """
    return redeployed(memory_settings, services, namespace)


@given("the app was redeployed with sessions that never expire", target_fixture="memory")
@requires("ttl")
def redeployed_without_expiry(
    memory_settings: MemorySettings, services: Services, namespace: str
) -> MemoryService:
    """The app starts again with expiry turned off; the sessions it stored stay where they are.

    Given the app was redeployed with sessions that never expire
    """
    return redeployed(memory_settings, services, namespace, ttl=None)


@given(
    parsers.re(r"the app was redeployed with a history limit of (?P<limit>\d+) messages?"),
    converters={"limit": int},
    target_fixture="memory",
)
@requires("history_limit")
def redeployed_with_history_limit(
    memory_settings: MemorySettings, services: Services, namespace: str, limit: int
) -> MemoryService:
    """The app starts again keeping fewer messages; the sessions it stored stay as they are.

    Given the app was redeployed with a history limit of 20 messages
    """
    return redeployed(memory_settings, services, namespace, max_history=limit)


def redeployed(
    memory_settings: MemorySettings, services: Services, namespace: str, **changed: Any
) -> MemoryService:
    """The memory of the app started again with ``changed`` settings, over the same store."""
    return services.memory(namespace=namespace, **(memory_settings.service_settings() | changed))


@given("the memory's client decodes responses as text")
@requires("client_settings")
def client_decodes_responses(memory_settings: MemorySettings) -> None:
    """The app's Redis client is built with ``decode_responses=True``, as many apps do.

    Given the memory's client decodes responses as text
    """
    assert not memory_settings.built, "the client is chosen before the first message is sent"
    memory_settings.decode_responses = True


@then(parsers.re(r"the session expires in (?P<seconds>\d+) seconds?"), converters={"seconds": int})
@requires("ttl")
def session_expires_in(memory: MemoryService, session_id: str, seconds: int) -> None:
    """The memory reports this much time left (to the second) before the session is forgotten.

    Then the session expires in 1800 seconds
    """
    left = memory.ttl(session_id)
    if left is None:
        raise AssertionError(
            f'session "{session_id}" has no expiry time left: it never expires, or is gone'
        )
    if abs(left - seconds) > 1:
        raise AssertionError(f'session "{session_id}" expires in {left:g} seconds, not {seconds}')


@then("the memory reports no time left for the session")
@requires("ttl")
def no_time_left(memory: MemoryService, session_id: str) -> None:
    """``ttl()`` is None: the session never expires, or the memory holds nothing of it.

    Then the memory reports no time left for the session
    """
    left = memory.ttl(session_id)
    assert left is None, f'ttl("{session_id}") is {left!r}, not None'


@when("the session is cleared")
def session_is_cleared(memory: MemoryService, session_id: str) -> None:
    """The app forgets the current session on purpose.

    When the session is cleared
    """
    memory.clear(session_id)


@given(
    parsers.parse("sessions expire after {milliseconds:d} milliseconds of inactivity, in real time")
)
@requires("ttl", "millisecond_expiry")
def sessions_expire_in_real_time(memory_settings: MemorySettings, milliseconds: int) -> None:
    """Forget a session after a short real time without messages (the clock is not frozen).

    Given sessions expire after 500 milliseconds of inactivity, in real time
    """
    memory_settings.change(ttl=timedelta(milliseconds=milliseconds))


def setting_value(value: str) -> Any:
    """A setting's value as JSON (``NaN`` and ``Infinity`` included), e.g. ``1800`` or ``"x"``."""
    return json.loads(value)


@given(parsers.parse("the memory is set up with {setting} = {value}"))
@requires("client_settings")
def memory_set_up_with(memory_settings: MemorySettings, setting: str, value: str) -> None:
    """Build the memory with this keyword setting, its value written as JSON (seconds for ttl).

    Given the memory is set up with ttl = 1800
    """
    memory_settings.change(**{setting: setting_value(value)})


@pytest.fixture
def setup_error() -> list[InvalidInputError]:
    """The error the scenario's attempt to set up the memory raised, if any."""
    return []


@when(parsers.parse("the app sets up the memory with {setting} = {value}"))
@requires("client_settings")
def app_sets_up_memory(
    services: Services,
    namespace: str,
    setup_error: list[InvalidInputError],
    setting: str,
    value: str,
) -> None:
    """The app builds the memory with this keyword setting, which may be refused.

    When the app sets up the memory with max_history = 0
    """
    try:
        services.memory(**({"namespace": namespace} | {setting: setting_value(value)}))
    except InvalidInputError as exc:
        setup_error.append(exc)


@when(parsers.parse("the app sets up the memory to wait for replicas with {setting} = {value}"))
@requires("server_faults", "client_settings")
def app_sets_up_durability(
    services: Services,
    client_recipe: ClientRecipe,
    namespace: str,
    setup_error: list[InvalidInputError],
    setting: str,
    value: str,
) -> None:
    """The app builds the memory with ``durability=Durability(setting=value)``, maybe refused.

    redis-py's asyncio cluster client cannot take a durability setting at all
    (the memory refuses it, saying so): there a setting that is not refused on
    its own is skipped.

    When the app sets up the memory to wait for replicas with replicas = 0
    """
    try:
        durability = Durability(**{setting: setting_value(value)})
    except InvalidInputError as exc:
        setup_error.append(exc)
        return
    if services.api == "async" and client_recipe.kind == "cluster":
        pytest.skip("redis-py's asyncio cluster client cannot take the durability setting")
    try:
        services.memory(namespace=namespace, durability=durability)
    except InvalidInputError as exc:
        setup_error.append(exc)


@then(parsers.parse('the setup is refused with the reason "{reason}"'))
@requires("client_settings")
def setup_refused(setup_error: list[InvalidInputError], reason: str) -> None:
    """Building the memory (or the chat over it) failed at once, with a typed error saying this.

    Then the setup is refused with the reason "max_history must be a whole number from 1 to 9223372036854775807, not 0"
    """
    assert reason in _setup_refusal(setup_error), f"the error was: {setup_error[0]}"


@then(parsers.parse('the setup is refused with the reason "{reason}", word for word'))
@requires("client_settings")
def setup_refused_word_for_word(setup_error: list[InvalidInputError], reason: str) -> None:
    """Building the memory (or the chat over it) failed at once, with exactly this message.

    Then the setup is refused with the reason "system_prompt must be a string or None", word for word
    """
    said = _setup_refusal(setup_error)
    assert said == reason, f"the error was: {said}"


def _setup_refusal(setup_error: list[InvalidInputError]) -> str:
    """The message of the setup's refusal (there must be one)."""
    assert setup_error, "it was set up without complaint"
    return str(setup_error[0])


@then("the memory is set up")
def setup_accepted(setup_error: list[InvalidInputError]) -> None:
    """Building the memory raised nothing: the setting was taken as given.

    Then the memory is set up
    """
    assert not setup_error, f"the setup was refused: {setup_error[0]}"


@given("the app has since served other sessions")
def served_other_sessions(memory: MemoryService) -> None:
    """The app's memory has stored messages in two other sessions: it has been running.

    A memory asks Redis about every permission on its first append that stores something,
    then appends one message the short way (see append.lua): the scenario's next message
    takes that way, as in an app that has been up for a while.

    Given the app has since served other sessions
    """
    for other in ("someone else's session", "another session"):
        memory.add_message(other, "user", "hello")
