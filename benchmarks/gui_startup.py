"""Time from process start to the window's first shown frame.

Each run starts `tripane` as a user does (by default `python -m core.cli`; `--command` takes another,
e.g. a built bundle's `dist/Tripane/tripane`) over a data folder with a few sessions and a configured
model. With TRIPANE_EXIT_AT_FIRST_FRAME set, the app prints at the window's first paint and exits.
The time is taken by the parent from just before it spawns the process, so it includes the
interpreter and every import. It also reports whether litellm or NumPy had been imported by then
(neither may be: litellm takes seconds, NumPy a tenth of the start). Target: ≤ 1.0 s here.

    python benchmarks/gui_startup.py [--runs 7] [--sessions 5] [--command "dist/Tripane/tripane"]

Uses QT_QPA_PLATFORM from the environment (offscreen if unset; xcb under Xvfb for a real display).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def prepare(folder: Path, sessions: int) -> tuple[Path, Path]:
    """A data folder with ended sessions (a few, or a long-time user's many), and settings with a
    model, as a returning user has."""
    sys.path.insert(0, str(ROOT))
    import asyncio

    from core.paths import DB_NAME
    from core.scripted import ScriptedModel, call, reply
    from core.session import Session, SessionConfig
    from core.store import Store

    data = folder / "data"
    data.mkdir()
    store = Store(data / DB_NAME)
    for i in range(sessions):
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
    parser.add_argument("--sessions", type=int, default=5, help="ended sessions in the list (default 5)")
    parser.add_argument("--command", help="the program to start (default: this Python with -m core.cli)")
    args = parser.parse_args()
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
           "TRIPANE_EXIT_AT_FIRST_FRAME": "1"}
    command = shlex.split(args.command) if args.command else [sys.executable, "-m", "core.cli"]
    times, loaded_early = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        data, settings = prepare(Path(tmp), args.sessions)
        for _ in range(args.runs):
            start = time.perf_counter()
            result = subprocess.run([*command, "--data-dir", str(data), "gui", "--settings", str(settings)],
                                    capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
            elapsed = time.perf_counter() - start
            line = next((l for l in result.stdout.splitlines() if l.startswith("FRAME")), None)
            if line is None:
                sys.exit(f"the window never painted:\n{result.stderr}")
            times.append(elapsed)
            loaded_early.update(line.split()[1:])
    figures = {"benchmark": "gui_startup", "command": " ".join(command), "platform": env["QT_QPA_PLATFORM"],
               "runs": args.runs, "sessions": args.sessions,
               "first_frame_s_median": round(statistics.median(times), 3), "first_frame_s_min": round(min(times), 3),
               "first_frame_s_max": round(max(times), 3), "imported_before_first_frame": sorted(loaded_early)}
    print(json.dumps(figures))
    print(f"first frame: median {figures['first_frame_s_median']} s, min {figures['first_frame_s_min']} s, "
          f"max {figures['first_frame_s_max']} s (target ≤ 1.0 s); of litellm and NumPy, imported before it: {sorted(loaded_early) or 'neither'}")


if __name__ == "__main__":
    main()
