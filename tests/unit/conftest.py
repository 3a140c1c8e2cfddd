"""Fixtures of the unit tests."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest

from chat_memory_suite.servers import ThrowawayServer


@pytest.fixture(params=[False, True], ids=["bytes", "decoded"])
def fake_redis(request: pytest.FixtureRequest) -> Iterator[fakeredis.FakeRedis]:
    """A fresh fakeredis client, with and without decode_responses."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=request.param)
    yield client
    client.close()


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A fresh project that runs this repository's suite: its conftest.py and pyproject.toml."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for name in ("conftest.py", "pyproject.toml"):
        (pytester.path / name).write_text((ROOT / name).read_text(encoding="utf-8"))
    (pytester.path / "features").mkdir()
    return pytester


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ThrowawayServer]:
    """A throwaway real redis-server (what fakeredis cannot show: Lua's limits, real sockets).

    Skipped where redis-server is not installed; CI sets CHAT_MEMORY_REQUIRE_REDIS=1, so
    that a missing server fails the test there instead.
    """
    if shutil.which("redis-server") is None:
        if os.environ.get("CHAT_MEMORY_REQUIRE_REDIS"):
            pytest.fail("CHAT_MEMORY_REQUIRE_REDIS is set but redis-server is not installed")
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    started = ThrowawayServer(tmp_path / "redis").start()
    yield started
    started.stop()
