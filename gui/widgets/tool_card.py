"""A tool call in the conversation: a header with its status, the arguments and result folded
underneath."""

from __future__ import annotations

import difflib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from core.agent.running_calls import (
    kept_output,
    left_running_by_call,
    still_running,
    stop_left_running,
    stop_still_running,
)
from core.events import CommandChangedFiles, ToolCall, ToolResult
from core.paths import shortened_path
from core.text import one_line
from core.tools.context import OFFLOAD_SCHEME, STOPPABLE_TOOLS
from core.tools.shell import background_log_named
from gui.announcer import spoken
from gui.bidi import isolated
from gui.desktop_open import open_file, open_on_desktop, open_web_link
from gui.markdown import linked
from gui.mnemonics import as_written
from gui.qt import (
    QApplication,
    QContextMenuEvent,
    QFrame,
    QHBoxLayout,
    QMenu,
    Qt,
    QTimer,
    QToolButton,
    QUrl,
    QVBoxLayout,
    Signal,
)
from gui.theme import coloured, set_style_property
from gui.widgets.chat_items import (
    GO_BACK_BEFORE_STEP,
    PRE,
    copy_menu,
    escape_html,
    fit_width,
    offer_going_back,
    rich_label,
)
from gui.widgets.pictures import PicturesShown

PREVIEW_CHARS = 4000  # of a result, shown in the card (Copy result copies all of it)
# The argument that says what a call is about, for its card's header (arguments arrive sorted by
# name, so "the first one" would be file_edit's replacement text or human_ask's options). A search
# is about its text more than the folder it searched.
SUMMARY_KEYS = ("query", "path", "command", "url", "question", "title", "summary")
PROSE_KEYS = frozenset({"question", "title", "summary"})  # (a command or a path is shown as it is)
SUMMARY_CHARS = 71  # of the call's first argument, in its header
MARKDOWN_MARKS = re.compile(r"\*\*|__|`")
# A running command's latest output lines, as a terminal shows them: enough to see a test run
# move, few enough that the card does not push the conversation away.
LIVE_LINES = 12
LIVE_KEEP_CHARS = 8000  # of what it printed, kept to find those lines in
LIVE_LINE_CHARS = 300
# What stopping a call alone is called on its card: its button, the button's tip, its menu item.
STOP_WORDS = {
    "shell_run": ("Stop command", "Stop this command; the agent sees that you stopped it and goes on",
                  "&Stop this command"),
    "delegate_research": ("Stop research", "The helper reports what it has found so far; the agent goes on",
                          "&Stop this research"),
}


RUNS_ON_CHECK_MS = 5000  # how often a card asks whether a command that outlived Tripane still runs
LOG_CHECK_MS = 1000  # how often the card of what runs on for the person shows what it printed since
LOG_TAIL_BYTES = 8192  # of its log, what is read for the latest lines
FILE_TOOLS = ("file_read", "file_write", "file_edit")  # their `path`: a file of the work folder


class ToolCard(QFrame):
    """One tool call: a header with its status, the arguments and result folded underneath."""

    stop_requested = Signal(str)  # the call's id: the person stops this command alone
    left_stopped = Signal(str)  # the call's id: the person stopped what its command left running
    left_ended = Signal(str)  # the call's id: what its command left running is no longer running

    def __init__(self, call: ToolCall, folder: Path | None = None,
                 workdir: Callable[[], Path | None] = lambda: None):
        super().__init__()
        self.setObjectName("tool_card")
        self.call = call
        self.workdir = workdir  # the session's work folder, as it is now (it may be moved)
        self.folder = folder  # the session's folder, where an offloaded output's file is
        self.status = "running"
        self.go_back: Callable[[], None] | None = None  # to before the step that made the call (MessageItem's)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.header = QToolButton()
        self.header.setObjectName("tool_header")
        self.header.setCheckable(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.RightArrow)
        self.header.toggled.connect(self._on_header_toggled)
        fit_width(self.header)
        # While a command runs, a button stops it alone (one that hangs); Esc stops the whole run.
        self.stop_button = QToolButton()
        self.stop_button.setObjectName("tool_stop")
        button, tip, _ = STOP_WORDS.get(call.name, STOP_WORDS["shell_run"])
        self.stop_button.setText(button)
        self.stop_button.setToolTip(tip)
        self.stop_button.setVisible(False)
        self.stop_button.clicked.connect(self.request_stop)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.header, 1)
        row.addWidget(self.stop_button)
        layout.addLayout(row)
        self.details = rich_label("", "tool_details")
        self.details.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)  # the card's menu
        self.details.setOpenExternalLinks(False)  # the whole output's file, an address: _open_link
        self.details.linkActivated.connect(self._open_link)
        self.details.setVisible(False)
        layout.addWidget(self.details)
        self._outcome: ToolResult | None = None
        self._changed: CommandChangedFiles | None = None  # the work folder's files a command changed
        self._same_as = ""  # the earlier call whose identical output this one points to
        self._started: float | None = None  # when the tool began to run (monotonic), if seen
        self._awaiting_approval = False
        self._unfinished = False  # the run stopped with this call in progress (a full disk)
        self._runs_on: int | None = None  # then, the process group its command still runs in
        self._ended_since = False  # that command ended later, without Tripane
        self._stopped_by_person = False  # ended so by the person, from this card
        self._watch: QTimer | None = None  # looks again, RUNS_ON_CHECK_MS apart, whether it still runs
        self._log_watch: QTimer | None = None  # what it left running prints: looked at LOG_CHECK_MS apart
        self._log_tail = ""  # the latest lines of it, as shown
        self._log_size = -1
        # Its command returned, leaving processes running (a dev server) that a killed Tripane never
        # stopped, or that run on for the person as the task ended done (_kept): _runs_on and the
        # rest are then about them (see left_running).
        self._left = False
        self._kept = False
        self._live = ""  # the latest of what it printed while running
        self._opened_for_output = False  # unfolded to show live output, not by the person
        self._person_chose = False  # the person folded or unfolded it: left as they want it
        self._pictures: PicturesShown | None = None  # the pictures the call showed the agent
        self.header.clicked.connect(self._on_header_clicked)
        self._render()

    def _arguments(self) -> str:
        try:
            return json.dumps(json.loads(self.call.arguments or "{}"), indent=2, ensure_ascii=False)
        except ValueError:
            return self.call.arguments

    def _summary(self) -> str:
        key = None
        try:
            arguments = json.loads(self.call.arguments or "{}")
            if isinstance(arguments, dict):
                key = next((k for k in SUMMARY_KEYS if k in arguments), next(iter(arguments), None))
                first = arguments.get(key, "") if key is not None else ""
            else:
                first = ""
        except ValueError:
            first = self.call.arguments
        if key in PROSE_KEYS:  # the agent's Markdown, read as the dialog shows it: "**12**" was its header
            first = MARKDOWN_MARKS.sub("", str(first))
        if key == "path":  # (the header's own cut is in its middle: the name stays, with the state after it)
            return shortened_path(" ".join(str(first).split()), SUMMARY_CHARS)
        if key == "query" and (where := " ".join(str(arguments.get("path", "")).split())) not in ("", "."):
            # Where a search looked, when not the whole folder: one log, an archive, src/.
            text = one_line(str(first), SUMMARY_CHARS // 2)
            return f"{text}  in {shortened_path(where, SUMMARY_CHARS - len(text) - 5)}"
        return one_line(str(first), SUMMARY_CHARS)

    def _render(self) -> None:
        self._render_header()
        set_style_property(self, "status", self.status)
        body = arguments_html(self.call.name, self.call.arguments)
        if self.status == "running" and self._unfinished and self._runs_on:
            body += (f"<p>Its command still runs, without Tripane, as process group {self._runs_on}; what it prints "
                     f"is not shown. Resume tells the agent so; to stop it: <code>kill -- -{self._runs_on}</code></p>")
        elif self.status == "running" and self._unfinished and self._ended_since:
            body += ("<p>Its command ran on without Tripane, until you stopped it.</p>" if self._stopped_by_person else
                     "<p>Its command ran on without Tripane, and has ended since: how it ended is not known.</p>")
        elif self._left and self._runs_on and self._kept:
            body += (f"<p>It left processes running in the background (process group {self._runs_on}). The task "
                     "ended with them running, so they run on for you to try, until you stop them or quit Tripane. To "
                     f"stop them now: Stop it, or <code>kill -- -{self._runs_on}</code></p>")
        elif self._left and self._runs_on:
            body += (f"<p>It left processes running in the background (process group {self._runs_on}). Tripane "
                     "stopped before the run's end, which would have stopped them, so they run on without it. Resuming "
                     f"or ending the session stops them; to stop them now: Stop it, or <code>kill -- -{self._runs_on}"
                     "</code></p>")
        elif self._left and self._ended_since:
            ran_on = "ran on after the task" if self._kept else "ran on without Tripane"
            body += (f"<p>What it left running in the background {ran_on}, until you stopped it.</p>"
                     if self._stopped_by_person else
                     f"<p>What it left running in the background {ran_on}, and has stopped since.</p>")
        if self.status == "running" and self._live:
            title = "The helper's reads so far" if self.call.name == "delegate_research" else "Output so far"
            if self._unfinished:
                title = "What it had printed when the run stopped"
            body += f"<b>{title}</b>{PRE}{linked(latest_lines(self._live, LIVE_LINES))}</pre>"
        outcome = self._outcome
        if outcome is not None and outcome.content:
            content = outcome.shown  # (the files a command changed: below, with more of them named)
            shown = content[:PREVIEW_CHARS] + ("\n…" if len(content) > PREVIEW_CHARS else "")
            if self.status == "ok":
                body += f"<b>Result</b>{PRE}{linked(shown)}</pre>"  # (a dev server's "Local: http://…")
            else:  # why it failed first: after a whole plan or file in its arguments, it was out of sight
                body = f"<b>Error</b>{PRE}{linked(shown)}</pre><div><b>Arguments</b></div>{body}"
        if outcome is not None and outcome.offload_path:  # too long for the context: its file
            body += f"<p>{self._full_output_link(outcome)}</p>"
        if outcome is not None and self.folder is not None and (log_name := background_log_named(outcome.content)):
            body += f"<p>{self._file_link('What it prints from then on', f'offload/{log_name}')}</p>"
            if self._left and self._runs_on and self._kept and self._log_tail:  # as in a terminal of its own
                body += f"<b>What it prints now</b>{PRE}{linked(self._log_tail)}</pre>"
        if self._changed is not None:
            body += f"<b>It changed in the work folder</b><p>{escape_html(self._changed.words(40))}</p>"
        self.details.setText(body)

    def _render_header(self) -> None:
        mark = {"running": "…", "ok": "✓", "error": "✗"}[self.status]
        unchanged = "  · unchanged, shown earlier" if self._same_as else ""
        running = ""
        if self.status == "running" and self._awaiting_approval:  # a research helper's read may wait, too
            running = "  · waiting for your approval"
        elif self.status == "running" and self._started is not None:
            running = f"  · running {duration(time.monotonic() - self._started)}"
        elif self.status == "running" and self._unfinished:
            running = "  · unfinished: the run stopped" + (
                "; the command still runs" if self._runs_on else "; you stopped the command" if self._stopped_by_person
                else "; the command ended since" if self._ended_since else "")
        elif self._left and (self._runs_on or self._ended_since):  # (a server kept, or a killed Tripane left)
            running = ("  · still runs in the background" if self._runs_on
                       else "  · you stopped what it left running" if self._stopped_by_person
                       else "  · what it left running has stopped")
        if self._changed is not None:  # (seen folded: what a command touched is what a supervisor asks)
            count = self._changed.count()
            running += f"  · changed {count:,} file{'s' if count != 1 else ''}"
        self.header.setText(as_written(f"{mark}  {self.call.name}  {isolated(self._summary())}{unchanged}{running}"))
        # Its state in words for a screen reader (a mark is a "check mark", a "ballot x"), and without
        # the seconds a running command counts: a name that changes is said again, every second.
        state = {"ok": "  · done", "error": "  · failed"}.get(self.status, "")
        uncounted = re.sub(r"· running [^·]*?(?=\s+·|$)", "· running", running)
        self.header.setAccessibleName(spoken(f"{self.call.name}  {self._summary()}{state}{unchanged}{uncounted}"))

    @property
    def started(self) -> bool:
        return self._started is not None

    def start(self, at: float | None = None) -> None:
        """The tool began to run, now or `at` (time.monotonic; it may have waited for an approval
        before): its clock starts."""
        if self._started is None and self.status == "running":
            self._started = time.monotonic() if at is None else at
            self._render_header()
            self.stop_button.setVisible(self.call.name in STOPPABLE_TOOLS)

    def run_stopped(self) -> None:
        """The run ended with this call in progress, nothing recorded of its end (the disk filled):
        its clock and its stop button go, until the next run records how it ended."""
        if self.status != "running":
            return
        self._started, self._unfinished = None, True
        self.stop_button.setVisible(False)
        if self.folder is not None:  # its command may outlive the Tripane that ran it (killed)
            self._runs_on = still_running(self.folder, self.call.id)
        if self.folder is not None and not self._live:  # reopened: what the window saw of it is gone
            self._live = kept_output(self.folder, self.call.id)[-LIVE_KEEP_CHARS:]
        if (self._live or self._runs_on) and not self._person_chose:  # open, as it was while it ran
            self._opened_for_output = True
            self.header.setChecked(True)
        if self._runs_on:  # the person may stop it here, as they stop a command that runs
            self._offer_stop("Stop the command, which runs on without Tripane")
        self._render()

    @property
    def runs_on_after_its_run(self) -> bool:
        """What its command left running still runs after the run ended (see left_running)."""
        return self._left and bool(self._runs_on)

    def left_running(self, group: int, kept: bool = False) -> None:
        """The call's command returned, leaving processes in the background (a dev server), and
        the run ended without stopping them: they still run, as `group`. `kept`: for the person,
        as the task ended done (else Tripane was killed before the run's end)."""
        if self.status == "running" or (self._runs_on == group and self._kept == kept):
            return
        self._left, self._kept, self._runs_on, self._ended_since = True, kept, group, False
        self._offer_stop("Stop what the command left running" + ("" if kept else " without Tripane"))
        if kept and self._log_watch is None and self._log_path() is not None:  # what it prints, as in a terminal
            self._log_watch = QTimer(self)
            self._log_watch.timeout.connect(self._read_log)
            self._log_watch.start(LOG_CHECK_MS)
            self._read_log()
        self._render()

    def _log_path(self) -> Path | None:
        """The file what its command left running prints to (see core.tools.shell.BackgroundLog)."""
        name = background_log_named(self._outcome.content) if self._outcome is not None else ""
        return self.folder / "offload" / name if name and self.folder is not None else None

    def _read_log(self) -> None:
        if (path := self._log_path()) is None:
            return
        try:
            size = path.stat().st_size
            if size == self._log_size:
                return
            with path.open("rb") as log_file:
                log_file.seek(max(0, size - LOG_TAIL_BYTES))
                tail = log_file.read().decode("utf-8", errors="replace")
        except OSError:  # (gone with the session's folder: nothing to show)
            return
        self._log_size, self._log_tail = size, latest_lines(tail, LIVE_LINES)
        self._render()

    def _offer_stop(self, tip: str) -> None:
        """Stop it, for a command (or what it left) that runs on without Tripane; and a look, every
        RUNS_ON_CHECK_MS, whether it has ended."""
        self.stop_button.setText("Stop it")
        self.stop_button.setToolTip(f"{tip} (process group {self._runs_on})")
        self.stop_button.setEnabled(True)
        self.stop_button.setVisible(True)
        if self._watch is None:
            self._watch = QTimer(self)
            self._watch.timeout.connect(self._look_whether_it_runs_on)
        if not self._watch.isActive():  # (offered again at each look at the window's state: not restarted)
            self._watch.start(RUNS_ON_CHECK_MS)

    def _look_whether_it_runs_on(self) -> None:
        assert self._watch is not None and self.folder is not None
        if self._left:  # what its command left running: stopped here, at a resume, or it ended
            if self.call.id not in left_running_by_call(self.folder):
                self._command_ended()
        elif self.status != "running":  # resumed: its result says the rest
            self._watch.stop()
        elif still_running(self.folder, self.call.id) is None:
            self._command_ended()

    def _command_ended(self) -> None:
        """The command that outlived Tripane has ended (or was stopped here): said, not asked again."""
        assert self._watch is not None
        self._watch.stop()
        if self._log_watch is not None:
            self._log_watch.stop()
        self._runs_on, self._ended_since = None, True
        self.stop_button.setVisible(False)
        self._render()
        if self._left:
            self.left_ended.emit(self.call.id)

    def request_stop(self) -> None:
        if self.status == "running" and self._unfinished and self._runs_on and self.folder is not None:
            self._stopped_by_person = stop_still_running(self.folder, self.call.id) is not None
            self._command_ended()  # (SIGKILL: it is over, whether or not its processes are reaped yet)
        elif self._left and self._runs_on and self.folder is not None:
            self._stopped_by_person = bool(stop_left_running(self.folder, self.call.id))
            self._command_ended()
            if self._stopped_by_person:  # (the agent, going on, is told; a server kept is let go of)
                self.left_stopped.emit(self.call.id)
        elif self.status == "running" and self._started is not None:
            self.stop_button.setEnabled(False)
            self.stop_button.setText("Stopping…")
            self.stop_requested.emit(self.call.id)

    def await_approval(self, waiting: bool) -> None:
        self._awaiting_approval = waiting
        self._render_header()

    def tick(self) -> None:
        """A second went by: the header's clock says so."""
        self._render_header()

    def add_output(self, text: str) -> None:
        """What the running tool printed since it last said: its latest lines are shown, the card
        unfolded for them unless the person folded it."""
        if self.status != "running":
            return  # the result is in: it says the rest
        self.start()
        self._live = (self._live + text)[-LIVE_KEEP_CHARS:]
        if not self.header.isChecked() and not self._person_chose:
            self._opened_for_output = True
            self.header.setChecked(True)
        self._render()

    def _full_output_link(self, result: ToolResult) -> str:
        """Where the whole output is, as a link that opens it (the card and the agent's context
        hold its head and tail)."""
        size = f" ({result.size:,} characters)" if result.size else ""
        return self._file_link(f"Full output{size}", result.offload_path)

    def _file_link(self, what: str, path: str) -> str:
        """A file of the session's folder, as a link that opens it."""
        if self.folder is None:
            return f"{what}: {escape_html(path)}"
        url = QUrl.fromLocalFile(str(self.folder / path)).toString(QUrl.ComponentFormattingOption.FullyEncoded)
        return f'{what}: <a href="{url}">{escape_html(path)}</a>'

    def _open_link(self, href: str) -> None:
        """The whole output's file, a background process's log, or an address the output gives (a dev
        server's), in the browser."""
        url = QUrl(href)
        if not url.isLocalFile():
            open_web_link(url)
            return
        path = Path(url.toLocalFile())
        open_on_desktop(path, self, f"No program could open {path.name}. It is in:\n{path}")

    def set_result(self, result: ToolResult, repeated: bool = False) -> None:
        """`repeated`: a failure that happened before, folded (the first one is shown)."""
        self.status = "ok" if result.ok else "error"
        self._same_as = result.same_as
        self._outcome = result
        self._live = ""
        self.stop_button.setVisible(False)
        self._render()
        if result.pictures and self.folder is not None and self._pictures is None:  # what the agent looked at
            self._pictures = PicturesShown([self.folder / picture for picture in result.pictures])
            self.layout().addWidget(self._pictures)
        if not result.ok:
            self.header.setChecked(not repeated)  # errors are shown, not folded away
        elif self._opened_for_output and not self._person_chose:
            self.header.setChecked(False)  # folded as results are: the live view was for the wait

    def fold_repeated(self) -> None:
        """The failure shown happened before: folded, unless the person unfolded it."""
        if not self._person_chose:
            self.header.setChecked(False)

    def set_changed_files(self, changed: CommandChangedFiles) -> None:
        """The files of the work folder the command changed (told after its result)."""
        self._changed = changed
        self._render()

    def context_menu(self) -> QMenu:
        """Copy the selection, the arguments, or the whole result (the card shows its first
        4,000 characters; an offloaded output is copied from its file)."""
        selected = self.details.selectedText() if self.details.hasSelectedText() else ""
        menu = copy_menu(self, selected, [("Copy &arguments", self.copy_arguments),
                                          ("Copy &result", self.copy_result if self.status != "running" else None)])
        if (target := self._file()) is not None:  # to look at it, or edit it, in the person's own editor
            menu.addSeparator()
            opening = menu.addAction("&Open the file")
            opening.setEnabled(target.is_file())
            opening.triggered.connect(lambda: open_file(target, self))
        if self.call.name in STOPPABLE_TOOLS and self.status == "running" and self._started is not None:
            menu.addSeparator()
            stop = menu.addAction(STOP_WORDS[self.call.name][2])
            stop.setEnabled(self.stop_button.isEnabled())
            stop.triggered.connect(self.request_stop)
        offer_going_back(menu, self.go_back, GO_BACK_BEFORE_STEP)
        return menu

    def _file(self) -> Path | None:
        """The work folder's file a file tool's call read or wrote (None: another tool, or none)."""
        workdir = self.workdir()
        if self.call.name not in FILE_TOOLS or workdir is None:
            return None
        try:
            path = str(self.call.parsed_arguments().get("path", ""))
        except ValueError:
            return None
        return workdir / path if path and not path.startswith(OFFLOAD_SCHEME) else None

    def copy_arguments(self) -> None:
        QApplication.clipboard().setText(self._arguments())

    def copy_result(self) -> None:
        """The whole result: an offloaded output's file, not the start and end the card shows."""
        outcome = self._outcome
        if outcome is None:
            return
        whole = outcome.content
        if outcome.offload_path:
            whole += f"\n[full output: {outcome.offload_path}]"
            if self.folder is not None:
                try:
                    whole = (self.folder / outcome.offload_path).read_text(encoding="utf-8", errors="replace")
                except OSError:  # the session's folder was moved or cleaned: what the card has
                    pass
        QApplication.clipboard().setText(whole)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        self.context_menu().popup(event.globalPos())

    def _on_header_toggled(self, expanded: bool) -> None:
        self.details.setVisible(expanded)
        self.header.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)

    def _on_header_clicked(self) -> None:
        self._person_chose = True


def latest_lines(text: str, count: int) -> str:
    """The last `count` lines as a terminal shows them: a carriage return (a progress bar drawn
    again in place) leaves only what came after it on its line."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and not lines[-1]:
        lines.pop()  # the text ended with a line break: no line after it yet
    shown = [next((part for part in reversed(line.split("\r")) if part), "") for line in lines[-count:]]
    # A line of minified JSON must not fill the card: its newest part is what is worth seeing.
    return "\n".join(line if len(line) <= LIVE_LINE_CHARS else "…" + line[-LIVE_LINE_CHARS:] for line in shown)


def duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


# A changed line's colour in an edit's diff, as the shown theme has it.
DIFF_COLOURS = {"+": "diff_add", "-": "diff_remove", "@": "diff_hunk"}
MAX_DIFF_LINES = 200


def arguments_html(tool: str, raw: str) -> str:
    """A call's arguments as a person reviews them: an edit as a diff of its text, a text of several
    lines (a file's new content, a script) as it reads, not as one JSON string full of "\\n"."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        return f"{PRE}{escape_html(raw)}</pre>"
    if not isinstance(arguments, dict):
        return f"{PRE}{escape_html(json.dumps(arguments, indent=2, ensure_ascii=False))}</pre>"
    if tool == "file_edit" and isinstance(arguments.get("old"), str) and isinstance(arguments.get("new"), str):
        return f"<b>{escape_html(str(arguments.get('path', '')))}</b>{edit_diff_html(arguments['old'], arguments['new'])}"
    texts = {key: value for key, value in arguments.items() if isinstance(value, str) and "\n" in value}
    rest = {key: value for key, value in arguments.items() if key not in texts}
    html = f"{PRE}{escape_html(json.dumps(rest, indent=2, ensure_ascii=False))}</pre>" if rest or not texts else ""
    for key, value in texts.items():
        shown = value[:PREVIEW_CHARS] + ("\n…" if len(value) > PREVIEW_CHARS else "")
        html += f"<b>{escape_html(key)}</b>{PRE}{escape_html(shown)}</pre>"
    return html


def edit_diff_html(old: str, new: str) -> str:
    """The replaced text against its replacement, as a unified diff with its lines coloured."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2))[2:]  # no ---/+++
    if not lines:
        return f"{PRE}(the text is replaced by the same text)</pre>"
    return diff_html(lines)


def diff_html(lines: list[str], limit: int = MAX_DIFF_LINES) -> str:
    """A unified diff's lines (no file names), coloured; of thousands of lines, the first `limit`."""
    shown = lines[:limit]
    if len(shown) < len(lines):
        shown.append(f"… {len(lines) - len(shown):,} more lines")
    body = "\n".join(
        coloured(DIFF_COLOURS[line[0]], escape_html(line))
        if line[:1] in DIFF_COLOURS else escape_html(line) for line in shown)
    return f"{PRE}{body}</pre>"
