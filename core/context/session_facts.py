"""The session's facts at the end of the system prompt: where the agent works, on what system,
under which approval policy and limits, since when, and the project's own instructions for agents.

They are fixed for the session (taken from its first event), so the prefix stays byte-stable;
they come last, so the text before them is the same for every session and a provider can serve
it from its cache even on a session's first request.
"""

from __future__ import annotations

import sys

from core.context.project import MAX_INSTRUCTION_FILES_NAMED
from core.events import SessionStarted

SYSTEMS = {"win32": "Windows; shell_run uses cmd.exe", "darwin": "macOS; shell_run uses /bin/sh"}


def session_facts(config: SessionStarted, started: str, risky_tools: list[str], platform: str = sys.platform) -> str:
    risky = ", ".join(risky_tools) or "none"
    approval = {
        "ask": f"{risky} wait for the person's approval (they may allow a tool for the rest of the session)",
        "all": f"the person allowed every tool for this session, {risky} included",
        "none": f"{risky} are refused in this session: work without them",
    }[config.approval]
    limits = (f"warnings from turn {config.warn_turn}; at turn {config.danger_turn} the person is asked "
              f"whether you go on; at most {config.max_turns} turns")
    caps = [f"{config.budget_tokens:,} tokens"] if config.budget_tokens else []
    caps += [f"${config.budget_usd:,.2f}"] if config.budget_usd else []
    budget = f"; the person is asked again after {' or '.join(caps)}" if caps else ""
    lines = [
        "# This session",
        f"- Started: {started[:10] or 'unknown'}",
        f"- Workdir: {config.workdir}",
        *([f"- Git: {config.git}, when the session started"] if config.git else []),
        *([f"- Other sessions' agents at work in this folder when this session started: {', '.join(config.alongside)}. "
           "Files may change under you: read a file again before you edit it, and leave their changes be"]
          if config.alongside else []),
        *([f"- Running in this folder for the person, left by other sessions' tasks: {', '.join(config.served)}. "
           "Leave it running: the person may be using it, it may serve your changes as you make them, and a port "
           "it holds is taken"] if config.served else []),
        f"- System: {SYSTEMS.get(platform, 'Linux; shell_run uses /bin/sh')}",
        f"- Approvals: {approval}",
        f"- Limits: {limits}{budget}",
    ]
    if config.instruction_files:
        named = config.instruction_files[:MAX_INSTRUCTION_FILES_NAMED]
        more = " and more" if len(config.instruction_files) > len(named) else ""
        lines.append(f"- Folders with instructions of their own: {', '.join(named)}{more}. Follow a folder's in it, "
                     "commands run there included: read them before you work there (the file tools show them "
                     "the first time you use that folder)")
    if config.instructions:
        lines += ["", f"# Project instructions — {config.instructions_file} in the workdir, as it was when the "
                      "session started", config.instructions]
    return "\n".join(lines)
