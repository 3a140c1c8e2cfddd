"""Damage what a store wrote, as a broken writer or another service would, whatever its layout.

The scenarios about damaged data run against any store (``readable_storage``):
they find the Redis value that holds a message's text among the scenario's keys,
whatever type the store chose (a string, a list, a hash, a set or a sorted set),
and rewrite it in place, keeping the key's expiry::

    found = values_holding(client, namespace, "My booking reference is K7Q2.")
    for value in found:
        rewrite(client, value, cut_off(value, "My booking reference is K7Q2."))
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from .backends import RedisClient, scenario_keys

__all__ = [
    "OTHER_SERVICES_VALUE",
    "READABLE_KINDS",
    "StoredValue",
    "as_text",
    "cut_off",
    "holds",
    "left_as_it_was",
    "not_utf8",
    "overwrite_with_other_kind",
    "rewrite",
    "values_holding",
]

READABLE_KINDS = ("string", "list", "hash", "set", "zset")
"""The Redis types the suite reads and rewrites a message in."""

OTHER_SERVICES_VALUE = b"another service's value"
"""What another service writes over a store's key (as a string, or a hash's only field)."""


@dataclass(frozen=True)
class StoredValue:
    """One value under one of the scenario's keys: a string, or an element of a collection."""

    key: bytes
    kind: str
    """The key's Redis type: ``string``, ``list``, ``hash``, ``set`` or ``zset``."""
    value: bytes
    place: int | bytes | float | None = None
    """Where it is: a list's index, a hash's field, a sorted set's score; None otherwise."""


def as_text(reply: object) -> str:
    """A reply of Redis as text (bytes from the suite's clients, text from a decoding one)."""
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def _bytes(reply: object) -> bytes:
    """A reply as bytes (the suite's clients return bytes; text only in a decoding one)."""
    return reply if isinstance(reply, bytes) else str(reply).encode("utf-8")


def _values(client: RedisClient, key: bytes, kind: str) -> Iterator[StoredValue]:
    replies: Any
    if kind == "string":
        yield StoredValue(key, kind, _bytes(client.get(key) or b""))
    elif kind == "list":
        replies = client.lrange(key, 0, -1)
        for index, value in enumerate(replies):
            yield StoredValue(key, kind, _bytes(value), index)
    elif kind == "hash":
        replies = client.hgetall(key)
        for field, value in replies.items():
            yield StoredValue(key, kind, _bytes(value), _bytes(field))
    elif kind == "set":
        replies = client.smembers(key)
        for member in replies:
            yield StoredValue(key, kind, _bytes(member))
    elif kind == "zset":
        replies = client.zrange(key, 0, -1, withscores=True)
        for member, score in replies:
            yield StoredValue(key, kind, _bytes(member), float(score))
    else:
        raise AssertionError(f"the store keeps {key!r} as a {kind}, which the suite cannot rewrite")


def values_holding(client: RedisClient, namespace: str, text: str) -> list[StoredValue]:
    """Every value under the scenario's keys whose bytes hold ``text`` (as UTF-8)."""
    wanted = text.encode("utf-8")
    found: list[StoredValue] = []
    other_kinds: list[str] = []
    for key in scenario_keys(client, namespace):
        kind = as_text(client.type(key))
        if kind not in READABLE_KINDS:
            other_kinds.append(f"{key!r} ({kind})")
            continue
        found += [value for value in _values(client, key, kind) if wanted in value.value]
    assert found, (
        f"no value under the scenario's keys holds the text {text!r}: a store that declares"
        " readable_storage keeps each message's text as it is (not compressed or encrypted),"
        f" in a {', '.join(READABLE_KINDS)}"
        + (f"; not read: {', '.join(other_kinds)}" if other_kinds else "")
    )
    return found


def cut_off(stored: StoredValue, text: str) -> bytes:
    """The value cut off in the middle of ``text``, as a write that stopped halfway leaves it."""
    wanted = text.encode("utf-8")
    return stored.value[: stored.value.index(wanted) + len(wanted) // 2]


def not_utf8(stored: StoredValue, text: str) -> bytes:
    """The value with bytes that are not UTF-8 in the middle of ``text``."""
    wanted = text.encode("utf-8")
    middle = len(wanted) // 2
    return stored.value.replace(wanted, wanted[:middle] + b"\xff\xfe" + wanted[middle:], 1)


def rewrite(client: RedisClient, stored: StoredValue, new: bytes) -> StoredValue:
    """Put ``new`` where ``stored`` is, keeping the key's type and expiry; return the new value."""
    key = stored.key
    if stored.kind == "string":
        client.set(key, new, keepttl=True)
    elif stored.kind == "list":
        client.lset(key, cast(int, stored.place), cast(str, new))  # bytes are sent as they are
    elif stored.kind == "hash":
        client.hset(key, cast(bytes, stored.place), new)
    elif stored.kind == "set":  # added first: removing the last member would delete the key
        client.sadd(key, new)
        client.srem(key, stored.value)
    else:
        client.zadd(key, {new: float(cast(float, stored.place))})
        client.zrem(key, stored.value)
    return StoredValue(key, stored.kind, new, stored.place)


def overwrite_with_other_kind(client: RedisClient, key: bytes) -> StoredValue:
    """Replace the key with a value of another type, which never expires.

    A hash where a string was, else a string.
    """
    if as_text(client.type(key)) == "string":
        with client.pipeline() as replace:
            replace.delete(key)
            replace.hset(key, b"owner", OTHER_SERVICES_VALUE)
            replace.execute()
        return StoredValue(key, "hash", OTHER_SERVICES_VALUE, b"owner")
    client.set(key, OTHER_SERVICES_VALUE)
    return StoredValue(key, "string", OTHER_SERVICES_VALUE)


def holds(client: RedisClient, stored: StoredValue) -> bool:
    """Whether the key still holds that value, of that type."""
    if as_text(client.type(stored.key)) != stored.kind:
        return False
    return stored in set(_values(client, stored.key, stored.kind))


def left_as_it_was(client: RedisClient, other: StoredValue) -> bool:
    """Whether another service's value (which never expires) is still there, never to expire."""
    return holds(client, other) and int(client.pttl(other.key)) == -1
