"""Messages per second through the async memory with many sessions at once, against raw Redis.

Run it with ``python -m benchmarks.async_sessions`` (needs ``redis-server``):
it starts a throwaway server, then, in interleaved rounds in one process,
writes the same messages to many sessions from many concurrent tasks twice:

- raw: one ``RPUSH`` of the same JSON per message through ``redis.asyncio``;
- memory: ``AsyncMemoryService.add_message`` (the atomic script: append, trim,
  TTL, idempotency).

It prints the median messages/s of each and their ratio; ``python -m
benchmarks`` runs the same measurement and puts it in ``docs/benchmarks.md``. Ratios, not seconds,
are the result: this machine is shared and noisy, and both sides run
interleaved in the same process against the same server. No test asserts on
these numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis.asyncio

from chat_memory import AsyncMemoryService
from chat_memory_suite.servers import HOST, ThrowawayServer


async def _raw(client: redis.asyncio.Redis, sessions: int, tasks: int, per_task: int) -> float:
    async def task(number: int) -> None:
        for n in range(per_task):
            entry = json.dumps({"role": "user", "content": f"message {number}:{n}"})
            await client.rpush(f"raw:{(number + n) % sessions}", entry)

    started = time.perf_counter()
    await asyncio.gather(*(task(t) for t in range(tasks)))
    return tasks * per_task / (time.perf_counter() - started)


async def _memory(memory: AsyncMemoryService, sessions: int, tasks: int, per_task: int) -> float:
    async def task(number: int) -> None:
        for n in range(per_task):
            await memory.add_message(f"s{(number + n) % sessions}", "user", f"message {number}:{n}")

    started = time.perf_counter()
    await asyncio.gather(*(task(t) for t in range(tasks)))
    return tasks * per_task / (time.perf_counter() - started)


@dataclass(frozen=True)
class Measured:
    """The medians of interleaved rounds: raw RPUSH and the memory, messages/s."""

    tasks: int
    sessions: int
    messages: int
    rounds: int
    raw: float
    memory: float

    def lines(self) -> list[str]:
        """Return the result as the lines the command prints."""
        return [
            f"{self.tasks} tasks, {self.sessions} sessions, {self.messages} messages a round,"
            f" {self.rounds} rounds",
            f"raw RPUSH:            {self.raw:10.0f} messages/s (median)",
            f"AsyncMemoryService:   {self.memory:10.0f} messages/s (median)",
            f"ratio memory / raw:   {self.memory / self.raw:10.2f}",
        ]


async def measure(url: str, sessions: int, tasks: int, per_task: int, rounds: int) -> Measured:
    """Run interleaved rounds against the server at ``url`` (flushing its database)."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(url, max_connections=50)
    client = redis.asyncio.Redis.from_pool(pool)
    memory = AsyncMemoryService(client, max_history=20, ttl=1800)
    raw, ours = [], []
    for _ in range(rounds):
        await client.flushdb()
        raw.append(await _raw(client, sessions, tasks, per_task))
        await client.flushdb()
        ours.append(await _memory(memory, sessions, tasks, per_task))
    await client.flushdb()
    await client.aclose()
    return Measured(
        tasks, sessions, tasks * per_task, rounds, statistics.median(raw), statistics.median(ours)
    )


def main() -> None:
    """Parse the options, start a throwaway server, measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--per-task", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = ThrowawayServer(Path(tmp) / "redis", "--appendonly", "no").start()
        try:
            url = f"redis://{HOST}:{server.port}/0"
            measured = asyncio.run(
                measure(url, options.sessions, options.tasks, options.per_task, options.rounds)
            )
            print("\n".join(measured.lines()))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
