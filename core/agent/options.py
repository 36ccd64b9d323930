"""What the person is asked and offered at a stop, as they read it: the keys the core records (and
the agent reads in its context) and their labels for the dialog, the chat and progress.md."""

from __future__ import annotations

from core.agent.state import approved_part
from core.events import HumanAnswer, HumanQuestion
from core.text import one_line, sentence

OPTION_LABELS = {
    "retry_with_hint": "Retry with a hint", "skip_step": "Skip the step", "edit_plan": "Edit the plan",
    "change_model": "Change model", "stop": "Stop", "continue": "Continue", "guidance": "Send guidance",
    "approve": "Approve", "deny": "Deny", "always": "Always allow", "always_call": "Always allow this call in this folder",
}


# The answer Tripane records for the person when a question the agent asked with a fallback went
# unanswered for as long as the session waits (SessionStarted.answer_wait_min).
NO_ANSWER = "no_answer_in_time"
# The answer Tripane records for the person when the research helper that asked a question is
# gone before they answered: it stopped, or the process that ran it did (the question would
# otherwise stay open, offered again on reopening for a read that can never run).
WITHDRAWN = "withdrawn"
UNANSWERED = (NO_ANSWER, WITHDRAWN)  # Tripane's answers, not the person's


def typed_answer(question: HumanQuestion, choice: str) -> bool:
    """Whether `choice` is words the person typed rather than one of the question's options: the
    agent's question answered in the box beside its options is too (a log, a workbook's rows)."""
    return not question.options or (question.reason == "ask_user" and choice not in question.options)


def unanswered_note(question: HumanQuestion | None, answer: HumanAnswer) -> str:
    """A question Tripane answered for the person (one of UNANSWERED), in a line with its mark:
    how long it waited and what the agent does, or why it was withdrawn."""
    if answer.choice == WITHDRAWN:
        return f"↩ Question withdrawn: {answer.text.rstrip('.')}"
    fallback = str((question.context if question else {}).get("fallback", "")).strip()
    return f"⏱ {answer.text.rstrip('.')}: the agent goes on with its fallback" + (f" — {fallback}" if fallback else "")


def option_label(choice: str, question: HumanQuestion | None = None) -> str:
    """An option's label; the agent's own options (a human_ask's) are shown as they are. With the
    approval `question` it answers, an "always" says what it allows: the same words on the
    dialog's button, in the chat and in progress.md."""
    if question is not None and question.reason == "approval":
        if choice == "always":
            return f"Always allow {question.context.get('tool') or 'this tool'}"
        if choice == "always_call":
            part = approved_part(str(question.context.get("arguments", "")))
            what = {"command": "command", "url": "page"}.get(part[0] if part else "", "call")
            return f"Always allow this {what} in this folder"
    return OPTION_LABELS.get(choice, choice)


def options_typed(question: HumanQuestion) -> str:
    """The question's options as the terminal offers them: each as it is typed, with what it does
    where its name does not say it ("always_call: always allow this command in this folder")."""
    shown = []
    for number, option in enumerate(question.options, 1):
        label = option_label(option, question)
        said = label.lower() in (option.lower(), option.replace("_", " ").lower())
        shown.append(f"{number}. {option}" + ("" if said else f": {label[:1].lower()}{label[1:]}"))
    return " / ".join(shown)


def option_typed(typed: str, question: HumanQuestion) -> str:
    """The option the person typed at the terminal: its name, its number or its label ("": none).
    A name first: the agent's options may be numbers themselves ("2", "1")."""
    wanted, options = typed.strip().lower(), question.options
    by_name = [option for option in options if option.lower() == wanted]
    by_number = [option for number, option in enumerate(options, 1) if str(number) == wanted]
    by_label = [option for option in options if option_label(option, question).lower() == wanted]
    return next(iter(by_name + by_number + by_label), "")


APPROVING = ("approve", "always_call", "always")


def refused_by_policy(tool: str) -> str:
    return f"Refused by this session's policy: {tool} needs approval and approvals are off."


def denial(tool: str, answer: HumanAnswer) -> str | None:
    """None when the person's answer to an approval question lets the call run, else what the
    model reads in place of the call's output."""
    if answer.choice in APPROVING:
        return None
    reason = f" Reason: {sentence(answer.text.strip())}" if answer.text.strip() else ""
    return f"The person denied this {tool} call; it was not run.{reason}"


REASON_LABELS = {
    "three_strike": "3-Strike", "danger_turn": "turn threshold", "approval": "approval",
    "ask_user": "the agent asks", "budget": "budget cap",
}


def reason_label(reason: str) -> str:
    """Why the run stopped for the person, in a few words."""
    return REASON_LABELS.get(reason, reason.replace("_", " "))


def asked_in_words(question: HumanQuestion, limit: int) -> str:
    """The question in a line; an approval's with what it would run ("Allow shell_run?" says too
    little of what was allowed or refused)."""
    if question.reason != "approval":
        return one_line(question.question, limit)
    arguments = str(question.context.get("arguments", ""))
    part = approved_part(arguments)
    return f"Allow {question.context.get('tool') or 'the call'} {one_line(part[1] if part else arguments, limit)}?"


def answer_line(question: HumanQuestion | None, answer: HumanAnswer) -> str:
    """A question and the person's answer in a line for the daily log (seed 002, section 5.3: the
    exchange goes to episodic memory, where later tasks' memory search finds what the person said),
    or "" for one not worth keeping there: a plain approval, which says nothing about the work."""
    if question is None or (question.reason == "approval" and answer.choice != "deny" and not answer.text.strip()):
        return ""
    if answer.choice == WITHDRAWN:  # the person said nothing
        return ""
    asked = asked_in_words(question, 300)
    if answer.choice == NO_ANSWER:
        return f"{asked} — no answer in time: the agent went on with its fallback"
    said = option_label(answer.choice, question)
    text = one_line(answer.text, 300)
    return f"{asked} — {said}" + (f": {text}" if text and text != said else "")
