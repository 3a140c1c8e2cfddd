"""Fixtures of the unit tests."""

from collections.abc import Iterator

import fakeredis
import pytest


@pytest.fixture(params=[False, True], ids=["bytes", "decoded"])
def fake_redis(request: pytest.FixtureRequest) -> Iterator[fakeredis.FakeRedis]:
    """A fresh fakeredis client, with and without decode_responses."""
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=request.param)
    yield client
    client.close()
