"""The status bar: model, turn against the thresholds, tokens, cache reuse, cost, and the state."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from core import model_names
from core.agent.state import SessionState
from core.events import ended_word
from core.model_names import deprecation_words
from core.render import TIMED_ACTIVITIES, activity_progress, effort_words
from core.spending import known_cost
from core.text import capitalized
from gui.qt import QLabel, QStatusBar, Qt, QTimer, Signal
from gui.theme import set_style_property
from gui.widgets.elided_label import ElidedLabel

STATE_TEXT = {
    "running_tool": ("● Running a tool", "running"), "retrying": ("↻ Retrying the model", "waiting"),
    **{activity: (f"● {capitalized(words)}", "running") for activity, words in TIMED_ACTIVITIES.items()},
    "running": ("● Running", "running"), "paused": ("‖ Paused", "paused"), "waiting": ("? Waiting for you", "waiting"),
    "new": ("○ Idle", "idle"), "idle": ("○ Idle", "idle"),
    "elsewhere": ("● Running in another Tripane", "running"),
    "elsewhere_waiting": ("? Waiting for an answer in another Tripane", "waiting"),
    "interrupted": ("○ Interrupted mid-run: Resume (Ctrl+R) continues it", "idle"),
    # A session begun from an earlier point of another (core/branch.py), before the person's word.
    "ended:branched": ("↶ Went back: waiting for your message", "waiting"),
}

PAUSING = "‖ Pausing after this step"
STATE_LEAST_CHARS = 24

if TYPE_CHECKING:
    from core.memory.longterm import MemoryStatus
    from gui.bridge import SessionBridge


def effort_shown(state: SessionState) -> str:
    """The reasoning effort beside the model: as asked, and whether the last request to this model
    could send it (a model without reasoning takes none, nor one its server cannot make think)."""
    if not state.reasoning_effort:
        return ""
    sent = state.last_metrics.get("effort_sent") if state.last_reply_model == state.model else None
    return f" · effort {state.reasoning_effort}{' (not taken)' if sent == '' else ''}"


def turn_level(turn: int, warn_turn: int, danger_limit: int) -> str:
    """normal, then warn from the warn turn, then danger in the last three turns before the limit."""
    if turn >= danger_limit - 3:
        return "danger"
    if turn >= warn_turn:
        return "warn"
    return "normal"


class ClickableLabel(ElidedLabel):
    """A label a click acts on: the run's state (while a question waits, it shows the question),
    the session's cost (the spending over all sessions)."""
    clicked = Signal()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mouseReleaseEvent(event)


class SessionStatusBar(QStatusBar):
    question_clicked = Signal()
    cost_clicked = Signal()
    model_clicked = Signal()

    def __init__(self):
        super().__init__()
        # The day each (model, API base) shown is deprecated, when it is soon or past ("": not
        # soon); looked up by the window (litellm's map is read in a worker thread).
        self.deprecations: dict[tuple[str, str | None], str] = {}
        # The long ones give way, ending in "…", when the window is narrow.
        self.model = ClickableLabel("")
        self.model.setObjectName("model")
        self.model.setCursor(Qt.CursorShape.PointingHandCursor)
        self.model.clicked.connect(self.model_clicked)
        self.turn = QLabel("")
        self.turn.setObjectName("turn")
        self.reads = QLabel("")
        self.reads.setObjectName("reads")
        self.reads.setToolTip("The 2-Action Rule: after two reading or searching actions (file_read, file_list, "
                              "file_search, web_fetch, memory_search, memory_get) without a finding, the agent is "
                              "reminded to record what it learned in findings.md before anything else.")
        self.tokens = QLabel("")
        self.reuse = ElidedLabel("")
        self.reuse.setToolTip("Cache reuse: how much of the last request repeated the one before it, which a "
                              "provider's prompt cache can serve cheaply. Cached: the share of all prompt tokens "
                              "the provider says it served from its cache (shown once it reports any).")
        self.cost = ClickableLabel("")
        self.cost.setCursor(Qt.CursorShape.PointingHandCursor)
        self.cost.clicked.connect(self.cost_clicked)
        # The run's state gives way last ("? Waiting for an answer…" at the least): in large text
        # or a narrow window, "■ En…" did not say whether the run had ended or waited for an answer.
        self.state = ClickableLabel("", least_chars=STATE_LEAST_CHARS)
        self.state.setObjectName("state")
        self._question_waiting = False  # "? Waiting for you": a click shows the question
        self.state.clicked.connect(lambda: self._question_waiting and self.question_clicked.emit())
        self._activity: SessionBridge | None = None  # while the session shown does one of TIMED_ACTIVITIES
        self._pausing = False
        self._activity_clock = QTimer(self, interval=1000)
        self._activity_clock.timeout.connect(self._show_activity)
        self.memory = ElidedLabel("Memory: loading…")
        self.memory.setObjectName("memory")
        for label in (self.model, self.turn, self.reads, self.tokens, self.reuse, self.cost):
            self.addWidget(label)
        self.addPermanentWidget(self.memory)
        self.addPermanentWidget(self.state)

    def show_memory(self, status: MemoryStatus | None, problem: str | None = None) -> None:
        """Long-term memory at a glance; a fallback or a problem shows in amber, explained in the tooltip."""
        if status is None:
            self.memory.setText("Memory: unavailable" if problem else "Memory: loading…")
            self.memory.setToolTip(problem or "")
            level = "warn" if problem else ""
        else:
            kind = " · exact vector scan" if status.notice and status.backend == "exact" else (
                " · keywords only" if status.backend == "none" else "")
            self.memory.setText(f"Memory: {status.learned()}{kind}")
            tip = status.describe() + (f". Note: {problem}" if problem else "")
            self.memory.setToolTip(tip + "\nSearch it with Ctrl+Shift+M; View → What the agent learned lists it.")
            level = "warn" if (status.notice or problem) else ""
        set_style_property(self.memory, "level", level)

    def show_state(self, state: SessionState | None, activity: str = "idle", detail: str = "",
                   pausing: bool = False) -> None:
        """`detail`: for running_tool, the tool's name. `pausing`: asked to pause, it finishes its step."""
        if state is None or state.config is None:
            for label in (self.model, self.turn, self.reads, self.tokens, self.reuse, self.cost):
                label.setText("")
            self._set_state("No session", "idle")
            return
        config = state.config
        self._show_model(state)
        level = turn_level(state.turn, config.warn_turn, state.danger_limit)
        self.turn.setText(f"Turn {state.turn} / {state.danger_limit}")
        set_style_property(self.turn, "level", level)
        self.turn.setToolTip(f"Warnings from turn {config.warn_turn}; at turn {state.danger_limit} you are asked "
                             "whether to continue.")
        reads = state.actions_since_finding
        self.reads.setText(f"Reads since a finding: {reads}")
        set_style_property(self.reads, "level", "warn" if reads >= 2 else "normal")  # the reminder is on
        usage = state.usage
        self.tokens.setText(f"Tokens: {usage.prompt_tokens + usage.completion_tokens:,}")
        reuse = state.last_metrics.get("prefix_reuse")
        # Many providers (local servers, some gateways) never report cached tokens: "cached 0%" there
        # would read as a cache that always misses.
        cached = f" · cached {usage.cached_tokens / usage.prompt_tokens:.0%}" if usage.cached_tokens else ""
        self.reuse.setText(f"Cache reuse: {reuse:.0%}{cached}" if reuse is not None else "Cache reuse: –")
        if cost := known_cost(usage.cost_usd, usage.prompt_tokens):
            self.cost.setText(f"Cost: {cost}")
            self.cost.setToolTip("What this session's requests cost so far, at litellm's prices (its compactions' "
                                 "summaries too). Click: the spending over all sessions.")
        else:  # "$0.0000" would say free where the price is not known
            self.cost.setText("Cost: unknown")
            self.cost.setToolTip(f"litellm has no price for {state.model}: a model on this computer costs nothing; "
                                 "for a hosted one, see the provider's bill. A budget in dollars cannot stop this "
                                 "session; one in tokens can (Settings → Supervision). Click: the spending over all "
                                 "sessions.")
        if state.ended and state.status in STATE_TEXT:  # (a session gone back in: its own words)
            self._set_state(*STATE_TEXT[state.status])
        elif state.ended:
            self._set_state(f"■ Ended: {ended_word(state.status)}", "ended")
        elif activity == "elsewhere" and state.status == "waiting":  # asked there, not here
            self._set_state(*STATE_TEXT["elsewhere_waiting"])
            self.state.setToolTip("Another Tripane runs this session (a terminal's tripane run, or another window): "
                                  "its question is answered there.")
        elif state.status in ("paused", "waiting"):
            self._set_state(*STATE_TEXT[state.status])
        elif pausing:
            self._set_state(PAUSING, "paused")
        elif activity == "running_tool" and detail:
            self._set_state(f"● Running {detail}", "running")
        else:
            self._set_state(*STATE_TEXT.get(activity, STATE_TEXT["running"]))

    def _show_model(self, state: SessionState) -> None:
        day = self.deprecations.get((state.model, state.api_base), "")
        when = (" · deprecated since " if day <= model_names.today() else " · deprecated from ") + day if day else ""
        self.model.setText(f"Model: {state.model}{effort_shown(state)}{when}")
        said = f"{deprecation_words(day)}.\n" if day else ""
        self.model.setToolTip(f"{said}Reasoning effort: {effort_words(state.reasoning_effort)}. Click to change "
                              "either (Session → Change model, Ctrl+Shift+L).")
        set_style_property(self.model, "level", "warn" if day else "")

    def follow_activity(self, bridge: SessionBridge | None, pausing: bool = False) -> None:
        """While the session shown asks its model, or compacts or diagnoses (`bridge`: its bridge
        then, else None): for how long, and, of a reply, whether the model thinks or writes and how
        much, each second. A model on the person's computer may read for minutes before its first
        word, and a summary of a long history takes as long."""
        self._activity = bridge if bridge is not None and bridge.activity in TIMED_ACTIVITIES else None
        self._pausing = pausing
        self._show_activity()

    def _show_activity(self) -> None:
        bridge = self._activity
        if bridge is None or bridge.activity not in TIMED_ACTIVITIES:
            self._activity_clock.stop()
            return
        self._activity_clock.start()
        progress = activity_progress(bridge.activity, time.monotonic() - bridge.since, len(bridge.thinking),
                                     len(bridge.writing), bridge.call.name, bridge.call.chars)
        if self._pausing:
            self._set_state(f"{PAUSING} · {progress}", "paused")
        else:
            self._set_state(f"● {capitalized(progress)}", STATE_TEXT[bridge.activity][1])
        if bridge.activity == "thinking" and not bridge.thinking and not bridge.writing and not bridge.call.name:
            self.state.setToolTip("The model has not begun its reply. A model on this computer reads the whole "
                                  "context first, which takes minutes for a long one on a slow machine. Stop (Esc) "
                                  "stops the run.")

    def _set_state(self, text: str, kind: str) -> None:
        self.state.setText(text)
        # "waiting" is also the colour of a retry; only the question's text is clickable.
        self._question_waiting = waiting = text == STATE_TEXT["waiting"][0]
        self.state.setToolTip("A question waits for your answer: click here, or Session → Answer the question "
                              "(Ctrl+Shift+A)" if waiting else "")
        self.state.setCursor(Qt.CursorShape.PointingHandCursor if waiting else Qt.CursorShape.ArrowCursor)
        set_style_property(self.state, "kind", kind)
