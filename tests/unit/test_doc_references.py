"""The tests and scenarios the documentation cites as evidence exist under those names.

docs/reliability.md answers "what happens when ..." with the scenario or test
that shows it. A renamed scenario or test leaves the page citing nothing: these
fail then, as they did for two rows of the resharding answers (issue 24).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEST_REFERENCE = re.compile(r"`(?:tests/unit/)?(test_\w+\.py)::(test_\w*)")
SCENARIO = re.compile(r"^\s*(?:Scenario(?: Outline)?|Rule): (.+?)\s*$", re.MULTILINE)


def _names() -> set[str]:
    found: set[str] = set()
    for feature in (ROOT / "features").rglob("*.feature"):
        found.update(SCENARIO.findall(feature.read_text(encoding="utf-8")))
    return found


def test_every_unit_test_a_page_cites_exists() -> None:
    missing = []
    for page in PAGES:
        for module, name in TEST_REFERENCE.findall(page.read_text(encoding="utf-8")):
            path = ROOT / "tests" / "unit" / module
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            defined = re.findall(r"^\s*(?:async\s+)?def (test_\w+)", text, re.M)
            if not any(d.startswith(name.rstrip("_")) for d in defined):
                missing.append(f"{page.name}: {module}::{name}")
    assert not missing, missing


def test_every_scenario_docs_reliability_cites_exists() -> None:
    # The evidence column quotes scenario (or rule) names whole, or their start before "...".
    names = _names()
    evidence = [
        line.rsplit("|", 2)[-2]
        for line in (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and line.count("|") >= 4
    ]
    missing = []
    for cell in evidence:
        for quoted in re.findall(r"\"([^\"]+ [^\"]+)\"", cell):  # names have words
            if quoted.startswith("..."):
                continue  # "... whose keys reached the new node ...": the row's scenario again
            start = quoted.removesuffix("...").strip()
            if not any(name == start or name.startswith(start) for name in names):
                missing.append(quoted)
    assert not missing, missing
