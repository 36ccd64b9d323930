"""What the window costs a laptop on battery, for a person who leaves Tripane open all day: its
CPU time and wake-ups while nothing happens and while a reply streams, and the memory it keeps of
the sessions it showed.

The real main window, over a data folder of earlier sessions (2,000 events each), shows one with
the message box focused, as after typing, and is left alone:
- `just_typed`: the first seconds after the last key (the text caret blinks);
- `idle`: after that, for a while (the caret rests after 10 s: gui/caret_rest.py);
- `minimized`: the window minimized;
- `streaming`, `streaming_minimized`: a run whose model streams two replies at 50 tokens a second,
  a provider's usual pace, with the window shown, then minimized;
each as the process's CPU time in percent of one core and its wake-ups (context switches) a
second, all threads. Then it shows every session in turn, twice, and prints the process's
resident memory before, after the first round and after the second (Linux only: /proc).

    python benchmarks/battery.py [--sessions 30] [--span 30]

Uses QT_QPA_PLATFORM from the environment (offscreen if unset; xcb under Xvfb for a real display,
where painting costs what it costs on a desktop, and where minimizing is the window manager's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gui_stall import StreamingModel, qt_event_loop, record_long_session  # noqa: E402

from core.scripted import ScriptedModel  # noqa: E402
from core.session import SessionConfig  # noqa: E402
from gui.app import open_window  # noqa: E402
from gui.qt import QSettings  # noqa: E402
from gui.settings import AppSettings, Preferences  # noqa: E402

EVENTS = 2_000
JUST_TYPED_S = 8  # within the caret's 10 s of blinking after a key
TOKENS_PER_S = 50


def resident_mb() -> float | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:  # not Linux
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


async def spent_on(work) -> dict:
    """The process's CPU time and wake-ups while the event loop runs `work` (an awaitable)."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu, start = time.process_time(), time.perf_counter()
    await work
    after = resource.getrusage(resource.RUSAGE_SELF)
    seconds = time.perf_counter() - start
    switches = (after.ru_nvcsw + after.ru_nivcsw) - (before.ru_nvcsw + before.ru_nivcsw)
    return {"cpu_percent": round(100 * (time.process_time() - cpu) / seconds, 2),
            "wakeups_per_s": round(switches / seconds, 1)}


async def spent(span: float) -> dict:
    """The process's CPU time and wake-ups while the event loop runs for `span` seconds."""
    return await spent_on(asyncio.sleep(span))


async def streamed(window, models: list, workdir: Path) -> dict:
    """The CPU time and wake-ups of a run whose model streams two replies, then ends."""
    models.append(StreamingModel(TOKENS_PER_S, turns=2))

    async def run() -> None:
        session = window.start_session(SessionConfig(task="Stream two replies", model="scripted", workdir=workdir))
        while session.running:
            await asyncio.sleep(0.1)
    return await spent_on(run())


async def shown(window, session_id: str) -> None:
    window.show_session(session_id)
    while window.session is None or window.session.id != session_id:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)  # the panes' renders


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=30, help="earlier sessions, 2,000 events each (default 30)")
    parser.add_argument("--span", type=float, default=30, help="seconds measured idle and minimized (default 30)")
    args = parser.parse_args()
    loop = qt_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "work").mkdir()
        ids = [record_long_session(folder / "data", folder / "work", EVENTS, f"Earlier task {i}")
               for i in range(args.sessions)]
        settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
        settings.save(Preferences(model="scripted", data_dir=str(folder / "data")))
        models: list = [ScriptedModel([])]  # the one the next session gets
        window = open_window(settings, folder / "data", lambda: models[-1])
        window.show()

        async def run() -> dict:
            # The model library and the memory index, loaded once after the first frame.
            while any(task is None or not task.done() for task in (window.warm_up, window.memory_loading)):
                await asyncio.sleep(0.05)
            await shown(window, ids[0])
            window.activateWindow()
            window.composer.setFocus()
            await asyncio.sleep(0.5)
            figures: dict = {"benchmark": "battery", "platform": os.environ["QT_QPA_PLATFORM"],
                             "sessions": args.sessions, "events_each": EVENTS}
            figures["just_typed"] = await spent(JUST_TYPED_S)
            await asyncio.sleep(12 - JUST_TYPED_S)
            figures["idle"] = await spent(args.span)
            window.showMinimized()
            await asyncio.sleep(1)
            figures["minimized"] = await spent(args.span)
            window.showNormal()
            window.activateWindow()
            await asyncio.sleep(1)
            figures["streaming"] = await streamed(window, models, folder / "work")
            window.showMinimized()
            await asyncio.sleep(1)
            figures["streaming_minimized"] = await streamed(window, models, folder / "work")
            window.showNormal()
            window.activateWindow()
            await shown(window, ids[0])
            figures["resident_mb_one_shown"] = resident_mb()
            for session_id in ids:
                await shown(window, session_id)
            figures["resident_mb_all_shown"] = resident_mb()
            for session_id in ids:
                await shown(window, session_id)
            figures["resident_mb_all_shown_twice"] = resident_mb()
            figures["sessions_open"] = len(window.workspace.opened())
            return figures

        with loop:
            figures = loop.run_until_complete(run())
            window.close_now()
            loop.run_until_complete(window.shutdown_done)
    print(json.dumps(figures))
    for phase in ("just_typed", "idle", "minimized", "streaming", "streaming_minimized"):
        print(f"{phase:>19}: {figures[phase]['cpu_percent']:5.2f} % CPU, {figures[phase]['wakeups_per_s']:5.1f} wake-ups/s")
    print(f"resident memory: {figures['resident_mb_one_shown']} MB with one session shown, "
          f"{figures['resident_mb_all_shown']} MB after showing {args.sessions} in turn, "
          f"{figures['resident_mb_all_shown_twice']} MB after a second round; "
          f"{figures['sessions_open']} sessions open at the end")


if __name__ == "__main__":
    main()
