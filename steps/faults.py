"""Steps about the Redis server failing under the memory: down, frozen, full, restarted.

Usage::

    Given the memory runs on a server of its own
    Given the server went down
    When the server comes back
    When the app retries the failed message
    Then the user was told within 2 seconds that the message may not have been stored
    Given the server is out of memory
    Then the message is refused by the server with the reason "out of memory"
    Given the server dropped every connection
    When the server restarts without its data
    When the user says "are you there?" while the server is frozen for 1500 milliseconds
    Then the server received that message more than once
    Given the memory runs as a Redis user allowed only what the README lists
    Given the memory runs as a Redis user allowed what the README lists except "evalsha"
    When the app sends a message in the namespace "billing"
    Then the server holds no key at all
    Given the server was restarted without scripting
    Then the app was told that the server cannot run scripts
    Given the memory connects over TLS, trusting the server's certificate authority
    Given the memory connects over TLS, trusting another certificate authority
    Given the memory connects over TLS under a name the server's certificate does not carry

Like the storage steps, these touch the server itself, since breaking it is
their whole point. Each scenario gets a throwaway ``redis-server`` of its own
(and needs ``redis-server`` installed); the memory's client gives up after
half a second per attempt and retries 3 times, as a production client should
be configured (see the README).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    MemoryService,
    Message,
    PartialWriteError,
    PermissionDeniedError,
    Role,
    ScriptingUnavailableError,
    StorageError,
    StorageUnavailableError,
    WriteOutcomeUnknownError,
)
from chat_memory_suite.adapter import AdaptedMemory, requires
from chat_memory_suite.apis import Services
from chat_memory_suite.backends import ClientRecipe
from chat_memory_suite.servers import (
    HOST,
    ThrowawayServer,
    readme_user,
    throwaway_tls_server,
)

from .conversation import Attempt
from .sessions import MemorySettings


@pytest.fixture
def own_servers() -> list[ThrowawayServer]:
    """The throwaway servers the scenario started, in order."""
    return []


@pytest.fixture
def fault_server(
    request: pytest.FixtureRequest, tmp_path: Path, own_servers: list[ThrowawayServer]
) -> Iterator[ThrowawayServer]:
    """A throwaway redis-server of the scenario's own, to break at will."""
    server = ThrowawayServer(tmp_path / "redis").start()
    own_servers.append(server)
    try:
        _skip_unless_able(request.node, server)
        yield server
    finally:
        server.stop()


def _skip_unless_able(scenario: pytest.Item, server: ThrowawayServer) -> None:
    """Skip a scenario about a server's permission checks on a server of the other kind."""
    with server.admin() as admin:
        checks = admin.eval("return redis.acl_check_cmd and 1 or 0", 0) == 1
    if scenario.get_closest_marker("permission_precheck") and not checks:
        pytest.skip("this server cannot check a script's permissions in advance (Redis 6.2)")
    if scenario.get_closest_marker("no_permission_precheck") and checks:
        pytest.skip("this server checks a script's permissions in advance (Redis 7 or newer)")


def production_client(
    port: int, host: str = HOST, tls: bool = False, **options: Any
) -> ClientRecipe:
    """A client configured as the README advises: bounded waits, a few quick retries."""
    scheme = "rediss" if tls else "redis"
    settings = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5, **options}
    return ClientRecipe(
        "redis",
        f"{scheme}://{host}:{port}/0",
        options=tuple(settings.items()),
        retry=(0.1, 0.02, 3),
    )


@given("the memory runs on a server of its own", target_fixture="client_recipe")
def memory_on_own_server(fault_server: ThrowawayServer) -> ClientRecipe:
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


@given("the server was restarted without scripting")
@requires("server_faults")
def server_without_scripting(fault_server: ThrowawayServer) -> None:
    """The server comes back with ``EVALSHA`` turned off, as some hosts and proxies have it.

    It is about chat-memory's own writes, which are Lua scripts: a store under
    test that writes without scripts has nothing to show here.

    Given the server was restarted without scripting
    """
    fault_server.restart_with("--rename-command", "EVALSHA", "")


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


@when("the app tries to clear the session")
def app_tries_to_clear(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app forgets the session on purpose; a failure is kept for a Then step.

    When the app tries to clear the session
    """
    attempt.make(lambda: memory.clear(session_id), memory=memory)


@when("the app tries to read how long the session has left")
@requires("ttl")
def app_tries_ttl(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app asks for the session's remaining time to live; a failure is kept.

    When the app tries to read how long the session has left
    """
    attempt.make(lambda: memory.ttl(session_id), memory=memory)


@when("the app tries to load the context")
def app_tries_to_load(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app loads the session's context; a failure is kept for a Then step.

    When the app tries to load the context
    """
    attempt.make(lambda: memory.get_context(session_id), memory=memory)


# What the memory's errors end with, where a step checks the whole promise (the
# suite's mutation run counts a reworded promise as a change nobody noticed).
_NOTHING_WRITTEN = re.compile(
    r"[;:] nothing was (?:written|sent|changed|read or written)"
    r"(?:[;:] try again (?:shortly|once it has moved))?$"
)
_WHAT_RUNS_SCRIPTS = (
    "; nothing was written. chat-memory writes with Lua scripts (EVALSHA): use a Redis or"
    " Valkey server with scripting, fakeredis[lua] in tests (pip install 'fakeredis[lua]'),"
    " or a proxy that passes EVALSHA and SCRIPT LOAD through"
)
_WHY_REFUSED = (
    "(a permission missing on this server, or revoked from the Redis user since the memory"
    " checked them; see the README's ACL SETUSER line): "
)
_STORED_TWICE = (
    ": the message is stored but its id is not remembered (undoing the push was refused"
    " too), and neither trimmed nor given its expiry: sending it again would store it twice"
)


def _says_nothing_was_written(error: Exception) -> None:
    """The error's last words say that nothing was written (or sent, or changed), and when to retry."""
    assert _NOTHING_WRITTEN.search(str(error)), f"the error does not end saying so: {error}"


@then(parsers.parse("the app was told within {seconds:d} seconds that the memory is unavailable"))
def told_unavailable(memory: MemoryService, attempt: Attempt, seconds: int) -> None:
    """The call failed in time with the error that says nothing was changed.

    A store not ours fails with its own error, which says nothing more.

    Then the app was told within 2 seconds that the memory is unavailable
    """
    error = attempt.failure(memory, StorageUnavailableError, within=seconds)
    if isinstance(error, StorageUnavailableError):
        assert not error.may_have_written, str(error)
        _says_nothing_was_written(error)


@then("the app was told that the server cannot run scripts")
def told_no_scripting(memory: MemoryService, attempt: Attempt) -> None:
    """The call failed, naming the missing scripting and what to run instead; nothing written.

    Then the app was told that the server cannot run scripts
    """
    error = attempt.failure(memory, ScriptingUnavailableError)
    if isinstance(error, ScriptingUnavailableError):
        assert not error.may_have_written, str(error)
        assert "cannot run scripts" in str(error), str(error)
        assert str(error).endswith(_WHAT_RUNS_SCRIPTS), f"the error says no remedy: {error}"


@then(
    parsers.parse(
        'the app was told that it needs "{command}" to see whether the user\'s slot'
        " is moving, which the memory's Redis user may not run"
    )
)
def told_listing_needs(memory: MemoryService, attempt: Attempt, command: str) -> None:
    """On a cluster, the listing or erasure was refused whole, saying what it needs the command for.

    Then the app was told that it needs "cluster|nodes" to see whether the user's slot is moving, which the memory's Redis user may not run
    """
    error = attempt.failure(memory, PermissionDeniedError)
    if isinstance(error, PermissionDeniedError):
        assert not error.may_have_written, str(error)
        assert str(error) == (
            f"on a Redis Cluster, listing or erasing a user's sessions needs '{command}', to tell"
            " whether the user's slot is being migrated (sessions out of sight would be taken"
            " for expired), and the Redis user may not run it (see the README's ACL SETUSER"
            " line); nothing was read or written"
        ), str(error)


@then(
    parsers.parse(
        "the app was told within {seconds:d} seconds that the session may not have been cleared"
    )
)
def told_clear_unknown(memory: MemoryService, attempt: Attempt, seconds: int) -> None:
    """The clear was sent but not answered: the app must assume either outcome.

    Then the app was told within 2 seconds that the session may not have been cleared
    """
    _told_outcome_unknown(memory, attempt, seconds)


@when("the app retries the failed message")
def app_retries(memory: MemoryService, session_id: str, attempt: Attempt) -> None:
    """The app sends the failed write again, as the error handed it back (same ids).

    With a store not ours, the app sends again what it kept of the failed write.

    When the app retries the failed message
    """
    if isinstance(memory, AdaptedMemory):
        assert attempt.error is not None, "no failed write"
        assert attempt.messages, "the failed write sent no message"
        memory.add_messages(session_id, attempt.messages)
        return
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
@requires("server_faults")
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
@requires("server_faults")
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
def told_outcome_unknown(memory: MemoryService, attempt: Attempt, seconds: int) -> None:
    """The failed write said, in time, that it may or may not have been stored.

    A store not ours fails with its own error, which says nothing more.

    Then the user was told within 2 seconds that the message may not have been stored
    """
    _told_outcome_unknown(memory, attempt, seconds)


def _told_outcome_unknown(memory: MemoryService, attempt: Attempt, seconds: int) -> None:
    error = attempt.failure(memory, WriteOutcomeUnknownError, within=seconds)
    if isinstance(error, WriteOutcomeUnknownError):
        assert error.may_have_written, str(error)
        assert "may or may not have happened" in str(error), f"the error does not say so: {error}"


@then(parsers.parse('the message is refused by the server with the reason "{reason}"'))
def refused_by_server(memory: MemoryService, attempt: Attempt, reason: str) -> None:
    """Redis refused the write, and the error says nothing was written.

    A store not ours fails with its own error; what it stored, the next step shows.

    Then the message is refused by the server with the reason "out of memory"
    """
    error = attempt.failure(memory, StorageError)
    if isinstance(error, StorageError):
        assert not error.may_have_written, f"may have written: {error}"
        assert reason in str(error)
        _says_nothing_was_written(error)


@then(parsers.parse('the app is told that Redis refused "{command}" after storing the message'))
def told_refused_after_storing(
    memory: MemoryService, attempt: Attempt, session_id: str, command: str
) -> None:
    """The message sent is the session's newest, and the error names what Redis refused after it.

    A store not ours fails with its own error: that it stored the message all the same is
    what this step checks of it.

    Then the app is told that Redis refused "pexpire" after storing the message
    """
    error = attempt.failure(memory, PartialWriteError)
    sent = error.messages if isinstance(error, PartialWriteError) else attempt.messages
    stored = memory.get_messages(session_id)
    assert sent, "the error hands back no message"
    assert stored, "the session holds nothing"
    assert stored[-1].id == sent[-1].id, f"the newest stored is {stored[-1]}, not {sent[-1]}"
    if isinstance(error, PartialWriteError):
        assert error.may_have_written, str(error)
        assert error.command == command, f"refused {error.command!r}, not {command!r}: {error}"
        assert f"refused '{command}' after the append had written {_WHY_REFUSED}" in str(error), (
            f"the error does not say why Redis refused it: {error}"
        )


@then(parsers.parse('the app is told what is left undone: "{undone}"'))
def told_what_is_left_undone(memory: MemoryService, attempt: Attempt, undone: str) -> None:
    """The error says which of the append's promises the refused write leaves unkept.

    Then the app is told what is left undone: "the session's expiry was not refreshed"
    """
    error = attempt.failure(memory, PartialWriteError)
    if not isinstance(error, PartialWriteError):
        return
    assert f"so sending it again is safe, but {undone}" in str(error), str(error)


@then(
    parsers.re(
        r"the app is told that sending the message again (?P<safety>is safe|would store it twice)"
    )
)
def told_whether_resending_is_safe(
    memory: MemoryService,
    attempt: Attempt,
    fault_server: ThrowawayServer,
    session_id: str,
    safety: str,
) -> None:
    """The error says whether the message's id is remembered, and the session agrees.

    A remembered id makes a resend "already stored"; without it, a resend is a new message.

    Then the app is told that sending the message again is safe
    """
    error = attempt.failure(memory, PartialWriteError)
    if not isinstance(error, PartialWriteError):
        return
    safe = safety == "is safe"
    assert error.retry_is_safe == safe, str(error)
    if safe:
        assert "so sending it again is safe" in str(error), str(error)
    else:  # the last thing it says, without a durability setting
        assert str(error).endswith(_STORED_TWICE), str(error)
    with fault_server.admin() as admin:
        remembered = admin.hexists(memory.keys.seen(session_id), str(error.messages[0].id))
    assert remembered == safe, f"the session {'forgot' if safe else 'remembers'} the id: {error}"


def _acl_user(server: ThrowawayServer, namespace: str, without: str | None) -> ClientRecipe:
    admin = server.admin()
    admin.execute_command(*readme_user(namespace, without))
    admin.close()
    return production_client(server.port, username="chat-memory", password="s3cret")


@given(
    "the memory runs as a Redis user allowed only what the README lists",
    target_fixture="client_recipe",
)
@requires("server_faults")
def memory_as_least_privileged_user(fault_server: ThrowawayServer, namespace: str) -> ClientRecipe:
    """The memory logs in as a user made with exactly the README's ACL SETUSER rules.

    Given the memory runs as a Redis user allowed only what the README lists
    """
    return _acl_user(fault_server, namespace, without=None)


@given(
    parsers.re(
        r'the operator has since revoked (?P<commands>"[^"]+"(?: and "[^"]+")*) from the memory\'s Redis user'
    )
)
@requires("server_faults")
def permissions_revoked(fault_server: ThrowawayServer, commands: str) -> None:
    """The operator takes commands away from the memory's user while the memory runs.

    Given the operator has since revoked "hset" from the memory's Redis user
    """
    revoked = [f"-{command}" for command in re.findall(r'"([^"]+)"', commands)]
    with fault_server.admin() as admin:
        admin.execute_command("ACL", "SETUSER", "chat-memory", *revoked)


@given(
    parsers.parse(
        'the memory runs as a Redis user allowed what the README lists except "{command}"'
    ),
    target_fixture="client_recipe",
)
@requires("server_faults")
def memory_as_user_without(
    fault_server: ThrowawayServer, namespace: str, command: str
) -> ClientRecipe:
    """The memory logs in as a user made with the README's rules, one command left out.

    Given the memory runs as a Redis user allowed what the README lists except "evalsha"
    """
    return _acl_user(fault_server, namespace, without=command)


@given(
    parsers.parse(
        "the session already holds {count:d} messages, stored by a user with every permission"
    )
)
@requires("server_faults")
def session_already_holds(
    fault_server: ThrowawayServer,
    memory_settings: MemorySettings,
    namespace: str,
    session_id: str,
    count: int,
) -> None:
    """Earlier messages of the session, written with the server's all-powerful user.

    So the memory's own user next writes to a session with history and a complete hash of
    ids (its first append, which asks about every permission before writing).

    Given the session already holds 2 messages, stored by a user with every permission
    """
    earlier = MemoryService(
        fault_server.admin(), namespace=namespace, **memory_settings.service_settings()
    )
    roles: tuple[Role, Role] = ("user", "assistant")
    earlier.add_messages(
        session_id, [Message(roles[n % 2], f"Earlier message {n + 1}.") for n in range(count)]
    )


@when(parsers.parse('the app sends a message in the namespace "{other}"'))
@requires("server_faults")
def app_sends_in_namespace(
    services: Services, session_id: str, attempt: Attempt, other: str
) -> None:
    """The app writes, with the same Redis user, into another namespace than the memory's.

    When the app sends a message in the namespace "billing"
    """
    elsewhere = services.memory(namespace=other)
    attempt.make(lambda: elsewhere.add_message(session_id, "user", "hello"))


@then("the server holds no key at all")
def server_holds_no_key(own_servers: list[ThrowawayServer]) -> None:
    """Nothing at all was written to the scenario's server (checked as the all-powerful user).

    Then the server holds no key at all
    """
    assert own_servers, "the scenario started no server of its own"
    admin = own_servers[-1].admin()
    keys = admin.keys("*")
    admin.close()
    assert keys == []


@pytest.fixture
def certificate_authority() -> trustme.CA:
    """The authority that signed the TLS server's certificate (for "localhost" only)."""
    return trustme.CA()


@pytest.fixture
def tls_server(
    tmp_path: Path, certificate_authority: trustme.CA, own_servers: list[ThrowawayServer]
) -> Iterator[ThrowawayServer]:
    """A throwaway redis-server that speaks only TLS, with a certificate for "localhost"."""
    server = throwaway_tls_server(tmp_path, certificate_authority)
    if isinstance(server, str):  # a server built without TLS
        pytest.skip(f"this redis-server cannot serve TLS: {server}")
    server.start()
    own_servers.append(server)
    try:
        yield server
    finally:
        server.stop()


def _tls_client(server: ThrowawayServer, tmp_path: Path, host: str, ca: trustme.CA) -> ClientRecipe:
    trusted = tmp_path / "trusted-ca.crt"
    ca.cert_pem.write_to_path(str(trusted))
    return production_client(
        server.port, host=host, tls=True, ssl_ca_certs=str(trusted), ssl_check_hostname=True
    )


@given(
    "the memory connects over TLS, trusting the server's certificate authority",
    target_fixture="client_recipe",
)
def memory_over_tls(
    tls_server: ThrowawayServer, tmp_path: Path, certificate_authority: trustme.CA
) -> ClientRecipe:
    """The memory's client speaks TLS to "localhost" and trusts the authority that signed it.

    Given the memory connects over TLS, trusting the server's certificate authority
    """
    return _tls_client(tls_server, tmp_path, "localhost", certificate_authority)


@given(
    "the memory connects over TLS, trusting another certificate authority",
    target_fixture="client_recipe",
)
@requires("server_faults")  # the client refuses, not the memory: chat-memory's report
def memory_over_tls_wrong_ca(tls_server: ThrowawayServer, tmp_path: Path) -> ClientRecipe:
    """The memory's client trusts an authority that did not sign the server's certificate.

    Given the memory connects over TLS, trusting another certificate authority
    """
    return _tls_client(tls_server, tmp_path, "localhost", trustme.CA())


@given(
    "the memory connects over TLS under a name the server's certificate does not carry",
    target_fixture="client_recipe",
)
@requires("server_faults")  # the client refuses, not the memory: chat-memory's report
def memory_over_tls_wrong_name(
    tls_server: ThrowawayServer, tmp_path: Path, certificate_authority: trustme.CA
) -> ClientRecipe:
    """The memory's client reaches the server as 127.0.0.1; its certificate names "localhost".

    Given the memory connects over TLS under a name the server's certificate does not carry
    """
    return _tls_client(tls_server, tmp_path, HOST, certificate_authority)
