"""Searching and adding up a large log: the sessions search that reads what conversations say
(Store.sessions_mentioning), the spending report (core/spending.py), and the conversation's find
bar over a view full of tool outputs (gui/widgets/chat_find.py).

The log: SESSIONS sessions of TURNS turns each, every turn a reply with a file read and its
3,000-character output (two events a turn). The first two run on a worker thread in the window,
the third on its event loop (a keystroke's cost is a stall).

    python benchmarks/search.py [--sessions 20] [--turns 2500] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.events import (  # noqa: E402
    AssistantMessage,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
)
from core.spending import spending  # noqa: E402
from core.store import Store  # noqa: E402

OUTPUT = ("def parse(token):\n    return token.strip()  # the parser keeps the index of what it saw\n" * 40)[:3000]
# The same log written in Arabic, its vowels and shadda written as a model writes them: a search
# there folds every row it reads (core/search_marks.py), where an English log's rows are ASCII.
OUTPUT_ARABIC = ("يقرأ المحلّل الملفَّ سطراً سطراً ويحفظ موضع ما رآه في الفهرس\n" * 60)[:3000]


def build(store: Store, sessions: int, turns: int, output: str = OUTPUT) -> int:
    events = 0
    for s in range(sessions):
        session_id = f"s{s:03d}"
        store.create_session(session_id, task=f"Task {s}", model="openai/gpt-4o-mini")
        store.append(session_id, SessionStarted(task=f"Task {s}", model="openai/gpt-4o-mini", workdir="/w"))
        for turn in range(1, turns + 1):
            call = ToolCall(f"c{turn}", "file_read", f'{{"path": "module_{turn % 50}.py"}}')
            store.append(session_id, AssistantMessage(f"Step {turn}: reading the next module.", (call,),
                                                      Usage(5_000, 80, 4_000, 0.0008), model="openai/gpt-4o-mini",
                                                      turn=turn))
            store.append(session_id, ToolResult(call.id, "file_read", True, output))
            events += 2
        if s == sessions // 2:  # one session says something rare, once
            store.append(session_id, ToolResult("rare", "shell_run", False, "E   ImportError: cannot import name 'zed'"))
    return events


def timed(function, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def measure_log(folder: Path, sessions: int, turns: int) -> list[dict]:
    store = Store(folder / "tripane.db")
    events = build(store, sessions, turns)
    size = os.path.getsize(folder / "tripane.db")
    rows = []
    for what, text in (("rare text", "cannot import name"), ("text in every session", "Step 17:"),
                       ("nowhere", "no such words anywhere"), ("a word beyond ASCII, in any case", "Журнал")):
        seconds, found = timed(lambda t=text: store.sessions_mentioning(t))
        rows.append({"measure": f"sessions search: {what}", "events": events, "db_mb": round(size / 1e6, 1),
                     "seconds": round(seconds, 3), "found": len(found)})
    seconds, spent = timed(lambda: spending(store))
    rows.append({"measure": "spending: whole log", "events": events, "db_mb": round(size / 1e6, 1),
                 "seconds": round(seconds, 3), "found": spent.total.requests})
    store.close()
    store = Store(folder / "arabic.db")
    events = build(store, sessions, turns, OUTPUT_ARABIC)
    size = os.path.getsize(folder / "arabic.db")
    seconds, found = timed(lambda: store.sessions_mentioning("المحلل"))  # (written "المحلّل": found through its shadda)
    rows.append({"measure": "sessions search: an Arabic word, in a log written in Arabic", "events": events,
                 "db_mb": round(size / 1e6, 1), "seconds": round(seconds, 3), "found": len(found)})
    store.close()
    return rows


def measure_find(turns: int = 300, output: str = OUTPUT, written: str = "") -> list[dict]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gui.qt import QApplication
    from gui.widgets.chat import ChatView
    from gui.widgets.chat_find import ConversationFinder

    app = QApplication.instance() or QApplication([])
    records = []
    for turn in range(1, turns + 1):
        call = ToolCall(f"c{turn}", "file_read", '{"path": "a.py"}')
        records += [AssistantMessage(f"Step {turn}: reading **the** next module.", (call,), turn=turn),
                    ToolResult(call.id, "file_read", True, output)]
    chat = ChatView()
    chat.resize(700, 500)
    chat.show()
    chat.show_records([Record("s", seq, "", event) for seq, event in enumerate(records, 1)], count=len(records))
    while chat.building():
        app.processEvents()
    finder = ConversationFinder(chat)
    rows = []
    match = "keeps the index" if output == OUTPUT else "موضع ما"
    for what, text in (("first keystroke (each label's HTML read once)", "zz"), ("next keystroke", "zzq"),
                       ("a match in a folded card (unfolds it)", match), ("Enter: the next match", None)):
        start = time.perf_counter()
        finder.find(text or match, False, text is not None)
        rows.append({"measure": f"find in the conversation{written}: {what}", "items": len(chat.items()),
                     "ms": round((time.perf_counter() - start) * 1000, 1)})
    chat.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=2_500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = measure_log(Path(folder), args.sessions, args.turns)
    rows += measure_find()
    rows += measure_find(output=OUTPUT_ARABIC, written=" written in Arabic")
    for row in rows:
        if args.json:
            print(json.dumps(row))
        else:
            figure = f"{row['seconds']:.3f} s" if "seconds" in row else f"{row['ms']:.1f} ms"
            scale = (f"{row['events']:,} events, {row['db_mb']} MB" if "events" in row else f"{row['items']} items")
            print(f"{row['measure']:<66} {figure:>10}   ({scale})")


if __name__ == "__main__":
    main()
