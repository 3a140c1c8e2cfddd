"""ACL_COMMANDS names every command the memory sends, in Python or in its scripts."""

import re
from pathlib import Path

from chat_memory import ACL_COMMANDS

SRC = Path(__file__).resolve().parents[2] / "src" / "chat_memory"


def test_every_command_the_memory_sends_is_in_acl_commands() -> None:
    lua = "".join(path.read_text(encoding="utf-8") for path in SRC.glob("*.lua"))
    python = "".join(path.read_text(encoding="utf-8") for path in SRC.glob("*.py"))
    calls = re.findall(r"redis\.p?call\('(\w+)'(?:, '([A-Z]+)')?", lua)
    sent = {f"{name}|{sub}" if name == "CLUSTER" else name for name, sub in calls}
    sent |= set(re.findall(r'Command\(\(\s*"(\w+)"', python))
    assert sent, "no command found: the patterns no longer match the code"
    missing = sorted(c.lower() for c in sent if c.lower() not in ACL_COMMANDS)
    assert missing == []
