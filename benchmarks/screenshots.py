"""Screenshots of the real window, for the README and for looking at what users see.

Runs a scripted session until its 3-Strike question, then captures, in the light and the dark theme:
the main window during the run, the 3-Strike dialog, the context inspector, the plan's history, the
memory search, the main window and the dialog in the high-contrast dark theme, then a reflection on
the stopped run, a question asked of a research helper, the
first-run settings dialog and a failed connection test, a session written in Arabic (right to
left) waiting on the agent's question, going back to before a step that went wrong (the dialog,
then the new session waiting for the person's word), and Settings' tool servers with a session
asking before a server's tool that changes things. Run it under a display (Xvfb on Linux):

    xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb python benchmarks/screenshots.py [OUT_DIR]
    [--only tool-servers]

Files go to OUT_DIR (default resources/screenshots/).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.events import AssistantMessage  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import SessionConfig  # noqa: E402
from gui.app import make_app, open_window  # noqa: E402
from gui.dialogs.reflection import ReflectionDialog  # noqa: E402
from gui.dialogs.settings import SettingsDialog  # noqa: E402
from gui.qt import QApplication, QPainter, QPixmap, QPoint, QSettings  # noqa: E402
from gui.settings import AppSettings, Preferences  # noqa: E402
from gui.theme import apply_theme  # noqa: E402

PLAN = """# Task Plan: Fix the failing date tests

## Goal
Make `tests/test_dates.py` pass without changing its assertions.

## Current Status
- Phase: 2
- Progress: parser read, two failures reproduced
- Blockers: none

## Execution Plan

### Phase 1: Understand the task
**Steps**:
1. [x] Read the relevant files and sources
2. [x] Record what matters in findings.md

### Phase 2: Do the work
**Steps**:
1. [x] Reproduce the two failures
2. [ ] Fix the timezone handling in `parse_date`
3. [ ] Re-run the tests

### Phase 3: Verify and deliver
**Steps**:
1. [ ] Check the result against the goal
2. [ ] Call task_done with a summary
"""


def script() -> ScriptedModel:
    missing = reply("", call("file_read", path="dates/tz_table.py"))
    return ScriptedModel([
        reply("I'll start by **reading the parser** and the failing test.", call("file_read", path="dates/parser.py")),
        reply("", call("findings_add", title="Parser",
                       body="`parse_date` drops the UTC offset before converting; tests expect aware datetimes.")),
        reply("Updating the plan with what I found.", call("plan_update", content=PLAN)),
        reply("", call("shell_run", command="python -m pytest -q tests/test_dates.py")),
        reply("The offsets come from a lookup table; let me read it.", missing.tool_calls[0]),
        missing, missing,
        # The person's own question to a helper, after the run (Session → Ask a helper…)
        reply("", call("file_read", path="session:task_plan.md"), call("file_read", path="dates/parser.py")),
        reply(HELPER_ANSWER),
    ], side_replies=[reply('root_cause: "dates/tz_table.py does not exist: the path was guessed from the parser\'s '
                           'comment"\nkind: A\ntry_instead: "List dates/ with file_list to find where the offsets '
                           'are kept, then read that file"'),
                     reply('{"goal": "make tests/test_dates.py pass", "tried": "reading dates/tz_table.py three times", '
                           '"wrong": "the file does not exist; offsets may live elsewhere", '
                           '"differently": "search for the table with file_list first", '
                           '"ask_human": "is the timezone table generated at build time?"}'),
                                   reply(REFLECTION)])


HELPER_ANSWER = (  # one line per paragraph, as models write them
    "**Not yet.** `dates/parser.py` is as it was: `parse_date` still cuts the text at 19 characters (line 5), "
    "which drops the UTC offset the tests expect.\n\n"
    "The plan still matches the code: Phase 2, step 2 (*keep the offset in parse_date*) is open. It does not "
    "mention `dates/tz_table.py`, which the agent tried to read three times: no such file exists, and nothing in "
    "the project imports it.")

LIST_FIRST = "List the folder before reading a file whose path was guessed"
REFLECTION = f"""```yaml
outcome:
  achieved: "no"
  assessment: The failures were reproduced and their cause found (parse_date cuts the offset), but the
    run was stopped at the 3-Strike question before any fix.
efficiency:
  efficient: [Read the parser and the failing test before anything else, Recorded the cause in findings.md]
  wasteful: [Read dates/tz_table.py three times though the first read said it does not exist]
errors:
  - what: "file_read failed: No such file: 'dates/tz_table.py' (3 times)"
    kind: A
    root_cause: The table's path was guessed from the parser's name instead of looked up
strategies:
  - strategy: {LIST_FIRST}
    when: a file named in code or guessed from a name is not found
    effect: no repeated failed reads
    confidence: HIGH
  - strategy: Fix the cause found before looking for more context
    when: the cause of a failing test is already in findings.md
    effect: shorter runs
    confidence: MEDIUM
gaps: [No tool to find where a symbol is defined]
preferences:
  - preference: Stop and ask when a file the code names is missing
    evidence: the person chose stop at the 3-Strike question
    strength: MEDIUM
```"""


ARABIC_PLAN = """# خطة المهمة: تلخيص الفواتير

## Goal
اجمع إجمالي الفواتير لكل عميل في ملف invoices.csv

## Current Status
- Phase: 2
- Progress: قرأت الملف، بدأت الجمع
- Blockers: none

## Execution Plan

### Phase 1: فهم المهمة
1. [x] قراءة ملف invoices.csv
2. [x] تسجيل ما يهم في findings.md

### Phase 2: العمل
1. [ ] جمع المبالغ لكل عميل باستخدام `sum.py`
2. [ ] تقريب النتائج إلى سنتين

### Phase 3: التحقق والتسليم
1. [ ] مقارنة المجموع الكلي بـ 1,250.75
2. [ ] استدعاء task_done
"""


def arabic_script() -> ScriptedModel:
    """A task written right to left, and an agent that answers in its language."""
    return ScriptedModel([
        reply("سأقرأ ملف الفواتير أولاً.", call("file_read", path="invoices.csv")),
        reply("", call("findings_add", title="بنية ملف الفواتير",
                       body="الأعمدة: العميل، المبلغ، التاريخ. المصدر: `invoices.csv`")),
        reply("أحدّث الخطة.", call("plan_update", content=ARABIC_PLAN)),
        reply("قرأت الملف `invoices.csv`. فيه **ثلاثة** عملاء:\n\n- شركة النور: 3 فواتير، المجموع 450.25\n"
              "- مؤسسة الأمل: فاتورتان، المجموع 800.50\n- Acme Ltd: لا فواتير هذا الشهر\n\n"
              "`sum.py` سيجمع المبالغ لكل عميل.",
              call("human_ask", question="هل أقرّب المبالغ إلى سنتين أم أتركها كما هي؟",
                   options=["قرّب إلى سنتين", "اتركها كما هي"])),
    ])


PRICES = ("def final_price(price: float, discount: float) -> float:\n    \"\"\"The price after the discount.\"\"\"\n"
          "    discounted = price * (1 - discount)\n    return round(discounted * (1 - discount), 2)\n")
CALCULATOR = ("class PriceCalculator:\n    \"\"\"Prices, discounts and taxes, in one place.\"\"\"\n\n"
              "    def __init__(self, discount: float = 0.0):\n        self.discount = discount\n")


def going_back_script() -> ScriptedModel:
    """A fix, its test run, then a restructuring nobody asked for: the step to go back before."""
    run = f'"{sys.executable}" tests/test_prices.py'
    return ScriptedModel([
        reply("I'll read the failing test first.", call("file_read", path="tests/test_prices.py")),
        reply("The discount is applied twice in `final_price`. Fixing that.",
              call("file_edit", path="shop/prices.py", old="    discounted = price * (1 - discount)\n"
                   "    return round(discounted * (1 - discount), 2)", new="    return round(price * (1 - discount), 2)")),
        reply("Running the test.", call("shell_run", command=run)),
        reply("The test passes. While I'm here, I'll restructure prices into a calculator class and move the old "
              "function to a legacy module.", call("file_write", path="shop/prices.py", content=CALCULATOR),
              call("file_write", path="shop/legacy_prices.py", content="from shop.prices import *\n")),
        reply("Done restructuring.", call("task_done", summary="Fixed the double discount and restructured prices.")),
    ])


WRONG_TOTALS = ("select id, customer, subtotal, discount, total, round(subtotal * (1 - discount), 2) as expected "
                "from orders where total != round(subtotal * (1 - discount), 2)")


def shop_script() -> ScriptedModel:
    """An agent that uses the shop's orders server: reads freely, asks before it writes."""
    return ScriptedModel([
        reply("I'll look at the orders table first.", call("mcp_orders_describe_table", table="orders")),
        reply("Now the orders whose total does not match the subtotal less the discount.",
              call("mcp_orders_read_query", sql=WRONG_TOTALS)),
        reply("Orders 2 and 4 are charged too little: the discount was applied twice. I'll correct the stored "
              "totals.", call("mcp_orders_write_query", sql="update orders set total = round(subtotal * (1 - "
                              "discount), 2) where total != round(subtotal * (1 - discount), 2)")),
        reply("", call("task_done", summary="Corrected the totals of orders 2 and 4.")),
    ])


async def capture_tool_servers(out: Path, folder: Path, settings: AppSettings) -> list[Path]:
    """Settings → Tool servers after a check, and a session using a server's tools, asked before the
    one that changes things."""
    import os

    from core.tool_servers.config import ServerConfig, write_servers
    from gui.dialogs.question import QuestionDialog

    os.environ["TRIPANE_CONFIG_DIR"] = str(folder / "config")  # (the servers' file: not the person's)
    server = str(ROOT / "tests" / "support" / "tool_server.py")
    write_servers([ServerConfig("orders", sys.executable, (server, "--shop")),
                   ServerConfig("docs", sys.executable, (server,), secret_env=("DOCS_TOKEN",), enabled=False)])
    shop = folder / "shop"
    shop.mkdir()
    (shop / "pricing.py").write_text("def final_price(subtotal, discount):\n    ...\n", encoding="utf-8")
    model = shop_script()
    window = open_window(settings, folder / "shop-data", lambda: model)
    window.resize(1500, 900)
    window.show()
    dialog = window.open_settings()
    dialog.pages.setCurrentWidget(dialog.tool_servers)
    dialog.tool_servers.list.setCurrentRow(0)
    dialog.tool_servers.check()
    while "✓" not in dialog.tool_servers.list.item(0).text():
        await asyncio.sleep(0.1)
    await settle()
    shots = [out / "tool-servers-light.png", out / "tool-server-approval-light.png"]
    with_dialog(window, dialog).save(str(shots[0]))
    dialog.reject()
    window.start_session(SessionConfig(task="Some orders' totals look wrong: find which, and correct them.",
                                       model="openai/gpt-4o-mini", workdir=shop, approval="ask"))
    while not (asked := [d for d in window.findChildren(QuestionDialog) if d.isVisible()]):
        await asyncio.sleep(0.1)
    await settle()
    with_dialog(window, asked[0]).save(str(shots[1]))
    window.close()
    while window.shutdown_done is None or not window.shutdown_done.done():
        await asyncio.sleep(0.05)
    return shots


def make_prices(folder: Path) -> None:
    (folder / "shop").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "shop" / "prices.py").write_text(PRICES, encoding="utf-8")
    (folder / "tests" / "test_prices.py").write_text(
        "import sys\nsys.path.insert(0, '.')\nfrom shop.prices import final_price\n\n"
        "assert final_price(100, 0.1) == 90.0\nprint('ok')\n", encoding="utf-8")


def with_dialog(window, dialog) -> QPixmap:
    """The window with its dialog drawn over it where it stands."""
    shot = window.grab()
    painter = QPainter(shot)
    painter.drawPixmap(dialog.mapToGlobal(QPoint(0, 0)) - window.mapToGlobal(QPoint(0, 0)), dialog.grab())
    painter.end()
    return shot


def make_project(folder: Path) -> None:
    (folder / "dates").mkdir()
    (folder / "tests").mkdir()
    (folder / "dates" / "parser.py").write_text(
        "from datetime import datetime\n\n\ndef parse_date(text):\n    return datetime.fromisoformat(text[:19])\n",
        encoding="utf-8")
    (folder / "tests" / "test_dates.py").write_text(
        "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom dates.parser import parse_date\n\n\n"
        "def test_offset():\n    assert parse_date('2024-05-01T10:00:00+02:00').utcoffset() is not None\n",
        encoding="utf-8")


def seed_memory(data: Path) -> None:
    """Long-term memory from earlier (imagined) sessions, for the search window."""
    from core.memory.layers import Episode
    from core.memory.longterm import LongTermMemory

    memory = LongTermMemory.open(data)
    memory.remember("datetime.fromisoformat before Python 3.11 rejects a trailing Z; replace it with +00:00",
                    kind="lesson", source="20261118-101500-4f2a")
    memory.remember("The project's tests run with `python -m pytest -q` from the repository root", kind="fact",
                    source="20261118-101500-4f2a")
    memory.remember("The person wants small commits with a test for each fix", kind="preference",
                    source="20261119-093000-77b1")
    from core.memory.reflection import Report, Strategy
    from core.memory.strategies import save

    for session_id in ("20261118-101500-4f2a", "20261120-141000-0c9e"):
        save(memory, session_id, "openai/gpt-4o-mini", "", Report("yes", "", strategies=(
            Strategy(LIST_FIRST, "a guessed path is not found", confidence="MEDIUM"),)))
    memory.files.append_episode(Episode(
        title="Import of CSV exports", asked="find why the importer drops the UTC offset of timestamps",
        done="parse_timestamp cut the string at 19 characters, losing the offset; kept the offset and added a test",
        failed=("shell_run:error: pytest tests/test_import.py failed before the fix",), tool_calls=23, errors=2,
        minutes=31, session_id="20261120-141000-0c9e", status="done"))
    memory.close()


async def settle(seconds: float = 0.6) -> None:
    await asyncio.sleep(seconds)
    QApplication.processEvents()


async def capture(out: Path, folder: Path) -> list[Path]:
    shots: list[Path] = []

    def save(widget, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        shots.append(path)

    work = folder / "work"
    work.mkdir()
    make_project(work)
    settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    settings.save(Preferences(model="openai/gpt-4o-mini", workdir=str(work)))
    model = script()
    seed_memory(folder / "data")
    window = open_window(settings, folder / "data", lambda: model)
    window.resize(1500, 900)
    window.show()
    session = window.start_session(SessionConfig(task="Fix the failing date tests in tests/test_dates.py",
                                                 model="openai/gpt-4o-mini", workdir=work, approval="all"))
    while not window.dialogs:
        await asyncio.sleep(0.1)
    dialog = next(iter(window.dialogs.values()))
    for theme in ("light", "dark"):
        apply_theme(QApplication.instance(), theme)
        await settle()
        save(window, f"main-window-{theme}")
        dialog.raise_()
        save(dialog, f"three-strike-{theme}")
        inspector = window.open_inspector()
        inspector.resize(900, 560)
        while "Assembling" in inspector.summary.text():
            await asyncio.sleep(0.1)
        await settle()
        save(inspector, f"context-inspector-{theme}")
        inspector.tabs.setCurrentIndex(1)
        await settle(0.2)
        save(inspector, f"context-requests-{theme}")
        inspector.tabs.setCurrentIndex(0)
        inspector.hide()
        history = window.histories.show("task_plan.md")
        history.resize(960, 560)
        while history.list.count() < 2 or "Rebuilding" in history.note.text():
            await asyncio.sleep(0.1)
        await settle()
        save(history, f"plan-history-{theme}")
        history.hide()
        while window.workspace.long_memory is None:
            await asyncio.sleep(0.1)
        search = window.open_memory_search()
        search.query.setText("timezone offsets lost when parsing dates")
        search.query.returnPressed.emit()
        while "results for" not in search.results.toPlainText():
            await asyncio.sleep(0.1)
        await settle()
        save(search, f"memory-search-{theme}")
        search.hide()
    apply_theme(QApplication.instance(), "contrast-dark")
    await settle()
    save(window, "main-window-contrast-dark")
    dialog.raise_()
    save(dialog, "three-strike-contrast-dark")
    apply_theme(QApplication.instance(), "light")
    dialog.choose("stop")
    while session.running:
        await asyncio.sleep(0.1)
    window.reflections.reflect()
    while not (reflections := [d for d in window.findChildren(ReflectionDialog) if d.isVisible()]):
        await asyncio.sleep(0.1)
    reflections[0].resize(820, 620)
    await settle()
    save(reflections[0], "reflection-light")
    reflections[0].close()
    helper = window.asides.open(session)
    helper.question.setPlainText("Has the agent changed dates/parser.py yet, and does its plan still match the code?")
    helper.ask()
    while helper.working:
        await asyncio.sleep(0.1)
    helper.resize(720, 560)
    await settle()
    save(helper, "ask-helper-light")
    helper.close()

    first = open_window(AppSettings(QSettings(str(folder / "fresh.ini"), QSettings.Format.IniFormat)),
                        folder / "fresh-data", lambda: model)
    first.show()
    while not first.findChildren(SettingsDialog):
        await asyncio.sleep(0.1)
    settings_dialog = first.findChildren(SettingsDialog)[0]
    await settle(1.2)  # the Ollama probe answers (or not)
    save(settings_dialog, "first-run-settings")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings_dialog.model.setCurrentText("openai/gpt-4o-mini")
    settings_dialog.api_base.setText(f"http://127.0.0.1:{port}/v1")
    settings_dialog.test_button.click()
    while not settings_dialog.test_button.isEnabled():
        await asyncio.sleep(0.1)
    await settle(0.3)
    save(settings_dialog, "connection-error")
    settings_dialog.reject()

    arabic = folder / "arabic"
    arabic.mkdir()
    (arabic / "invoices.csv").write_text("العميل,المبلغ,التاريخ\nشركة النور,150.25,2026-11-01\n"
                                         "مؤسسة الأمل,500.50,2026-11-02\n", encoding="utf-8")
    written = arabic_script()
    right_to_left = open_window(settings, folder / "arabic-data", lambda: written)
    right_to_left.resize(1500, 900)
    right_to_left.show()
    right_to_left.start_session(SessionConfig(task="اجمع إجمالي الفواتير لكل عميل في ملف invoices.csv",
                                              model="openai/gpt-4o-mini", workdir=arabic, approval="all"))
    while not right_to_left.dialogs:
        await asyncio.sleep(0.1)
    await settle()
    save(right_to_left, "right-to-left-light")

    prices = folder / "prices"
    make_prices(prices)
    went = going_back_script()
    back = open_window(settings, folder / "back-data", lambda: went)
    back.resize(1500, 900)
    back.show()
    gone_wrong = back.start_session(SessionConfig(task="The test in tests/test_prices.py fails: fix final_price.",
                                                  model="openai/gpt-4o-mini", workdir=prices, approval="all"))
    while not gone_wrong.state.ended or gone_wrong.running:
        await asyncio.sleep(0.1)
    await settle()
    back.going_back.ask([r for r in gone_wrong.records if isinstance(r.event, AssistantMessage)][3].seq)
    while back.going_back.dialog is None or not back.going_back.dialog.isVisible():
        await asyncio.sleep(0.1)
    await settle()
    path = out / "go-back-light.png"
    with_dialog(back, back.going_back.dialog).save(str(path))
    shots.append(path)
    back.going_back.dialog.accept()
    while back.session is gone_wrong or back.session is None:
        await asyncio.sleep(0.1)
    await settle()
    save(back, "gone-back-light")
    for each in (first, right_to_left, back, window):
        each.close()
        while each.shutdown_done is None or not each.shutdown_done.done():
            await asyncio.sleep(0.05)
    return shots + await capture_tool_servers(out, folder, settings)


def main() -> None:
    """`--only tool-servers`: those two alone (the others stay as they were)."""
    only = "--only" in sys.argv and sys.argv[sys.argv.index("--only") + 1]
    places = [arg for arg in sys.argv[1:] if not arg.startswith("--") and arg != only]
    out = Path(places[0]) if places else ROOT / "resources" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    app = make_app(sys.argv[:1])
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory() as tmp, loop:
        if only == "tool-servers":
            settings = AppSettings(QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat))
            settings.save(Preferences(model="openai/gpt-4o-mini"))
            shots = loop.run_until_complete(capture_tool_servers(out, Path(tmp), settings))
        else:
            shots = loop.run_until_complete(capture(out, Path(tmp)))
    for path in shots:
        print(path)


if __name__ == "__main__":
    main()
