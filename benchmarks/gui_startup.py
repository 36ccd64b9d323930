"""Time from process start to the window's first shown frame.

Each run starts a fresh Python process that opens the real main window over a data folder with a
few sessions (the way `tripane` does) and exits at the first paint of the window. The time is taken
by the parent from just before it spawns the process, so it includes the interpreter and imports.
It also reports whether litellm had been imported by then (it must not be: it takes seconds).
Target: ≤ 1.0 s here.

    python benchmarks/gui_startup.py [--runs 7]

Uses QT_QPA_PLATFORM from the environment (offscreen if unset; xcb under Xvfb for a real display).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from gui.app import make_app, open_window
from gui.qt import QObject, QSettings
from gui.settings import AppSettings
app = make_app(sys.argv[:1])
import asyncio, qasync
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
window = open_window(AppSettings(QSettings(sys.argv[2], QSettings.Format.IniFormat)), Path(sys.argv[3]))

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == event.Type.Paint:
            print("FRAME", "litellm" in sys.modules, flush=True)
            import os
            os._exit(0)
        return False

painted = FirstPaint()
window.installEventFilter(painted)
window.show()
app.exec()
"""


def prepare(folder: Path) -> tuple[Path, Path]:
    """A data folder with a few ended sessions, and settings with a model, as a returning user has."""
    sys.path.insert(0, str(ROOT))
    from core.paths import DB_NAME
    from core.scripted import ScriptedModel, call, reply
    from core.session import Session, SessionConfig
    from core.store import Store
    import asyncio

    data = folder / "data"
    data.mkdir()
    store = Store(data / DB_NAME)
    for i in range(5):
        model = ScriptedModel([reply("", call("file_list")), reply("", call("task_done", summary="ok"))])
        session = Session.create(store, data, SessionConfig(task=f"Task {i}", model="scripted", workdir=folder), model)
        asyncio.run(session.run())
    store.close()
    settings = folder / "settings.ini"
    settings.write_text("[prefs]\nmodel=openai/gpt-4o-mini\n", encoding="utf-8")
    return data, settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    times, litellm_loaded = [], []
    with tempfile.TemporaryDirectory() as tmp:
        data, settings = prepare(Path(tmp))
        for _ in range(args.runs):
            start = time.perf_counter()
            result = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(settings), str(data)],
                                    capture_output=True, text=True, env=env, timeout=60)
            elapsed = time.perf_counter() - start
            line = next((l for l in result.stdout.splitlines() if l.startswith("FRAME")), None)
            if line is None:
                sys.exit(f"the window never painted:\n{result.stderr}")
            times.append(elapsed)
            litellm_loaded.append(line.split()[1] == "True")
    figures = {"benchmark": "gui_startup", "platform": env["QT_QPA_PLATFORM"], "runs": args.runs,
               "first_frame_s_median": round(statistics.median(times), 3), "first_frame_s_min": round(min(times), 3),
               "first_frame_s_max": round(max(times), 3), "litellm_imported_before_first_frame": any(litellm_loaded)}
    print(json.dumps(figures))
    print(f"first frame: median {figures['first_frame_s_median']} s, min {figures['first_frame_s_min']} s, "
          f"max {figures['first_frame_s_max']} s (target ≤ 1.0 s); litellm imported before it: {any(litellm_loaded)}")


if __name__ == "__main__":
    main()
