"""The window's commands: one table of menu, text, shortcut and what each does. The menus, the
keyboard shortcuts and the Help list of them (gui/dialogs/help.py) are all built from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from core.memory.working import FINDINGS, PLAN
from gui.qt import QAction, QKeySequence, QMenu, Qt
from gui.widgets.menu_style import spaced

if TYPE_CHECKING:
    from gui.window import MainWindow

Do = str | Callable[["MainWindow"], object]  # a method of the window by name, or a function of it

COMMANDS: tuple[tuple[str, str, str | QKeySequence.StandardKey | None, Do, str], ...] = (
    ("&File", "&New session…", "Ctrl+N", "new_session", "new"),
    ("&File", "New session &like this one…", "Ctrl+Shift+N", "new_session_like", "new_like"),
    ("&File", "&Import a session…", None, "import_session", "import"),
    ("&File", "&Settings…", "Ctrl+,", "open_settings", "settings"),
    ("&File", "&Quit", "Ctrl+Q", "close", "quit"),
    ("&Session", "&Send message", "Ctrl+Return", "send_message", "send"),
    ("&Session", "Show the agent a picture…", None, "choose_pictures", "picture"),  # (or paste, or drop, one)
    ("&Session", "&Pause", "Ctrl+P", "pause", "pause"),
    ("&Session", "&Resume", "Ctrl+R", "resume", "resume"),
    ("&Session", "S&top", "Esc", "stop", "stop"),
    ("&Session", "End the session…", None, "end_session", "end_session"),  # one nothing runs (see end_session)
    ("&Session", "Stop what the agent left running", None, "stop_left_running", "stop_left"),  # (a dev server)
    ("&Session", "&Edit plan", "Ctrl+E", lambda w: w.panes[PLAN].toggle_editing(), "edit_plan"),
    ("&Session", "Edit &findings", "Ctrl+Shift+E", lambda w: w.panes[FINDINGS].toggle_editing(), "edit_findings"),
    ("&Session", "Pin plan lines…", "Ctrl+Shift+P", lambda w: w.on_pane_pin_requested(PLAN), "pin_plan"),
    ("&Session", "Sa&ve edit", "Ctrl+S", "save_edit", "save_edit"),
    ("&Session", "File &history…", "Ctrl+Shift+H", lambda w: w.histories.show(), "file_history"),
    ("&Session", "What the a&gent changed…", "Ctrl+Shift+G", "show_work_changes", "work_changes"),
    ("&Session", "Go &back to an earlier step…", None, lambda w: w.going_back.choose(), "go_back"),
    ("&Session", "Answer the &question…", "Ctrl+Shift+A", "show_open_question", "question"),
    ("&Session", "As&k a helper…", "Ctrl+J", lambda w: w.asides.open(), "ask_helper"),
    ("&Session", "&Compact context now", "Ctrl+Shift+K", "compact", "compact"),
    ("&Session", "Change &model…", "Ctrl+Shift+L", "change_model", "change_model"),
    ("&Session", "Context &inspector", "Ctrl+I", "open_inspector", "inspector"),
    ("&Session", "S&ummary…", None, "show_summary", "summary"),
    ("&Session", "Reflect on the t&ask…", None, lambda w: w.reflections.reflect(), "reflect"),
    ("&Session", "E&xport as zip…", "Ctrl+Shift+S", "export_session", "export"),
    ("&Session", "Cop&y as Markdown", None, "copy_as_markdown", "copy_markdown"),
    ("&Session", "Open session fo&lder", "Ctrl+Shift+O", "open_session_folder", "session_folder"),
    ("&Session", "Open &working folder", "Ctrl+Shift+D", "open_working_folder", "working_folder"),
    ("&Session", "Move w&ork folder…", None, "move_work_folder", "move_workdir"),
    ("&Session", "Re&name…", "F2", "rename_session", "rename"),
    ("&Session", "&Delete…", None, "delete_session", "delete"),
    ("&View", "&Find in the conversation or the focused pane", "Ctrl+F", "find", "find"),
    ("&View", "Find a s&ession", "Ctrl+K", "find_session", "find_session"),
    ("&View", "Previous session in the list", "Ctrl+PgUp", lambda w: w.show_session_beside(-1), "previous_session"),
    ("&View", "Next session in the list", "Ctrl+PgDown", lambda w: w.show_session_beside(1), "next_session"),
    ("&View", "Search &memory…", "Ctrl+Shift+M", "open_memory_search", "memory_search"),
    ("&View", "S&pending…", None, "open_spending", "spending"),
    ("&View", "&What the agent learned…", None, lambda w: w.reflections.show_strategies(), "strategies"),
    ("&View", "Re&view the day's work…", None, lambda w: w.reflections.review_day(), "review_day"),
    ("&View", "Show &sessions list", "Ctrl+B", "toggle_sessions_list", "sessions_list"),
    ("&View", "Toggle &dark theme", "Ctrl+Shift+T", "toggle_theme", "theme"),
    ("&View", "&Larger text", QKeySequence.StandardKey.ZoomIn, lambda w: w.change_text_size(1), "larger_text"),
    ("&View", "S&maller text", QKeySequence.StandardKey.ZoomOut, lambda w: w.change_text_size(-1), "smaller_text"),
    ("&View", "&Actual text size", "Ctrl+0", lambda w: w.change_text_size(0), "actual_text"),
    ("&Help", "&Commands and keyboard shortcuts", "F1", "show_shortcuts", "shortcuts"),
    ("&Help", "Open &log folder", None, "open_log_folder", "log_folder"),
    ("&Help", "&About Tripane", None, "show_about", "about"),
)
EXTRA_SHORTCUTS = {"larger_text": ("Ctrl+=",)}  # Ctrl++ needs Shift on most layouts; = is the same key
# Those that work from Tripane's other windows too (a question, the changes, the inspector): with a
# question in front, Ctrl+N or Ctrl+Q did nothing. Their keys are used by no other window (Ctrl+S
# and Ctrl+F are: those stay the main window's), and a modal dialog still holds them.
EVERYWHERE = {"new", "new_like", "quit", "settings", "find_session", "shortcuts"}
SESSION_MENU = ("new_like", None, "rename", "export", "copy_markdown", "session_folder", "working_folder", "work_changes",
                None,
                "summary", "reflect", "ask_helper", None, "delete")  # right-click


def shortcut_of(name: str) -> str:
    """The key of the command `name`, as the table has it (its tooltip elsewhere names the same)."""
    return next(str(keys) for *_, keys, _do, each in COMMANDS if each == name and keys)


def build_menus(window: MainWindow) -> dict[str, QAction]:
    """The menu bar's menus and their actions, by name; each action's shortcut works window-wide
    (those of EVERYWHERE in Tripane's other windows too)."""
    menus: dict[str, QMenu] = {}
    actions: dict[str, QAction] = {}
    for menu_title, text, shortcut, do, name in COMMANDS:
        if menu_title not in menus:
            menus[menu_title] = spaced(window.menuBar().addMenu(menu_title))
        action = QAction(text, window)
        action.setObjectName(name)
        if shortcut:
            action.setShortcuts([QKeySequence(shortcut), *map(QKeySequence, EXTRA_SHORTCUTS.get(name, ()))])
            if name in EVERYWHERE:
                action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        action.triggered.connect(_slot(window, do))
        menus[menu_title].addAction(action)
        window.addAction(action)
        actions[name] = action
    return actions


def _slot(window: MainWindow, do: Do) -> Callable[..., object]:
    if isinstance(do, str):
        method = getattr(window, do)
        return lambda _checked=False: method()
    return lambda _checked=False: do(window)


def bind_session_list(window: MainWindow) -> None:
    """The Delete key (only in the list, so it never eats the key in a text field) and the
    right-click menu of the session list."""
    listing = window.sessions.list
    delete_key = QAction(listing)
    delete_key.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
    delete_key.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
    delete_key.triggered.connect(lambda _checked=False: window.delete_session())
    listing.addAction(delete_key)
    listing.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    listing.customContextMenuRequested.connect(lambda position: session_context_menu(window, position))


def session_context_menu(window: MainWindow, position) -> QMenu | None:
    """Right-click on a session (which selects it): what can be done with it."""
    listing = window.sessions.list
    if listing.itemAt(position) is None:
        return None
    menu = spaced(QMenu(window))
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    chosen = len(window.sessions.chosen_ids())
    if chosen > 1:  # what acts on several: the rest acts on the one shown, and would rename it alone
        menu.addAction(f"Delete {chosen:,} sessions…", window.delete_session)
    for name in SESSION_MENU if chosen <= 1 else ():
        if name is None:
            menu.addSeparator()
        else:
            menu.addAction(window.actions_by_name[name])
    menu.popup(listing.viewport().mapToGlobal(position))
    return menu
