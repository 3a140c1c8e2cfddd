"""Which API the scenarios drive: the sync services, the async ones, or each scenario on both.

``--memory-api sync|async|both`` (default ``both``). With ``async``, the steps
still read as plain sentences: they call the async services through
:class:`Blocking`, which runs each call to completion on the scenario's own
event loop. No scenario is written twice; the API in use is printed in the
pytest header, named in test ids (``[sync]``, ``[async]``) and in the living
documentation.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any, TypeVar, cast

import fakeredis
import pytest

from chat_memory import (
    AsyncChatService,
    AsyncMemoryService,
    ChatModel,
    ChatService,
    MemoryService,
    TokenCounter,
)
from chat_memory.testing import AsyncFakeLLM, FakeLLM

from .adapter import AdaptedMemory, Memory, MemoryConfig, describe_factory, largest_message_of
from .backends import AsyncRedisClient, ClientRecipe, RedisClient
from .plugin import adapter_spec, memory_factory

APIS = ("sync", "async")
T = TypeVar("T")
API_KEY = "memory-api"


class Blocking:
    """An async service seen through blocking calls, run on one event loop.

    Coroutine methods return their result; async generators become plain
    iterators (closing one closes the async generator); everything else is
    passed through. ``target`` is the async service itself.
    """

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        """Wrap ``target``; its coroutines run on ``loop``."""
        self.target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        """Return the attribute, made blocking if it is a coroutine or async generator method."""
        value = getattr(self.target, name)
        if inspect.iscoroutinefunction(value):
            return lambda *args, **kwargs: self._loop.run_until_complete(value(*args, **kwargs))
        if inspect.isasyncgenfunction(value):
            return lambda *args, **kwargs: self._iterate(value(*args, **kwargs))
        if name == "for_user":  # a user's view of the memory is an async service too
            return lambda *args, **kwargs: Blocking(value(*args, **kwargs), self._loop)
        return value

    def _iterate(self, stream: AsyncIterator[Any]) -> Iterator[Any]:
        try:
            while True:
                try:
                    yield self._loop.run_until_complete(anext(stream))
                except StopAsyncIteration:
                    return
        finally:
            self._loop.run_until_complete(stream.aclose())  # type: ignore[attr-defined]


class Services:
    """Builds the scenario's memory, chat and model for the API under test."""

    def __init__(
        self,
        api: str,
        recipe: ClientRecipe,
        client: RedisClient,
        factory: Callable[[MemoryConfig], Memory] | None = None,
        *,
        expected_api: str | None = None,
        factory_spec: str = "",
    ) -> None:
        """Build services over ``client`` (sync) or new async clients of ``recipe``.

        With ``factory``, the memory under test is the one it builds (see
        :mod:`chat_memory_suite.adapter`), not chat-memory's own service.
        """
        self.api = api
        self._recipe = recipe
        self._client = client
        self._factory = factory
        self.expected_api = expected_api
        """With an adapter, the API its memory must have (``--memory-api``), if one was given."""
        self.factory_spec = factory_spec
        """With an adapter, its ``module:factory``, for messages."""
        self._adapted: list[AdaptedMemory] = []
        self._sync_clients: list[RedisClient] = []
        self._async_clients: list[AsyncRedisClient] = []
        self.loop = asyncio.new_event_loop() if api == "async" else None
        self._side_loop: asyncio.AbstractEventLoop | None = None  # async calls of the sync API

    def memory(self, *, decode_responses: bool = False, **settings: Any) -> MemoryService:
        """Return a memory service (or its blocking view), with these settings."""
        if self._factory is not None:
            return self._adapter_memory(self._factory, **settings)
        if self.loop is None:
            client = self._client
            if decode_responses:
                client = self._recipe.sync(decode_responses=True)
                self._sync_clients.append(client)
            return MemoryService(client, **settings)
        async_client = self._recipe.asyncio(decode_responses=decode_responses)
        self._async_clients.append(async_client)
        return cast(
            MemoryService, Blocking(AsyncMemoryService(async_client, **settings), self.loop)
        )

    @property
    def adapts(self) -> bool:
        """Whether the memory under test is an adapter's (``--memory-adapter``), not ours."""
        return self._factory is not None

    def memory_on(self, client: RedisClient, **settings: Any) -> MemoryService:
        """A sync memory with these settings over a client of its own (one writer of many)."""
        if self._factory is not None:
            return self._adapter_memory(self._factory, client=client, **settings)
        return MemoryService(client, **settings)

    def _adapter_memory(
        self,
        factory: Callable[[MemoryConfig], Memory],
        *,
        namespace: str,
        client: RedisClient | None = None,
        max_history: int | None = None,
        ttl: timedelta | float | None = None,
        **others: Any,
    ) -> MemoryService:
        # Steps that set any other setting need the client_settings capability.
        assert not others, f"settings {sorted(others)} reached an adapter"
        config = MemoryConfig(
            redis=client or self._client,
            key_prefix=f"{namespace}:session:",
            max_history=max_history,
            ttl=ttl if ttl is None or isinstance(ttl, timedelta) else timedelta(seconds=ttl),
            redis_url=self._recipe.url,
            async_redis=self._recipe.asyncio,
        )
        built = factory(config)
        check_adapter_api(built, self.expected_api, self.factory_spec)
        adapted = AdaptedMemory(built, config, largest_message_of(factory))
        self._adapted.append(adapted)
        return cast(MemoryService, adapted)

    def chat(
        self,
        memory: MemoryService,
        model: ChatModel,
        *,
        system_prompt: str | None,
        max_prompt_tokens: int | None,
        token_counter: TokenCounter | None,
    ) -> ChatService:
        """Return a chat service (or its blocking view) over ``memory`` and ``model``."""
        settings: dict[str, Any] = {
            "system_prompt": system_prompt,
            "max_prompt_tokens": max_prompt_tokens,
            "token_counter": token_counter,
        }
        if self.loop is None:
            return ChatService(memory, model, **settings)
        target = cast(Blocking, memory).target
        service = AsyncChatService(target, model, **settings)  # type: ignore[arg-type]
        return cast(ChatService, Blocking(service, self.loop))

    def fake_model(self) -> FakeLLM:
        """Return the recording fake model of this API (it echoes when nothing is scripted)."""
        if self.loop is None:
            return FakeLLM(echo=True)
        return cast(FakeLLM, AsyncFakeLLM(echo=True))

    def async_memory(self, memory: MemoryService, **settings: Any) -> AsyncMemoryService:
        """The async service of the scenario's memory, for what only takes one (either API).

        With the async API it is the memory itself; with the sync one, a new
        ``AsyncMemoryService`` with these settings over the same server.
        """
        if self.loop is not None:
            return cast(AsyncMemoryService, cast(Blocking, memory).target)
        client = self._recipe.asyncio()
        self._async_clients.append(client)
        return AsyncMemoryService(client, **settings)

    def wait(self, awaitable: Awaitable[T]) -> T:
        """Run a coroutine of :meth:`async_memory`'s service to completion (either API)."""
        if self.loop is not None:
            return self.loop.run_until_complete(awaitable)
        if self._side_loop is None:
            self._side_loop = asyncio.new_event_loop()
        return self._side_loop.run_until_complete(awaitable)

    def close(self) -> None:
        """Close every client this scenario opened, and its loop, whatever fails first."""
        try:
            for client in self._sync_clients:
                client.close()
            for adapted in self._adapted:
                adapted.close()
            loop = self.loop or self._side_loop
            if loop is not None:
                for async_client in self._async_clients:
                    loop.run_until_complete(async_client.aclose())
        finally:
            # A loop left open is garbage-collected later, in another scenario, as an
            # unclosed-socket warning there (its self-pipe).
            for open_loop in (self.loop, self._side_loop):
                if open_loop is not None:
                    open_loop.close()


def adapter_api(config: pytest.Config) -> str | None:
    """The API a --memory-adapter memory must have (``--memory-api sync|async``), or None.

    An adapter's memory is called as it is written: its methods sync, or ``async def``
    and awaited on an event loop of the suite's. ``--memory-api`` then says which the
    team means to test, and a memory of the other kind stops the run.
    """
    chosen = config.getoption("--memory-api")
    if memory_factory(config) is None or chosen is None:
        return None
    if chosen == "both":
        raise pytest.UsageError(
            "--memory-api both runs chat-memory's own sync and async services; a"
            " --memory-adapter memory is one or the other: give --memory-api sync or async,"
            " or name the factory of each in a run of its own"
        )
    return str(chosen)


def selected_apis(config: pytest.Config) -> tuple[str, ...]:
    """The APIs this run drives."""
    if memory_factory(config) is not None:
        return (adapter_api(config) or "sync",)  # the adapter's memory, called as it is
    chosen = str(config.getoption("--memory-api") or "both")
    return APIS if chosen == "both" else (chosen,)


def check_adapter_api(memory: object, expected: str | None, spec: str) -> None:
    """Stop the run, with a clear reason, when the adapter's memory lacks the API asked for."""
    if expected is None:
        return
    add = getattr(memory, "add_messages", None)
    found = "async" if inspect.iscoroutinefunction(add) else "sync"
    if found != expected:
        pytest.exit(
            f"--memory-api {expected}: the memory {spec} builds is {found} (its add_messages is"
            f" {'an async def' if found == 'async' else 'a plain def'}); give the factory of its"
            f" {expected} memory, or --memory-api {found}",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Refuse, once and before collecting, an API choice that cannot apply to the memory."""
    selected_apis(config)
    expected = adapter_api(config)
    factory = memory_factory(config)
    if expected is None or factory is None:
        return
    # Build one memory over an in-process server to see its API before any scenario runs;
    # a factory that cannot be built so (it needs a real server) is checked by the first
    # scenario instead.
    server = fakeredis.FakeServer()
    probe = MemoryConfig(
        redis=fakeredis.FakeRedis(server=server),
        key_prefix="chat-memory-probe:",
        async_redis=lambda: fakeredis.FakeAsyncRedis(server=server),
    )
    try:
        memory = factory(probe)
    except Exception:  # whatever stops it here, the first scenario will report
        return
    with contextlib.suppress(Exception):  # its close is the scenarios' business, not this check's
        AdaptedMemory(memory, probe).close()
    probe.redis.close()
    check_adapter_api(memory, expected, adapter_spec(config))


def pytest_report_header(config: pytest.Config) -> str:
    """Name the API in the pytest header."""
    factory = memory_factory(config)
    if factory is not None:
        return f"memory under test: {describe_factory(factory)}"
    apis = selected_apis(config)
    if len(apis) == 2:
        return "chat-memory API: sync and async (each scenario runs on both)"
    return f"chat-memory API: {apis[0]}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every scenario once per selected API."""
    if "memory_api" in metafunc.fixturenames and metafunc.definition.path.suffix == ".feature":
        metafunc.parametrize("memory_api", selected_apis(metafunc.config), indirect=True)


@pytest.fixture(autouse=True)
def memory_api(request: pytest.FixtureRequest) -> str:
    """The API this scenario drives: "sync" or "async"."""
    api = str(getattr(request, "param", "sync"))
    request.node.user_properties.append((API_KEY, api))
    return api


@pytest.fixture
def services(
    request: pytest.FixtureRequest,
    memory_api: str,
    client_recipe: ClientRecipe,
    redis_client: RedisClient,
) -> Iterator[Services]:
    """The scenario's service builder for its API; closes what it opened."""
    factory = memory_factory(request.config)
    built = Services(
        memory_api,
        client_recipe,
        redis_client,
        factory,
        expected_api=adapter_api(request.config),
        factory_spec=adapter_spec(request.config),
    )
    yield built
    built.close()
