"""Steps about a primary failing over to a replica while writers append.

Usage::

    Given the memory runs on a primary with 2 replicas watched by 3 Sentinels
    Given the memory runs on a cluster of its own with a replica per master
    Given every write waits for 1 replica to confirm it within 500 milliseconds
    Given every write waits for 3 replicas to confirm it within 1000 milliseconds
    Given the writer's next message was stored by another client while both replicas were paused
    Given the replicas have caught up
    When 4 writers append for 6 seconds while the primary is killed after 1 second
    When 4 writers append for 6 seconds while the primary is paused after 1 second
    When 4 writers append for 8 seconds while the first writer's master is killed after 1 second
    When the writer sends that message again, with its id
    When the writer sends its first message
    Then the first writer's writes after the promotion were stored but reported as not confirmed
    Then the other writers' writes were acknowledged throughout
    Then a replica was promoted and writes resumed within 10 seconds of the failure
    Then every failed call raised one of the memory's typed storage errors
    Then every acknowledged message is stored exactly once, in its writer's order
    Then every stored message is stored once, in its writer's order
    Then the acknowledged messages lost are counted and reported
    Then the message sent again is reported as stored but confirmed by no replica
    Then the message sent again is acknowledged as already stored
    Then the primary holds the writer's messages, each once
    Then a replica holds the writer's messages, each once
    Then the message is reported as stored but confirmed by no replica, with the message to resend
    Then the message is reported as stored but confirmed by 2 of 3 replicas

Each scenario gets a group of its own (a throwaway primary, two replicas and
three ``redis-sentinel`` processes, or a 3-master cluster with a replica per
master), since it breaks a primary. Writers
(sync or asyncio, as the scenario's API) reach the primary as the README
advises: through Sentinel, half a second to connect, two seconds to answer,
three quick retries; a writer that gets an error retries the same message id
until it is acknowledged.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    DEFAULT_NAMESPACE,
    AppendResult,
    AsyncMemoryService,
    Durability,
    KeyLayout,
    MemoryService,
    Message,
    NotReplicatedError,
    StorageError,
)
from chat_memory_suite.apis import Services
from chat_memory_suite.backends import ClientRecipe
from chat_memory_suite.servers import HOST, ReplicatedCluster, SentinelGroup

from .conversation import Attempt
from .sessions import MemorySettings, redeployed

FAILOVER_SECONDS = 30.0
"""The longest a promotion may take before the scenario fails (loopback takes 2 to 4 s)."""
LOSS_PROPERTY = "acknowledged messages lost"


REQUIRES = ("server_faults",)
"""These scenarios drive chat-memory's own service (its durability setting, its typed
errors) through a failover, whatever memory the run is under."""


@dataclass
class Writer:
    """One writer's record: what was acknowledged (message number, when) and what failed."""

    number: int
    acknowledged: list[tuple[int, float]] = field(default_factory=list)
    failures: list[Exception] = field(default_factory=list)

    @property
    def session(self) -> str:
        """The writer's own session."""
        return f"writer-{self.number}"

    def message_id(self, n: int) -> str:
        """The id of the writer's message ``n``, the same on every retry."""
        return f"{self.session}-{n}"

    def message(self, n: int) -> dict[str, str]:
        """The writer's message ``n``, with its id, as ``add_messages`` takes it."""
        return {"role": "user", "content": f"message {n}", "id": self.message_id(n)}


@dataclass
class Failover:
    """The scenario's group, how its writers reach it, and what happened."""

    group: SentinelGroup | ReplicatedCluster
    api: str = "sync"
    durability: Durability | None = None
    writers: list[Writer] = field(default_factory=list)
    failed_at: float = 0.0
    promoted_at: float = 0.0
    paused: list[int] = field(default_factory=list)
    outcome: AppendResult | Exception | None = None
    _kept: ExitStack = field(default_factory=ExitStack)
    _kept_async: AsyncExitStack = field(default_factory=AsyncExitStack)
    _sync: MemoryService | None = None
    _runner: asyncio.Runner | None = None
    _async: AsyncMemoryService | None = None

    def recipe(self) -> ClientRecipe:
        """Clients as the README advises for a Sentinel-watched primary, or a cluster."""
        if isinstance(self.group, ReplicatedCluster):
            kind, url = "cluster", self.group.live_url()
        else:
            kind, url = "sentinel", self.group.url
        return ClientRecipe(
            kind,  # type: ignore[arg-type]
            url,
            options=(("socket_timeout", 2.0), ("socket_connect_timeout", 0.5)),
            retry=(0.25, 0.025, 3),
        )

    @contextmanager
    def memory(self) -> Iterator[MemoryService]:
        """A memory over a new Sentinel client; every writer's messages fit its history."""
        client = self.recipe().sync()
        try:
            yield MemoryService(client, max_history=100_000, durability=self.durability)
        finally:
            client.close()

    @asynccontextmanager
    async def async_memory(self) -> AsyncIterator[AsyncMemoryService]:
        """The same memory, through the asyncio service over an asyncio client."""
        client = self.recipe().asyncio()
        try:
            yield AsyncMemoryService(client, max_history=100_000, durability=self.durability)
        finally:
            await client.aclose()

    def send(self, writer: Writer, n: int, *, elsewhere: bool = False) -> AppendResult:
        """Store the writer's message ``n`` once, through the scenario's API.

        Through the writer's own memory, kept for the scenario (its client
        reuses one connection, as a pooled client does); ``elsewhere``, through
        a client of its own, as another instance of the app.
        """
        messages = [writer.message(n)]

        async def send_async() -> AppendResult:
            if elsewhere:
                async with self.async_memory() as memory:
                    return await memory.add_messages(writer.session, messages)
            if self._async is None:
                self._async = await self._kept_async.enter_async_context(self.async_memory())
            return await self._async.add_messages(writer.session, messages)

        if self.api == "async":
            if self._runner is None:
                self._runner = asyncio.Runner()
            return self._runner.run(send_async())
        if elsewhere:
            with self.memory() as memory:
                return memory.add_messages(writer.session, messages)
        if self._sync is None:
            self._sync = self._kept.enter_context(self.memory())
        return self._sync.add_messages(writer.session, messages)

    def close(self) -> None:
        """Close the writer's own memory, if it was opened, whatever fails first."""
        try:
            if self._runner is not None:
                try:
                    self._runner.run(self._kept_async.aclose())
                finally:
                    self._runner.close()
        finally:
            self._kept.close()


@given(
    "the memory runs on a primary with 2 replicas watched by 3 Sentinels",
    target_fixture="failover",
)
def primary_with_replicas(tmp_path: Path, memory_api: str) -> Iterator[Failover]:
    """A throwaway primary, two replicas and three Sentinels of the scenario's own.

    Given the memory runs on a primary with 2 replicas watched by 3 Sentinels
    """
    group = SentinelGroup(tmp_path / "sentinel", replicas=2)
    failover = Failover(group, api=memory_api)
    try:
        group.start()
        yield failover
    finally:
        try:
            failover.close()
        finally:
            group.stop()


@given(
    "the memory runs on a cluster of its own with a replica per master",
    target_fixture="failover",
)
def cluster_with_replicas(tmp_path: Path, memory_api: str) -> Iterator[Failover]:
    """A throwaway 3-master cluster, each master with a replica, which the cluster promotes.

    Given the memory runs on a cluster of its own with a replica per master
    """
    if memory_api == "async":
        pytest.skip(
            "redis-py's asyncio cluster client cannot take the durability setting"
            " (the WAIT must share the writing connection): the sync API runs it"
        )
    with ReplicatedCluster(tmp_path / "cluster", replicas=1, node_timeout_ms=2000) as cluster:
        yield Failover(cluster, api=memory_api)


@given(
    parsers.re(
        r"every write waits for (?P<replicas>\d+) replicas? to confirm it"
        r" within (?P<ms>\d+) milliseconds"
    ),
    converters={"replicas": int, "ms": int},
)
def writes_wait_for_replicas(request: pytest.FixtureRequest, replicas: int, ms: int) -> None:
    """The durability setting: each write waits for replicas, or is NotReplicatedError.

    For the writers of a failover scenario; otherwise for the scenario's own
    memory, whose server has no replica: a run whose server may have replicas
    (Sentinel's primary, a cluster with replicas) skips that scenario, since they
    would confirm the write.

    Given every write waits for 1 replica to confirm it within 500 milliseconds
    """
    durability = Durability(replicas=replicas, timeout=ms / 1000)
    try:
        failover = request.getfixturevalue("failover")
    except pytest.FixtureLookupError:
        failover = None
    if failover is not None:
        failover.durability = durability
        return
    _without_replicas(request)
    request.getfixturevalue("memory_settings").change(durability=durability)


@given(
    parsers.parse(
        "the app was redeployed with every write waiting for {replicas:d} replica to confirm it"
        " within {ms:d} milliseconds"
    ),
    target_fixture="memory",
)
def redeployed_waiting_for_replicas(
    request: pytest.FixtureRequest,
    memory_settings: MemorySettings,
    services: Services,
    namespace: str,
    replicas: int,
    ms: int,
) -> MemoryService:
    """The app starts again with the durability setting; what it stored stays as it is.

    Skipped where the server may have replicas, as the setting's other Given step.

    Given the app was redeployed with every write waiting for 1 replica to confirm it within 200 milliseconds
    """
    _without_replicas(request)
    durability = Durability(replicas=replicas, timeout=ms / 1000)
    return redeployed(memory_settings, services, namespace, durability=durability)


def _without_replicas(request: pytest.FixtureRequest) -> None:
    """Skip the scenario where this run's server may have replicas, which would confirm writes.

    A cluster without replicas (a scenario's own) is kept, for the sync API: redis-py's
    asyncio cluster client cannot take the durability setting.
    """
    kind = request.getfixturevalue("client_recipe").kind
    client = request.getfixturevalue("redis_client")
    if kind == "cluster":
        if request.getfixturevalue("services").api == "async":
            pytest.skip("redis-py's asyncio cluster client cannot take the durability setting")
        nodes = client.cluster_nodes().values()  # as CLUSTER NODES says: master, slave, ...
        if not any("slave" in str(node.get("flags", "")) for node in nodes):
            return
    if kind in ("sentinel", "cluster") or (kind == "redis" and _replicas_of(request, client)):
        pytest.skip(f"this run's {kind} may have replicas, which would confirm the write")


def _replicas_of(request: pytest.FixtureRequest, client: redis.Redis) -> int:
    """How many replicas the scenario's server has, asked as its client or as its admin.

    A client that may not run INFO (the README's user) is asked about through the
    admin of the scenario's own server it is connected to; on any other server
    nobody here can tell, and the scenario is skipped as if it had replicas.
    """
    try:
        return int(client.info("replication").get("connected_slaves", 0))
    except redis.exceptions.NoPermissionError:
        port = client.connection_pool.connection_kwargs.get("port")
        own = request.getfixturevalue("own_servers")
        server = next((s for s in own if s.port == port), None)
        if server is None:
            pytest.skip("this run's server may have replicas: its user may not run INFO to tell")
        with server.admin() as admin:
            return int(admin.info("replication").get("connected_slaves", 0))


def _write(failover: Failover, writer: Writer, until: float) -> None:
    if failover.api == "async":
        asyncio.run(_write_async(failover, writer, until))
        return
    n = 0
    with failover.memory() as memory:
        while time.monotonic() < until:
            try:
                memory.add_messages(writer.session, [writer.message(n)])
            except Exception as exc:  # every failure is recorded, then judged by a Then step
                writer.failures.append(exc)
                time.sleep(0.05)
                continue
            writer.acknowledged.append((n, time.monotonic()))
            n += 1


async def _write_async(failover: Failover, writer: Writer, until: float) -> None:
    """The same writer, through the asyncio service over an asyncio Sentinel client."""
    n = 0
    async with failover.async_memory() as memory:
        while time.monotonic() < until:
            try:
                await memory.add_messages(writer.session, [writer.message(n)])
            except Exception as exc:  # every failure is recorded, then judged by a Then step
                writer.failures.append(exc)
                await asyncio.sleep(0.05)
                continue
            writer.acknowledged.append((n, time.monotonic()))
            n += 1


def _through_failure(failover: Failover, count: int, seconds: int, fail: str) -> None:
    """Run the writers, fail a primary after 1 s, wait for the promotion, let them finish."""
    start = time.monotonic()
    failover.writers = [Writer(k) for k in range(count)]
    threads = [
        threading.Thread(target=_write, args=(failover, w, start + seconds), daemon=True)
        for w in failover.writers
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    failover.failed_at = time.monotonic()
    group = failover.group
    if isinstance(group, ReplicatedCluster):
        key = KeyLayout(DEFAULT_NAMESPACE).history(failover.writers[0].session)
        group.wait_for_new_master_of(key, group.kill_master_of(key), FAILOVER_SECONDS)
    else:
        old = group.kill_primary() if fail == "killed" else group.pause_primary()
        group.wait_for_new_primary(old, FAILOVER_SECONDS)
        if fail == "paused":
            group.resume(old)
    failover.promoted_at = time.monotonic()
    for thread in threads:
        thread.join(seconds + FAILOVER_SECONDS)
        assert not thread.is_alive(), "a writer never returned"


@when(
    parsers.re(
        r"(?P<count>\d+) writers append for (?P<seconds>\d+) seconds while the primary is"
        r" (?P<fault>killed|paused) after 1 second"
    )
)
def writers_through_failover(failover: Failover, count: str, seconds: str, fault: str) -> None:
    """Writers append to sessions of their own; the primary fails; Sentinel promotes a replica.

    A killed primary (SIGKILL) is gone; a paused one (SIGSTOP) is let go on
    once a replica is promoted, and Sentinel makes it a replica in turn.

    When 4 writers append for 6 seconds while the primary is killed after 1 second
    """
    _through_failure(failover, int(count), int(seconds), fault)


@when(
    parsers.parse(
        "{count:d} writers append for {seconds:d} seconds while the first writer's master"
        " is killed after 1 second"
    )
)
def writers_through_cluster_failover(failover: Failover, count: int, seconds: int) -> None:
    """Writers append; the master of the first one's session is killed; its replica takes over.

    When 4 writers append for 8 seconds while the first writer's master is killed after 1 second
    """
    _through_failure(failover, count, seconds, "killed")


@then("the first writer's writes after the promotion were stored but reported as not confirmed")
def unconfirmed_after_promotion(failover: Failover) -> None:
    """The promoted master has no replica left: every write to it is NotReplicatedError.

    Then the first writer's writes after the promotion were stored but reported as not confirmed
    """
    first = failover.writers[0]
    late = [at for _, at in first.acknowledged if at > failover.promoted_at + 1.0]
    assert not late, f"{len(late)} writes were acknowledged with no replica to confirm them"
    assert any(isinstance(e, NotReplicatedError) for e in first.failures), (
        "no write to the promoted master was reported as not confirmed"
    )


@then("the other writers' writes were acknowledged throughout")
def others_unaffected(failover: Failover) -> None:
    """Sessions on the other masters kept being written after the failure.

    Then the other writers' writes were acknowledged throughout
    """
    for writer in failover.writers[1:]:
        after = [at for _, at in writer.acknowledged if at > failover.promoted_at]
        assert after, f"{writer.session}: nothing acknowledged after the promotion"


@then(
    parsers.parse(
        "a replica was promoted and writes resumed within {seconds:d} seconds of the failure"
    )
)
def writes_resumed(failover: Failover, seconds: int) -> None:
    """Every writer had a write acknowledged within that long after the primary failed.

    Then a replica was promoted and writes resumed within 10 seconds of the failure
    """
    for writer in failover.writers:
        after = [at for _, at in writer.acknowledged if at > failover.promoted_at]
        assert after, f"{writer.session}: no write was acknowledged after the promotion"
        waited = after[0] - failover.failed_at
        assert waited <= seconds, (
            f"{writer.session}: the first write after the failure came {waited:.1f} s after it"
        )


@then("every failed call raised one of the memory's typed storage errors")
def failures_were_typed(failover: Failover) -> None:
    """No failure escaped as redis-py's own exception, or anything else.

    Then every failed call raised one of the memory's typed storage errors
    """
    untyped = [
        f"{w.session}: {type(e).__name__}: {e}"
        for w in failover.writers
        for e in w.failures
        if not isinstance(e, StorageError)
    ]
    assert not untyped, "\n".join(untyped)


def _stored(failover: Failover, writer: Writer) -> list[str]:
    with failover.memory() as memory:
        return [str(m.id) for m in memory.get_messages(writer.session)]


def _check_once_in_order(failover: Failover, *, nothing_lost: bool) -> int:
    lost = 0
    for writer in failover.writers:
        stored = _stored(failover, writer)
        duplicated = sorted({i for i in stored if stored.count(i) > 1})
        assert not duplicated, f"{writer.session}: stored more than once: {duplicated[:5]}"
        numbers = [int(i.rsplit("-", 1)[1]) for i in stored]
        assert numbers == sorted(numbers), f"{writer.session}: stored out of order"
        missing = [n for n, _ in writer.acknowledged if writer.message_id(n) not in stored]
        if nothing_lost:
            assert not missing, (
                f"{writer.session}: {len(missing)} acknowledged messages lost, first {missing[:5]}"
            )
        lost += len(missing)
    return lost


@then("every acknowledged message is stored exactly once, in its writer's order")
def acknowledged_kept_once(failover: Failover) -> None:
    """What the memory acknowledged survived the failover, once, in order.

    Then every acknowledged message is stored exactly once, in its writer's order
    """
    assert any(w.acknowledged for w in failover.writers), "nothing was acknowledged"
    _check_once_in_order(failover, nothing_lost=True)


@then("every stored message is stored once, in its writer's order")
def stored_once(failover: Failover) -> None:
    """Retries duplicated nothing and nothing is out of order, whatever was lost.

    Then every stored message is stored once, in its writer's order
    """
    _check_once_in_order(failover, nothing_lost=False)


@then("the acknowledged messages lost are counted and reported")
def loss_reported(failover: Failover, request: pytest.FixtureRequest) -> None:
    """The loss is measured, not asserted away: it is in the report and the JUnit XML.

    Then the acknowledged messages lost are counted and reported
    """
    lost = _check_once_in_order(failover, nothing_lost=False)
    acknowledged = sum(len(w.acknowledged) for w in failover.writers)
    request.node.user_properties.append((LOSS_PROPERTY, f"{lost} of {acknowledged}"))


def _sentinel_group(failover: Failover) -> SentinelGroup:
    assert isinstance(failover.group, SentinelGroup), "this step needs a Sentinel-watched primary"
    return failover.group


@given("the writer's next message was stored by another client while both replicas were paused")
def stored_while_replicas_paused(failover: Failover) -> None:
    """A writer's message reached the primary alone, written by another instance of the app.

    The writer's own memory first stored an earlier message, which the
    replicas confirmed. Then, with both replicas paused, another client stored
    the writer's next message and was told it was not confirmed.

    Given the writer's next message was stored by another client while both replicas were paused
    """
    writer = Writer(0)
    failover.writers = [writer]
    failover.send(writer, 0)
    failover.paused = _sentinel_group(failover).pause_replicas()
    try:
        failover.send(writer, 1, elsewhere=True)
    except NotReplicatedError:
        return
    raise AssertionError("the write was acknowledged though no replica could receive it")


@when("the writer sends its first message")
def writer_sends_first(failover: Failover) -> None:
    """One writer stores its first message through its own memory; the outcome is kept.

    When the writer sends its first message
    """
    writer = Writer(0)
    failover.writers = [writer]
    try:
        failover.outcome = failover.send(writer, 0)
    except Exception as exc:  # judged by a Then step
        failover.outcome = exc


@then(
    parsers.parse(
        "the message is reported as stored but confirmed by {confirmed:d} of {wanted:d} replicas"
    )
)
def reported_partly_confirmed(failover: Failover, confirmed: int, wanted: int) -> None:
    """The write raised NotReplicatedError, counting the replicas that did confirm it.

    Then the message is reported as stored but confirmed by 2 of 3 replicas
    """
    outcome = failover.outcome
    assert isinstance(outcome, NotReplicatedError), f"the write returned {outcome!r}"
    assert (outcome.confirmed, outcome.wanted) == (confirmed, wanted), str(outcome)
    assert f"confirmed by {confirmed} of {wanted} replica" in str(outcome), str(outcome)
    assert [m.id for m in outcome.messages] == [failover.writers[0].message_id(0)], str(outcome)


@given("the replicas have caught up")
def replicas_resumed(failover: Failover) -> None:
    """The paused replicas go on and receive every write the primary made meanwhile.

    Given the replicas have caught up
    """
    group = _sentinel_group(failover)
    for port in failover.paused:
        group.resume(port)
    group.caught_up(failover.paused, FAILOVER_SECONDS)
    failover.paused = []


@when("the writer sends that message again, with its id")
def message_sent_again(failover: Failover) -> None:
    """The writer retries the message it stored, as after an error, with the same id.

    When the writer sends that message again, with its id
    """
    try:
        failover.outcome = failover.send(failover.writers[0], 1)
    except Exception as exc:  # judged by a Then step
        failover.outcome = exc


@then("the message sent again is reported as stored but confirmed by no replica")
def retry_not_confirmed(failover: Failover) -> None:
    """The retry wrote nothing, yet it waited for the replicas, which did not have the message.

    Then the message sent again is reported as stored but confirmed by no replica
    """
    outcome = failover.outcome
    assert isinstance(outcome, NotReplicatedError), f"the retry returned {outcome!r}"
    assert (outcome.confirmed, outcome.wanted) == (0, 1), str(outcome)
    assert [m.id for m in outcome.messages] == [failover.writers[0].message_id(1)], str(outcome)


@then("the message sent again is acknowledged as already stored")
def retry_acknowledged(failover: Failover) -> None:
    """The retry found the message stored and a replica holding it: no error, nothing appended.

    Then the message sent again is acknowledged as already stored
    """
    outcome = failover.outcome
    assert isinstance(outcome, AppendResult), f"the retry failed: {outcome!r}"
    assert not outcome.appended, f"appended again: {outcome.appended}"
    assert [m.id for m in outcome.already_stored] == [failover.writers[0].message_id(1)]


@then("the primary holds the writer's messages, each once")
def primary_holds_once(failover: Failover) -> None:
    """The writer's session on the primary has its earlier message, then this one, once.

    Then the primary holds the writer's messages, each once
    """
    writer = failover.writers[0]
    assert _stored(failover, writer) == [writer.message_id(0), writer.message_id(1)]


@then("a replica holds the writer's messages, each once")
def replica_holds_once(failover: Failover) -> None:
    """Read on each replica itself: one of them has the writer's messages, each once.

    Then a replica holds the writer's messages, each once
    """
    writer = failover.writers[0]
    held = []
    for port in _sentinel_group(failover).replica_ports():
        with redis.Redis(host=HOST, port=port) as client:
            held.append([str(m.id) for m in MemoryService(client).get_messages(writer.session)])
    assert [writer.message_id(0), writer.message_id(1)] in held, f"the replicas hold {held}"


@then(
    parsers.parse(
        "the message taken back is reported as removed but confirmed by no replica,"
        ' and handed back saying "{text}"'
    )
)
def taken_back_not_replicated(attempt: Attempt, text: str) -> None:
    """The removal raised NotReplicatedError, with the message it removed as its reply.

    Then the message taken back is reported as removed but confirmed by no replica, and handed back saying "hello"
    """
    error, reply = attempt.not_replicated(Message)
    assert reply.content == text, f"the error hands back {reply}"
    # A removal has no message to resend: the error offers none.
    assert str(error).endswith("a failover now could lose it"), str(error)


@then(
    "the message is reported as stored but not confirmed, its slot being migrated,"
    " with the message to resend"
)
def reported_unconfirmed_while_migrating(
    attempt: Attempt, memory: MemoryService, memory_settings: MemorySettings
) -> None:
    """The write raised NotReplicatedError: its node could not be asked to wait for it.

    While a slot migrates, a write is redirected to the node the slot is moving to, and
    the WAIT that follows it on the first node's connection would count nothing of it.

    Then the message is reported as stored but not confirmed, its slot being migrated, with the message to resend
    """
    error = attempt.failure(memory, NotReplicatedError)
    if not isinstance(error, NotReplicatedError):
        return
    durability = memory_settings.changed["durability"]
    assert (error.confirmed, error.wanted, error.timeout) == (
        0,
        durability.replicas,
        durability.timeout,
    ), str(error)
    assert "moved" in str(error.reason), f"the reason given is {error.reason!r}"
    assert [m.role for m in error.messages] == ["user"], f"hands back {error.messages}"
    assert "a retry with the same message ids is safe" in str(error), str(error)


@then("the message is reported as stored but confirmed by no replica, with the message to resend")
def reported_not_replicated(
    attempt: Attempt,
    memory: MemoryService,
    memory_settings: MemorySettings,
    session_id: str,
    redis_client: redis.Redis,
) -> None:
    """The write raised NotReplicatedError, saying so, with the stored message to resend.

    The reason is WAIT's own refusal where the server has no WAIT (fakeredis), else none.

    Then the message is reported as stored but confirmed by no replica, with the message to resend
    """
    error = attempt.error
    durability = memory_settings.changed["durability"]
    assert isinstance(error, NotReplicatedError), f"not a NotReplicatedError: {error!r}"
    assert (error.confirmed, error.wanted, error.timeout) == (
        0,
        durability.replicas,
        durability.timeout,
    ), str(error)
    try:  # the same WAIT: a server that refuses it words the refusal with its arguments
        redis_client.execute_command(*durability.wait_command())  # type: ignore[no-untyped-call]
        refusal = None
    except redis.ResponseError as refused:
        refusal = str(refused)
    assert error.reason == refusal, f"the reason given is {error.reason!r}, not {refusal!r}"
    why = f" ({refusal})" if refusal else ""
    assert str(error) == (
        f"the write is stored on the primary but confirmed by 0 of {durability.replicas}"
        f" replica(s) within {durability.timeout:g} s{why}: a failover now could lose it;"
        " a retry with the same message ids is safe"
    ), str(error)
    stored = memory.get_messages(session_id)
    assert [(m.id, m.content) for m in error.messages] == [(m.id, m.content) for m in stored], (
        f"the error hands back {error.messages}, the session holds {stored}"
    )
