"""Steps about many writers at once, the way production app workers write.

Usage::

    When 8 writers each send 500 messages to the session at once, while a reader watches
    Then the reader never saw more than 20 messages
    Then the context keeps the newest messages of every writer, each writer's in order
    When 8 writers each send 500 messages to a session of their own at once
    Then every writer's session holds its 500 messages in order
    Given the session's slot is being migrated to another node
    Given the session's slot is being migrated to another node, with only its history moved there
    Given the slot of user "ada" is being migrated to another node, with its keys moved there
    When the migration of the slot of user "ada" completes

Each writer has its own client (a worker of its own) and sends "w<writer>:<n>".
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from pytest_bdd import given, parsers, then, when

from chat_memory import (
    AsyncMemoryService,
    MemoryService,
    Message,
    WriteOutcomeUnknownError,
)
from chat_memory_suite.adapter import AdaptedMemory, requires
from chat_memory_suite.apis import Services
from chat_memory_suite.backends import ClientRecipe, RedisClient
from chat_memory_suite.damage import as_text
from chat_memory_suite.servers import (
    finish_migrating,
    move_slot,
    readme_user,
    start_migrating,
    throwaway_cluster,
)

from .sessions import MemorySettings
from .storage import session_keys

RESENDS = 5
_NUMBERED = re.compile(r"w(\d+):(\d+)")


@dataclass
class Crowd:
    """What happened while several writers wrote at once."""

    writers: int = 0
    per_writer: int = 0
    sessions: list[str] = field(default_factory=list)
    observed: list[list[str]] = field(default_factory=list)
    spread: bool = False  # each writer's n-th message goes to session n (mod the sessions)
    resent: int = 0  # writes resent after WriteOutcomeUnknownError

    def session_of(self, writer: int, n: int) -> str:
        """Return the session a writer's n-th message goes to."""
        return self.sessions[(writer + n) % len(self.sessions) if self.spread else writer]

    def sent_to(self, session: str, writer: int) -> list[int]:
        """Return the numbers of the writer's messages sent to ``session``, in its order."""
        return [n for n in range(self.per_writer) if self.session_of(writer, n) == session]


@pytest.fixture
def crowd() -> Crowd:
    """The scenario's writers and what its reader saw."""
    return Crowd()


def _run_writers(
    services: Services,
    recipe: ClientRecipe,
    api: str,
    settings: MemorySettings,
    namespace: str,
    crowd: Crowd,
    during: Callable[[], None] | None = None,
) -> None:
    """Run the writers, workers with a client each (sync) or tasks of one process (async).

    Either way a writer resends on WriteOutcomeUnknownError, as the README tells apps to,
    up to ``RESENDS`` times.
    """
    config: dict[str, Any] = {**settings.service_settings(), "namespace": namespace}

    def write(writer: int) -> None:
        client = recipe.sync()
        memory = services.memory_on(client, **config)
        for n in range(crowd.per_writer):
            session, messages = crowd.session_of(writer, n), [Message("user", f"w{writer}:{n}")]
            for attempt in range(RESENDS + 1):
                try:
                    memory.add_messages(session, messages)
                    break
                except WriteOutcomeUnknownError as unknown:
                    if attempt == RESENDS:
                        raise
                    crowd.resent += 1
                    messages = unknown.messages
        client.close()

    async def write_all_as_tasks() -> None:
        client = recipe.asyncio(shared_by=crowd.writers)
        memory = AsyncMemoryService(client, **config)

        async def task(writer: int) -> None:
            for n in range(crowd.per_writer):
                session = crowd.session_of(writer, n)
                messages = [Message("user", f"w{writer}:{n}")]
                for attempt in range(RESENDS + 1):
                    try:
                        await memory.add_messages(session, messages)
                        break
                    except WriteOutcomeUnknownError as unknown:
                        if attempt == RESENDS:
                            raise
                        crowd.resent += 1
                        messages = unknown.messages

        await asyncio.gather(*(task(writer) for writer in range(crowd.writers)))
        await client.aclose()

    # An adapter's memory is the one under test whatever the API: a worker each, each
    # memory awaited on its own loop when it is async (chat-memory's own async service
    # runs as tasks of one process).
    if api == "async" and not services.adapts:
        threads = [threading.Thread(target=lambda: asyncio.run(write_all_as_tasks()))]
    else:
        threads = [threading.Thread(target=write, args=(w,)) for w in range(crowd.writers)]
    stop = threading.Event()
    watcher = threading.Thread(target=lambda: _watch(during, stop)) if during else None
    for thread in [*threads, *([watcher] if watcher else [])]:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    if watcher:
        watcher.join()


def _watch(look: Callable[[], None] | None, stop: threading.Event) -> None:
    while look and not stop.is_set():
        look()


def _numbers(contents: list[str], writer: int) -> list[int]:
    found = (_NUMBERED.fullmatch(c) for c in contents)
    return [int(m.group(2)) for m in found if m and int(m.group(1)) == writer]


@when(
    parsers.parse(
        "{writers:d} writers each send {count:d} messages to the session at once,"
        " while a reader watches"
    )
)
def writers_to_one_session(
    services: Services,
    client_recipe: ClientRecipe,
    memory_api: str,
    memory_settings: MemorySettings,
    memory: MemoryService,
    namespace: str,
    session_id: str,
    crowd: Crowd,
    writers: int,
    count: int,
) -> None:
    """Several workers append to one session concurrently while another keeps loading it.

    When 8 writers each send 500 messages to the session at once, while a reader watches
    """
    crowd.writers, crowd.per_writer, crowd.sessions = writers, count, [session_id] * writers

    def look() -> None:
        crowd.observed.append([m["content"] for m in memory.get_context(session_id)])

    _run_writers(
        services, client_recipe, memory_api, memory_settings, namespace, crowd, during=look
    )


@when(
    parsers.parse(
        "{writers:d} writers each send {count:d} messages to a session of their own at once"
    )
)
def writers_to_own_sessions(
    services: Services,
    client_recipe: ClientRecipe,
    memory_api: str,
    memory_settings: MemorySettings,
    memory: MemoryService,
    namespace: str,
    crowd: Crowd,
    writers: int,
    count: int,
) -> None:
    """Several workers append concurrently, each to a session of its own.

    When 8 writers each send 500 messages to a session of their own at once
    """
    crowd.writers, crowd.per_writer = writers, count
    crowd.sessions = [f"writer-{w}" for w in range(writers)]
    _run_writers(services, client_recipe, memory_api, memory_settings, namespace, crowd)


@when(
    parsers.parse(
        "{writers:d} writers send {total:d} messages over {sessions:d} sessions at once,"
        " while a reader watches"
    )
)
def writers_over_many_sessions(
    services: Services,
    client_recipe: ClientRecipe,
    memory_api: str,
    memory_settings: MemorySettings,
    memory: MemoryService,
    namespace: str,
    crowd: Crowd,
    writers: int,
    total: int,
    sessions: int,
) -> None:
    """Workers share the messages; each sends its n-th message to the next session in turn.

    When 16 writers send 10000 messages over 100 sessions at once, while a reader watches
    """
    assert total % writers == 0, "the messages must split evenly between the writers"
    crowd.writers, crowd.per_writer, crowd.spread = writers, total // writers, True
    crowd.sessions = [f"customer-{s}" for s in range(sessions)]
    looks = iter(range(10**9))

    def look() -> None:
        session = crowd.sessions[next(looks) % sessions]
        crowd.observed.append([m["content"] for m in memory.get_context(session)])

    _run_writers(
        services, client_recipe, memory_api, memory_settings, namespace, crowd, during=look
    )


@then("every session keeps its newest messages, each writer's in order, none twice")
def every_session_keeps_newest(memory: MemoryService, crowd: Crowd) -> None:
    """Each session holds as many as the limit allows; per writer, an unbroken run of its newest.

    Then every session keeps its newest messages, each writer's in order, none twice
    """
    for session in crowd.sessions:
        contents = [m["content"] for m in memory.get_context(session)]
        sent = {w: crowd.sent_to(session, w) for w in range(crowd.writers)}
        assert len(contents) == len(set(contents)), f"{session} holds a message twice"
        expected = min(memory.max_history, sum(map(len, sent.values())))
        assert len(contents) == expected, f"{session} holds {len(contents)}, not {expected}"
        for writer, numbers in sent.items():
            kept = _numbers(contents, writer)
            assert kept == numbers[len(numbers) - len(kept) :], (
                f"{session} kept {kept} of writer {writer}, not the newest of {numbers} in order"
            )
        strays = len(contents) - sum(len(_numbers(contents, w)) for w in sent)
        assert strays == 0, f"{session} holds {strays} messages no writer sent"


@then(parsers.parse("the reader never saw more than {limit:d} messages"))
def reader_never_saw_more(crowd: Crowd, limit: int) -> None:
    """Every context loaded during the writes was within the limit and in each writer's order.

    Then the reader never saw more than 20 messages
    """
    assert crowd.observed, "the reader never got to look"
    most = max(len(seen) for seen in crowd.observed)
    assert most <= limit, f"the reader once saw {most} messages, more than the limit of {limit}"
    for seen in crowd.observed:
        for writer in range(crowd.writers):
            numbers = _numbers(seen, writer)
            assert numbers == sorted(set(numbers)), f"writer {writer} out of order: {numbers}"


@then("the context keeps the newest messages of every writer, each writer's in order")
def context_keeps_newest(memory: MemoryService, session_id: str, crowd: Crowd) -> None:
    """The survivors are, for each writer, an unbroken run ending with its last message.

    Then the context keeps the newest messages of every writer, each writer's in order
    """
    contents = [m["content"] for m in memory.get_context(session_id)]
    size = min(memory.max_history, crowd.writers * crowd.per_writer)
    assert len(contents) == size, f"the context holds {len(contents)}, not {size}"
    for writer in range(crowd.writers):
        numbers = _numbers(contents, writer)
        expected = list(range(crowd.per_writer - len(numbers), crowd.per_writer))
        assert numbers == expected, f"writer {writer} kept {numbers}, not its newest in order"
    strays = len(contents) - sum(len(_numbers(contents, w)) for w in range(crowd.writers))
    assert strays == 0, f"the context holds {strays} messages no writer sent"


@then(parsers.parse("every writer's session holds its {count:d} messages in order"))
def every_session_holds(memory: MemoryService, crowd: Crowd, count: int) -> None:
    """No writer lost, duplicated or reordered a message of its own session.

    Then every writer's session holds its 500 messages in order
    """
    for writer, session in enumerate(crowd.sessions):
        contents = [m["content"] for m in memory.get_context(session)]
        expected = [f"w{writer}:{n}" for n in range(count)]
        assert contents == expected, f"{session} lost, repeated or reordered a message"


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[str]:
    """A throwaway 3-master cluster of the scenario's own; the URL of a node."""
    workdir = tmp_path / "cluster"
    workdir.mkdir()
    with throwaway_cluster(workdir) as url:
        yield url


@given("the memory runs on a cluster of its own", target_fixture="client_recipe")
def memory_on_own_cluster(own_cluster: str) -> ClientRecipe:
    """The memory talks to a throwaway 3-master cluster that the scenario may reshard.

    Given the memory runs on a cluster of its own
    """
    return ClientRecipe("cluster", own_cluster)


@given(
    parsers.re(
        r"the memory runs on a cluster of its own, as a Redis user allowed"
        r'(?: only what the README lists| what the README lists except "(?P<command>[^"]+)")$'
    ),
    target_fixture="client_recipe",
)
def memory_on_own_cluster_as_user(
    own_cluster: str, namespace: str, command: str | None
) -> ClientRecipe:
    """The memory logs in to its throwaway cluster as a user of the README's rules on every node.

    Given the memory runs on a cluster of its own, as a Redis user allowed only what the README lists
    Given the memory runs on a cluster of its own, as a Redis user allowed what the README lists except "cluster|nodes"
    """
    with redis.RedisCluster.from_url(own_cluster) as admin:
        admin.execute_command(
            *readme_user(namespace, command), target_nodes=redis.RedisCluster.ALL_NODES
        )
    return ClientRecipe(
        "cluster", own_cluster, options=(("username", "chat-memory"), ("password", "s3cret"))
    )


@pytest.fixture
def cluster_admin(client_recipe: ClientRecipe) -> Iterator[redis.RedisCluster]:
    """The scenario's cluster as its default user, who may reshard it whatever the memory's user."""
    assert client_recipe.kind == "cluster", "this step needs a Redis Cluster"
    assert client_recipe.url is not None
    with redis.RedisCluster.from_url(client_recipe.url) as admin:
        yield admin


def _session_slot_key(
    redis_client: RedisClient, memory: MemoryService, namespace: str, session_id: str
) -> str:
    """A key in the session's hash slot, whether or not the session holds anything yet.

    For chat-memory, its history key. Another store names its keys itself: for a session
    it has not stored yet, one message is stored and forgotten again to find them.
    """
    if not isinstance(memory, AdaptedMemory):
        return memory.keys.history(session_id)
    keys = session_keys(redis_client, memory, namespace, session_id)
    if not keys:
        memory.add_message(session_id, "user", "which slot?")
        keys = session_keys(redis_client, memory, namespace, session_id)
        memory.clear(session_id)
        left = session_keys(redis_client, memory, namespace, session_id)
        assert not left, f"clear() left {left}: the next message would not be the session's first"
    assert keys, f"the memory stored session {session_id!r} under no key of the scenario"
    return keys[0]


@given(
    parsers.re(
        r"the session's slot is being migrated to another node"
        r"(?P<moved>, with its keys moved there)?$"
    )
)
def slot_being_migrated(
    cluster_admin: redis.RedisCluster,
    memory: MemoryService,
    namespace: str,
    session_id: str,
    moved: str | None,
) -> None:
    """The session's hash slot is half-way to another node (importing there, migrating here).

    It stays so for the rest of the scenario, as during a long resharding.

    Given the session's slot is being migrated to another node
    Given the session's slot is being migrated to another node, with its keys moved there
    """
    key = _session_slot_key(cluster_admin, memory, namespace, session_id)
    slot = cluster_admin.keyslot(key)
    keys = [k for k in session_keys(cluster_admin, memory, namespace, session_id)
            if cluster_admin.keyslot(k) == slot]  # fmt: skip
    start_migrating(cluster_admin, key, moved=keys if moved else [])


@given(
    parsers.re(
        r'the slot of user "(?P<user>[^"]+)" is being migrated to another node'
        r"(?:, with (?P<moved>its keys|only the user's index) moved there)?$"
    )
)
@requires("users", "storage_contract")
def user_slot_being_migrated(
    cluster_admin: redis.RedisCluster, memory: MemoryService, user: str, moved: str | None
) -> None:
    """The hash slot of the user's sessions is half-way to another node, as a session's above.

    With its keys moved there, every key of the user (index, sessions) is on the new node;
    with only the index, the sessions' keys are still on the old one.

    Given the slot of user "ada" is being migrated to another node
    Given the slot of user "ada" is being migrated to another node, with its keys moved there
    Given the slot of user "ada" is being migrated to another node, with only the user's index moved there
    """
    index = memory.keys.for_user(user).index()
    assert index is not None
    slot = cluster_admin.keyslot(index)
    owner = cluster_admin.get_node_from_key(index)
    held = cluster_admin.execute_command("CLUSTER GETKEYSINSLOT", slot, 10_000, target_nodes=owner)
    keys = {"its keys": [as_text(k) for k in held], "only the user's index": [index]}
    start_migrating(cluster_admin, index, moved=keys.get(moved or "", []))


@when(parsers.parse('the migration of the slot of user "{user}" completes'))
@requires("users", "storage_contract")
def user_slot_migrated(cluster_admin: redis.RedisCluster, memory: MemoryService, user: str) -> None:
    """The rest of the slot's keys move, and every node is told the slot's new owner.

    When the migration of the slot of user "ada" completes
    """
    index = memory.keys.for_user(user).index()
    assert index is not None
    finish_migrating(cluster_admin, index)


@given("the session's slot is being migrated to another node, with only its history moved there")
@requires("storage_contract")
def slot_being_migrated_split(
    redis_client: RedisClient, memory: MemoryService, session_id: str
) -> None:
    """The session's keys are split between the two nodes: its history moved, the rest not.

    Given the session's slot is being migrated to another node, with only its history moved there
    """
    assert isinstance(redis_client, redis.RedisCluster), "this step needs a Redis Cluster"
    history = memory.keys.history(session_id)
    start_migrating(redis_client, history, moved=[history])


@when(
    parsers.parse(
        "{writers:d} writers each send {count:d} messages to the session"
        " while its hash slot moves to another node"
    )
)
def writers_while_slot_moves(
    redis_client: RedisClient,
    services: Services,
    client_recipe: ClientRecipe,
    memory_api: str,
    memory_settings: MemorySettings,
    memory: MemoryService,
    namespace: str,
    session_id: str,
    crowd: Crowd,
    writers: int,
    count: int,
) -> None:
    """Workers append to one session of a cluster while its slot is resharded to another node.

    When 8 writers each send 200 messages to the session while its hash slot moves to another node
    """
    assert isinstance(redis_client, redis.RedisCluster), "this step needs a Redis Cluster"
    crowd.writers, crowd.per_writer, crowd.sessions = writers, count, [session_id] * writers
    moved = threading.Event()

    def move_once_under_way() -> None:
        if moved.is_set():
            return
        if len(memory.get_messages(session_id)) >= writers * count // 4:
            move_slot(redis_client, _session_slot_key(redis_client, memory, namespace, session_id))
            moved.set()
        else:
            time.sleep(0.01)

    _run_writers(services, client_recipe, memory_api, memory_settings, namespace, crowd,
                 during=move_once_under_way)  # fmt: skip
    assert moved.is_set(), "the writers finished before the slot could move"
