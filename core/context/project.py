"""Project instructions: the AGENTS.md (or CLAUDE.md) a project keeps for coding agents.

Read once, when a session starts, and kept in its first event: the prefix they join stays
byte-stable for the whole session even if the file changes, and a reopened session sees what the
agent saw. A long file is cut (the agent can read the rest with file_read).
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

# The first one found is used. AGENTS.md is the convention shared by most coding agents.
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 8_000  # about 2,000 tokens: a fifth of the fixed zone at most


def read_project_instructions(workdir: Path) -> tuple[str, str]:
    """(file name, text) of the workdir's instructions for agents; ("", "") when there are none."""
    for name in INSTRUCTION_FILES:
        path = workdir / name
        if not path.is_file():
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_INSTRUCTION_CHARS * 4 + 1)  # a UTF-8 character is at most 4 bytes
        except OSError as exc:
            log.warning("project instructions %s not read: %s", path, exc)
            return "", ""
        if b"\x00" in data:
            log.warning("project instructions %s ignored: a binary file", path)
            return "", ""
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").strip()
        if len(text) > MAX_INSTRUCTION_CHARS or path.stat().st_size > len(data):
            cut = text[:MAX_INSTRUCTION_CHARS].rsplit("\n", 1)[0]
            next_line = cut.count("\n") + 2
            text = (f"{cut}\n[… {name} is longer; the rest is not shown here. Read it with "
                    f"file_read(path=\"{name}\", offset={next_line}).]")
        return name, text
    return "", ""
