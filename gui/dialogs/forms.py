"""Form pieces more than one dialog uses."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from core.model_names import known_chat_models
from core.reasoning import EFFORTS
from core.render import effort_words
from gui.qt import (
    QAction,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequence,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    Qt,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)
from gui.reading_order import in_reading_order
from gui.screen_fit import fit_to_screen
from gui.tasks import TaskKeeper
from gui.text_size import scaled

log = logging.getLogger(__name__)

APPROVAL_CHOICES = (("ask", "Ask me before risky tools"), ("all", "Allow all tools"), ("none", "Refuse risky tools"))


def lay_out_browser(dialog: QDialog, above: list[QWidget], listed: QWidget, shown: QWidget, note: QLabel,
                    actions: list[QPushButton], list_width: int, size: tuple[int, int]) -> None:
    """A dialog to browse a list: `above` it, the list beside what is chosen in it (`shown`);
    below, a note, the actions on the chosen, and Close."""
    splitter = QSplitter()
    splitter.addWidget(listed)
    splitter.addWidget(shown)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([scaled(list_width), scaled(size[0] - list_width - 40)])  # (lines widen with the text)
    in_reading_order(splitter)  # the list, then what is chosen in it
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    bottom = QHBoxLayout()
    bottom.addWidget(note, 1)
    for action in actions:
        bottom.addWidget(action)
    bottom.addWidget(buttons)
    layout = QVBoxLayout(dialog)
    for widget in above:
        layout.addWidget(widget)
    layout.addWidget(splitter, 1)
    layout.addLayout(bottom)
    fit_to_screen(dialog, *size)


def figures_table(headers: list[str]) -> QTableWidget:
    """A table of figures to read, not to edit. Tab leaves it for the window's next control, as from
    any other view (a table's own Tab went from cell to cell: a keyboard was held in it); the arrows
    go from cell to cell."""
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setTabKeyNavigation(False)
    return table


def open_once(dialog: QDialog) -> None:
    """Open a window-modal dialog that is deleted once closed (after its `finished` handlers ran):
    a child of the window otherwise, each one opened in a day's work would stay until Tripane quits."""
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()


def save_file_dialog(parent: QWidget, caption: str, suggested: Path, kinds: str,
                     on_chosen: Callable[[Path], object]) -> QFileDialog:
    """Where to save a file (`suggested`: its place and name, whose suffix is added to a name typed
    without one), opened without blocking the event loop; `on_chosen` gets the Path chosen."""
    dialog = QFileDialog(parent, caption, str(suggested), kinds)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix(suggested.suffix.lstrip("."))
    dialog.fileSelected.connect(lambda path: on_chosen(Path(path)))
    open_once(dialog)
    return dialog


def approval_combo(current: str) -> QComboBox:
    combo = QComboBox()
    for value, label in APPROVAL_CHOICES:
        combo.addItem(label, value)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def error_label() -> QLabel:
    """Where a dialog says what is wrong with the input, in words, above its buttons."""
    label = QLabel("")
    label.setObjectName("error")
    label.setWordWrap(True)
    return label


def folder_row(field: QLineEdit, caption: str, shown: QWidget | None = None) -> QHBoxLayout:
    """A folder path field with a Browse… button (the chooser does not block the event loop).
    `shown`: the widget the field belongs to (an editable combo box's list of recent folders)."""
    browse = QPushButton("Browse…")
    for widget in (field, shown):  # a row, not a widget, follows the form's label: no buddy
        if widget is not None:
            widget.setAccessibleName(caption)

    def choose() -> None:
        dialog = QFileDialog(field.window(), caption, field.text() or field.placeholderText())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(field.setText)
        open_once(dialog)

    browse.clicked.connect(choose)
    row = QHBoxLayout()
    row.addWidget(shown or field, 1)
    row.addWidget(browse)
    return row


def add_row_for(form: QFormLayout, label: str, row: QLayout, field: QWidget) -> None:
    """A form's row whose field is a layout (a field with its button beside it), its label naming
    `field`: QFormLayout gives only a widget's label that buddy, which a screen reader reads and
    the label's Alt key moves to (gui/mnemonics.py)."""
    form.addRow(label, row)
    form.labelForField(row).setBuddy(field)


def on_ctrl_enter(dialog: QWidget, do: Callable[[], None]) -> QAction:
    """Ctrl+Enter anywhere in the dialog does `do`, as it sends a message in the chat: Enter alone
    is a new line in the dialog's text box."""
    action = QAction(dialog)
    action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(do)
    dialog.addAction(action)
    return action


def context_window_spin(tokens: int) -> QSpinBox:
    """How much the model reads at once, in tokens; 0 shows as the model's own."""
    spin = QSpinBox()
    spin.setRange(0, 10_000_000)
    spin.setSingleStep(1024)
    spin.setValue(tokens)
    spin.setSpecialValueText("the model's own")
    spin.setSuffix(" tokens")
    spin.setGroupSeparatorShown(True)
    spin.setToolTip(
        "How much the model reads at once. Leave it to the model: an Ollama model gets its own length, at "
        "most 16,384 (what a laptop can hold); vLLM, llama.cpp and LM Studio are asked what they were started "
        "with. Set it for a server that does not say, or larger for an Ollama model on a big GPU.")
    return spin


EFFORT_TIP = ("How hard a reasoning model thinks before each step: OpenAI's o-series and GPT-5, Claude 3.7 to "
              "4.5 (extended thinking, with a budget of 1,024 / 2,048 / 4,096 tokens), later Claude models (which "
              "think as much as the effort says, and Sonnet 5 and later, unasked), Gemini 2.5 and later, DeepSeek. "
              "More thinking is slower and costs more tokens. A model litellm knows has no reasoning (gpt-4o, "
              "Claude 3.5) is not sent it.")


def budget_usd_spin(dollars: float) -> QDoubleSpinBox:
    """The cost after which the person is asked whether the session goes on (0: no cap)."""
    spin = QDoubleSpinBox()
    spin.setRange(0, 100000)
    spin.setDecimals(2)
    spin.setPrefix("$")
    spin.setSpecialValueText("no cap")
    spin.setValue(dollars)
    spin.setToolTip("When the session has cost this much, it stops and asks whether to go on (the summaries of "
                    "its compactions count)")
    return spin


def effort_combo(current: str) -> QComboBox:
    """How hard a reasoning model thinks: the model's own way, or low, medium, high."""
    combo = QComboBox()
    for effort in EFFORTS:
        combo.addItem(effort_words(effort), effort)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    combo.setToolTip(EFFORT_TIP)
    return combo


def suggest_model_names(keeper: TaskKeeper, owner: QWidget, *fields: QComboBox | QLineEdit) -> None:
    """As a model's name is typed in `fields`, suggest the model strings it may mean ("sonnet":
    anthropic/claude-sonnet-4-5, bedrock/…, openrouter/…), a combo box's own models first. The names
    are read off the event loop (litellm's map); the fields take them when they come."""
    def suggest(names: tuple[str, ...]) -> None:
        for field in fields:
            own = [field.itemText(i) for i in range(field.count())] if isinstance(field, QComboBox) else []
            completer = QCompleter(list(dict.fromkeys([*own, *names])), field)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setMaxVisibleItems(12)
            # On a combo box's line edit, not the combo box: the combo box would look a picked name up
            # among its own items and, not finding it, empty the field. (A line edit connects its
            # completer only while it has the focus; connected here, a picked name is always taken.)
            line = field.lineEdit() if isinstance(field, QComboBox) else field
            line.setCompleter(completer)
            completer.activated[str].connect(line.setText)

    keeper.in_thread(known_chat_models, on_success=suggest, owner=owner, name="known model names",
                     on_failure=lambda error: log.warning("no model names to suggest: %s", error))


def model_combo(current: str, offered: list[str]) -> QComboBox:
    """A litellm model string to type, or one of `offered` (the models used lately) to pick."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.addItems([model for model in dict.fromkeys(offered) if model])
    combo.setCurrentText(current)
    combo.lineEdit().setPlaceholderText("provider/model, e.g. openai/gpt-5.4-mini")
    combo.lineEdit().setAccessibleName("Model")  # the text field, which takes the focus
    return combo
