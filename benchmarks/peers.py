"""The Redis chat histories a team would pick instead of chat-memory, as benchmark contenders.

Installed by the ``bench`` extra (``pip install -e ".[bench]"``). Each peer is
measured on the same loopback server as everything else, through its own
public API, with a TTL of 1800 s where it takes one. A peer that is not
installed, or that needs Redis Stack modules this plain ``redis-server``
lacks, is listed as not run, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from chat_memory_suite.peers import STACK_ONLY

Operation = Callable[[int], object]


_NOT_INSTALLED = 'not installed: pip install -e ".[bench]"'


@dataclass
class Peers:
    """What the installed peers contribute to the append and load tables, and what did not run."""

    append: dict[str, Operation] = field(default_factory=dict)
    load: dict[str, Operation] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=lambda: dict(STACK_ONLY))


def peers(url: str, load_size: int) -> Peers:
    """Return the installed peers' append and load operations against the server at ``url``.

    Each load reads a session holding ``load_size`` messages, written beforehand.
    """
    found = Peers()
    _langchain(url, load_size, found)
    _llama_index(url, load_size, found)
    return found


def _langchain(url: str, load_size: int, found: Peers) -> None:
    name = "langchain-community RedisChatMessageHistory"
    try:
        from langchain_community.chat_message_histories import RedisChatMessageHistory
        from langchain_core.messages import HumanMessage
    except ImportError:
        found.not_run[name] = _NOT_INSTALLED
        return
    writes = RedisChatMessageHistory("lc-append", url=url, ttl=1800)
    reads = RedisChatMessageHistory("lc-load", url=url, ttl=1800)
    for n in range(load_size):
        reads.add_message(HumanMessage(content=f"message number {n} of the benchmark"))
    found.append[name] = lambda n: writes.add_message(HumanMessage(content=f"message {n}"))
    found.load[name] = lambda _: reads.messages


def _llama_index(url: str, load_size: int, found: Peers) -> None:
    name = "llama-index RedisChatStore"
    try:
        from llama_index.core.llms import ChatMessage
        from llama_index.storage.chat_store.redis import RedisChatStore
    except ImportError:
        found.not_run[name] = _NOT_INSTALLED
        return
    store = RedisChatStore(redis_url=url, ttl=1800)
    for n in range(load_size):
        store.add_message("li-load", ChatMessage(role="user", content=f"message number {n}"))
    found.append[name] = lambda n: store.add_message(
        "li-append", ChatMessage(role="user", content=f"message {n}")
    )
    found.load[name] = lambda _: store.get_messages("li-load")


def writers(
    url: str, message: Callable[[int], tuple[str, str]]
) -> dict[str, Callable[[str, int], object]]:
    """Each installed peer's way to store message ``n`` of a chat in a session (TTL 1800 s)."""
    found: dict[str, Callable[[str, int], object]] = {}
    try:
        from langchain_community.chat_message_histories import RedisChatMessageHistory
        from langchain_core.messages import AIMessage, HumanMessage
    except ImportError:
        pass
    else:
        histories: dict[str, RedisChatMessageHistory] = {}

        def langchain(session: str, n: int) -> object:
            history = histories.get(session)
            if history is None:
                history = histories[session] = RedisChatMessageHistory(session, url=url, ttl=1800)
            role, content = message(n)
            kind = HumanMessage if role == "user" else AIMessage
            history.add_message(kind(content=content))
            return None

        found["langchain-community RedisChatMessageHistory"] = langchain
    try:
        from llama_index.core.llms import ChatMessage
        from llama_index.storage.chat_store.redis import RedisChatStore
    except ImportError:
        pass
    else:
        store = RedisChatStore(redis_url=url, ttl=1800)

        def llama(session: str, n: int) -> object:
            role, content = message(n)
            return store.add_message(session, ChatMessage(role=role, content=content))

        found["llama-index RedisChatStore"] = llama
    return found
