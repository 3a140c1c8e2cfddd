"""Fixtures of the unit tests."""

from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest


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
