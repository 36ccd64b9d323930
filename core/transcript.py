"""A session as a Markdown transcript: to paste into an issue, a pull request or a chat, where
people read what the agent was asked, what it said and did, what failed and what you answered
(`tripane show --markdown`, Session → Copy as Markdown, `transcript.md` in an export).

Outputs are cut to their start (the export's event log and offload/ hold them whole); the
thinking is folded in a <details> block, which GitHub and most Markdown viewers show closed.
"""

from __future__ import annotations

from core.agent.options import UNANSWERED, option_label, reason_label, unanswered_note
from core.agent.rules import failure_notice
from core.events import (
    AssistantMessage,
    CommandChangedFiles,
    Compaction,
    ErrorDiagnosed,
    ErrorRecorded,
    FilesChangedOutside,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    ModelChanged,
    Record,
    ReflectionWritten,
    ResearchStep,
    SessionBranched,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserMessage,
    WorkdirMoved,
    ended_word,
)
from core.pictures import with_pictures_named
from core.render import (
    branched_note,
    changed_outside_note,
    compaction_sizes,
    diagnosis_note,
    model_change_note,
    put_back_note,
    reflection_note,
    research_note,
    workdir_note,
)
from core.summary import summarize, summary_rows
from core.text import capitalized, code_span, fenced, word_count

OUTPUT_CHARS = 1500  # of a tool's output; the rest is counted
ARGUMENT_CHARS = 1500


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}\n… {len(text) - limit:,} more characters"


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def at_a_glance(records: list[Record]) -> str:
    """The session's summary (core/summary.py) as a table, folded: the reader opens it if they want it."""
    escaped = "\\|"  # a | inside a cell would end it
    rows = "\n".join(f"| {what} | {value.replace('|', escaped)} |" for what, value in summary_rows(summarize(records)))
    return f"<details><summary>At a glance</summary>\n\n| | |\n| --- | --- |\n{rows}\n\n</details>"


def transcript(records: list[Record], title: str) -> str:
    """The Markdown of a session's records, in order."""
    parts = [f"# {title}"]
    results = {r.event.call_id: r.event for r in records if isinstance(r.event, ToolResult)}
    questions = {r.event.qid: r.event for r in records if isinstance(r.event, HumanQuestion)}
    for record in records:
        event = record.event
        match event:
            case SessionStarted():
                effort = f", reasoning effort {event.reasoning_effort}" if event.reasoning_effort else ""
                parts.append(f"*Session `{record.session_id}`, model {code_span(event.model)}{effort}, work folder "
                             f"{code_span(event.workdir)}, started {record.ts[:16].replace('T', ' ')} UTC.*")
                parts.append(at_a_glance(records))
                parts.append(f"## You\n\n{with_pictures_named(event.task.strip(), event.pictures)}")
            case UserMessage():
                parts.append(f"## You\n\n{with_pictures_named(event.text.strip(), event.pictures)}")
            case AssistantMessage():
                parts.append(_reply(event, results))
            case ErrorRecorded():
                parts.append(quoted(f"⚠ Error, attempt {event.attempt}: {failure_notice(event.tool, event.message)}"))
            case ErrorDiagnosed():
                parts.append(quoted(f"🩺 {capitalized(diagnosis_note(event))}"))
            case CommandChangedFiles():
                parts.append(quoted(f"↳ The command changed {event.words(40)}"))
            case HumanQuestion():
                parts.append(quoted(f"**? Question** ({reason_label(event.reason)}): {event.question}"))
            case HumanAnswer() if event.choice in UNANSWERED:
                parts.append(quoted(unanswered_note(questions.get(event.qid), event)))
            case HumanAnswer():
                label = option_label(event.choice, questions.get(event.qid))
                detail = f" — {event.text.strip()}" if event.text.strip() else ""
                parts.append(quoted(f"↳ You answered **{label}**{detail}"))
            case Compaction():
                parts.append(quoted(f"⇊ Context compacted ({compaction_sizes(event)})"))
            case ModelChanged():
                parts.append(quoted(f"⇄ {model_change_note(event)}"))
            case WorkdirMoved():
                parts.append(quoted(f"↦ {capitalized(workdir_note(event))}"))
            case FilesPutBack():
                parts.append(quoted(f"↶ {capitalized(put_back_note(event))}"))
            case SessionBranched():
                parts.append(quoted(f"↶ {capitalized(branched_note(event))}"))
            case FilesChangedOutside():
                parts.append(quoted(f"⟳ {capitalized(changed_outside_note(event))}"))
            case ReflectionWritten():
                parts.append(quoted(f"✦ {capitalized(reflection_note(event))}"))
            case ResearchStep() if event.final and event.for_person and event.text.strip():
                # the person's own question: its answer is nowhere else in the conversation
                parts.append(quoted(f"⌕ {capitalized(research_note(event))}\n\n{event.text.strip()}"))
            case ResearchStep():
                parts.append(quoted(f"⌕ {capitalized(research_note(event))}"))
            case SessionEnded():
                summary = f": {event.summary.strip()}" if event.summary.strip() else ""
                parts.append(f"**■ Ended, {ended_word(event.status)}**{summary}")
    return "\n\n".join(parts) + "\n"


def _reply(event: AssistantMessage, results: dict[str, ToolResult]) -> str:
    lines = [f"## Agent (turn {event.turn})" if event.turn else "## Agent"]
    if event.reasoning.strip():
        words = word_count(event.reasoning)
        lines.append(f"<details><summary>Thought ({words:,} words)</summary>\n\n{event.reasoning.strip()}\n\n</details>")
    if event.text.strip():
        lines.append(event.text.strip())
    lines += [_call(call, results.get(call.id)) for call in event.tool_calls]
    return "\n\n".join(lines)


def _call(call: ToolCall, result: ToolResult | None) -> str:
    outcome = "(no result)" if result is None else ("✓" if result.ok else "✗ failed")
    text = f"**{call.name}** {outcome}\n\n" + fenced(cut(call.readable_arguments(), ARGUMENT_CHARS), "json")
    if result is not None and result.shown.strip():
        text += "\n\n" + fenced(cut(result.shown, OUTPUT_CHARS))
    if result is not None and result.offload_path:  # too long for the context: the whole of it
        text += f"\n\n*The whole output: `{result.offload_path}` in the session's folder.*"
    return text
