"""`tripane --selftest`: the installed app checks itself without a model, a network or a display.

It opens the real window offscreen over a temporary data folder, runs a scripted task through the
real core (SQLite log, the three files, tools on a temporary workdir), checks what a person would
see, and exits 0, or 1 with what failed. Installers run it after building a bundle.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

STEPS_TIMEOUT_S = 60


def run_selftest() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")  # offscreen has no window manager; not news
    from core.memory.working import FINDINGS, PLAN, PROGRESS
    from core.scripted import ScriptedModel, call, reply
    from core.session import SessionConfig
    from gui.app import make_app, open_window
    from gui.binding_check import FIX, binding_problem
    from gui.qt import QSettings
    from gui.settings import AppSettings, Preferences

    started = time.perf_counter()
    app = make_app(sys.argv[:1])
    problem = binding_problem()
    if problem:
        print(f"selftest FAILED:\n- {problem}; to fix it, {FIX}")
        return 1
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    model = ScriptedModel([
        reply("Writing the greeting.", call("file_write", path="hello.txt", content="hello\n")),
        reply("", call("findings_add", title="Selftest", body="hello.txt holds one line.")),
        reply("", call("task_done", summary="selftest done")),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "work").mkdir()
        settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
        settings.save(Preferences(model="scripted", workdir=str(folder / "work")))
        window = open_window(settings, folder / "data", lambda: model)
        window.show()

        async def check_memory() -> list[str]:
            """Long-term memory: it loads, the task's episode is in today's log, and search finds it
            (which runs the embedding model and the vector search the bundle carries)."""
            deadline = time.monotonic() + STEPS_TIMEOUT_S
            while window.workspace.long_memory is None and time.monotonic() < deadline:
                if window.workspace.memory_problem:
                    return [f"long-term memory: {window.workspace.memory_problem}"]
                await asyncio.sleep(0.05)
            memory = window.workspace.long_memory
            if memory is None:
                return ["long-term memory did not load"]
            try:
                hits = await memory.asearch("the greeting file written by the selftest", top_k=3)
            except Exception as exc:  # the embedding engine or sqlite-vec missing from a bundle
                return [f"memory search failed: {type(exc).__name__}: {exc}"]
            if not any("hello.txt" in hit.text for hit in hits):
                return ["memory search did not find the selftest's episode in today's daily log"]
            memory_status.append(memory.status().describe())
            return []

        memory_status: list[str] = []

        async def check() -> list[str]:
            session = window.start_session(SessionConfig(task="Selftest: write hello.txt", model="scripted",
                                                         workdir=folder / "work", approval="all"))
            deadline = time.monotonic() + STEPS_TIMEOUT_S
            while (session.running or not session.state.ended) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the panes render
            problems = []
            if session.state.status != "ended:done":
                problems.append(f"the session ended as {session.state.status!r}, not done")
            if (folder / "work" / "hello.txt").read_text(encoding="utf-8") != "hello\n":
                problems.append("the file tool did not write hello.txt")
            elif [(c.path, c.what()) for c in session.changed_files()] != [("hello.txt", "created")]:
                problems.append("the file tool's change to hello.txt was not kept to be put back")
            for name, expected in ((PLAN, "Selftest: write hello.txt"), (FINDINGS, "hello.txt holds one line"),
                                   (PROGRESS, "selftest done")):
                if expected not in window.panes[name].shown_text:
                    problems.append(f"the {name} pane does not show {expected!r}")
            if len(window.chat.cards) != 3:
                problems.append(f"the chat shows {len(window.chat.cards)} tool cards, not 3")
            problems += await check_memory()
            window.close_now()
            while window.shutdown_done is None or not window.shutdown_done.done():
                await asyncio.sleep(0.05)
            return problems

        with loop:
            problems = loop.run_until_complete(check())
    elapsed = time.perf_counter() - started
    if problems:
        print("selftest FAILED:\n- " + "\n- ".join(problems))
        return 1
    print(f"selftest ok: window, core, SQLite log, three files, tools and long-term memory work "
          f"({elapsed:.1f} s)\nmemory: {memory_status[0] if memory_status else '?'}")
    return 0
