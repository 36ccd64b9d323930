"""Search long-term memory from the window (Ctrl+Shift+M): what the agent's memory_search sees.

Results show where each hit lives (file and lines), its score and how it was found (meaning,
keywords). When vector search runs on a fallback, or there is no embedding model, the notice is
shown under the results: never a silent downgrade.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from core.text import one_line
from gui.announcer import Announcer
from gui.keys import search_field
from gui.qt import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    Signal,
)
from gui.screen_fit import fit_to_screen
from gui.theme import coloured, set_style_property

if TYPE_CHECKING:
    from core.memory.index import Hit
    from core.memory.longterm import MemoryStatus


SAID_CHARS = 300  # of the first hit said with a search's result (all of it is in the window)


class MemorySearchDialog(QDialog):
    search_requested = Signal(str)
    open_folder_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Search memory — Tripane")
        self.setObjectName("memory_search")
        fit_to_screen(self, 720, 520)
        self.query = search_field("What do you want to find? Words, a paraphrase, an error code… (Enter)",
                                  "Search long-term memory")
        self.results = QTextBrowser()
        self.results.setAccessibleName("Memory search results")
        self.results.setOpenLinks(False)
        self.note = QLabel("")
        self.note.setObjectName("memory_note")
        self.note.setWordWrap(True)
        self.open_folder = QPushButton("Open memory folder")
        self.open_folder.setAutoDefault(False)  # Enter in the query searches; it must not open the folder too
        self.open_folder.setToolTip("MEMORY.md, the daily logs and the skills are Markdown files you can edit")
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.results, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.note, 1)
        bottom.addWidget(self.open_folder)
        layout.addLayout(bottom)
        self.query.returnPressed.connect(self._search)
        self.open_folder.clicked.connect(self.open_folder_requested)
        # What a search found, said: the keys stay in the query box, and a screen reader says only
        # what has them.
        self.announcer = Announcer(self)
        self.show_status(None)

    def _search(self) -> None:
        text = self.query.text().strip()
        if text:
            self.results.setHtml(f"<p>Searching for <b>{html.escape(text)}</b>…</p>")
            self.search_requested.emit(text)

    def show_status(self, status: MemoryStatus | None, problem: str | None = None) -> None:
        if status is None:
            self.note.setText(problem or "Long-term memory is loading…")
            set_style_property(self.note, "level", "warn" if problem else "")
        else:
            text = status.describe()
            if problem:
                text += f". Note: {problem}"
            self.note.setText(text)
            set_style_property(self.note, "level", "warn" if (status.notice or problem) else "")
            if status.chunks == 0 and not self.results.toPlainText().strip():
                self.results.setHtml("<p>Long-term memory is empty so far. The agent adds to it as it works: an "
                                     "entry in the daily log after each task, facts and preferences it verified "
                                     "(MEMORY.md), procedures that worked (skills). Its files are in the "
                                     "<i>memory</i> folder of the data folder, and you can edit them.</p>")

    def show_hits(self, query: str, hits: list[Hit]) -> None:
        if not hits:
            self.results.setHtml(f"<p>Nothing in memory matches <b>{html.escape(query)}</b>.</p>")
            return self.announcer.say(f"Nothing in memory matches {query}.")
        first = one_line(hits[0].text, SAID_CHARS)
        self.announcer.say(f"1 result for {query}, in {hits[0].path}: {first}" if len(hits) == 1 else
                           f"{len(hits)} results for {query}; the first, in {hits[0].path}: {first} (the rest: Tab to "
                           "the results)")
        parts = [f"<p>{len(hits)} results for <b>{html.escape(query)}</b> "
                 "(score = 0.7 × meaning + 0.3 × keywords)</p>"]
        for hit in hits:
            text = hit.text if len(hit.text) <= 900 else hit.text[:900] + " …"
            parts.append(
                f"<p><b>{html.escape(hit.path)}</b> lines {hit.start_line}–{hit.end_line} · score "
                f"{hit.score:.2f} " + coloured("muted", f"(meaning {hit.vector:.2f}, keywords {hit.keyword:.2f})") +
                f"</p><pre style='white-space:pre-wrap'>{html.escape(text)}</pre>")
        self.results.setHtml("".join(parts))

    def show_failure(self, error: BaseException) -> None:
        self.results.setHtml(f"<p>The search failed: {html.escape(str(error))}</p>")
        self.announcer.say(f"The search failed: {error}")
