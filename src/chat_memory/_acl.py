"""The least privilege the memory needs from Redis: its keys and the commands it sends.

``ACL SETUSER <user> on ><password> `` followed by :func:`acl_rules` gives a
user that can do everything the memory does, and nothing else: no other key,
no other command. A service's first append checks each command the script will
run before its first write, so a user missing one gets
:class:`PermissionDeniedError` with nothing written; a command revoked later is
found by the write it refuses (see :class:`PartialWriteError`).
"""

from __future__ import annotations

from typing import Final

from ._keys import DEFAULT_NAMESPACE, KeyLayout

__all__ = ["ACL_COMMANDS", "acl_rules"]

ACL_COMMANDS: Final = (
    # sent by the service: the append script (loaded on first use), reads, clear
    "evalsha",
    "script|load",
    "lrange",
    "pttl",
    "del",
    "type",
    # run inside the append script
    "hmget",
    "hkeys",
    "hlen",
    "llen",
    "zscore",
    "rpush",
    "lpop",
    "hset",
    "ltrim",
    "hdel",
    "pexpire",
    "persist",
    # run inside the scripts of users' sessions and metadata
    "hsetnx",
    "hget",
    "exists",
    "zadd",
    "zrem",
    "zrange",
    "zrevrange",
    "zcard",
    "lpush",
    "lindex",
    "rpop",  # and in the append script: the undo of a push whose id it could not remember
    "lrem",
    # the previous version's append script asks about LPOS in advance: keep it while
    # servers of that version still write, during a rolling deploy (see the README)
    "lpos",
    # with a durability setting: after each write, wait for replicas to confirm it
    "wait",
    # a listing or an erasure asks whether the user's cluster slot is being resharded
    # (without them it cannot tell, and on a cluster both are refused)
    "cluster|nodes",
    "cluster|keyslot",
    # sent by redis-py's cluster client: its map of slots and of commands' keys, and the
    # redirection of a command to the node a slot is being migrated to
    "cluster|slots",
    "command",
    "asking",
)
"""Every command the memory sends or runs in its script, in ACL spelling."""


def acl_rules(namespace: str = DEFAULT_NAMESPACE) -> list[str]:
    """Return the ``ACL SETUSER`` rules of a user limited to ``namespace``'s keys and commands."""
    sessions, users = KeyLayout(namespace).patterns()
    return [
        "resetkeys",
        f"~{sessions}",
        f"~{users}",
        "resetchannels",
        "-@all",
        *(f"+{command}" for command in ACL_COMMANDS),
    ]
