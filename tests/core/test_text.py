"""One-line summaries of long texts (failures in the chat, progress.md, the daily memory)."""

from __future__ import annotations

from core.offload import task_brief
from core.text import fences_closed, one_line, sentence


def test_a_short_text_is_kept_whole_on_one_line():
    assert one_line("No such file:\n  'missing.py'.", 80) == "No such file: 'missing.py'."


def test_a_long_text_is_cut_between_words_and_ends_in_an_ellipsis():
    text = "plan_update replaces the whole file, and this drops the section(s) ## Risks & Mitigation. Send it all."
    cut = one_line(text, 90)
    assert cut == "plan_update replaces the whole file, and this drops the section(s) ## Risks & Mitigation…"
    assert len(cut) <= 90


def test_a_text_without_spaces_near_the_limit_is_cut_at_the_limit():
    cut = one_line("x" * 200, 50)
    assert cut == "x" * 49 + "…" and len(cut) == 50


def test_a_sentence_gets_its_full_stop_unless_it_has_an_ending():
    assert sentence("use the docs in the repo  ") == "use the docs in the repo."
    assert sentence("Really?") == "Really?" and sentence("不要。") == "不要。" and sentence("") == ""


def test_words_are_counted_as_a_reader_counts_them_chinese_and_japanese_by_character():
    from core.text import word_count

    assert word_count("Read the file first.") == 4
    assert word_count("先读取文件，再运行测试。") == 10  # a thinking written in Chinese was "1 word"
    assert word_count("用 pytest 运行测试") == 6  # mixed: pytest a word, each character one
    assert word_count("ファイルを読む") == 7


def test_the_first_words_of_a_text_count_chinese_by_character_and_keep_its_lines():
    from core.text import first_words

    assert first_words("Totals are rounded.\n\nTax is 20%.", 4) == "Totals are rounded.\n\nTax"
    assert first_words("Totals are rounded.", 3) is None  # no more than that: nothing to cut
    assert first_words("合计按行四舍五入，税率为百分之二十。", 8) == "合计按行四舍五入"  # no spaces: it was kept whole


def test_a_long_chinese_line_is_cut_without_its_punctuation_before_the_ellipsis():
    assert one_line("修复解析器，让它跳过空行，然后运行测试", 7) == "修复解析器…"


def test_a_calls_escaped_letters_read_as_themselves_where_people_read_them():
    from core.events import ToolCall

    escaped = ToolCall("c", "findings_add", '{"title": "\\u7a7a\\u884c", "body": "caf\\u00e9"}')
    assert escaped.readable_arguments() == '{"title": "空行", "body": "café"}'
    assert ToolCall("c", "x", '{"broken": ').readable_arguments() == '{"broken": '  # as it came
    named = ToolCall("c", "file_read", '{"path": "caf\\udce9.txt"}')  # a name's byte that is not UTF-8
    assert named.readable_arguments() == named.arguments  # kept escaped: no UTF-8 file can hold it


def test_a_code_block_a_cut_leaves_open_is_closed_and_one_closed_is_left_as_it_is():
    assert fences_closed("Fix it:\n```\nTraceback\n  line 3") == "Fix it:\n```\nTraceback\n  line 3\n```"
    assert fences_closed("````\n```python\nx = 1\n```\n") == "````\n```python\nx = 1\n```\n\n````"  # (inner fence)
    assert fences_closed("~~~\ncode\n~~~ and more") == "~~~\ncode\n~~~ and more\n~~~"  # (not a closing fence)
    whole = "```json\n{}\n```\nthen ~~~ words"
    assert fences_closed(whole) == whole


def test_a_long_task_cut_inside_a_dropped_files_text_leaves_the_plans_other_sections_as_markdown():
    # A PDF dropped on the New session's task: its fence was cut open, and the plan below it was code.
    task = "Compare the specs. `/home/me/Downloads/spec.pdf`:\n```\n" + "words of the spec\n" * 200 + "```\n"
    brief = task_brief(task)
    goal, notice = brief.rsplit("\n… [the task goes on", 1)
    assert goal.endswith("words of the spec\n```") and notice.startswith(": 3,657 characters in all")
    assert fences_closed(brief) == brief
