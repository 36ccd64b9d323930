"""What the person is asked and offered at a stop, as they read it: the keys the core records (and
the agent reads in its context) and their labels for the dialog, the chat and progress.md."""

from __future__ import annotations

from core.agent.state import approved_part
from core.events import HumanAnswer, HumanQuestion
from core.text import one_line

OPTION_LABELS = {
    "retry_with_hint": "Retry with a hint", "skip_step": "Skip the step", "edit_plan": "Edit the plan",
    "change_model": "Change model", "stop": "Stop", "continue": "Continue", "guidance": "Send guidance",
    "approve": "Approve", "deny": "Deny", "always": "Always allow", "always_call": "Always allow this call in this folder",
}


# The answer Tripane records for the person when a question the agent asked with a fallback went
# unanswered for as long as the session waits (SessionStarted.answer_wait_min).
NO_ANSWER = "no_answer_in_time"


def no_answer_note(question: HumanQuestion | None, text: str) -> str:
    """A question that went unanswered, in a line: how long it waited and what the agent does."""
    fallback = str((question.context if question else {}).get("fallback", "")).strip()
    return f"{text.rstrip('.')}: the agent goes on with its fallback" + (f" — {fallback}" if fallback else "")


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


REASON_LABELS = {
    "three_strike": "3-Strike", "danger_turn": "turn threshold", "approval": "approval",
    "ask_user": "the agent asks", "budget": "budget cap",
}


def reason_label(reason: str) -> str:
    """Why the run stopped for the person, in a few words."""
    return REASON_LABELS.get(reason, reason.replace("_", " "))


def answer_line(question: HumanQuestion | None, answer: HumanAnswer) -> str:
    """A question and the person's answer in a line for the daily log (seed 002, section 5.3: the
    exchange goes to episodic memory, where later tasks' memory search finds what the person said),
    or "" for one not worth keeping there: a plain approval, which says nothing about the work."""
    if question is None or (question.reason == "approval" and answer.choice != "deny" and not answer.text.strip()):
        return ""
    asked = one_line(question.question, 300)
    if question.reason == "approval":  # "Allow shell_run?" says too little of what was refused
        arguments = str(question.context.get("arguments", ""))
        part = approved_part(arguments)
        asked = f"Allow {question.context.get('tool') or 'the call'} {one_line(part[1] if part else arguments, 300)}?"
    if answer.choice == NO_ANSWER:
        return f"{asked} — no answer in time: the agent went on with its fallback"
    said = option_label(answer.choice, question)
    text = one_line(answer.text, 300)
    return f"{asked} — {said}" + (f": {text}" if text and text != said else "")
