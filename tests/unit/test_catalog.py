"""The step catalog, and the committed docs/steps.md it generates."""

from pathlib import Path

import pytest

from chat_memory_suite.catalog import _regex_kind, catalog, readable, render_markdown, render_text

ROOT = Path(__file__).resolve().parents[2]
REFRESH = "pytest --bdd-steps --bdd-steps-output docs/steps.md"


def test_docs_steps_md_is_up_to_date() -> None:
    definitions, never_used = catalog(ROOT, [ROOT / "features"])
    committed = (ROOT / "docs" / "steps.md").read_text(encoding="utf-8")
    assert committed == render_markdown(definitions, never_used), (
        f"docs/steps.md is stale: refresh it with `{REFRESH}`"
    )


def test_every_step_is_used_by_some_scenario() -> None:
    _, never_used = catalog(ROOT, [ROOT / "features"])
    assert [d.sentence for d in never_used] == []


def test_every_step_has_a_summary_and_a_gherkin_example() -> None:
    definitions, _ = catalog(ROOT, [ROOT / "features"])
    assert definitions
    missing = [d.sentence for d in definitions if not (d.summary and d.example)]
    assert missing == []


def test_the_text_catalog_groups_by_module_and_reports_unused_steps() -> None:
    definitions, _ = catalog(ROOT, [ROOT / "features"])
    text = render_text(definitions, definitions[:1])
    assert "chat_memory_suite.steps.conversation: Steps about what is said in a session" in text
    assert '  When the user says "{text}"' in text
    assert f"1 step(s) no scenario uses:\n  {definitions[0].sentence}" in text


def test_regular_expression_steps_read_like_parse_patterns() -> None:
    assert readable(r"the history limit is (?P<limit>\d+) messages?") == (
        "the history limit is {limit} message(s)"
    )


def test_bdd_steps_prints_the_catalog_and_runs_nothing(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--bdd-steps",
        "--rootdir",
        str(ROOT),
        "-c",
        str(ROOT / "pyproject.toml"),
        str(ROOT / "features"),
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["chat_memory_suite.steps.clock: Steps about time passing", "*Every step is used*"]
    )
    assert "collected" not in result.stdout.str()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("user|assistant", "one of: user, assistant"),
        (
            "exporting the session|reading the session's metadata",
            "one of: exporting the session, reading the session's metadata",
        ),
        ("well-known|ad hoc", "one of: well-known, ad hoc"),
        (".+", "any text"),
    ],
)
def test_a_choice_of_phrases_with_apostrophes_or_hyphens_is_shown_as_its_choices(
    body: str, kind: str
) -> None:
    assert _regex_kind(body) == kind
