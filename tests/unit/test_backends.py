"""The suite's backends: the scenario's Redis, and finding the keys a scenario wrote."""

from typing import Any, cast

from chat_memory_suite.backends import RedisClient, scenario_keys


def test_scenario_keys_lists_each_key_once_though_scan_repeats_it() -> None:
    """SCAN may return a key twice (a rehash while it iterates): the count stays true."""

    class RepeatingScan:
        def scan_iter(self, match: str, count: int) -> Any:
            key = match.replace("*", "x").encode()
            return iter([key, key])

    keys = scenario_keys(cast(RedisClient, RepeatingScan()), "chat")
    assert keys == [b"chat:session:x", b"chat:user:x"]


def test_a_skipped_scenario_is_told_the_backend_that_runs_it() -> None:
    from chat_memory_suite.backends import unmet_need

    assert unmet_need("fakeredis", ["faults", "cluster"]) == (
        "needs a Redis Cluster: run with --redis-cluster"
    )
    assert (
        unmet_need("redis", ["failover", "sentinel"]) == "needs Sentinel: run with --redis-sentinel"
    )
    assert unmet_need("fakeredis", ["faults"]) == (
        "breaks throwaway redis-servers: run with --redis-server"
    )
    assert unmet_need("cluster", ["faults", "cluster"]) is None
