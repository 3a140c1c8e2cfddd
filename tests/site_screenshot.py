"""Take the site's picture of the living documentation from a real run: docs/living-doc.png.

The documentation site shows the living documentation as a reviewer sees it.
The picture is never drawn by hand or kept from an old run: this takes it, in
headless Chromium, of ``living-doc/index.html`` as the last ``pytest
--living-doc living-doc`` wrote it (running ``pytest features/ --living-doc
living-doc`` first when there is none). CI runs it before building the site;
so does a preview::

    python -m tests.site_screenshot && mkdocs serve
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def screenshot(page: Path, output: Path) -> None:
    """Draw ``page`` in headless Chromium, 1200 × 1400 pixels, into the PNG ``output``."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "--window-size=1200,1400",
             "--virtual-time-budget=3000", f"--screenshot={output}", page.resolve().as_uri()],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    if output.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"Chromium wrote no PNG to {output}")


def main() -> None:
    """Run the suite for a living documentation if there is none, then take its picture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--living-doc", type=Path, default=ROOT / "living-doc")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "living-doc.png")
    options = parser.parse_args()
    page = options.living_doc / "index.html"
    if not page.exists():
        subprocess.run(
            [sys.executable, "-m", "pytest", "features/", "-q", "-p", "no:randomly",
             "--living-doc", str(options.living_doc)],
            cwd=ROOT, check=True,
        )  # fmt: skip
    screenshot(page, options.output)
    print(f"wrote {options.output} from {page}")


if __name__ == "__main__":
    main()
