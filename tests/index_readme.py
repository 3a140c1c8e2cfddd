"""Write the README as a package index shows it: docs/index-readme.md.

A package index (PyPI) renders the project's description on its own page,
where a relative link such as ``docs/steps.md`` leads nowhere and a relative
image is not shown. The project declares no public repository to point
absolute links at, so the description the package carries is the README with
each relative link or image turned into text naming the file, which the
source distribution ships (MANIFEST.in grafts docs/). ::

    python -m tests.index_readme            # write docs/index-readme.md
    python -m tests.index_readme --check    # fail if it is out of date

``pyproject.toml`` names docs/index-readme.md as the package's readme; a unit
test keeps it in step with README.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
OUTPUT: Final = ROOT / "docs" / "index-readme.md"

# An inline link or image whose target has no scheme and is not an anchor.
_RELATIVE: Final = re.compile(
    r"(?P<image>!?)\[(?P<text>[^\]]*)\]\((?P<path>(?![a-z]+:|#)[^)\s]+)\)"
)
# A reference definition ("[name]: target") whose target is relative.
_RELATIVE_REFERENCE: Final = re.compile(r"^\[[^\]]+\]: (?![a-z]+:|#)\S+", re.MULTILINE)
_HEADER: Final = (
    "<!-- Generated from README.md by `python -m tests.index_readme`; do not edit."
    ' Files named "in the source distribution" are in the sdist. -->\n\n'
)


def _as_text(match: re.Match[str]) -> str:
    text, path = match["text"], match["path"]
    if match["image"]:
        return f"*({text}: `{path}`, in the source distribution)*"
    if text.strip("`") == path:
        return f"`{path}` (in the source distribution)"
    return f"{text} (`{path}`, in the source distribution)"


def index_readme(readme: str) -> str:
    """Return ``readme`` with every relative link and image turned into text naming its file."""
    if found := _RELATIVE_REFERENCE.search(readme):
        raise ValueError(f"a relative reference definition the index cannot follow: {found[0]!r}")
    return _HEADER + _RELATIVE.sub(_as_text, readme)


def named_files(readme: str) -> list[str]:
    """The files the README links to by a relative path (the sdist must ship each)."""
    return sorted({match["path"].split("#")[0] for match in _RELATIVE.finditer(readme)})


def main(argv: list[str] | None = None) -> int:
    """Write docs/index-readme.md from README.md, or with --check compare them."""
    parser = argparse.ArgumentParser(prog="python -m tests.index_readme", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    wanted = index_readme((ROOT / "README.md").read_text(encoding="utf-8"))
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != wanted:
            print(f"{OUTPUT} is out of date: python -m tests.index_readme", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(wanted, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
