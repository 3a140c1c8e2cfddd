"""The step catalog, and the committed docs/steps.md it generates."""

import re
from pathlib import Path

import pytest

from chat_memory_suite.catalog import (
    READING_ORDER,
    _regex_kind,
    catalog,
    concept,
    readable,
    render_markdown,
    render_text,
)
from chat_memory_suite.gherkin import feature_files, read_feature

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


def _feature_steps() -> set[str]:
    """The text of every step of every scenario (outline rows substituted)."""
    return {
        step.text
        for path in feature_files([ROOT / "features"])
        for scenario in read_feature(path, ROOT).scenarios
        for step in scenario.steps
    }


def test_every_catalog_example_is_a_step_some_scenario_runs() -> None:
    """The catalog's examples are not made up: each is a line of a scenario CI runs."""
    definitions, _ = catalog(ROOT, [ROOT / "features"])
    run = _feature_steps()
    made_up = [d.example for d in definitions if d.example.split(" ", 1)[1] not in run]
    assert made_up == [], "\n".join(made_up)


def _gherkin_blocks() -> list[tuple[str, str]]:
    """Every ```gherkin block of the README and the documentation site, with its page."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = []
    for page in pages:
        if page.name in ("steps.md", "index-readme.md"):  # the catalog: checked above
            continue
        text = page.read_text(encoding="utf-8")
        blocks += [(page.name, b) for b in re.findall(r"```gherkin\n(.*?)```", text, re.DOTALL)]
    # The examples of mistakes, shown with what --bdd-check says of them (test_check.py).
    mistakes = {p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "examples").glob("*")}
    return [(page, block) for page, block in blocks if block not in mistakes]


def test_every_gherkin_example_on_the_site_is_a_step_some_scenario_runs() -> None:
    """A QA author copying an example from the docs copies something CI runs."""
    run = _feature_steps()
    made_up = []
    for page, block in _gherkin_blocks():
        for line in block.splitlines():
            keyword, _, text = line.strip().partition(" ")
            if keyword in ("Given", "When", "Then", "And", "But") and text not in run:
                made_up.append(f"{page}: {line.strip()}")
    assert _gherkin_blocks(), "no Gherkin example found on the site"
    assert made_up == [], "\n".join(made_up)


def test_every_entry_shows_an_example_of_its_own_kind() -> None:
    """A Given entry shows a Given example, not the When of its twin."""
    definitions, _ = catalog(ROOT, [ROOT / "features"])
    wrong = [d.sentence for d in definitions if d.example.split(" ")[0] != d.sentence.split(" ")[0]]
    assert wrong == []


def test_the_markdown_catalog_groups_steps_by_product_concept() -> None:
    definitions, _ = catalog(ROOT, [ROOT / "features"])
    markdown = render_markdown(definitions, [])
    headings = re.findall(r"^## (.+)$", markdown, re.M)
    assert headings == list(READING_ORDER)
    grouped = {title: [d for d in definitions if concept(d) == title] for title in READING_ORDER}
    assert all(grouped.values()), [title for title, steps in grouped.items() if not steps]
    tools = [d.sentence for d in grouped["Tools"]]
    assert 'Given the assistant called the tool "{name}" with the arguments {arguments}' in tools
    summary = "The summary's text is \"Summary: \" and the folded messages' texts joined by"

    assert summary in markdown
