"""The async API: the same surface as the sync one, the same storage, streaming and cancellation."""

import ast
import asyncio
import inspect
from pathlib import Path
from typing import Any

import fakeredis
import pytest

import chat_memory
from chat_memory import (
    AsyncChatService,
    AsyncMemoryService,
    ChatService,
    InvalidContentError,
    InvalidInputError,
    MemoryService,
    Message,
    MessageIdConflictError,
    WrongKeyTypeError,
)
from chat_memory.testing import AsyncFakeLLM, FakeLLM, FakeLLMError

PAIRS = [(MemoryService, AsyncMemoryService), (ChatService, AsyncChatService)]


def public(cls: type) -> dict[str, Any]:
    """Every public member of ``cls``, inherited ones included, as defined (not bound)."""
    names = [name for name in dir(cls) if not name.startswith("_") or name == "__init__"]
    return {name: inspect.getattr_static(cls, name) for name in names}


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=lambda cls: cls.__name__)
def test_every_public_method_has_a_twin_with_the_same_signature(sync: type, async_: type) -> None:
    sync_api, async_api = public(sync), public(async_)
    assert sorted(sync_api) == sorted(async_api)
    for name, member in sync_api.items():
        twin = async_api[name]
        if member is twin:  # written once, in the base both services share
            continue
        if isinstance(member, property):
            assert isinstance(twin, property), name
            continue
        is_stream = name == "stream"
        assert inspect.isasyncgenfunction(twin) if is_stream else inspect.iscoroutinefunction(twin)
        assert not inspect.iscoroutinefunction(member), name
        sync_params = list(inspect.signature(member).parameters.values())
        async_params = list(inspect.signature(twin).parameters.values())
        assert [(p.name, p.kind, p.default) for p in sync_params] == [
            (p.name, p.kind, p.default) for p in async_params
        ], name
        assert (member.__doc__ or "").strip(), f"{sync.__name__}.{name} has no docstring"
        assert (twin.__doc__ or "").strip(), f"{async_.__name__}.{name} has no docstring"


def test_the_fake_models_are_twins() -> None:
    assert sorted(public(FakeLLM)) == sorted(public(AsyncFakeLLM))


def test_the_package_exports_both_apis() -> None:
    for name in ("AsyncMemoryService", "AsyncChatService", "AsyncChatModel"):
        assert name in chat_memory.__all__


def _clients() -> tuple[fakeredis.FakeRedis, fakeredis.FakeAsyncRedis]:
    server = fakeredis.FakeServer()
    return fakeredis.FakeRedis(server=server), fakeredis.FakeAsyncRedis(server=server)


async def test_a_session_written_by_one_api_reads_back_identically_through_the_other() -> None:
    sync_client, async_client = _clients()
    sync, async_ = MemoryService(sync_client, 5), AsyncMemoryService(async_client, 5)
    first = await async_.add_message("s", "user", "我叫张三", message_id="m-1")
    second = sync.add_message("s", "assistant", "你好", message_id="m-2")
    assert sync.get_messages("s") == await async_.get_messages("s") == [first, second]
    again = await async_.add_messages("s", [second])
    assert again.already_stored == [second]
    with pytest.raises(MessageIdConflictError):
        await async_.add_message("s", "user", "other", message_id="m-1")
    assert await async_.ttl("s") is None
    await async_.clear("s")
    assert sync.get_context("s") == []


async def test_the_async_api_refuses_and_reports_like_the_sync_one() -> None:
    sync_client, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    with pytest.raises(InvalidContentError):
        await memory.add_message("s", "user", "half \ud83d")
    sync_client.set(memory.keys.history("s"), "text")
    with pytest.raises(WrongKeyTypeError) as failure:
        await memory.get_context("s")
    assert failure.value.key_type == "string"


async def test_an_async_turn_remembers_both_sides() -> None:
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    model = AsyncFakeLLM(replies=["Hello Ada."])
    chat = AsyncChatService(memory, model, system_prompt="Be brief.")
    assert await chat.reply("s", "I am Ada.") == "Hello Ada."
    assert await memory.get_context("s") == [
        {"role": "user", "content": "I am Ada."},
        {"role": "assistant", "content": "Hello Ada."},
    ]
    assert (await chat.prompt("s", "Who am I?"))[0] == {"role": "system", "content": "Be brief."}


async def test_a_stream_stores_the_whole_reply_once_it_has_ended() -> None:
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    chat = AsyncChatService(memory, AsyncFakeLLM(replies=["Hello there, Ada."]))
    chunks = [chunk async for chunk in chat.stream("s", "Hi")]
    assert chunks == ["Hello ", "there, ", "Ada."]
    assert (await memory.get_context("s"))[-1] == {
        "role": "assistant",
        "content": "Hello there, Ada.",
    }


async def test_a_stream_that_fails_or_is_abandoned_stores_nothing() -> None:
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    model = AsyncFakeLLM(replies=["one two three", "four five six"])
    chat = AsyncChatService(memory, model)
    model.fail_stream_after(2)
    received: list[str] = []

    async def read_all() -> None:
        async for chunk in chat.stream("s", "Hi"):
            received.append(chunk)

    with pytest.raises(FakeLLMError):
        await read_all()
    assert received == ["one ", "two "]
    stream = chat.stream("s", "Hi again")
    assert await anext(stream) == "four "
    await stream.aclose()
    assert await memory.get_context("s") == []


def test_a_sync_stream_follows_the_same_rules() -> None:
    sync_client, _ = _clients()
    memory = MemoryService(sync_client)
    model = FakeLLM(replies=["one two", "three four"])
    chat = ChatService(memory, model)
    assert list(chat.stream("s", "Hi")) == ["one ", "two"]
    stream = chat.stream("s", "Again")
    assert next(stream) == "three "
    stream.close()
    assert [m["content"] for m in memory.get_context("s")] == ["Hi", "one two"]


async def test_many_sessions_written_concurrently_lose_nothing() -> None:
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client, max_history=50)

    async def talk(session: int) -> None:
        for n in range(10):
            await memory.add_message(f"s{session}", "user", f"{session}:{n}")

    await asyncio.gather(*(talk(s) for s in range(100)))
    for s in range(100):
        assert [m["content"] for m in await memory.get_context(f"s{s}")] == [
            f"{s}:{n}" for n in range(10)
        ]


def test_no_unit_test_runs_its_own_event_loop() -> None:
    """Async tests are ``async def`` (pytest-asyncio runs them), never ``asyncio.run``.

    pytest-asyncio leaves an implicitly created loop current after its first
    async test; ``asyncio.run`` on the main thread replaces it and drops it
    unclosed, and its self-pipe surfaces later, in whichever test the garbage
    collector runs, as an unclosed-socket error (CI's oldest-versions run saw it).
    """
    offenders = [
        f"{path.name}:{call.lineno}"
        for path in sorted(Path(__file__).parent.glob("*.py"))
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "asyncio.run"
    ]
    assert offenders == []


async def test_an_async_summarizer_is_awaited_and_its_text_becomes_the_summary() -> None:
    # _async.py _run: "await summary if inspect.isawaitable(summary)" never awaiting refused
    # the coroutine as "not text"; the README allows an awaitable, the suite's are plain.
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    for text in ("one", "two", "three"):
        await memory.add_message("s", "user", text)

    async def summarize(messages: list[Message]) -> str:
        await asyncio.sleep(0)
        return " + ".join(m.content or "" for m in messages)

    result = await memory.compact("s", summarize, keep_last=1)
    assert result.folded == 2
    assert [m.content for m in await memory.get_messages("s")] == ["one + two", "three"]


async def test_the_async_api_refuses_a_model_or_summarizer_it_cannot_call() -> None:
    # As the sync one: a typed error before anything is read or written, not an AssertionError.
    _, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    await memory.add_message("s", "user", "one")
    await memory.add_message("s", "user", "two")
    with pytest.raises(InvalidInputError, match=r"^the model cannot answer"):
        AsyncChatService(memory, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^summarize must be a function"):
        await memory.compact("s", None, keep_last=1)  # type: ignore[arg-type]
    assert [m.content for m in await memory.get_messages("s")] == ["one", "two"]


async def test_an_async_memory_gives_a_server_that_lost_its_scripts_them_again() -> None:
    # As the sync service: the async one sends EVALSHA itself, and loads on NOSCRIPT.
    sync_client, async_client = _clients()
    memory = AsyncMemoryService(async_client)
    await memory.add_message("s", "user", "before")
    sync_client.script_flush()
    await memory.add_message("s", "user", "after")
    assert [m.content for m in await memory.get_messages("s")] == ["before", "after"]
