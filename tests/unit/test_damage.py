"""The damage the suite does to a store's data: found in any layout, rewritten in place."""

from __future__ import annotations

from collections.abc import Callable

import fakeredis
import pytest

from chat_memory_suite.damage import (
    OTHER_SERVICES_VALUE,
    cut_off,
    holds,
    not_utf8,
    overwrite_with_other_kind,
    rewrite,
    values_holding,
)

TEXT = "My booking reference is K7Q2."
ENTRY = b'{"role": "user", "content": "My booking reference is K7Q2."}'
KEY = b"chat:session:alice"


def _store(client: fakeredis.FakeRedis, kind: str) -> None:
    writers: dict[str, Callable[[], object]] = {
        "string": lambda: client.set(KEY, ENTRY),
        "list": lambda: client.rpush(KEY, b"first", ENTRY, b"last"),
        "hash": lambda: client.hset(KEY, mapping={b"m-0": b"first", b"m-1": ENTRY}),
        "set": lambda: client.sadd(KEY, ENTRY),
        "zset": lambda: client.zadd(KEY, {b"first": 1.0, ENTRY: 2.0}),
    }
    writers[kind]()
    client.expire(KEY, 1800)


@pytest.mark.parametrize("kind", ["string", "list", "hash", "set", "zset"])
def test_a_message_is_found_and_cut_off_in_place_whatever_the_type(kind: str) -> None:
    client = fakeredis.FakeRedis()
    _store(client, kind)
    client.set(b"chat:session:bob", b"A table for two.")  # another session: left alone
    [found] = values_holding(client, "chat", TEXT)
    assert (found.key, found.kind, found.value) == (KEY, kind, ENTRY)
    damaged = rewrite(client, found, cut_off(found, TEXT))
    assert damaged.value == b'{"role": "user", "content": "My booking ref'
    assert holds(client, damaged)
    assert not holds(client, found)
    assert client.type(KEY) == kind.encode()
    assert 0 < client.ttl(KEY) <= 1800, "the key's expiry is kept"
    assert client.get(b"chat:session:bob") == b"A table for two."


def test_bytes_that_are_not_utf8_go_in_the_middle_of_the_text() -> None:
    client = fakeredis.FakeRedis()
    _store(client, "list")
    [found] = values_holding(client, "chat", TEXT)
    damaged = not_utf8(found, TEXT)
    assert b"\xff\xfe" in damaged
    with pytest.raises(UnicodeDecodeError):
        damaged.decode("utf-8")


@pytest.mark.parametrize(("kind", "becomes"), [("string", "hash"), ("list", "string")])
def test_another_service_overwrites_the_key_with_another_type(kind: str, becomes: str) -> None:
    client = fakeredis.FakeRedis()
    _store(client, kind)
    other = overwrite_with_other_kind(client, KEY)
    assert (other.kind, client.type(KEY)) == (becomes, becomes.encode())
    assert holds(client, other)
    client.delete(KEY)
    client.rpush(KEY, OTHER_SERVICES_VALUE)
    assert not holds(client, other), "a value of another type is not the other service's"


def test_a_text_no_value_holds_is_an_assertion_naming_the_capability() -> None:
    client = fakeredis.FakeRedis()
    client.rpush(KEY, ENTRY.hex().encode())
    with pytest.raises(AssertionError, match="readable_storage"):
        values_holding(client, "chat", TEXT)


def test_a_key_of_a_type_the_suite_cannot_rewrite_is_passed_over_and_named() -> None:
    client = fakeredis.FakeRedis()
    client.xadd(b"chat:session:alice:events", {b"entry": b"opened"})  # a side key of the store
    _store(client, "list")
    [found] = values_holding(client, "chat", TEXT)
    assert found.key == KEY
    client.delete(KEY)
    client.xadd(KEY, {b"entry": ENTRY})
    with pytest.raises(AssertionError, match=r"not read: .*chat:session:alice.* \(stream\)"):
        values_holding(client, "chat", TEXT)
