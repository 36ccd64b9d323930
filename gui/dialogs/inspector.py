"""The context inspector: what the model sees, by zone, and what each request cost.

Opened from the window (Ctrl+I). The assembled context is computed in the background (it may need
the tokenizer, which loads litellm); the request table and chart come from the session's events.
"""

from __future__ import annotations

from core.context.engine import Assembled
from core.context.history import STOPPED_BY_PERSON
from core.events import AssistantMessage, Record
from core.text import money
from gui.dialogs.forms import figures_table
from gui.qt import (
    QColor,
    QDialog,
    QHeaderView,
    QLabel,
    QPainter,
    QPen,
    QPlainTextEdit,
    QRectF,
    QSizePolicy,
    Qt,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen
from gui.theme import html_colour


def request_rows(records: list[Record]) -> list[dict]:
    rows = []
    for record in records:
        event = record.event
        if isinstance(event, AssistantMessage):
            usage, metrics = event.usage, event.metrics or {}
            prompt = usage.prompt_tokens or int(metrics.get("prompt_tokens_est", 0))
            rows.append({"turn": event.turn, "prompt": prompt, "reuse": float(metrics.get("prefix_reuse", 0.0)),
                         "cached": usage.cached_tokens, "cost": usage.cost_usd,
                         # the silent turn before a compaction; a reply the person stopped midway
                         "note": "flush" if metrics.get("flush") else "stopped" if metrics.get(STOPPED_BY_PERSON) else ""})
    return rows


BAR_STEP_MAX = 40.0  # px per request: a few requests are a few bars, not walls across the chart


class TokenChart(QWidget):
    """Bars: prompt tokens per request (the cached share darker); line: cumulative cost."""

    def __init__(self):
        super().__init__()
        self.setObjectName("token_chart")
        self.setAccessibleName("Tokens and cost per request")
        self.rows: list[dict] = []
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_rows(self, rows: list[dict]) -> None:
        self.rows = rows
        self.update()
        # What the bars show, in words (the Requests tab has each figure).
        self.setAccessibleDescription(self.in_words())

    def in_words(self) -> str:
        if not self.rows:
            return "No requests yet"
        prompts = [row["prompt"] for row in self.rows]
        share = (sum(row["cached"] for row in self.rows) if self.provider_reports_cache()
                 else sum(row["reuse"] * row["prompt"] for row in self.rows)) / (sum(prompts) or 1)
        total_cost = sum(row["cost"] for row in self.rows)
        return (f"{_count(len(self.rows), 'request')}, the last of {prompts[-1]:,} prompt tokens, the largest of "
                f"{max(prompts):,}; {share:.0%} of all "
                f"{'served from cache' if self.provider_reports_cache() else 'a prefix reused'}; "
                + (f"cost {money(total_cost)} in all" if total_cost > 0 else "cost unknown"))

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text_colour = palette.color(palette.ColorRole.WindowText)
        area = QRectF(self.rect()).adjusted(48, 20, -48, -24)  # the top line is the scale's label
        painter.setPen(QPen(text_colour))
        if not self.rows:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No requests yet")
            return
        top = max(r["prompt"] for r in self.rows) or 1
        width = min(BAR_STEP_MAX, area.width() / len(self.rows))
        reported = self.provider_reports_cache()
        for i, row in enumerate(self.rows):
            x = area.left() + i * width
            height = area.height() * row["prompt"] / top
            if reported:  # a request it reports no cached tokens for was a miss, however much was reused
                cached = height * (row["cached"] / row["prompt"] if row["prompt"] else 0.0)
            else:
                cached = height * row["reuse"]
            # The share reused (or cached) solid, the rest outlined: told apart by their form, not by
            # two shades of blue (the lighter one was 2:1 on white, and a legend's "dark" meant the
            # brighter bar in the dark theme).
            bar = QColor(html_colour("chart"))
            painter.setPen(QPen(bar, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if height - cached >= 1:
                painter.drawRect(QRectF(x + 0.75, area.bottom() - height + 0.75, max(1.0, width * 0.8) - 1.5,
                                        height - cached - 0.75))
            painter.fillRect(QRectF(x, area.bottom() - cached, max(1.0, width * 0.8), cached), bar)
        total_cost = sum(r["cost"] for r in self.rows)
        if total_cost > 0:
            painter.setPen(QPen(QColor(html_colour("chart_cost")), 2))
            running, previous = 0.0, None
            for i, row in enumerate(self.rows):
                running += row["cost"]
                point = (area.left() + (i + 0.4) * width, area.bottom() - area.height() * running / total_cost)
                if previous:
                    painter.drawLine(int(previous[0]), int(previous[1]), int(point[0]), int(point[1]))
                previous = point
        painter.setPen(QPen(text_colour))
        painter.drawText(4, 14, f"{top:,} tokens")
        painter.drawText(4, int(area.bottom()), "0")
        painter.drawText(int(area.left()), self.height() - 6, self.legend())

    def provider_reports_cache(self) -> bool:
        """Whether the provider says how much of a prompt it served from its cache: many do not
        (local servers, some gateways), and then the dark share is the prefix Tripane reused."""
        return any(row["cached"] for row in self.rows)

    def legend(self) -> str:
        solid = ("served from cache" if self.provider_reports_cache()
                 else "prefix reused (the provider reports no cache)")
        total_cost = sum(row["cost"] for row in self.rows)
        # No line is drawn without a price: "$0.0000" would say the requests were free.
        cost = f"line: cumulative cost {money(total_cost)}" if total_cost > 0 else "cost unknown (no price for this model)"
        return f"{_count(len(self.rows), 'request')} · solid: {solid}, outlined: the rest · {cost}"

class ContextInspector(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("inspector")
        self.setWindowTitle("Context inspector — Tripane")
        self.session_id = ""  # the session it shows
        layout = QVBoxLayout(self)
        self.summary = QLabel("Assembling the context…")
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Context inspector")
        self.context_view = QPlainTextEdit()
        self.context_view.setReadOnly(True)
        self.context_view.setAccessibleName("The next request's context, zone by zone")
        self.context_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.table = figures_table(["Turn", "Prompt tokens", "Prefix reuse", "Cached tokens", "Cost"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setAccessibleName("Requests: tokens, prefix reuse and cost")
        self.chart = TokenChart()
        self.tabs.addTab(self.chart, "Tokens and cost")
        self.tabs.addTab(self.table, "Requests")
        self.tabs.addTab(self.context_view, "Context")
        layout.addWidget(self.tabs, 1)
        fit_to_screen(self, 860, 600)

    def show_requests(self, records: list[Record]) -> None:
        rows = request_rows(records)
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            cells = (str(row["turn"]) + (f" ({row['note']})" if row["note"] else ""), f"{row['prompt']:,}",
                     f"{row['reuse']:.1%}", f"{row['cached']:,}",
                     money(row["cost"]) if row["cost"] else "–")  # no price known: not free
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.chart.set_rows(rows)

    def show_context(self, assembled: Assembled) -> None:
        zones = " · ".join(f"<b>{z.name}</b> {z.tokens:,} tokens ({_count(len(z.messages), 'message')})" for z in assembled.zones)
        self.summary.setText(f"{zones}<br>Total {assembled.tokens:,} of a {assembled.budget:,}-token budget "
                             f"({assembled.tokens / max(1, assembled.budget):.0%}).")
        parts = []
        for zone in assembled.zones:
            parts.append(f"════ {zone.name.upper()} · {zone.tokens:,} tokens ════")
            for message in zone.messages:
                parts.append(f"── {message.get('role')} ──")
                if message.get("content"):
                    parts.append(str(message["content"]))
                for call in message.get("tool_calls") or []:
                    function = call.get("function", {})
                    parts.append(f"→ {function.get('name')}({function.get('arguments')})")
        self.context_view.setPlainText("\n".join(parts))

    def show_failure(self, error: BaseException) -> None:
        self.summary.setText(f"The context could not be assembled: {error}")


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
