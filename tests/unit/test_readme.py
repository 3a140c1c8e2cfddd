"""What the README and the documentation site show is what the library does."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

from chat_memory import acl_rules, exceptions

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """Return a page of the documentation site (docs/)."""
    return (DOCS / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("text", [README, page("operating.md")], ids=["README", "operating"])
def test_the_acl_line_shown_is_the_librarys(text: str) -> None:
    lines = [line for line in text.splitlines() if line.startswith("ACL SETUSER")]
    assert lines == [f"ACL SETUSER chat-memory on >CHANGE-ME {' '.join(acl_rules())}"]


def test_the_error_tree_names_every_error_in_the_library() -> None:
    text = page("application.md")
    tree = text[text.index("ChatMemoryError\n├") :].split("```")[0]
    drawn = set(re.findall(r"\b([A-Z]\w+Error)\b", tree))
    assert drawn - {"ValueError"} == set(exceptions.__all__)


def test_every_sentence_in_the_guides_step_table_exists() -> None:
    from chat_memory_suite.catalog import step_definitions
    from chat_memory_suite.gherkin import KINDS, StepSpec

    guide = page("writing-scenarios.md")
    table = guide[guide.index("| step | meaning |") :].split("\n\n")[0]
    sentences = re.findall(r"`((?:Given|When|Then) [^`]+)`", table)
    assert len(sentences) > 40
    definitions = step_definitions(Path(__file__).resolve().parents[2])
    by_keyword = {word.capitalize(): kind for kind in KINDS.values() for word in [kind]}
    missing = []
    for sentence in sentences:
        keyword, text = sentence.split(" ", 1)
        step = StepSpec(keyword, by_keyword[keyword], text, 1)
        if not any(d.matches(step) for d in definitions):
            missing.append(sentence)
    assert missing == []


def test_the_readme_suite_time_is_the_one_docs_suite_speed_measured() -> None:
    """The README's "pytest features/ ... about N s" is what python -m benchmarks.suite wrote."""
    claim = re.search(r"pytest features/ +# .*?about (\d+) s", README)
    assert claim, "the README's install block no longer says how long pytest features/ takes"
    report = (ROOT / "docs" / "suite-speed.md").read_text(encoding="utf-8")
    measured = re.search(r"\| `pytest features/` \| (\d+) \|", report)
    assert measured, "docs/suite-speed.md has no timing of pytest features/: regenerate it"
    assert claim[1] == measured[1], (
        f"the README says about {claim[1]} s, docs/suite-speed.md measured {measured[1]} s"
    )


def test_the_mutation_figures_shown_are_docs_mutation_mds() -> None:
    report = (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")
    header = report.split("\n\n")[1]
    commits = re.findall(r"(?:Mutated: commit|ran(?: again)? on commit) `([^`]+)`", header)
    row = re.search(
        r"^\| \*\*library\*\* \| (\d+) \| [\d.]+% \| ([\d.]+%) \| ([\d.]+%)"
        r" \| ([\d.]+%|not run) \|",
        report,
        re.M,
    )
    assert commits
    assert row is not None
    counted, alone, behaviour, with_unit = row.groups()
    project = page("project.md")
    claim = " ".join(project[project.index("The saved run (") :].split("\n\n")[0].split())
    for commit in commits:
        assert f"commit {commit}" in claim or f"commits {commit}" in claim, (commit, claim)
    assert f"{int(counted):,} mutants counted" in claim, claim
    assert f"alone kills {alone} of them, and {behaviour} of those" in claim, claim
    if with_unit == "not run":  # a unit-test pass left: the report says of how many functions
        left = re.search(r"the unit-test pass of (\d+) function", report)
        assert left is not None
        assert f"the unit tests have not run on the mutants of {left[1]} functions" in claim, claim
    else:
        assert f"With the unit tests, {with_unit} are killed" in claim, claim
    survivors = re.search(r"^Survivors of the acceptance suite: .*$", report, re.M)
    assert survivors is not None
    unexplained = re.search(r"(\d+) unexplained", survivors[0])
    if unexplained is None:
        assert "no survivor is unexplained" in claim, claim
    else:
        assert f"{unexplained[1]} survivors are still unexplained" in claim, claim
    not_run = re.search(r"Not run yet: the mutants of (\d+) of the (\d+) functions", report)
    if not_run is None:
        assert "of every function" in claim, claim
    else:
        ran = int(not_run[2]) - int(not_run[1])
        assert f"of {ran} of the {not_run[2]} functions" in claim, claim


def test_the_package_description_is_the_readme_as_an_index_shows_it() -> None:
    """docs/index-readme.md: the package readme, README.md with no relative link or image."""
    from tests.index_readme import OUTPUT, index_readme

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert ROOT / project["readme"] == OUTPUT
    described = OUTPUT.read_text(encoding="utf-8")
    assert described == index_readme(README), "out of date: python -m tests.index_readme"
    targets = re.findall(r"\]\(([^)\s]+)\)", described)
    targets += re.findall(r"^\[[^\]]+\]: (\S+)", described, re.MULTILINE)
    assert [t for t in targets if not t.startswith(("https://", "http://", "#"))] == []


def test_an_index_description_names_the_files_it_cannot_link() -> None:
    from tests.index_readme import index_readme, named_files

    readme = (
        "See [docs/steps.md](docs/steps.md), [the report](docs/mutation.md#scores),"
        " [pytest](https://pytest.org) and [below](#install).\n"
        "![The page](docs/living-doc.png)\n"
    )
    body = index_readme(readme).split("\n\n", 1)[1]
    assert body == (
        "See `docs/steps.md` (in the source distribution), the report"
        " (`docs/mutation.md#scores`, in the source distribution), [pytest](https://pytest.org)"
        " and [below](#install).\n"
        "*(The page: `docs/living-doc.png`, in the source distribution)*\n"
    )
    assert named_files(readme) == ["docs/living-doc.png", "docs/mutation.md", "docs/steps.md"]
    with pytest.raises(ValueError, match="relative reference"):
        index_readme("[steps]: docs/steps.md\n")


def _python_blocks() -> list[tuple[str, str]]:
    """Every ```python block of the README and the documentation site, with its page."""
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    return [
        (p.name, block)
        for p in pages
        if p.name != "index-readme.md"
        for block in re.findall(r"```python\n(.*?)```", p.read_text(encoding="utf-8"), re.DOTALL)
    ]


@pytest.mark.parametrize(
    ("name", "block"),
    _python_blocks(),
    ids=[f"{n}-{i}" for i, (n, _) in enumerate(_python_blocks())],
)
def test_every_python_example_compiles_and_imports_what_exists(name: str, block: str) -> None:
    """Each snippet is valid Python, and every chat_memory name it imports exists.

    tests/unit/test_doc_examples.py runs each of them.
    """
    tree = compile(block, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    assert tree is not None
    for module, names in re.findall(r"^from (chat_memory[\w.]*) import ([^\n(]+)$", block, re.M):
        imported = __import__(module, fromlist=["_"])
        for imported_name in (n.strip() for n in names.split(",")):
            assert hasattr(imported, imported_name), f"{name}: {module} has no {imported_name}"


def test_the_kit_page_lists_every_capability_with_its_meaning() -> None:
    from chat_memory_suite.adapter import CAPABILITIES

    kit = page("kit.md")
    table = kit[kit.index("| capability | the memory... |") :].split("\n\n")[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+) \|$", table, re.M))
    assert rows == CAPABILITIES


@pytest.mark.parametrize("text", [README, page("index.md")], ids=["README", "site"])
def test_the_number_of_scenarios_shown_is_about_the_suites(text: str) -> None:
    from chat_memory_suite.gherkin import feature_files, read_feature

    claim = re.search(r"about (\d+) scenarios", text)
    assert claim, "the page no longer says how many scenarios the suite has"
    features = [read_feature(path, ROOT) for path in feature_files([ROOT / "features"])]
    there = sum(len(feature.scenarios) for feature in features)
    assert abs(int(claim[1]) - there) <= there // 20, f"the suite has {there} scenarios"


def test_the_project_page_counts_the_regression_breaks() -> None:
    from tests.unit.test_suite_catches_regressions import BREAKS

    claim = re.search(r"breaks the library in (\d+) realistic ways", page("project.md"))
    assert claim, "docs/project.md no longer says how many ways the library is broken"
    assert int(claim[1]) == len(BREAKS)


def test_the_readme_cost_of_a_session_is_what_docs_benchmarks_md_measured() -> None:
    """The README's "about N KB" and "about R times" come from the generated benchmarks."""
    claim = re.search(
        r"takes about (\d+) KB of Redis.*?about ([\d.]+)\s+times a minimal", README, re.S
    )
    assert claim, "the README no longer says what a session costs"
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    bytes_row = re.search(r"^\| chat-memory add_message \| ([\d,]+) \(", benchmarks, re.M)
    ratio_row = re.search(
        r"^\| server time per append ≤ 2× the minimal Lua script \(issue 24\) \| ([\d.]+)×",
        benchmarks,
        re.M,
    )
    assert bytes_row, "docs/benchmarks.md lost its bytes-per-session row"
    assert ratio_row, "docs/benchmarks.md lost its server-time target"
    assert abs(int(bytes_row[1].replace(",", "")) / 1000 - int(claim[1])) <= 1
    assert abs(float(ratio_row[1]) - float(claim[2])) <= 0.4  # a noisy machine's spread
    per_id = re.search(r"costs about (\d+) bytes\s+per remembered id", README)
    measured = re.search(r"costs about (\d+) bytes per remembered id", benchmarks)
    assert per_id, "the README no longer says what a longer retry window costs"
    assert measured, "docs/benchmarks.md lost the bytes per remembered id"
    assert abs(int(per_id[1]) - int(measured[1])) <= 20
