"""The durability setting: every write waits for replicas, and too few is a typed error.

On a real primary with one replica (both throwaway redis-servers): a write the
replica confirms returns; with the replica frozen, the write is stored on the
primary and the caller gets NotReplicatedError, and a retry with the same ids
appends nothing twice. Dropping the WAIT from the write path fails these tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
import redis.asyncio

from chat_memory import (
    AsyncMemoryService,
    CompactResult,
    Durability,
    ForgetResult,
    InvalidInputError,
    MemoryService,
    Message,
    NotReplicatedError,
    WriteOutcomeUnknownError,
)
from chat_memory_suite.servers import HOST, ThrowawayServer


@pytest.fixture
def replica(server: ThrowawayServer, tmp_path: Path) -> Iterator[ThrowawayServer]:
    """A replica of ``server``, in sync before the test starts."""
    with server.admin() as primary:  # no 5 s wait before the first sync, none at shutdown
        primary.config_set("repl-diskless-sync-delay", 0)
        primary.config_set("shutdown-timeout", 0)
    started = ThrowawayServer(  # without an AOF, which can hold up its shutdown for 30 s
        tmp_path / "replica", "--replicaof", HOST, str(server.port), "--appendonly", "no"
    ).start()
    with server.admin() as primary:
        for _ in range(200):
            if any(
                isinstance(value, dict) and value.get("state") == "online"
                for value in primary.info("replication").values()
            ):
                break
            primary.execute_command("WAIT", 1, 50)
    yield started
    started.stop()


def test_a_write_the_replica_confirms_returns_and_is_on_the_replica(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    with server.admin() as client, replica.admin() as read_replica:
        memory = MemoryService(client, durability=Durability(replicas=1, timeout=2))
        stored = memory.add_message("s", "user", "hello")
        copy = MemoryService(read_replica)
        assert [m.id for m in copy.get_messages("s")] == [stored.id]
        assert client.info("commandstats")["cmdstat_wait"]["calls"] >= 1


def test_a_write_no_replica_confirms_is_a_typed_error_and_a_retry_is_safe(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    with server.admin() as client:
        memory = MemoryService(client, durability=Durability(replicas=1, timeout=0.2))
        replica.pause()
        try:
            with pytest.raises(NotReplicatedError) as raised:
                memory.add_message("s", "user", "hello", message_id="m1")
        finally:
            replica.resume()
        error = raised.value
        assert isinstance(error, WriteOutcomeUnknownError)
        assert (error.confirmed, error.wanted, error.may_have_written) == (0, 1, True)
        assert [m.id for m in error.messages] == ["m1"]
        assert "stored on the primary but confirmed by 0 of 1 replica" in str(error)
        assert [m.id for m in MemoryService(client).get_messages("s")] == ["m1"]
        patient = MemoryService(client, durability=Durability(replicas=1, timeout=5))
        retried = patient.add_messages("s", error.messages)
        assert retried.already_stored == list(retried)
        assert [m.content for m in memory.get_messages("s")] == ["hello"]


def test_clearing_waits_for_the_replica_too(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    with server.admin() as client:
        memory = MemoryService(client, durability=Durability(replicas=1, timeout=0.2))
        MemoryService(client).add_message("s", "user", "hello")
        replica.pause()
        try:
            with pytest.raises(NotReplicatedError):
                memory.clear("s")
        finally:
            replica.resume()
        assert memory.get_messages("s") == []


def test_reads_do_not_wait(server: ThrowawayServer) -> None:
    with server.admin() as client:
        memory = MemoryService(client, durability=Durability(replicas=1, timeout=0.05))
        assert memory.get_messages("s") == []
        assert memory.ttl("s") is None
        assert "cmdstat_wait" not in client.info("commandstats")


async def test_the_async_service_waits_and_reports_the_same(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    client = redis.asyncio.Redis(host=HOST, port=server.port)
    try:
        patient = AsyncMemoryService(client, durability=Durability(replicas=1, timeout=5))
        await patient.add_message("s", "user", "confirmed")
        memory = AsyncMemoryService(client, durability=Durability(replicas=1, timeout=0.2))
        replica.pause()
        try:
            with pytest.raises(NotReplicatedError) as raised:
                await memory.add_message("s", "user", "unconfirmed", message_id="m2")
        finally:
            replica.resume()
        assert [m.id for m in raised.value.messages] == ["m2"]
        await patient.add_messages("s", raised.value.messages)
        assert [m.content for m in await memory.get_messages("s")] == [
            "confirmed",
            "unconfirmed",
        ]
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("replicas", "timeout"),
    [(0, 1.0), (True, 1.0), (1.5, 1.0), (1, 0), (1, -1), (1, math.inf), (1, math.nan),
     (1, True), (1, timedelta(0)), (1, 3601)],
)  # fmt: skip
def test_a_setting_wait_cannot_take_is_refused_by_name(replicas: object, timeout: object) -> None:
    with pytest.raises(InvalidInputError, match="durability"):
        Durability(replicas=replicas, timeout=timeout)  # type: ignore[arg-type]


def test_a_timeout_is_sent_in_whole_milliseconds() -> None:
    assert Durability(2, timedelta(milliseconds=1500)).wait_command() == ("WAIT", 2, 1500)
    assert Durability(1, 0.0001).timeout_ms == 1


def test_durability_must_be_a_setting_and_not_on_an_asyncio_cluster() -> None:
    with pytest.raises(InvalidInputError, match="durability must be a Durability"):
        MemoryService(redis.Redis(), durability=1)  # type: ignore[arg-type]
    cluster = redis.asyncio.RedisCluster(host=HOST, port=1)
    with pytest.raises(InvalidInputError, match="asyncio cluster"):
        AsyncMemoryService(cluster, durability=Durability())


@pytest.mark.parametrize("ttl", [1800, None], ids=["session with a TTL", "session without"])
def test_a_retry_of_stored_messages_on_a_fresh_connection_still_waits_for_the_replica(
    server: ThrowawayServer, replica: ThrowawayServer, ttl: int | None
) -> None:
    """A retry that appends nothing must not be confirmed by a WAIT that covers nothing.

    On a connection that never wrote, Valkey's WAIT returns at once with every
    replica connected, however far behind: the retry writes the session's
    expiry again (without a TTL, an expiry for an instant, then none) so that
    its WAIT covers the stored message. Redis 7.0's WAIT waits for every write
    of the server after any command, so only a run on Valkey (PATH) catches a
    barrier that writes nothing.
    """
    with server.admin() as client:
        memory = MemoryService(client, ttl=ttl, durability=Durability(replicas=1, timeout=0.2))
        replica.pause()
        try:
            with pytest.raises(NotReplicatedError) as raised:
                memory.add_message("s", "user", "hello", message_id="m1")
            with server.admin() as fresh:  # a connection of its own, as after a failover
                retrying = MemoryService(
                    fresh, ttl=ttl, durability=Durability(replicas=1, timeout=0.2)
                )
                with pytest.raises(NotReplicatedError) as again:
                    retrying.add_messages("s", raised.value.messages)
        finally:
            replica.resume()
        assert [m.id for m in again.value.messages] == ["m1"]
        patient = MemoryService(client, ttl=ttl, durability=Durability(replicas=1, timeout=5))
        assert patient.add_messages("s", raised.value.messages).already_stored
        if ttl is None:
            assert patient.ttl("s") is None
            assert all(
                client.pttl(k) == -1 for k in patient.core.session_keys("s") if client.exists(k)
            )
        else:
            assert 1795 < (patient.ttl("s") or 0) <= 1800
        with redis.Redis(HOST, replica.port) as on_replica:
            assert on_replica.llen(patient.core.session_keys("s")[0]) == 1


def test_a_retry_without_a_durability_setting_writes_nothing() -> None:
    client = fakeredis.FakeRedis()
    memory = MemoryService(client, ttl=1800)
    memory.add_message("s", "user", "hello", message_id="m1")
    keys = [key for key in memory.core.session_keys("s") if client.exists(key)]
    for key in keys:  # as if 20 minutes had passed
        client.pexpire(key, 600_000)
    assert memory.add_messages("s", memory.get_messages("s")).already_stored
    assert all(0 < int(client.pttl(key)) <= 600_000 for key in keys)


async def test_an_asyncio_retry_without_a_durability_setting_writes_nothing() -> None:
    client = fakeredis.FakeAsyncRedis()
    memory = AsyncMemoryService(client, ttl=1800)
    await memory.add_message("s", "user", "hello", message_id="m1")
    keys = [key for key in memory.core.session_keys("s") if await client.exists(key)]
    for key in keys:  # as if 20 minutes had passed
        await client.pexpire(key, 600_000)
    assert (await memory.add_messages("s", await memory.get_messages("s"))).already_stored
    assert all(0 < int(left) <= 600_000 for left in [await client.pttl(key) for key in keys])


def test_a_retry_the_replica_confirms_restarts_every_key_of_the_session_alike(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    """The expiry a retry writes again, for its WAIT, is every key's of the session.

    Written on the history alone, the session's other keys (the ids it
    remembers, its metadata) would expire before it: a retry after that would
    store the message twice, and the metadata would be gone.
    """
    with server.admin() as client:
        memory = MemoryService(client, ttl=1800, durability=Durability(replicas=1, timeout=2))
        memory.add_message("s", "user", "hello", message_id="m1")
        memory.set_metadata("s", {"title": "Paris"})
        keys = [key for key in memory.core.session_keys("s") if client.exists(key)]
        assert len(keys) == 3, keys  # the history, the ids it remembers, the metadata
        for key in keys:  # as if 20 minutes had passed
            client.pexpire(key, 600_000)
        with server.admin() as fresh:  # another instance of the app retries
            retrying = MemoryService(fresh, ttl=1800, durability=Durability(replicas=1, timeout=2))
            assert retrying.add_messages("s", memory.get_messages("s")).already_stored
        left = {key: int(client.pttl(key)) / 1000 for key in keys}
        assert all(1795 < seconds <= 1800 for seconds in left.values()), left


def test_a_retry_the_replica_confirms_leaves_a_users_index_to_outlive_every_session(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    """The user's index is not given the retried session's expiry: another may never expire.

    The index outlives every session in it (append.lua only ever extends its
    expiry); written with this session's, it would expire under a session of
    the user that never does, which listing and erasure would then miss.
    """
    durability = Durability(replicas=1, timeout=2)
    with server.admin() as client:
        MemoryService(client, ttl=None, durability=durability).for_user("ada").add_message(
            "kept", "user", "kept for ever"
        )
        memory = MemoryService(client, ttl=1800, durability=durability).for_user("ada")
        memory.add_message("s", "user", "hello", message_id="m1")
        with server.admin() as fresh:  # another instance of the app retries
            retrying = MemoryService(fresh, ttl=1800, durability=durability).for_user("ada")
            assert retrying.add_messages("s", memory.get_messages("s")).already_stored
        index = memory.keys.index()
        assert index is not None
        assert client.pttl(index) == -1  # no expiry, as the session kept for ever
        assert sorted(s.session_id for s in memory.list_sessions()) == ["kept", "s"]


def test_a_retry_the_replica_confirms_extends_its_users_index_with_the_session(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    durability = Durability(replicas=1, timeout=2)
    with server.admin() as client:
        memory = MemoryService(client, ttl=1800, durability=durability).for_user("ada")
        memory.add_message("s", "user", "hello", message_id="m1")
        keys = [key for key in memory.core.session_keys("s") if client.exists(key)]
        for key in keys:  # as if 20 minutes had passed
            client.pexpire(key, 600_000)
        with server.admin() as fresh:  # another instance of the app retries
            retrying = MemoryService(fresh, ttl=1800, durability=durability).for_user("ada")
            assert retrying.add_messages("s", memory.get_messages("s")).already_stored
        left = {key: int(client.pttl(key)) / 1000 for key in keys}
        index = memory.keys.index()
        assert index is not None
        own = {key: seconds for key, seconds in left.items() if key != index}
        assert all(1795 < seconds <= 1800 for seconds in own.values()), own
        assert 1795 < left[index] <= 1800, left


def test_reads_of_a_users_sessions_do_not_wait_for_replicas(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    with server.admin() as client:
        MemoryService(client).for_user("ada").add_message("paris", "user", "hi")
        memory = MemoryService(client, durability=Durability(replicas=1, timeout=0.2))
        ada = memory.for_user("ada")
        replica.pause()
        try:
            assert [s.session_id for s in ada.list_sessions()] == ["paris"]
            assert '"content":"hi"' in ada.export_session("paris")
        finally:
            replica.resume()


def _unconfirmed(client: redis.Redis) -> MemoryService:
    """A memory whose every write is unconfirmed: fakeredis has no WAIT, no replica answers."""
    return MemoryService(client, durability=Durability(replicas=1, timeout=0.05))


def test_a_compaction_no_replica_confirms_hands_back_its_result_after_reading_a_change_again() -> (
    None
):
    client = fakeredis.FakeRedis()
    plain = MemoryService(client)
    plain.add_messages("ada", [Message("user", f"message {n}") for n in range(4)])
    calls: list[int] = []

    def summarize(messages: list[Message]) -> str:
        calls.append(len(messages))
        if len(calls) == 1:  # a message arrives while the first summary is written
            plain.add_message("ada", "user", "one more")
        return f"{len(messages)} messages"

    with pytest.raises(NotReplicatedError) as caught:
        _unconfirmed(client).compact("ada", summarize, keep_last=1)
    result = caught.value.reply
    assert isinstance(result, CompactResult), result  # not the script's 1
    assert calls == [3, 4]  # the change was read again, not reported as a write
    assert result.folded == 4
    assert result.summary is not None
    assert [m.content for m in plain.get_messages("ada")] == ["4 messages", "one more"]


def test_a_durable_write_reads_its_scripts_reply_raw_from_a_client_that_decodes() -> None:
    # The write and its WAIT go in a pipeline of their own: the script's reply must still
    # be asked for as bytes (RAW), or a client built with decode_responses=True hands back
    # text where the library reads bytes (the ids of the sessions an erasure removed).
    client = fakeredis.FakeRedis(decode_responses=True)
    MemoryService(client).for_user("ada").add_message("s", "user", "hello")
    with pytest.raises(NotReplicatedError) as caught:
        _unconfirmed(client).forget_user("ada")
    result = caught.value.reply
    assert isinstance(result, ForgetResult), result
    assert result.sessions == ["s"]


async def test_an_asyncio_durable_write_reads_its_reply_raw_from_a_client_that_decodes() -> None:
    client = fakeredis.FakeAsyncRedis(decode_responses=True)
    await AsyncMemoryService(client).for_user("ada").add_message("s", "user", "hello")
    unconfirmed = AsyncMemoryService(client, durability=Durability(replicas=1, timeout=0.05))
    with pytest.raises(NotReplicatedError) as caught:
        await unconfirmed.forget_user("ada")
    result = caught.value.reply
    assert isinstance(result, ForgetResult), result
    assert result.sessions == ["s"]


def test_an_erasure_no_replica_confirms_erases_every_batch_and_hands_back_all_it_erased() -> None:
    client = fakeredis.FakeRedis()
    sessions = [f"s{n}" for n in range(150)]  # two batches of at most 100
    for session in sessions:
        MemoryService(client).for_user("ada").add_message(session, "user", "hello")
    with pytest.raises(NotReplicatedError) as caught:
        _unconfirmed(client).forget_user("ada")
    result = caught.value.reply
    assert isinstance(result, ForgetResult), result
    assert sorted(result.sessions) == sorted(sessions)
    assert MemoryService(client).for_user("ada").list_sessions(limit=1000) == []
    assert client.keys("*") == []


def test_an_unconfirmed_write_asks_its_pool_to_drop_only_the_idle_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An unconfirmed write drops the pool's idle connections, so that the next call asks
    # Sentinel again; one in use by another thread is left to finish its command.
    client = fakeredis.FakeRedis()
    dropped: list[bool] = []
    monkeypatch.setattr(
        client.connection_pool,
        "disconnect",
        lambda inuse_connections=True: dropped.append(inuse_connections),
    )
    with pytest.raises(NotReplicatedError):
        _unconfirmed(client).add_message("s", "user", "hello")
    assert dropped, "no connection dropped"
    assert not any(dropped), dropped


def test_an_unconfirmed_write_is_reported_over_a_pool_whose_disconnect_takes_no_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # redis-py 5's BlockingConnectionPool.disconnect() takes no inuse_connections: the
    # write is still reported as unconfirmed, not as that TypeError.
    client = fakeredis.FakeRedis()
    monkeypatch.setattr(client.connection_pool, "disconnect", lambda: None)
    with pytest.raises(NotReplicatedError):
        _unconfirmed(client).add_message("s", "user", "hello")
    assert [m.content for m in MemoryService(client).get_messages("s")] == ["hello"]


@pytest.mark.parametrize("takes_inuse", [True, False], ids=["redis-py 6", "redis-py 5 blocking"])
async def test_the_asyncio_service_drops_idle_connections_alike(takes_inuse: bool) -> None:
    import fakeredis.aioredis

    dropped: list[bool] = []

    async def disconnect(inuse_connections: bool = True) -> None:
        dropped.append(inuse_connections)

    async def takes_no_argument() -> None:  # redis-py 5's BlockingConnectionPool
        dropped.append(True)

    client = fakeredis.aioredis.FakeRedis()
    pool = client.connection_pool
    pool.disconnect = disconnect if takes_inuse else takes_no_argument  # type: ignore[method-assign, assignment]
    memory = AsyncMemoryService(client, durability=Durability(replicas=1, timeout=0.05))
    with pytest.raises(NotReplicatedError):  # not the TypeError of the call
        await memory.add_message("s", "user", "hello")
    if takes_inuse:
        assert dropped, "no connection dropped"
        assert not any(dropped), dropped
    else:
        assert dropped == []  # the call was refused: nothing dropped, nothing raised


@pytest.mark.parametrize("missing", ["pexpire", "persist"])
def test_a_retrys_barrier_redis_refuses_is_a_typed_error_and_changes_nothing(
    server: ThrowawayServer, replica: ThrowawayServer, missing: str
) -> None:
    # Without a TTL the barrier gives each key an expiry for an instant (PEXPIRE), then
    # none (PERSIST): a user refused either is told the messages are stored (found so,
    # perhaps by an earlier attempt of the same call), and no key is left expiring.
    with server.admin() as admin:
        MemoryService(admin, ttl=None).for_user("ada").add_message(
            "s", "user", "hello", message_id="m1"
        )
        admin.acl_setuser(
            "limited", enabled=True, nopass=True, keys=["*"], commands=["+@all", f"-{missing}"]
        )
    durability = Durability(replicas=1, timeout=2)
    with redis.Redis(HOST, server.port, username="limited", password="") as client:
        memory = MemoryService(client, ttl=None, durability=durability).for_user("ada")
        with pytest.raises(WriteOutcomeUnknownError, match="messages are stored") as failed:
            memory.add_messages("s", memory.get_messages("s"))  # perhaps an attempt's retry
        assert f"may not run '{missing}'" in str(failed.value)
        assert [m.id for m in failed.value.messages] == ["m1"]
        assert [m.content for m in memory.get_messages("s")] == ["hello"]
        keys = [key for key in memory.core.session_keys("s") if client.exists(key)]
        assert len(keys) == 4, keys  # the history, its ids, its metadata, the user's index
        assert {key: client.pttl(key) for key in keys} == dict.fromkeys(keys, -1)


def test_a_retry_the_replica_confirms_leaves_a_longer_lived_sessions_index_as_it_was(
    server: ThrowawayServer, replica: ThrowawayServer
) -> None:
    durability = Durability(replicas=1, timeout=2)
    with server.admin() as client:
        MemoryService(client, ttl=7200, durability=durability).for_user("ada").add_message(
            "long", "user", "kept two hours"
        )
        memory = MemoryService(client, ttl=1800, durability=durability).for_user("ada")
        memory.add_message("s", "user", "hello", message_id="m1")
        assert memory.add_messages("s", memory.get_messages("s")).already_stored
        index = memory.keys.index()
        assert index is not None
        assert 7195 < int(client.pttl(index)) / 1000 <= 7200  # not cut to this session's 1800 s


async def test_an_asyncio_clear_waits_for_the_replicas_too() -> None:
    client = fakeredis.FakeAsyncRedis()  # no WAIT: every write is unconfirmed
    memory = AsyncMemoryService(client, durability=Durability(replicas=1, timeout=0.05))
    await AsyncMemoryService(client).add_message("s", "user", "hello")
    with pytest.raises(NotReplicatedError):
        await memory.clear("s")
    assert await AsyncMemoryService(client).get_messages("s") == []


def test_a_retrys_barrier_that_loses_its_connection_says_the_messages_are_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = fakeredis.FakeRedis()
    MemoryService(client).add_message("s", "user", "hello", message_id="m1")
    memory = MemoryService(client, durability=Durability(replicas=1, timeout=0.05))
    sent = memory._send  # the retry's own script as without durability, then the barrier fails

    def send(command: tuple[Any, ...], options: Any, key: str, *, writes: bool) -> Any:
        if sent_once:
            raise redis.exceptions.ConnectionError("Connection closed by server.")
        sent_once.append(command)
        return sent(command, options, key, writes=False)

    sent_once: list[tuple[Any, ...]] = []
    monkeypatch.setattr(memory, "_send", send)
    with pytest.raises(WriteOutcomeUnknownError, match="messages are stored") as failed:
        memory.add_messages("s", MemoryService(client).get_messages("s"))
    assert [m.id for m in failed.value.messages] == ["m1"]
