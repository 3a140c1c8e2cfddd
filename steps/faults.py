"""Steps about the Redis server failing under the memory: down, frozen, full, restarted.

Usage::

    Given the memory runs on a server of its own
    Given the server went down
    Given the user tried to say "are you there?"
    When the server comes back
    When the app retries the failed message
    Then the user was told within 2 seconds that the message may not have been stored
    Given the server is out of memory
    Then the message is refused by the server with the reason "out of memory"
    Given the server dropped every connection
    When the server restarts without its data
    When the user says "are you there?" while the server is frozen for 1500 milliseconds
    Then the server received that message more than once

Like the storage steps, these touch the server itself, since breaking it is
their whole point. Each scenario gets a throwaway ``redis-server`` of its own
(and needs ``redis-server`` installed); the memory's client gives up after
half a second per attempt and retries 3 times, as a production client should
be configured (see the README).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from pytest_bdd import given, parsers, then, when
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from chat_memory import MemoryService, Message, StorageError, WriteOutcomeUnknownError

from ._servers import HOST, ThrowawayServer
from .conversation import Attempt


@pytest.fixture
def fault_server(tmp_path: Path) -> Iterator[ThrowawayServer]:
    """A throwaway redis-server of the scenario's own, to break at will."""
    server = ThrowawayServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


def production_client(port: int, **options: object) -> redis.Redis:
    """A client configured as the README advises: bounded waits, a few quick retries."""
    return redis.Redis(
        host=HOST,
        port=port,
        socket_timeout=0.5,
        socket_connect_timeout=0.5,
        retry=Retry(ExponentialBackoff(cap=0.1, base=0.02), 3),
        **options,  # type: ignore[arg-type]
    )


@given("the memory runs on a server of its own", target_fixture="redis_client")
def memory_on_own_server(fault_server: ThrowawayServer) -> redis.Redis:
    """The memory talks to a throwaway server that the scenario may break.

    Given the memory runs on a server of its own
    """
    return production_client(fault_server.port)


@given("the server went down")
def server_went_down(fault_server: ThrowawayServer) -> None:
    """The server stops; it keeps what it acknowledged, for when it comes back.

    Given the server went down
    """
    fault_server.stop()


@when("the server comes back")
def server_comes_back(fault_server: ThrowawayServer) -> None:
    """The server starts again, with what it had acknowledged.

    When the server comes back
    """
    fault_server.start()


@when("the server restarts without its data")
def server_restarts_empty(fault_server: ThrowawayServer) -> None:
    """The server restarts and has lost everything, as one without persistence does.

    When the server restarts without its data
    """
    fault_server.restart_without_data()


@given("the server is out of memory")
def server_out_of_memory(fault_server: ThrowawayServer) -> None:
    """The server has reached its memory limit and evicts nothing (maxmemory, noeviction).

    Given the server is out of memory
    """
    admin = fault_server.admin()
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", 1)
    admin.close()


@given("the server dropped every connection")
def server_dropped_connections(fault_server: ThrowawayServer) -> None:
    """The server closes every client connection (as a failover or a proxy restart does).

    Given the server dropped every connection
    """
    admin = fault_server.admin()
    admin.client_kill_filter(_type="normal", skipme=True)
    admin.close()


@given(parsers.parse('the user tried to say "{text}"'))
@when(parsers.parse('the user tries to say "{text}"'))
def user_tries_to_say(memory: MemoryService, session_id: str, attempt: Attempt, text: str) -> None:
    """The user sends a message that may fail; the failure is kept for a Then step.

    When the user tries to say "are you there?"
    """
    attempt.make(lambda: memory.add_message(session_id, "user", text))


@when("the app retries the failed message")
def app_retries(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app sends the failed write again, as the error handed it back (same ids).

    When the app retries the failed message
    """
    assert isinstance(attempt.error, WriteOutcomeUnknownError), (
        f"no failed write: {attempt.error!r}"
    )
    memory.add_messages(session_id, attempt.error.messages)


@when(
    parsers.parse(
        'the user says "{text}" while the server is frozen for {milliseconds:d} milliseconds'
    ),
    target_fixture="evalsha_calls",
)
def user_says_while_frozen(
    memory: MemoryService,
    session_id: str,
    fault_server: ThrowawayServer,
    text: str,
    milliseconds: int,
) -> int:
    """The server stops answering while the message is sent, so the client times out and resends.

    The app does what the README advises: when the outcome is unknown, send the
    same messages again.

    When the user says "are you there?" while the server is frozen for 1500 milliseconds
    """
    before = _evalsha_calls(fault_server)
    fault_server.pause()
    thaw = threading.Timer(milliseconds / 1000, fault_server.resume)
    thaw.start()
    message = Message("user", text)
    try:
        memory.add_messages(session_id, [message])
    except WriteOutcomeUnknownError as unknown:
        thaw.join()
        memory.add_messages(session_id, unknown.messages)
    thaw.join()
    return _evalsha_calls(fault_server) - before


def _evalsha_calls(server: ThrowawayServer) -> int:
    admin = server.admin()
    stats = admin.info("commandstats")
    admin.close()
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


@then("the server received that message more than once")
def server_received_more_than_once(evalsha_calls: int) -> None:
    """The server ran the write more than once (the client's resends reached it).

    Then the server received that message more than once
    """
    assert evalsha_calls > 1, f"the server ran the write {evalsha_calls} time(s)"


@then(
    parsers.parse(
        "the user was told within {seconds:d} seconds that the message may not have been stored"
    )
)
def told_outcome_unknown(attempt: Attempt, seconds: int) -> None:
    """The failed write said, in time, that it may or may not have been stored.

    Then the user was told within 2 seconds that the message may not have been stored
    """
    assert isinstance(attempt.error, WriteOutcomeUnknownError), f"got {attempt.error!r}"
    assert attempt.error.may_have_written
    assert attempt.seconds <= seconds, f"the error took {attempt.seconds:.1f} seconds"


@then(parsers.parse('the message is refused by the server with the reason "{reason}"'))
def refused_by_server(attempt: Attempt, reason: str) -> None:
    """Redis refused the write, and the error says nothing was written.

    Then the message is refused by the server with the reason "out of memory"
    """
    assert attempt.made, "no step tried to send a message"
    assert isinstance(attempt.error, StorageError), f"not a storage error: {attempt.error!r}"
    assert not attempt.error.may_have_written, f"may have written: {attempt.error}"
    assert reason in str(attempt.error)
