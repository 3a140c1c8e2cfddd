"""What the README shows is what the library does."""

import re
from pathlib import Path

from chat_memory import acl_rules, exceptions

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_readme_acl_line_is_the_librarys() -> None:
    lines = [line for line in README.splitlines() if line.startswith("ACL SETUSER")]
    assert lines == [f"ACL SETUSER chat-memory on >CHANGE-ME {' '.join(acl_rules())}"]


def test_the_readme_error_tree_names_every_error_in_the_library() -> None:
    tree = README[README.index("ChatMemoryError\n├") :].split("```")[0]
    drawn = set(re.findall(r"\b([A-Z]\w+Error)\b", tree))
    assert drawn - {"ValueError"} == set(exceptions.__all__)
