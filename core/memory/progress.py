"""The entries Tripane itself writes to progress.md: every tool call, every error, every stop."""

from __future__ import annotations

from datetime import datetime

from core.agent.options import (
    UNANSWERED,
    asked_in_words,
    option_label,
    reason_label,
    unanswered_note,
)
from core.agent.rules import of_put_back
from core.events import (
    AGENT_FILES_NAMED,
    ErrorDiagnosed,
    FilesChangedOutside,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    ServerTool,
    UserMessage,
    ended_word,
)
from core.logs import mask_secrets
from core.paths import named_files
from core.pictures import with_pictures_named
from core.render import put_back_groups
from core.text import capitalized, code_span, counted, fences_closed, local_time

ARGUMENT_PREVIEW_CHARS = 300
RESULT_PREVIEW_CHARS = 400


def _stamp() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _clip(text: str, limit: int, ends: bool = True) -> str:
    """The text if it is short; else its start and, with `ends`, its end, cut at line breaks where
    one is near: a test run's or a build's verdict is in its last lines. Only the ends of a long
    text are touched (stripping a 64 MB output whole copied all of it)."""
    if len(text) <= 2 * limit:
        text = text.strip()
        if len(text) <= limit:
            return text
    if not ends:
        head = text[:2 * limit].lstrip()[:limit]
        closed = fences_closed(head)  # (a task cut inside a dropped file's text made the rest of the log code)
        return f"{closed}{chr(10) if closed != head else ' '}… [{len(text) - len(head):,} more characters]"
    tail_chars = limit // 3
    head = text[:2 * limit].lstrip()[:limit - tail_chars]
    tail = text[-2 * limit:].rstrip()[-tail_chars:]
    if (cut := head.rfind("\n")) > len(head) // 2:
        head = head[:cut]
    if (cut := tail.find("\n")) != -1 and cut < len(tail) // 2:
        tail = tail[cut + 1:]
    hidden = len(text) - len(head) - len(tail)
    return fences_closed(f"{head.rstrip()}\n… [{hidden:,} characters not shown] …\n{tail.lstrip()}")


def _block(text: str, limit: int) -> str:
    shown = _clip(text, limit)
    # A fence longer than any backtick run inside keeps the entry valid Markdown.
    fence = "```" if "```" not in shown else "````"
    return f"{fence}\n{shown}\n{fence}"


def session_started(session_id: str, task: str, model: str, pictures: tuple[str, ...] = ()) -> str:
    shown = f"- Pictures: {', '.join(pictures)}\n" if pictures else ""
    return (f"\n## [{_stamp()}] ✅ Session started\n- Session: {session_id}\n- Model: {model}\n"
            f"- Task: {_clip(mask_secrets(task), 500, ends=False)}\n{shown}")


def person_wrote(message: UserMessage) -> str:
    """A message of the person's: what steered the agent, in the log of what it did."""
    said = _clip(mask_secrets(message.text), 600, ends=False)
    return f"\n## [{_stamp()}] 💬 The person wrote\n{with_pictures_named(said, message.pictures)}\n"


def tool_call(turn: int, name: str, arguments: str, ok: bool, result: str) -> str:
    status = "✅ ok" if ok else "❌ failed"
    return (
        f"\n## [{_stamp()}] 🔧 Turn {turn}: {name} — {status}\n"
        f"**Arguments**: {code_span(_clip(arguments, ARGUMENT_PREVIEW_CHARS, ends=False))}\n"
        f"**Result**:\n{_block(result, RESULT_PREVIEW_CHARS)}\n"
    )


def error(tool: str, message: str, attempt: int, limit: int | None) -> str:
    """`attempt`: how many times this same failure has happened; `limit`: the 3-Strike limit, None
    for a failure 3-Strike does not count (the provider's)."""
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(attempt, f"{attempt}th")
    entry = f"\n## [{_stamp()}] ❌ ERROR ({ordinal} attempt) in {tool or 'the model call'}\n{_block(message, 1200)}\n"
    if limit is not None and attempt >= limit:
        entry += f"\n## [{_stamp()}] 🚨 {limit}-STRIKE TRIGGERED: stopped, re-reading the plan, asking the person\n"
    return entry


def diagnosed(event: ErrorDiagnosed) -> str:
    if not event.text:
        what = "The work put back" if of_put_back(event.signature) else "The repeated failure"
        return f"\n## [{_stamp()}] 🩺 {what} could not be diagnosed: {_clip(event.error, 400)}\n"
    return f"\n## [{_stamp()}] 🩺 Diagnosis by {event.model}\n{_block(event.text, 1200)}\n"


def phase_changed(old: str, new: str) -> str:
    return f"\n## [{_stamp()}] 🏁 Phase changed: {old or '(none)'} → {new}\n"


def question(asked: HumanQuestion) -> str:
    text = asked.question
    if asked.reason == "approval":  # what it would run, and who asks (the agent, or its research helper)
        text = asked_in_words(asked, 400) + asked.question.removeprefix(f"Allow {asked.context.get('tool')}?")
    return f"\n## [{_stamp()}] ❓ Asked the person ({reason_label(asked.reason)})\n{_clip(text, 600)}\n"


def answer(answer: HumanAnswer, question: HumanQuestion | None = None) -> str:
    if answer.choice in UNANSWERED:
        return f"\n## [{_stamp()}] {_clip(unanswered_note(question, answer), 600, ends=False)}\n"
    detail = f" — {_clip(mask_secrets(answer.text), 600, ends=False)}" if answer.text.strip() else ""
    return f"\n## [{_stamp()}] 💬 The person answered: {option_label(answer.choice, question)}{detail}\n"


def allowed_in_folder(tool: str) -> str:
    """A risky call run without asking, because the person allowed that very command in this work
    folder in an earlier session: said, so that nothing runs unasked without a trace."""
    return (f"\n## [{_stamp()}] 🔓 {tool} run without asking: you allowed this command in this folder "
            "(Settings → Supervision)\n")


def session_ended(status: str, summary: str) -> str:
    icon = {"done": "✅", "capped": "⏹", "aborted": "⏹", "error": "❌"}.get(status, "⏹")
    return f"\n## [{_stamp()}] {icon} Session ended: {ended_word(status)}\n{_clip(summary, 2000)}\n"


def resumed_after_interruption(interrupted_at: str, stopped: list[int] = ()) -> str:
    """`stopped`: the process groups that commands had left running in the background, which the
    run that was cut short did not stop, stopped now."""
    left = (f" What commands had left running in the background (process group{'s' if len(stopped) > 1 else ''} "
            f"{', '.join(map(str, stopped))}) was stopped now, as the run's end would have." if stopped else "")
    return (f"\n## [{_stamp()}] ▶ Run resumed after an interruption\nTripane closed or was stopped mid-run; its last "
            f"record was at {local_time(interrupted_at)}. A command running then may have been cut short.{left}\n")


def background_stopped(commands: tuple[str, ...], by: str = "") -> str:
    """What commands had left running in the background, stopped: as the run ended, or `by` the
    person or Tripane's quitting when it ran on for them (see BackgroundStopped)."""
    when = {"person": "Stopped by the person", "quit": "Stopped as Tripane quit"}.get(by, "Stopped with the run")
    return f"\n## [{_stamp()}] ⏹ {when}: what commands had left running in the background\n{_commands_listed(commands)}\n"


def background_kept(commands: tuple[str, ...]) -> str:
    """The task ended done with what its commands had left running still running: left so for the person."""
    return (f"\n## [{_stamp()}] ⏵ Left running for the person as the task ended: what commands had started in the "
            f"background\n{_commands_listed(commands)}\n")


def _commands_listed(commands: tuple[str, ...]) -> str:
    return "\n".join(f"- {code_span(command) if command else 'an earlier command'}" for command in commands)


def compaction(first_seq: int, last_seq: int, before: int, after: int, note: str = "") -> str:
    return (f"\n## [{_stamp()}] ⇊ Context compacted: events {first_seq}–{last_seq} summarised "
            f"({before:,} → {after:,} tokens){note}; the full log is kept\n")


def window_learned(window: int, assumed: int) -> str:
    return (f"\n## [{_stamp()}] ⚠ The provider refused a request over the model's window: {window:,} tokens, "
            f"not the {assumed:,} assumed\n- The context is budgeted for {window:,} tokens from now on.\n")


def servers_listed(tools: tuple[ServerTool, ...], failed: tuple[tuple[str, str], ...], servers: int) -> str:
    by_server: dict[str, int] = {}
    for tool in tools:
        by_server[tool.server] = by_server.get(tool.server, 0) + 1
    lines = [f"- {code_span(server)}: {counted(count, 'tool')}" for server, count in by_server.items()]
    lines += [f"- {code_span(server)} not reached: {_clip(why, 500, ends=False)}" for server, why in failed]
    reached = servers - len(failed)
    return (f"\n## [{_stamp()}] 🔌 Tool servers: {reached} of {servers} reached, "
            f"{counted(len(tools), 'tool')} given to the agent\n" + "\n".join(lines) + "\n")


def model_changed(details: str) -> str:
    """`details`: what changed, as core/render.py says it ("from A to B …")."""
    return f"\n## [{_stamp()}] Model changed by the person\n- {capitalized(details)}, from the next request on.\n"


def workdir_moved(previous: str, workdir: str) -> str:
    return f"\n## [{_stamp()}] Work folder moved by the person\n- From {previous} to {workdir}; the agent works there from now on.\n"


def changed_outside(event: FilesChangedOutside) -> str:
    how = f"{_block(event.diff, 1500)}\n" if event.diff else ""
    return (f"\n## [{_stamp()}] ⟳ Files changed outside the agent's tools\n- {event.words(40)}\n"
            f"- By {event.by('its')}, since the agent's last step; it is told.\n{how}")


def put_back(event: FilesPutBack) -> str:
    lines = [f"- {capitalized(what)}: {named_files(paths, AGENT_FILES_NAMED)}"
             for what, paths in put_back_groups(event) if paths]
    if event.reason:
        lines.append(f"- Why: {_clip(event.reason, 500, ends=False)}")
    return f"\n## [{_stamp()}] ↶ Files put back by the person\n" + "\n".join(lines) + "\n"


def memory_recalled(injected: list[str], offered: list[str], failure: str, lessons: list[str] = ()) -> str:
    if failure:
        return f"\n## [{_stamp()}] 🧠 Long-term memory unavailable\n- {_clip(failure, 300, ends=False)}\n- The task goes on without it.\n"
    lines = [f"- Skill injected: {name}" for name in injected] + [f"- Skill offered: {name}" for name in offered]
    lines += [f"- Lessons quoted: {', '.join(lessons)}"] if lessons else []
    return f"\n## [{_stamp()}] 🧠 Long-term memory recalled\n" + ("\n".join(lines) or "- Recent daily logs listed") + "\n"
