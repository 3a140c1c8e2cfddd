"""Cancelling a task while it awaits a write leaves the whole write or none of it (real server).

Needs ``redis-server`` installed; CI sets CHAT_MEMORY_REQUIRE_REDIS=1 so that a
missing server fails this test instead of skipping it.
"""

import asyncio
import random

import redis.asyncio

from chat_memory import AsyncMemoryService, Message
from chat_memory_suite.servers import HOST, ThrowawayServer


async def test_a_cancelled_write_is_whole_or_absent_and_its_retry_stores_it_once(
    server: ThrowawayServer,
) -> None:
    client = redis.asyncio.Redis(host=HOST, port=server.port)
    memory = AsyncMemoryService(client, max_history=1000)
    turns = [
        [
            Message("user", f"question {n}", id=f"q-{n}"),
            Message("assistant", f"answer {n}", id=f"a-{n}"),
        ]
        for n in range(300)
    ]
    rng = random.Random(7)

    async def send(turn: list[Message]) -> None:
        await asyncio.sleep(rng.random() / 1000)
        await memory.add_messages("s", turn)

    tasks = [asyncio.create_task(send(turn)) for turn in turns]
    await asyncio.sleep(0.002)
    for task in tasks[::2]:
        task.cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    cancelled = sum(isinstance(o, asyncio.CancelledError) for o in outcomes)
    assert cancelled > 0, "no task was cancelled mid-flight; the test proves nothing"

    stored = [m.id for m in await memory.get_messages("s")]
    for question, answer in turns:
        assert (question.id in stored) == (answer.id in stored), f"half of turn {question.id}"
        if question.id in stored:
            assert stored.index(answer.id) == stored.index(question.id) + 1

    for turn in turns:  # the app retries every turn, with the same ids
        await memory.add_messages("s", turn)
    stored = [m.id for m in await memory.get_messages("s")]
    assert sorted(map(str, stored)) == sorted(str(m.id) for turn in turns for m in turn)
    await client.aclose()
