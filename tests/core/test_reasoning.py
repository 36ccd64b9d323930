"""A reasoning model's thinking is kept apart from its answer, however the text is cut into chunks."""

from __future__ import annotations

import pytest

from core.llm import ModelReply
from core.reasoning import ThinkSplitter, passes_reasoning_back, split_reasoning

REPLY = "  <think>\nThe file is big; read it in slices.\n</think>\n\nI will read it in slices."


def split_in_chunks(text: str, size: int) -> tuple[str, str, bool]:
    splitter = ThinkSplitter()
    answer, reasoning = [], []
    for start in range(0, len(text), size):
        a, r = splitter.feed(text[start:start + size])
        answer.append(a)
        reasoning.append(r)
    a, r = splitter.finish()
    return "".join(answer) + a, "".join(reasoning) + r, splitter.opened


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 100])
def test_a_think_block_at_the_start_is_reasoning_whatever_the_chunks(size):
    answer, reasoning, opened = split_in_chunks(REPLY, size)
    assert answer == "I will read it in slices."
    assert reasoning == "\nThe file is big; read it in slices.\n"
    assert opened


@pytest.mark.parametrize("text", ["Plain answer, no thinking.", "  indented answer", "<thin is not a tag",
                                  "Use <think> tags like this: <think>x</think>", ""])
def test_text_without_a_leading_think_block_is_all_answer(text):
    for size in (1, 3, 50):
        assert split_in_chunks(text, size)[:2] == (text, "")


def test_a_reply_cut_off_while_thinking_is_all_reasoning():
    assert split_in_chunks("<think>Step 1: read. Step 2: wri", 4)[:2] == ("", "Step 1: read. Step 2: wri")
    assert split_in_chunks("<think>almost done</thi", 4)[:2] == ("", "almost done</thi")


def test_a_think_block_opened_by_the_chat_template_leaves_only_its_closing_tag():
    # Qwen3 and DeepSeek-R1 templates put <think> in the prompt: the reply starts inside it.
    answer, reasoning, opened = split_in_chunks("Let me list the files.\n</think>\n\nListing them.", 5)
    assert not opened
    assert split_reasoning(answer, reasoning, opened) == ("Listing them.", "Let me list the files.")
    assert split_reasoning("No tags here.", "", False) == ("No tags here.", "")
    assert split_reasoning("after", "thought", True) == ("after", "thought")  # split already


@pytest.mark.parametrize("model, api_base, sent_back", [
    ("deepseek/deepseek-reasoner", None, True),
    ("openai/deepseek-reasoner", "https://api.deepseek.com/v1", True),  # DeepSeek as an OpenAI-compatible API
    ("openai/deepseek-r1-distill-qwen-7b", "http://127.0.0.1:8000/v1", False),  # a local server: none
    ("openai/gpt-4o", None, False),
    ("openai/x", "https://notdeepseek.com/v1", False),
])
def test_thinking_is_sent_back_to_deepseeks_api_however_it_is_named(model, api_base, sent_back):
    assert passes_reasoning_back(model, api_base) is sent_back


async def test_deepseek_reached_as_an_openai_compatible_api_gets_its_thinking_back(store, data_dir, workdir):
    from core.scripted import ScriptedModel, call, reply
    from tests.core.helpers import make_session

    first = reply("", call("file_list", path="."))
    model = ScriptedModel([ModelReply(first.text, first.tool_calls, reasoning="List first, then decide."),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, model="openai/deepseek-reasoner",
                           api_base="https://api.deepseek.com/v1")
    assert await session.run() == "done"
    sent = [m for m in model.requests[-1].messages if m["role"] == "assistant"]
    assert sent[-1]["reasoning_content"] == "List first, then decide."
