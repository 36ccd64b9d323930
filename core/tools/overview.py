"""A listing longer than the agent's output room, told as a tree cut where it fits.

file_list of a large project (thousands of files) used to give the first 500 paths in walking
order, which the output limit then cut to the first few dozen: the agent saw `a2a_protocol/` and
nothing of what the project holds. Instead, the files near the top are listed and every folder
deeper than fits is one line with the number of files in it, as deep as the room allows, so the
agent sees the whole shape of the project and lists the folder it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from core.text import counted

MAX_COUNTED = 100_000  # files walked to count at most (a home folder, a dataset): the walk stops there


def fitted_listing(paths: Iterable[str], room: int, where: str) -> str:
    """`paths` (a walk's, relative, with "/", each folder's files before its subfolders) listed
    whole when they fit in `room` characters, else as the deepest tree that fits. `where`: "under
    'src'" and the pattern, for the note that says which."""
    names: list[str] = []
    for name in paths:
        if len(names) == MAX_COUNTED:
            return _overview(names, room, where, stopped=True)
        names.append(name)
    whole = "\n".join(names)
    return whole if len(whole) <= room else _overview(names, room, where, stopped=False)


@dataclass
class _Folder:
    path: str  # from the listed folder, with "/" at the end ("" for the listed folder itself)
    files: list[str] = field(default_factory=list)  # its own, in the walk's order
    folders: list[_Folder] = field(default_factory=list)
    count: int = 0  # the files under it, at any depth
    opened: bool = False

    @property
    def line(self) -> str:
        return f"{self.path}  ({counted(self.count, 'file')})"

    def cost(self) -> int:
        """The characters opening it adds: its files' and subfolders' lines in place of its own."""
        return (sum(len(name) + 1 for name in self.files) + sum(len(sub.line) + 1 for sub in self.folders)
                - len(self.line) - 1)

    def lines(self) -> Iterator[str]:
        yield from self.files
        for sub in self.folders:
            if sub.opened:
                yield from sub.lines()
            else:
                yield sub.line


def _overview(names: list[str], room: int, where: str, stopped: bool) -> str:
    many = f"the first {len(names):,} files" if stopped else f"{len(names):,} files"
    head = (f"[{many} {where}, more than fit here, so the larger folders are one line each, with the number of "
            "files in them. Give a folder as the path to list its files, or narrow the pattern]")
    top = _tree(names)
    top.opened = True
    used = len(head) + 1 + top.cost() + len(top.line) + 1
    # Level by level, the smallest folders first, each folder is opened if what it adds is no more
    # than its share of the room left among the level's folders still to open: a small folder
    # costs a few lines, a large one is the folder the agent lists by its path anyway, and of
    # thirty folders alike either all are opened or none (one opened of them reads as an accident:
    # the first refused, the level ends there).
    level = top.folders
    while level:
        deeper: list[_Folder] = []
        pending = sorted(level, key=_Folder.cost)
        for index, folder in enumerate(pending):
            if folder.cost() > (room - used) // (len(pending) - index):
                break  # the rest cost as much or more
            folder.opened = True
            used += folder.cost()
            deeper.extend(folder.folders)
        level = deeper
    return _within([head, *top.lines()], room)


def _tree(names: list[str]) -> _Folder:
    top = _Folder("")
    for name in names:
        folder = top
        folder.count += 1
        for part in name.split("/")[:-1]:
            path = f"{folder.path}{part}/"
            if not folder.folders or folder.folders[-1].path != path:  # the walk gives a folder's files together
                folder.folders.append(_Folder(path))
            folder = folder.folders[-1]
            folder.count += 1
        folder.files.append(name)
    return top


def _within(lines: list[str], room: int) -> str:
    """The lines that fit in `room`, and how many did not (a folder of thousands of subfolders)."""
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        left = len(lines) - index
        if used + len(line) + 1 > room - 40 and left > 1:
            kept.append(f"[… {left:,} more lines; give a folder as the path to list it]")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)
