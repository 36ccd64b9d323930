"""What the person is asked and offered at a stop, as they read it: the keys the core records (and
the agent reads in its context) and their labels for the dialog, the chat and progress.md."""

from __future__ import annotations

OPTION_LABELS = {
    "retry_with_hint": "Retry with a hint", "skip_step": "Skip the step", "edit_plan": "Edit the plan",
    "change_model": "Change model", "stop": "Stop", "continue": "Continue", "guidance": "Send guidance",
    "approve": "Approve", "deny": "Deny", "always": "Always allow", "always_call": "Always allow this call in this folder",
}


def option_label(choice: str) -> str:
    """An option's label; the agent's own options (a human_ask's) are shown as they are."""
    return OPTION_LABELS.get(choice, choice)


REASON_LABELS = {
    "three_strike": "3-Strike", "danger_turn": "turn threshold", "approval": "approval",
    "ask_user": "the agent asks", "budget": "budget cap",
}


def reason_label(reason: str) -> str:
    """Why the run stopped for the person, in a few words."""
    return REASON_LABELS.get(reason, reason.replace("_", " "))
