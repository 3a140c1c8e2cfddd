"""Steps about a primary failing over to a replica while writers append.

Usage::

    Given the memory runs on a primary with 2 replicas watched by 3 Sentinels
    Given the memory runs on a cluster of its own with a replica per master
    Given every write waits for 1 replica to confirm it within 500 milliseconds
    When 4 writers append for 6 seconds while the primary is killed after 1 second
    When 4 writers append for 6 seconds while the primary is paused after 1 second
    When 4 writers append for 8 seconds while the first writer's master is killed after 1 second
    Then the first writer's writes after the promotion were stored but reported as not confirmed
    Then the other writers' writes were acknowledged throughout
    Then a replica was promoted and writes resumed within 10 seconds of the failure
    Then every failed call raised one of the memory's typed storage errors
    Then every acknowledged message is stored exactly once, in its writer's order
    Then every stored message is stored once, in its writer's order
    Then the acknowledged messages lost are counted and reported

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    DEFAULT_NAMESPACE,
    AsyncMemoryService,
    Durability,
    KeyLayout,
    MemoryService,
    NotReplicatedError,
    StorageError,
)
from chat_memory_suite.backends import ClientRecipe
from chat_memory_suite.servers import ReplicatedCluster, SentinelGroup

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


@dataclass
class Failover:
    """The scenario's group, how its writers reach it, and what happened."""

    group: SentinelGroup | ReplicatedCluster
    api: str = "sync"
    durability: Durability | None = None
    writers: list[Writer] = field(default_factory=list)
    failed_at: float = 0.0
    promoted_at: float = 0.0

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


@given(
    "the memory runs on a primary with 2 replicas watched by 3 Sentinels",
    target_fixture="failover",
)
def primary_with_replicas(tmp_path: Path, memory_api: str) -> Iterator[Failover]:
    """A throwaway primary, two replicas and three Sentinels of the scenario's own.

    Given the memory runs on a primary with 2 replicas watched by 3 Sentinels
    """
    group = SentinelGroup(tmp_path / "sentinel", replicas=2)
    try:
        yield Failover(group.start(), api=memory_api)
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
    parsers.parse(
        "every write waits for {replicas:d} replica to confirm it within {ms:d} milliseconds"
    )
)
def writes_wait_for_replicas(failover: Failover, replicas: int, ms: int) -> None:
    """The durability setting: each write waits for replicas, or is NotReplicatedError.

    Given every write waits for 1 replica to confirm it within 500 milliseconds
    """
    failover.durability = Durability(replicas=replicas, timeout=ms / 1000)


def _write(failover: Failover, writer: Writer, until: float) -> None:
    if failover.api == "async":
        asyncio.run(_write_async(failover, writer, until))
        return
    n = 0
    with failover.memory() as memory:
        while time.monotonic() < until:
            try:
                memory.add_message(
                    writer.session, "user", f"message {n}", message_id=writer.message_id(n)
                )
            except Exception as exc:  # every failure is recorded, then judged by a Then step
                writer.failures.append(exc)
                time.sleep(0.05)
                continue
            writer.acknowledged.append((n, time.monotonic()))
            n += 1


async def _write_async(failover: Failover, writer: Writer, until: float) -> None:
    """The same writer, through the asyncio service over an asyncio Sentinel client."""
    client = failover.recipe().asyncio()
    memory = AsyncMemoryService(client, max_history=100_000, durability=failover.durability)
    n = 0
    try:
        while time.monotonic() < until:
            try:
                await memory.add_message(
                    writer.session, "user", f"message {n}", message_id=writer.message_id(n)
                )
            except Exception as exc:  # every failure is recorded, then judged by a Then step
                writer.failures.append(exc)
                await asyncio.sleep(0.05)
                continue
            writer.acknowledged.append((n, time.monotonic()))
            n += 1
    finally:
        await client.aclose()


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
