"""One line of text per event, for the terminal (`tripane run`, `tripane show`)."""

from __future__ import annotations

import textwrap

from core.agent.options import (
    NO_ANSWER,
    WITHDRAWN,
    option_label,
    options_typed,
    reason_label,
)
from core.agent.research import described
from core.agent.rules import (
    PUT_BACK_FOR_THE_PERSON,
    failure_excerpt,
    failure_notice,
    for_the_person,
    of_put_back,
    output_excerpt,
)
from core.changes import SHELL_TOOL
from core.context.compaction import summary_failure
from core.events import (
    AssistantMessage,
    BackgroundKept,
    BackgroundStopped,
    CommandChangedFiles,
    Compaction,
    Danger,
    ErrorDiagnosed,
    ErrorRecorded,
    FileChanged,
    FilesChangedOutside,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    MemoryRecalled,
    ModelChanged,
    PinsChanged,
    Record,
    ReflectionWritten,
    ResearchStep,
    ServerToolsListed,
    SessionBranched,
    SessionEnded,
    SessionPaused,
    SessionResumed,
    SessionStarted,
    ToolResult,
    Usage,
    UserMessage,
    WindowLearned,
    WorkdirMoved,
    ended_word,
)
from core.memory.history import line_counts
from core.paths import named_files
from core.pictures import with_pictures_named
from core.reasoning import thinking_hidden
from core.text import capitalized, counted, local_time, money, one_line, word_count

PREVIEW = 160


def _short(text: str, limit: int = PREVIEW) -> str:
    return one_line(text, limit)


def render(record: Record) -> str | None:
    """The line for a record, or None for events not worth a line (the core's progress.md writes)."""
    event = record.event
    match event:
        case SessionStarted():
            effort = f" · reasoning effort {event.reasoning_effort}" if event.reasoning_effort else ""
            shown = f" · with the task: {', '.join(event.pictures)}" if event.pictures else ""
            return f"▶ session {record.session_id} · model {event.model}{effort} · workdir {event.workdir}{shown}"
        case UserMessage():
            return f"you: {_short(with_pictures_named(event.text, event.pictures))}"
        case AssistantMessage():
            calls = ", ".join(f"{c.name}({_short(c.readable_arguments(), 60)})" for c in event.tool_calls)
            said = _short(event.text) if event.text else ""
            thought = f"(thought {word_count(event.reasoning):,} words) " if event.reasoning else ""
            if thinking_hidden(event.reasoning, event.thinking_blocks):
                thought = "(thought, hidden by the provider) "
            return f"[turn {event.turn}] agent: {thought}{said}{' → ' if said and calls else ''}{calls}"
        case ToolResult():
            mark = "✓" if event.ok else "✗"
            where = f" (full output: {event.offload_path})" if event.offload_path else ""
            said = (failure_excerpt(event.content, PREVIEW) if not event.ok  # (what broke)
                    else output_excerpt(event.shown, PREVIEW) if event.name == SHELL_TOOL else _short(event.shown))
            return f"  {mark} {event.name}: {said}{where}"
        case CommandChangedFiles():
            return f"    ↳ it changed {event.words()}"
        case FilesChangedOutside():
            return f"  ⟳ {changed_outside_note(event)}"
        case FileChanged() if event.tells_the_agent:
            return f"  ✎ {describe_edit(event)}"
        case FileChanged() if event.author != "core":
            return f"  ✎ {event.file} v{event.version} by {event.author}"
        case PinsChanged():
            return f"  📌 {capitalized(pins_note(event))}"
        case ErrorRecorded():
            return f"  ! error (attempt {event.attempt}): {failure_notice(event.tool, event.message)}"
        case ErrorDiagnosed():
            return f"  🩺 {diagnosis_note(event)}"
        case Danger():
            return f"  ⚠ {describe_danger(event)}"
        case HumanQuestion():
            options = f" [{options_typed(event)}]" if event.options else ""
            return f"? question {event.qid} ({reason_label(event.reason)}): {event.question}{options}"
        case HumanAnswer() if event.choice == NO_ANSWER:
            return f"  ⏱ {event.qid}: {event.text}; the agent goes on with its fallback"
        case HumanAnswer() if event.choice == WITHDRAWN:
            return f"  ↩ {event.qid} withdrawn: {event.text}"
        case HumanAnswer():
            detail = f" — {_short(event.text)}" if event.text.strip() else ""
            return f"  answer to {event.qid}: {option_label(event.choice)}{detail}"  # (as the question listed it)
        case MemoryRecalled() if event.text:
            return f"  🧠 long-term memory recalled{recall_note(event, ' (', ')')}"
        case Compaction():
            return (f"  ⇊ compaction of events {event.first_seq}-{event.last_seq} ({compaction_sizes(event)})"
                    f"{flush_note(event)}")
        case WindowLearned():
            return f"  ⇲ {window_note(event)}"
        case ServerToolsListed():
            return f"  🔌 {servers_note(event)}"
        case ModelChanged():
            return f"  ⇄ {model_change_note(event)}"
        case WorkdirMoved():
            return f"  ↦ {workdir_note(event)}"
        case FilesPutBack():
            return f"  ↶ {put_back_note(event)}"
        case SessionBranched():
            return f"  ↶ {branched_note(event)}"
        case ReflectionWritten():
            return f"  ✦ {reflection_note(event)}"
        case ResearchStep():
            return f"    ⌕ {research_note(event)}"
        case SessionPaused():
            return "  ‖ paused"
        case SessionResumed() if event.interrupted_at:
            return f"  ▶ {resumed_note(event)}"
        case BackgroundStopped():
            return f"  ⏹ {background_stopped_note(event)}"
        case BackgroundKept():
            return f"  ⏵ {background_kept_note(event)}"
        case SessionResumed():
            return "  ▶ resumed"
        case SessionEnded():
            return ended_line(event)
    return None


# What a run does that takes long enough to count its seconds (the window's status bar, a
# terminal's passing line), with its words; a tool's card counts its own. "thinking": a model call.
TIMED_ACTIVITIES = {
    "thinking": "waiting for the model",
    "compacting": "compacting the context",
    "diagnosing": "diagnosing a repeated failure",
    "diagnosing_put_back": "diagnosing the work you put back",
    "starting_servers": "starting the tool servers",
}


def activity_progress(activity: str, seconds: float, thought: int = 0, written: int = 0, call: str = "",
                      call_chars: int = 0) -> str:
    """How far one of TIMED_ACTIVITIES has come. Of a model call, whether it thinks or writes and
    how much (`thought`, `written`: characters; `call`: the tool call it writes, `call_chars` of its
    arguments): a local model may read for minutes before its first word, then write slowly."""
    counted = f"{int(seconds)} s"
    if activity == "thinking" and call:
        return f"writing a call to {call} · {call_chars:,} characters · {counted}"
    if activity == "thinking" and written:
        return f"writing its reply · {written:,} characters · {counted}"
    if activity == "thinking" and thought:
        return f"thinking · {counted}"
    return f"{TIMED_ACTIVITIES[activity]} · {counted}"


def ended_line(event: SessionEnded) -> str:
    """How a run ended, and its summary whole: a run ended by the agent's answer has the answer as
    its summary, the thing the person ran it for (its step's line shows only the start). A long or
    Markdown one goes below, indented, its lines as written."""
    summary = event.summary.strip()
    if "\n" not in summary and len(summary) <= ENDED_INLINE:
        return f"■ ended: {ended_word(event.status)}" + (f" — {summary}" if summary else "")
    return f"■ ended: {ended_word(event.status)}\n" + textwrap.indent(summary, "  ")


ENDED_INLINE = 400  # characters of a one-line summary that stay on the line


def resumed_note(event: SessionResumed) -> str:
    """A run that stopped with nobody stopping it goes on."""
    return (f"resumed after an interruption: Tripane closed or was stopped mid-run (its last record: "
            f"{local_time(event.interrupted_at)})")


def background_stopped_note(event: BackgroundStopped) -> str:
    """What the agent's commands had left running in the background, stopped (see the event)."""
    what = f"what {_commands_named(event.commands)} had left running in the background"
    if event.by == "person":
        return f"you stopped {what}"
    when = {"quit": "as Tripane quit"}.get(event.by, "as the run went on after the interruption" if event.interrupted
                                             else "as the run ended")
    return f"stopped {what}, {when}"


def background_kept_note(event: BackgroundKept) -> str:
    """What the agent's commands had left running, kept running for the person as the task ended."""
    return (f"what {_commands_named(event.commands)} left running in the background keeps running for you now the "
            "task is done, until you stop it or quit Tripane")


def _commands_named(commands: tuple[str, ...]) -> str:
    return ", ".join(f"`{one_line(command, 60)}`" if command else "an earlier command" for command in commands)


def describe_edit(event: FileChanged) -> str:
    """A person's edit of a working file (the agent reads it as a diff at its next step)."""
    added, removed = line_counts(event.diff)
    who = "You edited" if event.author == "user" else "A program outside Tripane changed"
    return (f"{who} {event.file} (version {event.version}: +{added} −{removed} lines); "
            "the agent reads the change at its next step")


def diagnosis_note(event: ErrorDiagnosed) -> str:
    """A failure's diagnosis as the person reads it: what the agent was told, by whom, for how much."""
    if not event.text:
        what = PUT_BACK_FOR_THE_PERSON if of_put_back(event.signature) else "the failure that happened again"
        return f"{what} could not be diagnosed: {event.error.rstrip('.')}"
    spent = f"; {spent}" if (spent := request_cost(event.usage)) else ""
    remembered = f"; long-term memory shown: {', '.join(event.memory)}" if event.memory else ""
    return f"{for_the_person(event.text)} (by {event.model}{spent}{remembered})"


def changed_outside_note(event: FilesChangedOutside) -> str:
    who = [event.other_agents()] if event.alongside else []
    who += ["a process its commands left running"] if event.background else []
    maybe = f" (maybe by {', or by '.join(who)})" if who else ""
    how = ", with how those it had read or written changed" if event.diff else ""
    return f"changed outside the agent's tools since its last step{maybe}: {event.words()}; the agent is told{how}"


def put_back_groups(event: FilesPutBack) -> list[tuple[str, list[str]]]:
    """What a put-back did, for the person: each way a file came back, and its files (the ways the
    confirmation before it names, core/work_changes.py's dialog)."""
    (kept, copied), (created, since) = event.split(event.paths), event.split(event.removed)
    return [("put back as before the session", kept), ("put back as before the agent's first command", copied),
            ("removed (the agent created them)", created),
            ("removed (created since the agent's first command)", since)]


PUT_BACK_NAMED = 8  # files named in each part of a put-back's line (as its question named them)


def put_back_note(event: FilesPutBack) -> str:
    """Files the person put back as they were before the session, for them to read."""
    parts = [f"{what}: {named_files(paths, PUT_BACK_NAMED)}" for what, paths in put_back_groups(event) if paths]
    why = f" (why: {one_line(event.reason, 300)})" if event.reason else ""
    return "; ".join(parts) + f"{why}; the agent is told at its next step"


def branched_note(event: SessionBranched) -> str:
    """A session begun from an earlier point of another, for the person to read."""
    source = f"“{one_line(event.source_title, 80)}” ({event.source})" if event.source_title else event.source
    files = ("the work folder's files left as they are now" if event.left_as_they_are else "; ".join(
        f"{what}: {named_files(paths, PUT_BACK_NAMED)}" for what, paths in (
            ("files put back as they were then", event.put_back), ("removed (made after it)", event.removed),
            ("not put back", event.not_put_back)) if paths) or "no file of the work folder had changed since")
    where = f"before step {event.step} ({local_time(event.back_to)})" if event.step else local_time(event.back_to)
    return f"went back to {where} of session {source}, which stays as it was; {files}"


def pins_note(event: PinsChanged) -> str:
    """The plan lines the person pinned, for them to read."""
    if not event.lines:
        return "no line of the plan is pinned any more"
    listed = ", ".join(f"“{one_line(line, 120)}”" for line in event.lines[:PINS_LISTED])
    more = f" and {len(event.lines) - PINS_LISTED} more" if len(event.lines) > PINS_LISTED else ""
    return (f"{counted(len(event.lines), 'line')} of the plan pinned, which the agent must keep "
            f"(it may tick a step off): {listed}{more}")


PINS_LISTED = 5


def workdir_note(event: WorkdirMoved) -> str:
    return f"work folder moved from {event.previous} to {event.workdir}: the agent works there from now on"


ACHIEVED_WORDS = {"yes": "the task was achieved", "partly": "the task was partly achieved",
                  "no": "the task was not achieved"}


def reflection_note(event: ReflectionWritten) -> str:
    """A reflection in a line: its verdict, what it suggested and became, and where it is kept."""
    where = f"memory/{event.path}"
    if event.error:
        return f"reflection by {event.model}: {event.error.rstrip('.')}; its reply is kept as it came in {where}"
    lessons = f"; became lesson{'s' if len(event.lessons) > 1 else ''} {', '.join(event.lessons)} in MEMORY.md" if event.lessons else ""
    verdict = ACHIEVED_WORDS.get(event.achieved, "no verdict")
    count = f"{event.strategies} strateg{'y' if event.strategies == 1 else 'ies'} suggested"
    spent = f"; {spent}" if (spent := request_cost(event.usage)) else ""
    variant = f"; {event.variant}" if event.variant else ""
    return f"reflection by {event.model}: {verdict}; {count}{lessons}{variant} ({where}{spent})"


def research_done_note(event: ResearchStep) -> str:
    """The end of a research in a line, for the conversation (the call's card shows the reads)."""
    did = "wrote its report" if event.text.strip() else "ended without a report"
    spent = f" ({spent})" if (spent := request_cost(event.spent)) else ""
    return f"{_helper(event)} {did} after {event.step} step{'s' * (event.step != 1)}{spent}"


def aside_note(event: ResearchStep, question: str) -> str:
    """The end of a question the person asked a helper, for the conversation."""
    did = "it answered" if event.text.strip() else "it ended without an answer"
    spent = f", {spent}" if (spent := request_cost(event.spent)) else ""
    asked = f" “{_short(question, 100)}”" if question else ""
    return f"You asked a helper{asked}: {did} after {event.step} step{'s' * (event.step != 1)}{spent}"


def _helper(event: ResearchStep) -> str:
    if event.for_person:
        return "the research helper you asked"
    return f"research helper {event.helper}" if event.helper else "research helper"


def research_note(event: ResearchStep) -> str:
    """A research helper's step in a line: what it read (and what failed), or that it reported."""
    asked = f" (you asked: {_short(event.question, 120)})" if event.question else ""
    if event.fell_back:
        asked += f" [the helpers' model failed — {event.fell_back}; the session's model reads instead]"
    if event.final:
        did = "wrote its report" if event.text.strip() else "ended without a report"
        if spent := request_cost(event.spent):
            return f"{_helper(event)}, step {event.step}{asked}: {did} (the research took {spent})"
    elif not event.tool_calls:  # a part's report, or a deep research's plan
        did = f"wrote: {_short(event.text, 160)}" if event.text.strip() else "wrote nothing"
    else:
        did = ", ".join(described(call) + ("" if seen.ok else " (failed)")
                        for call, seen in zip(event.tool_calls, event.consulted, strict=False))
    spent = f" ({spent})" if (spent := request_cost(event.usage)) else ""
    part = f", part {event.part}" if event.part else ""
    return f"{_helper(event)}{part}, step {event.step}{asked}: {did}{spent}"


def recall_note(event: MemoryRecalled, before: str = "", after: str = "") -> str:
    """What a recall at task start brought beyond recent logs: "skills injected: x; lessons quoted: m3"."""
    skills = ", ".join(f"{slug} (its variant on test)" if slug in event.variants else slug for slug in event.skills)
    said = "; ".join(part for part in (f"skills injected: {skills}" if event.skills else "",
                                       f"lessons quoted: {', '.join(event.lessons)}" if event.lessons else "") if part)
    return f"{before}{said}{after}" if said else ""


def describe_danger(event: Danger) -> str:
    """What a turn-threshold event means for the person, in the chat and on the terminal."""
    if event.level == "stop":
        return f"Turn {event.turn}: the danger threshold — the run waits for you to continue, guide or stop it"
    asked = f"; at turn {event.limit} you will be asked whether it goes on" if event.limit > event.turn else ""
    return f"Turn {event.turn}: the task is taking long (the agent is told to re-read its plan and findings){asked}"


def flush_note(event: Compaction) -> str:
    """Said of a compaction whose flush turn could not run (the context was over the window), or
    whose summary no model could write (the compacted part is then kept as a list of its calls)."""
    note = "" if event.flush_done else "; without the flush turn: the context was over the model's window"
    failed = summary_failure(event.summary)
    if failed:
        note += f"; no summary could be written ({failed[:300]}), so the compacted part is kept as a list of its calls"
    return note


def model_change_note(event: ModelChanged) -> str:
    details = model_change_details(event)
    return f"{details} by the person" if _same_model(event) else f"model changed by the person {details}"


def model_change_details(event: ModelChanged) -> str:
    """What the person changed: 'from A to B at URL, …', the server of the same model (it moved:
    "from A to A" said nothing), or only how hard the model thinks."""
    window = f", a {event.context_window:,}-token window" if event.context_window else ""
    effort = "" if event.reasoning_effort is None else f", reasoning effort {effort_words(event.reasoning_effort)}"
    if _same_model(event) and event.server_changed:
        where = event.api_base or "its provider's own"
        return f"server of {event.model} set to {where}{window}{effort}"
    if _same_model(event):
        return f"reasoning effort of {event.model} set to {effort_words(event.reasoning_effort or '')}"
    where = f" at {event.api_base}" if event.api_base else ""
    return f"from {event.previous} to {event.model}{where}{window}{effort}"


def _same_model(event: ModelChanged) -> bool:
    """The same model, its server moved or its effort set (an older log's same model: its effort)."""
    return event.model == event.previous and (bool(event.server_changed) or event.reasoning_effort is not None)


def effort_words(effort: str) -> str:
    return effort or "the model's own"


def servers_note(event: ServerToolsListed) -> str:
    """What the session's agent was given of the person's tool servers, and which were not reached."""
    by_server: dict[str, int] = {}
    for tool in event.tools:
        by_server[tool.server] = by_server.get(tool.server, 0) + 1
    given = [f"{server} ({counted(count, 'tool')})" for server, count in by_server.items()]
    said = f"tools given from the tool servers {', '.join(given)}" if given else "no tool server's tools given"
    failed = "; ".join(f"{server} not reached: {one_line(why, 300)}" for server, why in event.failed)
    return said + (f"; {failed}" if failed else "")


def window_note(event: WindowLearned) -> str:
    return (f"the provider says the model's window is {event.window:,} tokens, not the {event.assumed:,} "
            "assumed: the context is budgeted for it from now on")


def compaction_sizes(event: Compaction) -> str:
    """How much the context held before and after, for people. Compactions recorded by earlier
    builds hold no size after (0): only the size before is told."""
    sizes = (f"{event.tokens_before:,} → {event.tokens_after:,} tokens" if event.tokens_after
             else f"from {event.tokens_before:,} tokens")
    return sizes + summary_cost(event)


def summary_cost(event: Compaction) -> str:
    """What writing the summary took, when a model wrote it and its provider said."""
    if not event.summary_model or not (spent := request_cost(event.usage)):
        return ""
    return f"; summary by {event.summary_model}: {spent}"


def request_cost(used: Usage) -> str:
    """A side request's tokens and cost ("1,500 tokens, $0.0020"); "" when its provider said nothing."""
    if not (used.prompt_tokens or used.completion_tokens):
        return ""
    cost = f", {money(used.cost_usd)}" if used.cost_usd else ""
    return f"{used.prompt_tokens + used.completion_tokens:,} tokens{cost}"
