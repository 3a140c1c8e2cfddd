"""Put your own memory under chat-memory's scenarios: a factory, a small protocol, capabilities.

A memory the suite can test has three methods, sync or ``async``::

    add_messages(session_id, messages)  # store these chat_memory.Message, in order
    get_messages(session_id)            # the session's messages, oldest first, as a model gets them
    clear(session_id)                   # forget the session

and, with the ``ttl`` capability, ``ttl(session_id)``: the seconds left before
the session expires, or None; with ``pop_message``, ``pop_message(session_id)``.
A ``close()`` or ``aclose()`` method, if any, is called after the scenario.
The messages are :class:`chat_memory.Message` records; converting them to and
from your own type is the adapter's job.

The factory is what ``--memory-adapter module:name`` names. It takes a
:class:`MemoryConfig` (the scenario's Redis client, a key prefix, the history
limit and the TTL the scenario asked for) and returns the memory. It declares
what the memory can do in a ``capabilities`` attribute; :func:`adapter` sets
it. A scenario that needs a capability the memory lacks is reported as
skipped, "not supported by this memory", with the capability named::

    from chat_memory_suite.adapter import MemoryConfig, adapter

    @adapter(capabilities={"history_limit", "ttl"})
    def make_memory(config: MemoryConfig) -> MyMemory:
        return MyMemory(config.redis, prefix=config.key_prefix,
                        max_messages=config.max_history, ttl=config.ttl)

``chat_memory_suite.adapters`` has working adapters for the stores teams use
today; the smallest, :mod:`chat_memory_suite.adapters.seed`, is about 30 lines.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, TypeVar

from redis import Redis, RedisCluster
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio import RedisCluster as AsyncRedisCluster

from chat_memory import Message, Role, ToolCall
from chat_memory._message import message_for, message_from_chat  # the library's own

CAPABILITIES: dict[str, str] = {
    "history_limit": "keeps only the newest messages of a session, up to a limit",
    "ttl": "forgets a session after a time without new messages, and tells the time left",
    "millisecond_expiry": "expires to the millisecond (a store with whole seconds lacks it)",
    "system_role": "stores messages in the system role (a store with no word for it lacks it)",
    "message_ids": "stores a message under the id the app gave it, once: a retry is no copy",
    "timestamps": "records when each message was stored",
    "tool_calls": "stores the assistant's tool calls and the tool results that answer them",
    "names": "keeps the name of who wrote each message (several people in one chat)",
    "pop_message": "removes the session's newest message on request, so it can be sent again",
    "atomic_turns": "stores a turn of several messages all together or not at all",
    "readable_storage": (
        "keeps each message's text as it is in a Redis value (not compressed or encrypted),"
        " so a scenario can damage it the way a broken writer would"
    ),
    "typed_errors": "refuses bad input with chat-memory's typed errors, storing nothing",
    "token_budget": "gives the newest messages that fit a token budget",
    "storage_contract": "chat-memory's own keys and entries in Redis",
    "server_faults": "chat-memory's ACL rules, resends to a frozen server, failover durability,"
    " a server without scripts",
    "chat": "chat-memory's chat turn (ChatService) over the memory",
    "users": "sessions of a user: listing, metadata, erasure",
    "export": "exporting and importing a session as JSON Lines",
    "compaction": "folding old messages into one summary",
    "agents_session": "chat-memory's OpenAI Agents SDK session over the same memory",
    "langchain_chain": "chat-memory's LangChain chain wrapper over the same memory",
    "client_settings": "chat-memory's own client settings (text replies, key namespace, ...)",
}
"""Every capability a scenario can need, and what it means. The last ones are chat-memory's."""

STORE_CAPABILITIES: tuple[str, ...] = tuple(
    list(CAPABILITIES)[: list(CAPABILITIES).index("typed_errors")]
)
"""What any conversation store may have, from ``history_limit`` to ``readable_storage``; the
rest of :data:`CAPABILITIES` are chat-memory's own features. For each of these, a
scenario fails for a store that declares it but lacks it (``tests/unit/test_kit.py``)."""

F = TypeVar("F", bound=Callable[..., Any])


def requires(*capabilities: str) -> Callable[[F], F]:
    """Mark a step definition as needing these capabilities of the memory under test."""
    unknown = sorted(set(capabilities) - CAPABILITIES.keys())
    if unknown:
        raise ValueError(f"unknown capabilities {unknown}: known are {sorted(CAPABILITIES)}")

    def mark(step: F) -> F:
        step.requires = (*getattr(step, "requires", ()), *capabilities)  # type: ignore[attr-defined]
        return step

    return mark


def step_requirements(step: Callable[..., Any], module: Any) -> frozenset[str]:
    """What a step definition needs: its own ``@requires``, else its module's ``REQUIRES``."""
    own = getattr(step, "requires", None)
    return frozenset(own if own is not None else getattr(module, "REQUIRES", ()))


@dataclass(frozen=True)
class MemoryConfig:
    """What a scenario asks of the memory it gets from the factory."""

    redis: Redis | RedisCluster
    """A client of the scenario's Redis server (fakeredis by default, or a real one)."""
    key_prefix: str
    """Start every key with it: the suite finds the scenario's keys by it, to move their
    expiry with the scenario's clock and to delete them after it on a shared server."""
    max_history: int | None = None
    """The history limit a ``history_limit`` scenario set; None for the memory's own default."""
    ttl: timedelta | None = None
    """The sliding expiry a ``ttl`` scenario set; None when the scenario sets none."""
    redis_url: str | None = None
    """The server's URL, for stores that open their own connection; None on fakeredis."""
    async_redis: Callable[[], AsyncRedis | AsyncRedisCluster] | None = None
    """Builds an asyncio client of the same server, for async stores (close it in ``aclose``)."""


class Memory(Protocol):
    """The memory under test, as the suite calls it (each method may also be ``async``)."""

    def add_messages(self, session_id: str, messages: Sequence[Message]) -> object:
        """Store ``messages`` at the end of the session, in order.

        It may return the messages as stored (with the time and id the memory gave them).
        """

    def get_messages(self, session_id: str) -> Sequence[Message]:
        """Return the session's messages, oldest first, as the app would give them to a model."""

    def clear(self, session_id: str) -> object:
        """Forget the session."""


DEFAULT_LARGEST_MESSAGE = 1024 * 1024
"""The content size, in UTF-8 bytes, the scenarios send to a memory that states no maximum."""


def adapter(
    *, capabilities: Iterable[str], max_message_bytes: int | None = None
) -> Callable[[F], F]:
    """Declare what the memory a factory builds can do (names from :data:`CAPABILITIES`).

    ``max_message_bytes`` is the largest message content, in UTF-8 bytes, the memory
    takes: the content scenarios send one exactly that large, and it must come back
    byte for byte (one of :data:`DEFAULT_LARGEST_MESSAGE` bytes when it is not stated).
    """
    declared = frozenset(capabilities)
    unknown = sorted(declared - CAPABILITIES.keys())
    if unknown:
        raise ValueError(f"unknown capabilities {unknown}: known are {sorted(CAPABILITIES)}")
    if max_message_bytes is not None and (
        isinstance(max_message_bytes, bool)
        or not isinstance(max_message_bytes, int)
        or max_message_bytes < 1
    ):
        raise ValueError(
            f"max_message_bytes must be a positive whole number, not {max_message_bytes!r}"
        )

    def mark(factory: F) -> F:
        factory.capabilities = declared  # type: ignore[attr-defined]
        factory.max_message_bytes = max_message_bytes  # type: ignore[attr-defined]
        return factory

    return mark


def largest_message_of(factory: object) -> int:
    """The content size, in UTF-8 bytes, a factory's memory states it takes (or the default)."""
    stated = getattr(factory, "max_message_bytes", None)
    return DEFAULT_LARGEST_MESSAGE if stated is None else int(stated)


def capabilities_of(factory: object) -> frozenset[str]:
    """The capabilities a factory declares (none if it declares nothing)."""
    declared = frozenset(getattr(factory, "capabilities", ()))
    unknown = sorted(declared - CAPABILITIES.keys())
    if unknown:
        raise ValueError(f"unknown capabilities {unknown}: known are {sorted(CAPABILITIES)}")
    return declared


class AdaptedMemory:
    """A :class:`Memory` seen through the calls the steps make on chat-memory's own service.

    Only what the protocol offers is here; a step that needs more is marked
    with the capability, so it never reaches an adapter that lacks it.
    """

    def __init__(
        self, memory: Memory, config: MemoryConfig, largest: int = DEFAULT_LARGEST_MESSAGE
    ) -> None:
        """Wrap ``memory``; its coroutine results run on an event loop of the wrapper's own."""
        self.memory = memory
        self.max_history = config.max_history
        """The history limit the scenario set, which steps about the limit compare with."""
        self.largest_content = largest
        """The largest message content, in UTF-8 bytes, the memory states it takes."""
        self.raised: BaseException | None = None
        """The last exception the memory itself raised (not the suite's code around it)."""
        self._loop: asyncio.AbstractEventLoop | None = None

    def _done(self, result: Any) -> Any:
        if not inspect.isawaitable(result):
            return result
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(result)

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        """Call a method of the memory (awaited if async), noting an exception it raises."""
        try:
            return self._done(method(*args))
        except Exception as exc:
            self.raised = exc
            raise

    def add_message(
        self,
        session_id: str,
        role: Role,
        content: str | None,
        *,
        message_id: str | None = None,
        tool_calls: Iterable[ToolCall] = (),
        tool_call_id: str | None = None,
        name: str | None = None,
    ) -> Message:
        """Store one message, built the way chat-memory's ``add_message`` builds it."""
        message = message_for(
            role,
            content,
            message_id=message_id,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            name=name,
        )
        return self.add_messages(session_id, [message])[0]

    def add_messages(
        self, session_id: str, messages: Iterable[Message | Mapping[str, Any]]
    ) -> list[Message]:
        """Store several messages in one call of the memory.

        A message in the chat-completions shape (a dict, as apps send them) reaches the
        memory as the :class:`~chat_memory.Message` chat-memory makes of it, the way an
        app would convert it for its own store. Returns the messages as the memory stored
        them when it says so (a list of as many messages, as chat-memory's own service
        returns), else as sent.
        """
        batch = [m if isinstance(m, Message) else message_from_chat(m) for m in messages]
        stored = self._call(self.memory.add_messages, session_id, batch)
        as_stored = isinstance(stored, list) and len(stored) == len(batch)
        if as_stored and all(isinstance(message, Message) for message in stored):
            return list(stored)
        return batch

    def get_messages(self, session_id: str) -> list[Message]:
        """The session's messages, oldest first, as the memory would give them to a model."""
        found = self._call(self.memory.get_messages, session_id)
        if not isinstance(found, Sequence) or not all(isinstance(m, Message) for m in found):
            raise AssertionError(
                f"get_messages returned {found!r}, not a list of chat_memory.Message"
                " (a memory that cannot read a session raises its own error)"
            )
        return list(found)

    def get_context(self, session_id: str) -> list[dict[str, Any]]:
        """The session in the chat-completions shape, as a model would be given it."""
        return [message.to_chat() for message in self.get_messages(session_id)]

    def clear(self, session_id: str) -> None:
        """Forget the session."""
        self._call(self.memory.clear, session_id)

    def pop_message(self, session_id: str) -> Message | None:
        """Take back the newest message (the ``pop_message`` capability)."""
        pop = getattr(self.memory, "pop_message", None)
        if pop is None:
            raise AssertionError("the memory declares pop_message but has no pop_message()")
        taken = self._call(pop, session_id)
        if taken is not None and not isinstance(taken, Message):
            raise AssertionError(f"pop_message returned {taken!r}, not a Message or None")
        return taken

    def ttl(self, session_id: str) -> float | None:
        """The seconds left before the session expires (the ``ttl`` capability)."""
        ttl = getattr(self.memory, "ttl", None)
        if ttl is None:
            raise AssertionError("the memory declares the ttl capability but has no ttl()")
        left = self._call(ttl, session_id)
        if left is not None and (isinstance(left, bool) or not isinstance(left, int | float)):
            raise AssertionError(f"ttl returned {left!r}, not a number of seconds or None")
        return None if left is None else float(left)

    def close(self) -> None:
        """Close the memory (its ``close`` or ``aclose``, if it has one), then the loop."""
        try:
            for name in ("close", "aclose"):
                closer = getattr(self.memory, name, None)
                if callable(closer):
                    self._done(closer())
        finally:
            if self._loop is not None:
                self._loop.close()


def describe_factory(factory: object) -> str:
    """Name a factory and its capabilities, for the pytest header and the living documentation."""
    declared = ", ".join(sorted(capabilities_of(factory))) or "none"
    name = f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', factory)}"
    return f"{name} (capabilities: {declared})"


def unsupported(needed: Collection[str], declared: Collection[str]) -> list[str]:
    """The capabilities in ``needed`` that ``declared`` lacks, sorted."""
    return sorted(set(needed) - set(declared))
