"""The living documentation, from a small project with every kind of result, under xdist."""

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.site_screenshot import FLAGS

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = '''
from pytest_bdd import given, then, when, parsers

pytest_plugins = [
    "chat_memory_suite.catalog",
    "chat_memory_suite.check",
    "chat_memory_suite.collect",
    "chat_memory_suite.living_doc",
]


@given(parsers.parse("a basket with {count:d} apples"), target_fixture="basket")
def basket(count):
    """A basket.

    Given a basket with 3 apples
    """
    return {"apples": count}


@when(parsers.parse("{count:d} apples are eaten"))
def eat(basket, count):
    """Eat some.

    When 2 apples are eaten
    """
    basket["apples"] -= count


@when("the basket is weighed:")
def weigh(basket, datatable, docstring=None):
    """Weigh it.

    When the basket is weighed:
    """


@then(parsers.parse("the basket holds {count:d} apples"))
def holds(basket, count):
    """Count them.

    Then the basket holds 1 apples
    """
    assert basket["apples"] == count, f"the basket holds {basket['apples']} apples"
'''

FEATURE = """@fruit
Feature: Apple basket
  Apples are counted <exactly>, so nobody goes hungry.

  Rule: Eating removes apples

    @smoke
    Scenario: Eating two of three apples leaves one
      Given a basket with 3 apples
      When 2 apples are eaten
      Then the basket holds 1 apples

    Scenario: A miscount is caught
      Given a basket with 3 apples
      When 1 apples are eaten
      Then the basket holds 5 apples

    @skip
    Scenario: A skipped scenario still appears
      Given a basket with 3 apples
      Then the basket holds 3 apples

    Scenario: A deselected scenario still appears
      Given a basket with 3 apples
      Then the basket holds 3 apples

    Scenario Outline: Eating <eaten> of <start> leaves <left>
      Given a basket with <start> apples
      When <eaten> apples are eaten
      Then the basket holds <left> apples

      Examples:
        | start | eaten | left |
        | 5     | 1     | 4    |
        | 2     | 2     | 0    |

    Scenario Outline: A note <note> is shown as written
      Given a basket with 1 apples
      Then the basket holds 1 apples

      Examples:
        | note        |
        | line\\nbreak |
        | tab\there    |

    Scenario: A weighing shows its table
      Given a basket with 1 apples
      When the basket is weighed:
        | fruit | grams |
        | apple | 180   |
      Then the basket holds 1 apples
"""


@pytest.fixture(scope="module")
def living_doc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the sample project once, under two xdist workers, and return the output folder."""
    project = tmp_path_factory.mktemp("project")
    (project / "conftest.py").write_text(CONFTEST)
    (project / "pytest.ini").write_text("[pytest]\nmarkers =\n    fruit: f\n    smoke: s\n")
    (project / "features").mkdir()
    (project / "features" / "apples.feature").write_text(FEATURE)
    out = project / "doc"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:randomly", "-k", "not deselected",
         "--living-doc", str(out), "features"],
        cwd=project, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout  # one scenario fails on purpose
    assert "2 workers" in result.stdout
    return out


def test_the_markdown_holds_every_scenario_with_its_status(living_doc: Path) -> None:
    md = (living_doc / "living-doc.md").read_text(encoding="utf-8")
    assert md.splitlines()[4] == "**Tested: 7 scenarios, ✅ 6 passed, ❌ 1 failed.**"
    assert (
        "9 scenarios in all: ✅ 6 passed · ❌ 1 failed · 🚫 0 not supported · ⏭️ 1 skipped"
        " · ❓ 0 undefined · ⚪ 1 not run" in md
    )
    assert "| Apple basket | `features/apples.feature` | 6 | 1 | 0 | 1 | 0 | 1 |" in md
    assert "Apples are counted <exactly>, so nobody goes hungry." in md
    assert "✅ **Eating two of three apples leaves one** (passed) `@fruit` `@smoke`" in md
    assert "❌ **A miscount is caught** (failed)" in md
    assert "⏭️ **A skipped scenario still appears** (skipped) `@fruit` `@skip`" in md
    assert "⚪ **A deselected scenario still appears** (not run)" in md
    assert "✅ **Eating 2 of 2 leaves 0** (passed)" in md
    assert "- ❌ **Then** the basket holds 5 apples" in md
    assert "AssertionError: the basket holds 2 apples" in md
    assert "  | fruit | grams |\n  | --- | --- |\n  | apple | 180 |" in md


def test_the_markdown_opens_with_what_needs_attention(living_doc: Path) -> None:
    md = (living_doc / "living-doc.md").read_text(encoding="utf-8")
    summary = md[md.index("## Needs attention") : md.index("| Feature | File |")]
    assert "- ❌ [A miscount is caught](#s-features-apples-feature-" in summary
    assert "AssertionError: the basket holds 2 apples" in summary
    assert "Eating two of three" not in summary


def test_an_outline_shows_its_examples_each_row_linked_to_its_result(living_doc: Path) -> None:
    md = (living_doc / "living-doc.md").read_text(encoding="utf-8")
    assert "**Scenario Outline: Eating <eaten> of <start> leaves <left>**" in md
    assert "- **Given** a basket with <start> apples" in md
    assert "| start | eaten | left | result |" in md
    row = md[md.index("| 5 | 1 | 4 | [✅ passed](#") :].split("\n")[0]
    anchor = row.split("](#")[1].rstrip(") |")
    assert f'<a id="{anchor}"></a>✅ **Eating 1 of 5 leaves 4** (passed)' in md


def test_invisible_characters_and_skip_reasons_are_shown(living_doc: Path) -> None:
    md = (living_doc / "living-doc.md").read_text(encoding="utf-8")
    assert "**A note line↵break is shown as written**" in md
    assert "**A note tab⇥here is shown as written**" in md
    assert "| line↵break | [✅ passed]" in md
    skipped = md[md.index("**A skipped scenario still appears** (skipped)") :].split("\n")[0]
    assert ": Skipped" in skipped


def test_the_page_is_self_contained_and_escapes_feature_text(living_doc: Path) -> None:
    html = (living_doc / "index.html").read_text(encoding="utf-8")
    assert "Apples are counted &lt;exactly&gt;, so nobody goes hungry." in html
    assert "<exactly>" not in html
    assert "http://" not in html
    assert "https://" not in html
    assert 'data-status="failed"' in html
    assert '<option value="smoke">@smoke</option>' in html


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = list(FLAGS)  # the flags CI pictures the site with


class _Scenarios(HTMLParser):
    """Reads which scenarios a rendered page shows, and its visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []
        self.hidden: list[str] = []
        self.text: list[str] = []
        self._in_scenario: bool | None = None
        self._in_name = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "details" and "scenario" in (values.get("class") or ""):
            self._in_scenario = "hidden" not in values
        self._in_name = tag == "span" and values.get("class") == "name"

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_name and self._in_scenario is not None:
            (self.shown if self._in_scenario else self.hidden).append(data.strip())
            self._in_name = False


def render(url: str, user_data: Path) -> _Scenarios:
    if CHROMIUM is None:
        if os.environ.get("CHAT_MEMORY_REQUIRE_BROWSER"):
            pytest.fail("CHAT_MEMORY_REQUIRE_BROWSER is set but Chromium is not installed")
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    dom = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}", "--virtual-time-budget=3000",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    page = _Scenarios()
    page.feed(dom)
    return page


def test_the_page_in_a_real_browser_shows_features_errors_and_filters(
    living_doc: Path, tmp_path: Path
) -> None:
    url = (living_doc / "index.html").as_uri()
    page = render(url, tmp_path / "profile")
    text = " ".join(page.text)
    assert "Apple basket" in text
    assert "AssertionError: the basket holds 2 apples" in text
    assert len(page.shown) == 9
    assert "9 shown" in text

    by_tag = render(url + "#tag=smoke", tmp_path / "profile")
    assert by_tag.shown == ["Eating two of three apples leaves one"]
    assert "1 shown" in " ".join(by_tag.text)

    by_status = render(url + "#status=failed,not%20run", tmp_path / "profile")
    assert by_status.shown == ["A miscount is caught", "A deselected scenario still appears"]

    screenshot = living_doc / "page.png"
    subprocess.run(
        [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         "--window-size=1200,1400", f"--screenshot={screenshot}", url],
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000
