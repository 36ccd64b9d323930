"""Whether to go back to before a message or step of the agent's (a new session from there,
core/branch.py): what the new session holds, and which of the work folder's files come back as
they were then, which are removed, and which cannot be put back."""

from __future__ import annotations

from core.branch import GoingBack
from core.paths import named_files
from core.text import counted
from gui.qt import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.widgets.chat_items import escape_html, stamp

NAMED = 8  # files named in each line; the rest are counted (a formatter's 600 made it taller than the screen)


def files_lines(plan: GoingBack) -> list[str]:
    """Each way the files changed since the point would go, with their names."""
    lines = [f"{what}: {named_files(paths, NAMED)}" for what, paths in (
        ("As they were then", plan.as_then), ("Removed (made after it)", plan.removed)) if paths]
    lines += [f"Not put back: {path} ({why})" for path, why in sorted(plan.not_put_back.items())[:NAMED]]
    if len(plan.not_put_back) > NAMED:
        lines.append(f"…and {len(plan.not_put_back) - NAMED:,} more not put back")
    if others := sorted(plan.changed_by_others & set(plan.held)):
        lines.append(f"Changed since by you or another program too (that change goes as well): "
                     f"{named_files(others, NAMED)}")
    if plan.unnamed:
        lines.append(f"{counted(plan.unnamed, 'more file')} that commands changed, not named, stay as they are")
    return lines


class GoBackDialog(QDialog):
    """Go back to `plan`'s point? With whether to put the files back (when some changed since)."""

    def __init__(self, plan: GoingBack, words: str, parent: QWidget, ends_it: bool = False):
        super().__init__(parent)
        self.plan = plan
        when = stamp(plan.back_to)
        self.setWindowTitle(f"Go back to step {plan.step}?")
        self.setObjectName("go_back")
        said = QLabel(
            f"<p><b>Go back to before {escape_html(words)}, at {escape_html(when)}?</b></p>"
            "<p>A new session starts from there: the conversation, the plan, findings and progress as they were "
            "then. You tell the agent what to do instead, and it goes on from there. This session stays as it "
            "is, to read, to go on with by a message, or to go back in again.</p>"
            + ("<p><b>This session is not over (it runs, or waits for you): going back ends it first, as Stop "
               "does.</b></p>" if ends_it else ""))
        said.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(said)
        self.put_back = QCheckBox()
        lines = files_lines(plan)
        if plan.held:
            self.put_back.setText(f"&Put back the work folder's {counted(len(plan.held), 'file')} the agent changed "
                                  "since, as they were then")
            self.put_back.setChecked(True)
            layout.addWidget(self.put_back)
        else:
            self.put_back.setVisible(False)
        files = QLabel("\n".join(lines) if lines else "The agent changed no file of the work folder since then.")
        files.setWordWrap(True)
        files.setObjectName("go_back_files")
        files.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(files)
        buttons = QDialogButtonBox()
        self.go_button = buttons.addButton("&Go back", QDialogButtonBox.ButtonRole.AcceptRole)
        self.go_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(600, self.sizeHint().height())

    @property
    def putting_back(self) -> bool:
        """Whether the files go back (with none to put back: nothing is left as it is either)."""
        return not self.plan.held or self.put_back.isChecked()
