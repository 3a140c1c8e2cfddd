"""Messages per second through the async memory with many sessions at once, against raw Redis.

Run it with ``python -m benchmarks.async_sessions`` (needs ``redis-server``):
it starts a throwaway server, then, in interleaved rounds in one process,
writes the same messages to many sessions from many concurrent tasks twice:

- raw: one ``RPUSH`` of the same JSON per message through ``redis.asyncio``;
- memory: ``AsyncMemoryService.add_message`` (the atomic script: append, trim,
  TTL, idempotency).

It prints the median messages/s of each and their ratio. Ratios, not seconds,
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
from pathlib import Path

import redis.asyncio

from chat_memory import AsyncMemoryService
from steps._servers import HOST, ThrowawayServer


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


async def measure(port: int, sessions: int, tasks: int, per_task: int, rounds: int) -> None:
    """Run interleaved rounds and print the medians and their ratio."""
    pool = redis.asyncio.BlockingConnectionPool(host=HOST, port=port, max_connections=50)
    client = redis.asyncio.Redis.from_pool(pool)
    memory = AsyncMemoryService(client, max_history=20, ttl=1800)
    raw, ours = [], []
    for _ in range(rounds):
        await client.flushdb()
        raw.append(await _raw(client, sessions, tasks, per_task))
        await client.flushdb()
        ours.append(await _memory(memory, sessions, tasks, per_task))
    await client.aclose()
    raw_median, our_median = statistics.median(raw), statistics.median(ours)
    total = tasks * per_task
    print(f"{tasks} tasks, {sessions} sessions, {total} messages a round, {rounds} rounds")
    print(f"raw RPUSH:            {raw_median:10.0f} messages/s (median)")
    print(f"AsyncMemoryService:   {our_median:10.0f} messages/s (median)")
    print(f"ratio memory / raw:   {our_median / raw_median:10.2f}")


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
            asyncio.run(
                measure(
                    server.port, options.sessions, options.tasks, options.per_task, options.rounds
                )
            )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
