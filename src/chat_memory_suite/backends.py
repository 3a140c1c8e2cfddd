"""Which Redis the scenarios run against, and how each scenario gets a clean one.

Three backends, chosen on the command line:

- fakeredis (default): a fresh in-process server per scenario, no services;
- a real server: ``--redis-url redis://HOST:PORT/DB`` (or ``TEST_REDIS_URL``,
  or ``TEST_REDIS_HOST``/``TEST_REDIS_PORT``), or ``--redis-server`` to start a
  throwaway ``redis-server`` (through pytest-redis);
- a Redis Cluster: ``--redis-cluster`` with ``--redis-url`` naming any node,
  or alone to start a throwaway 3-master cluster on loopback (with
  ``--redis-cluster-replicas N``, each master with N replicas);
- a primary with replicas watched by Sentinel: ``--redis-sentinel`` starts a
  throwaway primary, two replicas and three ``redis-sentinel`` processes, and
  every client is ``Sentinel(...).master_for(...)``, as an application's.

A real server is treated as shared: every scenario works in a namespace of its
own and deletes only its own keys afterwards (never FLUSHDB).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

import fakeredis
import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
import redis.asyncio.sentinel
import redis.retry
import redis.sentinel
from redis.backoff import ExponentialBackoff

from chat_memory import DEFAULT_NAMESPACE, KeyLayout

from .servers import parse_sentinel_url, sentinel_group, throwaway_cluster

RedisClient = redis.Redis | redis.RedisCluster
AsyncRedisClient = redis.asyncio.Redis | redis.asyncio.RedisCluster
Kind = Literal["fakeredis", "redis", "cluster", "sentinel"]

BACKEND_KEY = pytest.StashKey["Backend"]()
FAULT_SECONDS = 60
"""No fault scenario may take longer than this (pytest-timeout fails it)."""


@dataclass(frozen=True)
class Backend:
    """How to reach the Redis the scenarios run against."""

    kind: Kind
    url: str | None = None
    started_here: bool = False
    replicas: int = 0
    """Replicas per master of a throwaway cluster."""

    @property
    def shared(self) -> bool:
        """Whether scenarios share one server (and so need namespaces of their own)."""
        return self.kind != "fakeredis"

    def describe(self) -> str:
        """Return a one-line description for the pytest header and reports."""
        if self.kind == "fakeredis":
            return "fakeredis (a fresh in-process server per scenario)"
        per_master = f" with {self.replicas} replica(s) per master" if self.replicas else ""
        label = {
            "cluster": f"Redis Cluster{per_master}",
            "sentinel": "primary with 2 replicas and 3 Sentinels",
        }.get(self.kind, "Redis server")
        where = f"at {self.url}" if self.url else "on a free loopback port"
        origin = "throwaway, started by the suite" if self.started_here else "given"
        return f"{label} {where} ({origin})"

    def recipe(self) -> ClientRecipe:
        """Return how to build clients of this backend (on fakeredis, of a new server)."""
        server = fakeredis.FakeServer() if self.kind == "fakeredis" else None
        return ClientRecipe(self.kind, self.url, server=server)


@dataclass(frozen=True)
class ClientRecipe:
    """How the scenario's memory reaches Redis, for a sync or an async client alike.

    ``retry`` is ``(cap, base, retries)`` of an exponential backoff, or None
    for redis-py's default; ``server`` is the fakeredis server of the scenario.
    """

    kind: Kind
    url: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    retry: tuple[float, float, int] | None = None
    server: fakeredis.FakeServer | None = None

    def sync(self, **extra: Any) -> RedisClient:
        """Return a new blocking client."""
        options = self._options(redis.retry.Retry, extra)
        if self.kind == "fakeredis":
            return fakeredis.FakeRedis(server=self.server, **options)
        assert self.url is not None
        if self.kind == "cluster":
            return redis.RedisCluster.from_url(self.url, **options)
        if self.kind == "sentinel":
            sentinels, service = parse_sentinel_url(self.url)
            primary: redis.Redis = redis.sentinel.Sentinel(sentinels, socket_timeout=2).master_for(
                service, **options
            )
            return primary
        return redis.Redis.from_url(self.url, **options)

    def asyncio(self, *, shared_by: int | None = None, **extra: Any) -> AsyncRedisClient:
        """Return a new asyncio client of the same server, with the same settings.

        With ``shared_by``, a server client gets a blocking pool of that many
        connections, as the README advises for many tasks: a task waits for a
        free connection instead of failing.
        """
        options = self._options(redis.asyncio.retry.Retry, extra)
        if self.kind == "fakeredis":
            return fakeredis.FakeAsyncRedis(server=self.server, **options)
        assert self.url is not None
        if self.kind == "cluster":
            return redis.asyncio.RedisCluster.from_url(self.url, **options)
        if self.kind == "sentinel":
            sentinels, service = parse_sentinel_url(self.url)
            if shared_by is not None:  # redis-py has no blocking pool for Sentinel: one each
                options.setdefault("max_connections", max(shared_by, 100))
            return _closing_sentinels(
                redis.asyncio.sentinel.Sentinel(
                    sentinels,
                    socket_timeout=2,
                    # one connection a Sentinel: many tasks connecting at once otherwise
                    # open one each, which its pool does not close reliably
                    sentinel_kwargs={"socket_timeout": 2, "single_connection_client": True},
                ),
                service,
                options,
            )
        if shared_by is not None:
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                self.url, max_connections=min(shared_by, 50), **options
            )
            return redis.asyncio.Redis.from_pool(pool)  # the client closes the pool
        return redis.asyncio.Redis.from_url(self.url, **options)

    def _options(self, retry_class: Any, extra: dict[str, Any]) -> dict[str, Any]:
        options = dict(self.options) | extra
        if self.retry is not None:
            cap, base, retries = self.retry
            options["retry"] = retry_class(ExponentialBackoff(cap=cap, base=base), retries)
        return options


def _closing_sentinels(
    sentinel: redis.asyncio.sentinel.Sentinel, service: str, options: dict[str, Any]
) -> redis.asyncio.Redis:
    """Return the primary's asyncio client; closing it closes the Sentinels' clients too.

    redis-py's asyncio ``Sentinel`` keeps a client of each Sentinel open, and
    has no close of its own; left to the garbage collector, their transports
    warn that they were never closed.
    """
    primary: redis.asyncio.Redis = sentinel.master_for(service, **options)
    close_primary = primary.aclose

    async def aclose(close_connection_pool: bool | None = None) -> None:
        await close_primary(close_connection_pool)
        for client in sentinel.sentinels:
            await client.aclose(close_connection_pool=True)

    primary.aclose = aclose  # type: ignore[method-assign]
    return primary


def _given_url(config: pytest.Config) -> str | None:
    url: str | None = config.getoption("--redis-url") or os.environ.get("TEST_REDIS_URL")
    if url:
        return url
    host, port = os.environ.get("TEST_REDIS_HOST"), os.environ.get("TEST_REDIS_PORT")
    if host or port:
        return f"redis://{host or '127.0.0.1'}:{port or 6379}/0"
    return None


def pytest_configure(config: pytest.Config) -> None:
    """Decide the backend once, before the header is printed; refuse one that cannot work."""
    url = _given_url(config)
    starts_servers = (
        config.getoption("--redis-server")
        or config.getoption("--redis-sentinel")
        or (config.getoption("--redis-cluster") and not url)
    )
    if starts_servers and shutil.which("redis-server") is None:
        raise pytest.UsageError(
            "--redis-server and --redis-cluster start throwaway servers, but redis-server is"
            " not installed (Debian: apt-get install redis-server); or point at a running"
            " server with --redis-url"
        )
    if config.getoption("--redis-sentinel"):
        if shutil.which("redis-sentinel") is None:
            raise pytest.UsageError(
                "--redis-sentinel starts throwaway Sentinels, but redis-sentinel is not"
                " installed (Debian: apt-get install redis-sentinel)"
            )
        if url or config.getoption("--redis-cluster") or config.getoption("--redis-server"):
            raise pytest.UsageError(
                "--redis-sentinel starts its own primary, replicas and Sentinels: drop"
                " --redis-url, --redis-server and --redis-cluster"
            )
        config.stash[BACKEND_KEY] = Backend("sentinel", None, started_here=True)
    elif config.getoption("--redis-cluster"):
        replicas = config.getoption("--redis-cluster-replicas")
        if replicas and url:
            raise pytest.UsageError(
                "--redis-cluster-replicas shapes the throwaway cluster: drop --redis-url"
            )
        config.stash[BACKEND_KEY] = Backend(
            "cluster", url, started_here=url is None, replicas=replicas
        )
    elif config.getoption("--redis-server"):
        if url:
            raise pytest.UsageError("--redis-server starts its own server: drop --redis-url")
        config.stash[BACKEND_KEY] = Backend("redis", None, started_here=True)
    elif url:
        config.stash[BACKEND_KEY] = Backend("redis", url)
    else:
        config.stash[BACKEND_KEY] = Backend("fakeredis")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Reach a given server once, before any scenario: an unreachable one stops the run."""
    backend = session.config.stash[BACKEND_KEY]
    if not backend.shared or backend.started_here or hasattr(session.config, "workerinput"):
        return
    client = backend.recipe().sync(socket_connect_timeout=2, socket_timeout=2, retry=None)
    try:
        client.ping()
    except (redis.RedisError, redis.exceptions.RedisClusterException) as exc:
        raise pytest.UsageError(
            f"cannot reach the Redis backend {backend.describe()}: {exc}\n"
            "start that server, fix --redis-url (or TEST_REDIS_URL), or drop it to run on"
            " fakeredis"
        ) from exc
    finally:
        client.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """List what each failover scenario without the durability setting measured it lost."""
    lines = [
        f"{report.nodeid}: {value}"
        for reports in terminalreporter.stats.values()
        for report in reports
        if isinstance(report, pytest.TestReport) and report.when == "call"
        for name, value in report.user_properties
        if name == "acknowledged messages lost"
    ]
    if lines:
        terminalreporter.section("acknowledged messages lost in failovers (measured)")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_report_header(config: pytest.Config) -> str:
    """Name the backend in the pytest header."""
    return f"chat-memory backend: {config.stash[BACKEND_KEY].describe()}"


_NEEDS = {
    "real_redis": (
        {"redis", "cluster", "sentinel"},
        "needs a real Redis server: run with --redis-server",
    ),
    "failover": (
        {"sentinel", "cluster"},
        "fails a primary over to a replica: run with --redis-sentinel or --redis-cluster",
    ),
    "sentinel": ({"sentinel"}, "needs Sentinel: run with --redis-sentinel"),
    "faults": ({"redis", "cluster"}, "breaks throwaway redis-servers: run with --redis-server"),
    "cluster": ({"cluster"}, "needs a Redis Cluster: run with --redis-cluster"),
}


def unmet_need(kind: str, markers: list[str]) -> str | None:
    """Why a scenario with these markers cannot run on a backend of this kind, or None.

    Of the needs it does not meet, the narrowest is told, so that the backend it names
    runs the scenario: a @cluster @faults scenario needs --redis-cluster, not only a
    real server.
    """
    unmet = [_NEEDS[m] for m in markers if kind not in _NEEDS[m][0]]
    return min(unmet, key=lambda need: len(need[0]))[1] if unmet else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip, with the reason, the scenarios this backend cannot run."""
    kind = config.stash[BACKEND_KEY].kind
    for item in items:
        reason = unmet_need(kind, [m for m in _NEEDS if item.get_closest_marker(m)])
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"{reason} (this run: {kind})"))
        breaks = item.get_closest_marker("faults") or item.get_closest_marker("failover")
        if breaks and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(FAULT_SECONDS))


@pytest.fixture(scope="session")
def redis_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The backend of this run, with any throwaway server it needs running."""
    backend = request.config.stash[BACKEND_KEY]
    if backend.started_here and backend.kind == "redis":
        proc = request.getfixturevalue("redis_proc")
        backend = Backend("redis", f"redis://{proc.host}:{proc.port}/0", started_here=True)
    elif backend.started_here and backend.kind == "cluster":
        with throwaway_cluster(
            request.getfixturevalue("tmp_path_factory").mktemp("cluster"),
            replicas=backend.replicas,
        ) as url:
            yield _recorded(
                request.config,
                Backend("cluster", url, started_here=True, replicas=backend.replicas),
            )
        return
    elif backend.started_here and backend.kind == "sentinel":
        workdir = request.getfixturevalue("tmp_path_factory").mktemp("sentinel")
        with sentinel_group(workdir) as group:
            yield _recorded(request.config, Backend("sentinel", group.url, started_here=True))
        return
    yield _recorded(request.config, backend)


def _recorded(config: pytest.Config, backend: Backend) -> Backend:
    if backend.shared:
        client = backend.recipe().sync()
        try:
            client.ping()
        except redis.RedisError as exc:
            pytest.fail(f"cannot reach the Redis backend {backend.describe()}: {exc}")
        finally:
            client.close()
    config.stash[BACKEND_KEY] = backend
    return backend


@pytest.fixture
def namespace(redis_backend: Backend) -> str:
    """The key namespace of this scenario: the default, or one of its own on a shared server."""
    if redis_backend.shared:
        return f"{DEFAULT_NAMESPACE}-test-{uuid.uuid4().hex[:12]}"
    return DEFAULT_NAMESPACE


@pytest.fixture
def client_recipe(redis_backend: Backend) -> ClientRecipe:
    """How the scenario reaches its Redis: the backend, or a server a Given step chose."""
    return redis_backend.recipe()


@pytest.fixture
def redis_client(
    redis_backend: Backend, client_recipe: ClientRecipe, namespace: str
) -> Iterator[RedisClient]:
    """A client of the backend; on a shared server, this scenario's keys are deleted after it."""
    client = client_recipe.sync()
    try:
        yield client
    finally:
        if redis_backend.shared and client_recipe.url == redis_backend.url:
            for key in scenario_keys(client, namespace):
                client.delete(key)
        client.close()


def scenario_keys(client: RedisClient, namespace: str) -> list[bytes]:
    """Return every key of ``namespace`` (on every node of a cluster), each once.

    SCAN may return a key more than once (when the server rehashes while it
    iterates, as it does under parallel writers), so the keys are deduplicated.
    """
    patterns = KeyLayout(namespace).patterns()
    return sorted({key for p in patterns for key in client.scan_iter(match=p, count=500)})


def shift_expiry(client: RedisClient, namespace: str, elapsed: timedelta) -> None:
    """Make the server's expiry agree with an application clock moved by ``elapsed``.

    freezegun cannot move a real server's clock: each key's remaining time to
    live is shortened by ``elapsed`` instead, and a key with nothing left is
    expired (deleted). With ``elapsed`` zero it only expires the keys whose
    time is up exactly, which fakeredis (reading the frozen clock) keeps for
    one more millisecond.
    """
    elapsed_ms = round(elapsed.total_seconds() * 1000)
    for key in scenario_keys(client, namespace):
        remaining = int(client.pttl(key))
        if remaining < 0:  # -1: no expiry, -2: already gone
            continue
        if remaining - elapsed_ms <= 0:
            client.delete(key)
        else:
            client.pexpire(key, remaining - elapsed_ms)
