"""How long the window's event loop stalls while an agent streams and writes a lot.

The real main window runs a session whose scripted model streams its replies at 200 tokens/s,
while 1 MB is appended to progress.md in 4 KB entries through the same path the core uses (a
`file_changed` event per append, so the Progress pane re-renders live). A heartbeat timer fires every
5 ms; a stall is how late a beat comes. Prints the longest and p99 stall. Target: longest ≤ 50 ms.
Then a command prints 300,000 lines (about 10 MB) as fast as it can while its card shows them
live; its longest stall is printed on its own. Then the window opens a 10,000-event session an
earlier run recorded; its longest stall and how long the opening took are printed on their own.
The window loads litellm and the tokenizer in the background after its first frame; that one-time
load is measured and printed separately, before the run.

    python benchmarks/gui_stall.py
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.events import AssistantMessage, ToolCall, ToolResult  # noqa: E402
from core.llm import ModelReply, ModelRequest  # noqa: E402
from core.memory.working import PROGRESS  # noqa: E402
from core.paths import DB_NAME  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import Session, SessionConfig  # noqa: E402
from core.store import Store  # noqa: E402
from gui.app import make_app, open_window  # noqa: E402
from gui.qt import QSettings, QTimer  # noqa: E402
from gui.settings import AppSettings, Preferences  # noqa: E402

TOKENS_PER_S = 200
REPLY_TOKENS = 400  # two seconds of streaming per turn
TURNS = 5
APPEND_TOTAL = 1_000_000
APPEND_CHUNK = 4_000
BEAT_MS = 5
LONG_SESSION_EVENTS = 10_000

WORDS = ("the parser reads each token and the buffer keeps the index of what was seen so far while "
         "the cache holds recent lookups for the retry handler").split()


class StreamingModel:
    """Streams each reply word by word at `tokens_per_s`, then answers with a tool call; the
    `turns`th reply ends the task."""

    def __init__(self, tokens_per_s: int = TOKENS_PER_S, turns: int = TURNS):
        self.calls = 0
        self.tokens_per_s, self.turns = tokens_per_s, turns

    async def complete(self, request: ModelRequest, on_text=None, on_retry=None, on_reasoning=None, on_call=None) -> ModelReply:
        if not request.tools or request.tool_choice == "none":
            return ModelReply("summary")
        self.calls += 1
        text = []
        for i in range(REPLY_TOKENS):
            word = WORDS[i % len(WORDS)] + (" **note**" if i % 50 == 49 else "")
            text.append(word)
            if on_text:
                on_text(word + " ")
            await asyncio.sleep(1 / self.tokens_per_s)
        done = self.calls >= self.turns
        tool = call("task_done", summary="streamed") if done else call("file_list")
        return reply(" ".join(text), tool)


FLOOD_LINES = 2_000_000
FLOOD_COMMAND = (f'"{sys.executable}" -c "import sys\nfor i in range({FLOOD_LINES}): '
                 'sys.stdout.write(f\'collected line {i} of the flood PASSED\\n\')"')


def flood_model() -> ScriptedModel:
    """Runs one command that prints as fast as it can, then ends."""
    return ScriptedModel([reply("", call("shell_run", "flood", command=FLOOD_COMMAND, timeout=600)),
                          reply("", call("task_done", summary="flooded"))])


def progress_entry(i: int) -> str:
    lines = [f"\n### Benchmark entry {i}\n"]
    while sum(len(line) for line in lines) < APPEND_CHUNK:
        lines.append(f"- step {i}.{len(lines)}: ran `shell_run` on module_{i % 12}.py → exit 0, {len(lines) * 7} lines\n")
    return "".join(lines)


async def append_megabyte(session) -> None:
    written = 0
    i = 0
    while written < APPEND_TOTAL:
        text = progress_entry(i)
        session.journal.record(session.memory.append(PROGRESS, text, author="core"))
        written += len(text.encode("utf-8"))
        i += 1
        await asyncio.sleep(0.01)


def record_long_session(data_dir: Path, workdir: Path, events: int = LONG_SESSION_EVENTS,
                        task: str = "A long earlier run") -> str:
    """A session an earlier Tripane ran for `events` events, written to the data folder."""
    store = Store(data_dir / DB_NAME)
    session = Session.create(store, data_dir, SessionConfig(task=task, model="scripted", workdir=workdir),
                             ScriptedModel([]))
    with store.db.atomic():
        for turn in range(1, events // 2):
            store.append(session.id, AssistantMessage(f"Step {turn}: reading the next module.",
                                                      (ToolCall(f"c{turn}", "file_read", '{"path": "a.py"}'),), turn=turn))
            store.append(session.id, ToolResult(f"c{turn}", "file_read", True, f"def f{turn}(): return {turn}\n" * 20))
    store.close()
    return session.id


def qt_event_loop() -> asyncio.AbstractEventLoop:
    """The application and its qasync loop, as the window runs on them (gui/app.py)."""
    app = make_app(sys.argv[:1])
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return loop


def main() -> None:
    loop = qt_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "work").mkdir()
        settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
        model = StreamingModel()
        models: list = [model]  # the one the next session gets
        settings.save(Preferences(model="scripted"))
        long_session = record_long_session(folder / "data", folder / "work")
        window = open_window(settings, folder / "data", lambda: models[-1])
        window.show()
        beats: list[float] = []
        heartbeat = QTimer(interval=BEAT_MS)
        heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))

        def stalls_ms() -> list[float]:
            return sorted(max(0.0, (b - a) * 1000 - BEAT_MS) for a, b in zip(beats, beats[1:]))

        async def run() -> dict:
            # The window loads the model library in the background after its first frame; that
            # one-time import is measured on its own, before the streaming run.
            heartbeat.start()
            while window.warm_up is None or not window.warm_up.done():
                await asyncio.sleep(0.05)
            warm_up = stalls_ms()
            beats.clear()
            session = window.start_session(SessionConfig(task="Stream and write", model="scripted",
                                                         workdir=folder / "work", max_turns=50))
            started = time.perf_counter()
            writer = asyncio.ensure_future(append_megabyte(session))
            while session.running or not writer.done():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the last renders
            elapsed = time.perf_counter() - started
            stalls = stalls_ms()
            beats.clear()
            models.append(flood_model())
            flooding = time.perf_counter()
            flood = window.start_session(SessionConfig(task="Print a lot", model="scripted", workdir=folder / "work",
                                                       approval="all"))
            while flood.running:
                await asyncio.sleep(0.05)
            flood_s = time.perf_counter() - flooding
            await asyncio.sleep(0.5)
            flood_stalls = stalls_ms()
            flood_result = next(r.event for r in flood.records if isinstance(r.event, ToolResult))
            beats.clear()
            opening = time.perf_counter()
            window.show_session(long_session)
            while window.session is None or window.session.id != long_session:
                await asyncio.sleep(0.01)
            opened_s = time.perf_counter() - opening
            await asyncio.sleep(0.5)  # the panes' renders
            heartbeat.stop()
            open_stalls = stalls_ms()
            size = session.file_path(PROGRESS).stat().st_size
            return {"benchmark": "gui_stall", "seconds": round(elapsed, 2), "beats": len(beats),
                    "progress_md_bytes": size, "streamed_tokens": model.calls * REPLY_TOKENS,
                    "longest_stall_ms": round(stalls[-1], 1),
                    "p99_stall_ms": round(stalls[int(len(stalls) * 0.99)], 1),
                    "median_stall_ms": round(statistics.median(stalls), 2),
                    "warm_up_longest_stall_ms": round(warm_up[-1], 1) if warm_up else None,
                    "status": session.state.status,
                    "flood_lines": FLOOD_LINES, "flood_s": round(flood_s, 2), "flood_ok": flood_result.ok,
                    "flood_longest_stall_ms": round(flood_stalls[-1], 1),
                    "flood_p99_stall_ms": round(flood_stalls[int(len(flood_stalls) * 0.99)], 1),
                    "open_long_session_s": round(opened_s, 2), "open_long_session_longest_stall_ms": round(open_stalls[-1], 1)}

        with loop:
            figures = loop.run_until_complete(run())
            window.close_now()
            loop.run_until_complete(window.shutdown_done)
    print(json.dumps(figures))
    print(f"longest stall {figures['longest_stall_ms']} ms, p99 {figures['p99_stall_ms']} ms (target: longest ≤ 50 ms) "
          f"while streaming {figures['streamed_tokens']} tokens at {TOKENS_PER_S}/s and appending "
          f"{figures['progress_md_bytes']:,} bytes to progress.md; the one-time background load of the model "
          f"library after the first frame: longest stall {figures['warm_up_longest_stall_ms']} ms")
    print(f"a command printing {FLOOD_LINES:,} lines shown live ({figures['flood_s']} s): longest stall "
          f"{figures['flood_longest_stall_ms']} ms, p99 {figures['flood_p99_stall_ms']} ms")
    print(f"opening a {LONG_SESSION_EVENTS:,}-event session: {figures['open_long_session_s']} s, longest stall "
          f"{figures['open_long_session_longest_stall_ms']} ms")


if __name__ == "__main__":
    main()
