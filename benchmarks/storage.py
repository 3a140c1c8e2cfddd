"""What a session costs Redis (issue 24): server time per append and bytes per session.

Both measured on the same loopback redis-server as the other tables, with
the messages of a chat: a user's (~100 characters) and the assistant's answer
(~500 characters) in turn, a history limit of 20 and a TTL of 30 minutes.

- Server time per append: what redis-server spent executing the writes, from
  ``INFO commandstats``, reset before each implementation's batch in every
  round: a script's ``EVALSHA`` (which includes the commands it calls), a
  transaction's ``MULTI`` plus ``EXEC``, otherwise every command sent. The
  median of interleaved rounds, as a ratio to the minimal Lua script (RPUSH,
  LTRIM, PEXPIRE): the plainest thing that makes the append atomic.
- Bytes per session: ``MEMORY USAGE`` (every sample) of every key a session
  has after 20, 100, 1,000 and 5,000 messages, as a ratio to a raw capped list
  of the same ``{"role", "content"}`` JSON.
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import redis

from chat_memory import MemoryService, Role
from chat_memory._message import new_message_id

from .peers import writers

Write = Callable[[str, int], object]
"""Store message ``n`` of the chat in a session."""

HISTORY = 20
TTL_SECONDS = 1800
DEPTHS = (20, 100, 1000, 5000)
MINIMAL_SCRIPT = (
    "redis.call('RPUSH', KEYS[1], ARGV[1])"
    " redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)"
    " redis.call('PEXPIRE', KEYS[1], ARGV[3]) return 1"
)
MINIMAL = "minimal Lua script (RPUSH, LTRIM, PEXPIRE)"
FLOOR_SCRIPT = (
    "local found = redis.call('HMGET', KEYS[2], '', ARGV[1])"
    " if found[2] then return 0 end"
    " local length = redis.call('RPUSH', KEYS[1], ARGV[3])"
    " local limit = tonumber(ARGV[5])"
    " local dropped = length == limit + 1 and {redis.call('LPOP', KEYS[1])}"
    " or length > limit and redis.call('LPOP', KEYS[1], length - limit) or {}"
    " redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])"
    " for _, entry in ipairs(dropped) do"
    '   redis.call(\'HDEL\', KEYS[2], string.match(entry, \'^{"v":1,"id":"([^"]*)"\'))'
    " end"
    " for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[4]) end return 1"
)
FLOOR = "chat-memory's commands alone (no checks, no logic)"
"""The commands of chat-memory's usual append (read the id, push, pop the oldest,
remember the id, forget the dropped one, the TTLs of the history, the hash of ids and the
metadata key), with nothing around them: what this layout costs the server whatever the
script's code."""
SERVER_ROUNDS: Final = 3
"""The server-time table takes this many times the run's rounds, and ``SERVER_APPENDS``
times its operations a round: what a script costs the server moves with the machine's
other work, and a few hundred appends leave its ratio to chance (5 rounds of 400 read
chat-memory at 1.67× to 2.69× the minimal script in four runs on one shared machine;
5 rounds of 2,000 at 1.89× to 2.03×). The server's time is cheap to measure for longer."""
SERVER_APPENDS: Final = 5

CHAT_MEMORY = "chat-memory add_message"
RAW_LIST = "raw capped list (RPUSH, LTRIM)"


def message(n: int) -> tuple[Role, str]:
    """Return message n of the chat: the user's ~100 characters, then the assistant's ~500."""
    if n % 2 == 0:
        return "user", f"Question {n}: " + "what should I see in Paris? " * 3
    return "assistant", f"Answer {n}: " + "The Louvre, the Orsay, the Marais and a walk. " * 11


def _json(n: int) -> str:
    role, content = message(n)
    return json.dumps({"role": role, "content": content})


@dataclass
class Costs:
    """The two tables' rows, and what the targets read from them."""

    server: list[list[str]]
    memory: list[list[str]]
    server_ratio: float
    memory_ratio: float
    per_id: float


def _contenders(client: redis.Redis, url: str) -> dict[str, Write]:
    minimal = client.register_script(MINIMAL_SCRIPT)
    floor_script = client.register_script(FLOOR_SCRIPT)
    memory = MemoryService(client, max_history=HISTORY, ttl=TTL_SECONDS, namespace="cost")

    def multi(session: str, n: int) -> object:
        pipe = client.pipeline(transaction=True)
        pipe.rpush(session, _json(n))
        pipe.ltrim(session, -HISTORY, -1)
        pipe.pexpire(session, TTL_SECONDS * 1000)
        return pipe.execute()

    def seed(session: str, n: int) -> object:
        client.rpush(session, _json(n))
        return client.ltrim(session, -HISTORY, -1)

    def ours(session: str, n: int) -> object:
        role, content = message(n)
        return memory.add_message(session, role, content)

    ids = itertools.count()

    def floor(session: str, n: int) -> object:
        history, _, seen, meta = memory.keys.all(session)
        role, content = message(n)
        message_id = new_message_id()  # a new message each time, as add_message makes
        stamp = 1796205600.123  # in whole milliseconds, as add_message stamps
        entry = json.dumps(
            {"v": 1, "id": message_id, "role": role, "content": content, "created_at": stamp},
            separators=(",", ":"),
        )
        return floor_script(
            keys=[history, seen, meta],
            args=[message_id, f"{next(ids):032x} {stamp}", entry, TTL_SECONDS * 1000, HISTORY],
        )

    return {
        "raw RPUSH": lambda session, n: client.rpush(session, _json(n)),
        "hand-written MULTI (RPUSH, LTRIM, PEXPIRE)": multi,
        MINIMAL: lambda session, n: minimal(
            keys=[session], args=[_json(n), HISTORY, TTL_SECONDS * 1000]
        ),
        "seed article (RPUSH; LTRIM)": seed,
        FLOOR: floor,
        CHAT_MEMORY: ours,
        **writers(url, message),
    }


def _server_usec(stats: dict[str, dict[str, float]]) -> float:
    """Return what the server spent on the batch's own commands, nested ones counted once."""
    spent = {name.removeprefix("cmdstat_"): float(v["usec"]) for name, v in stats.items()}
    spent = {name: usec for name, usec in spent.items() if name not in ("config|resetstat", "info")}
    if "evalsha" in spent or "eval" in spent:
        return spent.get("evalsha", 0.0) + spent.get("eval", 0.0)
    if "exec" in spent:
        return spent.get("multi", 0.0) + spent["exec"]
    return sum(spent.values())


def server_time(client: redis.Redis, url: str, rounds: int, count: int) -> list[list[str]]:
    """Server µs per append of each implementation: the median of interleaved rounds."""
    contenders = _contenders(client, url)
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for round_number in range(rounds):
        for name, write in contenders.items():
            sessions = [f"time:{round_number}:{name}:{s}" for s in range(10)]
            for n in range(HISTORY * len(sessions)):  # every session full: each append trims
                write(sessions[n % 10], n)
            client.config_resetstat()
            for n in range(count):
                write(sessions[n % 10], n)
            samples[name].append(_server_usec(client.info("commandstats")) / count)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return [
        [name, f"{usec:.1f}", f"{usec / medians[MINIMAL]:.2f}"] for name, usec in medians.items()
    ]


def _bytes(client: redis.Redis) -> int:
    return sum(int(client.memory_usage(key, samples=0) or 0) for key in client.scan_iter())


def bytes_per_session(client: redis.Redis, url: str) -> tuple[list[list[str]], float]:
    """Bytes of one session at each depth, per implementation; and the bytes per remembered id."""
    longer = MemoryService(
        client, max_history=HISTORY, ttl=TTL_SECONDS, namespace="ids", idempotency_window=1000
    )

    def raw(session: str, n: int) -> object:
        client.rpush(session, _json(n))
        return client.ltrim(session, -HISTORY, -1)

    def remembering(session: str, n: int) -> object:
        role, content = message(n)
        return longer.add_message(session, role, content)

    contenders = {
        RAW_LIST: raw,
        **{
            name: write
            for name, write in _contenders(client, url).items()
            if name == CHAT_MEMORY or name not in _FIXED
        },
        "chat-memory, idempotency_window=1000 (opt-in)": remembering,
    }
    found: dict[str, dict[int, int]] = {name: {} for name in contenders}
    for name, write in contenders.items():
        written = 0
        client.flushdb()
        for depth in DEPTHS:
            while written < depth:
                write("s", written)
                written += 1
            found[name][depth] = _bytes(client)
    client.flushdb()
    rows = []
    for name, sizes in found.items():
        cells = [f"{sizes[d]:,} ({sizes[d] / found[RAW_LIST][d]:.2f}×)" for d in DEPTHS]
        rows.append([name, *cells])
    opt_in = found["chat-memory, idempotency_window=1000 (opt-in)"][1000]
    per_id = (opt_in - found[CHAT_MEMORY][1000]) / (1000 - HISTORY)
    return rows, per_id


_FIXED = (
    "raw RPUSH",
    "hand-written MULTI (RPUSH, LTRIM, PEXPIRE)",
    MINIMAL,
    "seed article (RPUSH; LTRIM)",
    FLOOR,
)
"""The baselines of the server-time table, which keep no session of their own to size."""


def measure(client: redis.Redis, url: str, rounds: int, count: int) -> Costs:
    """Both tables, and the two ratios the targets read: chat-memory's worst depth, its time."""
    server = server_time(client, url, rounds, count)
    memory, per_id = bytes_per_session(client, url)
    ours = next(row for row in server if row[0] == CHAT_MEMORY)
    worst = max(
        float(cell.split("(")[1].rstrip("×)"))
        for cell in next(row for row in memory if row[0] == CHAT_MEMORY)[1:]
    )
    return Costs(server, memory, float(ours[2]), worst, per_id)
