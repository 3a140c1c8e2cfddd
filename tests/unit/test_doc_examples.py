"""Every Python example of the README and the documentation site runs, as written.

Each ```python block is found on its page and handed to the runner registered
for it below, by its page and first line: a block without a runner fails
``test_every_example_has_a_runner``, so a new snippet cannot join the site
unrun. A runner executes the block's own text. Where the block names a service
this machine does not have (``redis.internal``, ``sentinel-1``, an OpenAI API),
the runner points the very classes the block uses at a throwaway one of the same
kind on loopback: a redis-server (with TLS and an ACL user where the block asks
for them), a Sentinel group of Debian's ``redis-sentinel``, the chat-completions
stub of ``tests/llm_stub.py``. Then it checks that the block did what its page
says.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import os
import re
import shutil
import types
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
import redis.asyncio
import redis.sentinel

from chat_memory import AsyncMemoryService, MemoryService, Message, NotReplicatedError, acl_rules
from chat_memory_suite.servers import HOST, SentinelGroup, ThrowawayServer, throwaway_tls_server
from tests.llm_stub import running_stub

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Example:
    """One ```python block: its page, its first line (and which one of that line) and its text."""

    page: str
    first_line: str
    code: str
    occurrence: int = 1

    @property
    def key(self) -> str:
        """How the runners below name it: ``page: first line``, ``(2)`` on for a repeat."""
        again = f" ({self.occurrence})" if self.occurrence > 1 else ""
        return f"{self.page}: {self.first_line}{again}"

    def run(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """Execute the block in ``namespace``, and return it."""
        exec(compile(self.code, self.key, "exec", dont_inherit=True), namespace)
        return namespace

    async def arun(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """Execute a block with a top-level ``await`` in ``namespace``, and return it."""
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        compiled = compile(self.code, self.key, "exec", flags=flags, dont_inherit=True)
        result = eval(compiled, namespace)
        if asyncio.iscoroutine(result):
            await result
        return namespace


def examples() -> list[Example]:
    """Every ```python block of the README and the site (the index's copy of the README aside)."""
    found = []
    for page in PAGES:
        if page.name == "index-readme.md":
            continue
        text = page.read_text(encoding="utf-8")
        seen: dict[str, int] = {}
        for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL):
            first = block.splitlines()[0]
            seen[first] = seen.get(first, 0) + 1
            found.append(Example(page.name, first, block, seen[first]))
    return found


Runner = Callable[[Example, pytest.MonkeyPatch, Path], Awaitable[None] | None]
RUNNERS: dict[str, Runner] = {}


def runs(key: str) -> Callable[[Runner], Runner]:
    """Register the runner of the block ``key`` names (its page, then its first line)."""

    def register(runner: Runner) -> Runner:
        RUNNERS[key] = runner
        return runner

    return register


@pytest.fixture(autouse=True)
def _no_agents_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


def test_every_example_has_a_runner() -> None:
    assert sorted(e.key for e in examples()) == sorted(RUNNERS)


@pytest.mark.parametrize("example", examples(), ids=lambda e: e.key)
async def test_the_example_runs(
    example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran = RUNNERS[example.key](example, monkeypatch, tmp_path)
    if ran is not None:
        await ran


# --- what the runners share ---------------------------------------------------------------


def _require(binary: str) -> None:
    """Skip where ``binary`` is not installed; fail instead under CHAT_MEMORY_REQUIRE_REDIS (CI)."""
    if shutil.which(binary) is None:
        reason = f"{binary} is not installed (Debian: apt-get install {binary})"
        if os.environ.get("CHAT_MEMORY_REQUIRE_REDIS"):
            pytest.fail(f"CHAT_MEMORY_REQUIRE_REDIS is set but {reason}")
        pytest.skip(reason)


def _fake_redis(monkeypatch: pytest.MonkeyPatch) -> fakeredis.FakeServer:
    """Make ``redis.Redis()`` (any arguments) a client of one in-memory server."""
    server = fakeredis.FakeServer()
    monkeypatch.setattr(redis, "Redis", lambda *a, **k: fakeredis.FakeRedis(server=server))
    return server


def _memory() -> MemoryService:
    return MemoryService(fakeredis.FakeRedis(server=fakeredis.FakeServer()))


def _shows_what_it_prints(example: Example, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the block on fakeredis; its last expression is what its trailing comments show."""
    _fake_redis(monkeypatch)
    lines = example.code.splitlines()
    *code, last = [line for line in lines if line and not line.startswith("#")]
    namespace: dict[str, Any] = {}
    exec("\n".join(code), namespace)
    shown = " ".join(line.lstrip("# ") for line in lines if line.startswith("# "))
    assert repr(eval(last, namespace)) == shown


# --- the runners, page by page ------------------------------------------------------------


@runs("README.md: import redis")
@runs("getting-started.md: import redis")
def _first_memory(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _shows_what_it_prints(example, monkeypatch)


def _through_the_sentinels(
    example: Example, monkeypatch: pytest.MonkeyPatch, group: SentinelGroup
) -> None:
    """The block's Sentinel client, pointed at the throwaway group, stores with durability."""
    real = redis.sentinel.Sentinel

    class Sentinel(real):  # type: ignore[misc, valid-type]
        def __init__(self, sentinels: Any, **options: Any) -> None:
            assert [port for _, port in sentinels] == [26379] * len(sentinels)
            super().__init__(group.sentinels, **options)

    monkeypatch.setattr(redis.sentinel, "Sentinel", Sentinel)
    memory = example.run({})["memory"]
    session = example.page  # each block its own session on the shared group
    messages = [Message("user", "Book a table for two.")]
    for _ in range(3):  # each write WAITs for a replica, within the page's 0.5 s
        try:
            memory.add_messages(session, messages)
            break
        except NotReplicatedError as short:  # a busy machine: the page's retry, same ids
            messages = short.messages
    else:
        pytest.fail("no replica confirmed the write in three attempts")
    assert memory.get_context(session) == [{"role": "user", "content": "Book a table for two."}]


_SENTINELS: list[SentinelGroup] = []


@pytest.fixture(scope="module", autouse=True)
def _stop_the_sentinel_group() -> Iterator[None]:
    yield
    while _SENTINELS:
        _SENTINELS.pop().stop()


def _sentinel_group(workdir: Path) -> SentinelGroup:
    """One throwaway primary, a replica and a Debian Sentinel, shared by this module's blocks."""
    _require("redis-server")
    _require("redis-sentinel")
    if not _SENTINELS:
        _SENTINELS.append(SentinelGroup(workdir, replicas=1, sentinels=1).start())
    return _SENTINELS[0]


@runs("README.md: from redis.backoff import ExponentialBackoff")
@runs("operating.md: from redis.backoff import ExponentialBackoff")
def _sentinel(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _through_the_sentinels(example, monkeypatch, _sentinel_group(tmp_path / "sentinel"))


@runs("application.md: from chat_memory import ChatService")
def _chat(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from chat_memory.testing import FakeLLM

    memory, llm = _memory(), FakeLLM(["Try Lisbon in June."])
    namespace = example.run({"memory": memory, "llm": llm})
    assert namespace["answer"] == "Try Lisbon in June."
    assert llm.last_prompt[0] == {"role": "system", "content": "You are a helpful travel agent."}
    assert [m["role"] for m in memory.get_context("alice")] == ["user", "assistant"]


@runs("application.md: from openai import OpenAI")
def _openai(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import openai

    real = openai.OpenAI
    with running_stub() as stub:

        def client(base_url: Any, api_key: Any) -> openai.OpenAI:
            assert (base_url, api_key) == (Ellipsis, Ellipsis)  # the page's placeholders
            return real(base_url=stub.base_url, api_key="not-needed")

        monkeypatch.setattr(openai, "OpenAI", client)
        llm = example.run({})["llm"]
        from chat_memory import ChatService

        chat = ChatService(_memory(), llm)
        chat.reply("alice", "My name is Ada.")
        assert chat.reply("alice", "What is my name?") == "Your name is Ada."


@runs("application.md: class MyModel:")
def _own_model(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from chat_memory import ChatService

    heard: list[list[dict[str, Any]]] = []

    def chat(messages: list[dict[str, Any]]) -> Any:
        heard.append(messages)
        return types.SimpleNamespace(text="Noted.")

    namespace = example.run({"Any": Any, "my_client": types.SimpleNamespace(chat=chat)})
    service = ChatService(_memory(), namespace["MyModel"]())
    assert service.reply("alice", "My name is Ada.") == "Noted."
    assert heard == [[{"role": "user", "content": "My name is Ada."}]]


@runs("application.md: import redis.asyncio")
def _fastapi(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import openai
    from fastapi.testclient import TestClient

    _require("redis-server")
    server = ThrowawayServer(tmp_path / "redis").start()
    real_pool, real_openai = redis.asyncio.BlockingConnectionPool.from_url, openai.AsyncOpenAI
    try:
        with running_stub() as stub:

            def pool(url: str, **options: Any) -> redis.asyncio.BlockingConnectionPool:
                assert url == "redis://redis.internal:6379/0"
                return real_pool(f"redis://{HOST}:{server.port}/0", **options)

            monkeypatch.setattr(redis.asyncio.BlockingConnectionPool, "from_url", pool)
            monkeypatch.setattr(
                openai, "AsyncOpenAI", lambda: real_openai(base_url=stub.base_url, api_key="-")
            )
            namespace = example.run({})
            with TestClient(namespace["app"]) as client:
                url = "/sessions/alice/messages"
                assert client.post(url, params={"text": "My name is Ada."}).json() == {
                    "answer": "Noted."
                }
                answer = client.post(url, params={"text": "What is my name?"}).json()
                assert answer == {"answer": "Your name is Ada."}
                assert client.portal is not None
                client.portal.call(namespace["pool"].disconnect)  # on the app's own loop
    finally:
        server.stop()


@runs("application.md: from chat_memory.langchain import RunnableWithChatMemory")
def _langchain(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    server = fakeredis.FakeServer()
    memory = MemoryService(fakeredis.FakeRedis(server=server))
    namespace = example.run(
        {
            "prompt": ChatPromptTemplate.from_messages(
                [MessagesPlaceholder("history"), ("human", "{question}")]
            ),
            "model": FakeListChatModel(responses=["Hello! How can I help?"]),
            "memory": memory,
            "async_memory": AsyncMemoryService(fakeredis.FakeAsyncRedis(server=server)),
        }
    )
    assert namespace["answer"].content == "Hello! How can I help?"
    assert memory.get_context("alice") == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
    ]


@runs("application.md: from chat_memory.openai_agents import ChatMemorySession")
async def _agents(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agents import Agent, Runner

    from tests.agents_model import ScriptedModel

    async_memory = AsyncMemoryService(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
    agent = Agent(name="assistant", model=ScriptedModel("Hello, Ada."))
    namespace = await example.arun({"Runner": Runner, "agent": agent, "async_memory": async_memory})
    assert namespace["result"].final_output == "Hello, Ada."
    stored = await async_memory.get_context("alice")
    assert [m["role"] for m in stored] == ["user", "assistant"]


@runs('application.md: ada = memory.for_user("ada")')
def _users(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    memory = _memory()
    printed: list[str] = []
    example.run({"memory": memory, "print": lambda *a: printed.append(" ".join(map(str, a)))})
    assert printed[0].startswith("paris Paris trip 1 ")
    assert printed[1] == "['paris'] 4"  # the session's history, seen and meta, and the index
    assert memory.get_context("paris-copy") == [{"role": "user", "content": "Plan my Paris trip"}]


@runs("kit.md: # mymemory.py")
def _kit_adapter(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from chat_memory import Message
    from chat_memory_suite.adapter import MemoryConfig

    path = tmp_path / "mymemory.py"
    path.write_text(example.code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mymemory", path)
    assert spec is not None
    assert spec.loader is not None
    mymemory = importlib.util.module_from_spec(spec)  # not in sys.modules: nothing left behind
    spec.loader.exec_module(mymemory)

    config = MemoryConfig(redis=fakeredis.FakeRedis(), key_prefix="kit:", max_history=2)
    memory = mymemory.make_memory(config)
    memory.add_messages("alice", [Message("user", "one"), Message("user", "two")])
    memory.add_messages("alice", [Message("user", "three")])
    assert [m.content for m in memory.get_messages("alice")] == ["two", "three"]
    memory.clear("alice")
    assert memory.get_messages("alice") == []


def _point_redis_at(
    monkeypatch: pytest.MonkeyPatch, server: ThrowawayServer, **rewrites: Any
) -> None:
    """Make ``redis.Redis`` reach ``server``, whatever host and port a block names."""
    real = redis.Redis

    def client(**options: Any) -> redis.Redis:
        assert options.pop("host") == "redis.internal"
        options.pop("port", None)
        return real(**{**options, "host": HOST, "port": server.port, **rewrites})

    monkeypatch.setattr(redis, "Redis", client)


@runs("operating.md: import redis")
def _timeouts(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _require("redis-server")
    server = ThrowawayServer(tmp_path / "redis").start()
    try:
        _point_redis_at(monkeypatch, server)
        client = example.run({})["client"]
        memory = MemoryService(client)
        memory.add_message("alice", "user", "hello")
        assert memory.get_context("alice") == [{"role": "user", "content": "hello"}]
    finally:
        server.stop()


@runs("operating.md: import redis (2)")
def _tls_and_acl(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _require("redis-server")
    import trustme

    server = throwaway_tls_server(tmp_path, trustme.CA())
    if isinstance(server, str):
        pytest.skip(f"this redis-server cannot serve TLS: {server}")
    server.start()
    ca_file = tmp_path / "tls" / "ca.crt"
    try:
        # The page's user, with the page's password and the rules the library names.
        admin = server.admin()
        admin.execute_command("ACL", "SETUSER", "chat-memory", "on", *acl_rules())  # type: ignore[no-untyped-call]
        admin.execute_command("ACL", "SETUSER", "chat-memory", ">...")  # type: ignore[no-untyped-call]
        rewrites = {"ssl_ca_certs": str(ca_file), "host": "localhost"}  # the cert's name
        _point_redis_at(monkeypatch, server, **rewrites)
        client = example.run({})["client"]
        assert client.connection_pool.connection_kwargs["ssl_check_hostname"] is True
        memory = MemoryService(client)
        memory.add_message("alice", "user", "hello")
        assert memory.get_context("alice") == [{"role": "user", "content": "hello"}]
        with pytest.raises(redis.exceptions.NoPermissionError):  # the page's user, no other
            client.flushall()
    finally:
        server.stop()


@runs('writing-scenarios.md: @then(parsers.parse("the session expires in {seconds:d} seconds"))')
def _own_step(example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_bdd import parsers

    # pytest-bdd's real @then would register the step for every test of this process;
    # this one keeps what the block hands it, to check it as pytest-bdd would use it.
    registered: list[tuple[Any, Callable[..., None]]] = []

    def then(parser: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
        def register(step: Callable[..., None]) -> Callable[..., None]:
            registered.append((parser, step))
            return step

        return register

    namespace = {"then": then, "parsers": parsers, "pytest": pytest, "MemoryService": MemoryService}
    example.run(namespace)
    [(parser, step)] = registered
    sentence = (step.__doc__ or "").split("Then ", 1)[1].strip()
    assert parser.is_matching(sentence)
    memory = MemoryService(fakeredis.FakeRedis(), ttl=1800)
    memory.add_message("alice", "user", "hello")
    step(memory, "alice", **parser.parse_arguments(sentence))
    with pytest.raises(AssertionError):
        step(memory, "alice", 60)
