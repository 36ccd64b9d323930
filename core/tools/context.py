"""What a tool may touch: the workdir, the session's offload folder, the working and long-term memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.events import Event
from core.memory.working import WorkingMemory
from core.tools.registry import ToolError

if TYPE_CHECKING:
    from core.memory.longterm import LongTermMemory

OFFLOAD_SCHEME = "offload:"


@dataclass
class ToolContext:
    workdir: Path
    session_dir: Path
    memory: WorkingMemory
    # Events a tool produced (file changes); the loop records them after the tool returns.
    events: list[Event] = field(default_factory=list)
    # The plan version the agent last saw, recited in the request that led to this call.
    plan_version_seen: int = 0
    # Long-term memory shared by the sessions of this data folder (None: not available).
    long_memory: LongTermMemory | None = None
    session_id: str = ""

    @property
    def offload_dir(self) -> Path:
        return self.session_dir / "offload"

    def resolve(self, path: str) -> Path:
        """A path the agent named, confined to the workdir (or to offload/ with `offload:`)."""
        if path.startswith(OFFLOAD_SCHEME):
            return confine(self.offload_dir, path[len(OFFLOAD_SCHEME):], "the offload folder")
        return confine(self.workdir, path, "the workdir")


def confine(root: Path, path: str, what: str) -> Path:
    if not path or "\x00" in path:
        raise ToolError("A non-empty path without NUL characters is required.")
    root = root.resolve()
    candidate = Path(path)
    target = (candidate if candidate.is_absolute() else root / candidate).resolve()
    # resolve() follows symlinks, so a link that points outside is caught here too.
    if target != root and not target.is_relative_to(root):
        raise ToolError(
            f"Refused: {path!r} is outside {what} ({root}). Use a path relative to {what}."
        )
    return target
