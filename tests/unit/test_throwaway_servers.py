"""The throwaway servers the suite starts: a port taken meanwhile is not a failed run."""

import socket
from pathlib import Path
from typing import Any

import port_for
import pytest

from chat_memory_suite.servers import HOST, SentinelGroup


def test_a_sentinel_whose_port_another_server_took_meanwhile_starts_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On CI a Sentinel's port, picked at random, was taken by a scenario's server on
    # another pytest-xdist worker before the Sentinel started: mirakuru's AlreadyRunning.
    with socket.socket() as other:
        other.bind((HOST, 0))
        other.listen()
        taken = other.getsockname()[1]
        picks: list[int] = []
        select = port_for.select_random

        def pick(*args: Any, **kwargs: Any) -> int:
            picks.append(taken if len(picks) == 2 else select(*args, **kwargs))
            return picks[-1]  # the primary's, the replica's, then the Sentinel's: taken

        monkeypatch.setattr(port_for, "select_random", pick)
        group = SentinelGroup(tmp_path, replicas=1, sentinels=1).start()
        try:
            assert len(picks) == 4
            assert group.sentinels == [(HOST, picks[3])]
            assert group.primary_port() == picks[0]
        finally:
            group.stop()
