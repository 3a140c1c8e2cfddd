"""docs/peers.md: how a store's results on a row of guarantees are told."""

from typing import Any

from chat_memory_suite.peers import ROWS, cell, lacking, render


def scenario(status: str, reason: str | None = None, needs: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"status": status, "reason": reason, "needs": list(needs), "steps": [], "name": "S"}


UNSUPPORTED = "not supported by this memory: needs message_ids, ttl"


def test_a_failure_outweighs_every_pass() -> None:
    assert cell([scenario("passed"), scenario("failed")]) == "❌ 1 of 2 failed"


def test_passes_and_what_the_store_could_not_take_are_both_told() -> None:
    assert cell([scenario("passed"), scenario("passed")]) == "✅ 2 of 2"
    mixed = [scenario("passed"), scenario("not supported", UNSUPPORTED)]
    assert cell(mixed) == "✅ 1 of 2, 🚫 1 not supported"


def test_a_row_the_store_cannot_take_names_what_it_lacks() -> None:
    assert lacking([scenario("not supported", UNSUPPORTED)]) == ["message_ids", "ttl"]
    assert cell([scenario("not supported", UNSUPPORTED)]) == (
        "🚫 not supported (lacks message_ids, ttl)"
    )
    assert cell([]) == "– not run"


def test_a_row_names_what_all_its_scenarios_lack_when_they_share_it() -> None:
    limit = "not supported by this memory: needs history_limit"
    limit_and_export = "not supported by this memory: needs export, history_limit"
    row = [scenario("not supported", limit), scenario("not supported", limit_and_export)]
    assert lacking(row) == ["history_limit"]
    disjoint = [scenario("not supported", limit), scenario("not supported", UNSUPPORTED)]
    assert lacking(disjoint) == ["history_limit", "message_ids", "ttl"]


def test_the_report_has_a_line_per_guarantee_and_names_each_failure() -> None:
    results = {
        "totals": {"passed": 1, "failed": 1, "not supported": 0},
        "api": "x:make_memory (capabilities: ttl) (the memory under test, through its adapter)",
        "folders": [
            [
                "memory",
                [
                    {
                        "path": "chat-memory/features/memory/remembering.feature",
                        "rules": [
                            {
                                "scenarios": [
                                    {**scenario("passed"), "outline": False, "line": 3},
                                    {
                                        **scenario("failed"),
                                        "outline": False,
                                        "line": 9,
                                        "error": "AssertionError: lost",
                                    },
                                ]
                            }
                        ],
                    }
                ],
            ]
        ],
    }
    text = render({"store": results}, {"other": "needs Redis Stack"}, "python -m x")
    assert text.count("\n| ") == len(ROWS) + 5  # header, separator, rows, totals, 2 shares
    assert "| **Share of the suite it runs** | 2 of 2 (100%) |" in text
    assert "| **Share of the scenarios about a store** | 2 of 2 (100%) |" in text
    assert "| Remembering, in order | ❌ 1 of 2 failed |" in text
    assert "- S (`chat-memory/features/memory/remembering.feature:9`): AssertionError: lost" in text
    assert "- **other**: needs Redis Stack" in text


def test_chat_memory_fails_nothing_through_any_adapter_of_its_own_in_the_published_table() -> None:
    """docs/peers.md as committed: a failure of chat-memory itself is a defect, not a peer's row."""
    from pathlib import Path

    from chat_memory_suite.peers import STORES

    text = (Path(__file__).parents[2] / "docs" / "peers.md").read_text(encoding="utf-8")
    ours = [store for store in STORES if store.startswith("chat-memory")]
    assert len(ours) == 4
    for store in ours:
        assert f"\n**{store}**: nothing.\n" in text, f"{store} failed scenarios in docs/peers.md"
