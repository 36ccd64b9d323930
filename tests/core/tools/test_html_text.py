"""Real pages' markup, broken as it often is, read as Markdown."""

from __future__ import annotations

from core.tools.html_text import html_to_text


def test_broken_markup_loses_no_text_and_keeps_scripts_out():
    page = ("<p>Unclosed paragraph <b>bold <i>both</b> after<div>block<p>next "
            "<script>var a = '</p>'; evil()</script><style>p { x }</style>end")
    text = html_to_text(page)
    assert "Unclosed paragraph **bold *both** after" in text and "block" in text and text.endswith("next end")
    assert "evil" not in text and "{ x }" not in text


def test_links_that_lead_nowhere_new_stay_plain_text():
    page = ('<a href="#section">Jump</a> <a href="javascript:void(0)">Menu</a> <a href="mailto:a@b.c">Mail</a> '
            '<a href="/img.png"><img src="x.png"></a> <a href="data:text/plain;base64,' + "A" * 400 + '">Data</a>')
    assert html_to_text(page, "https://example.org/docs/") == "Jump Menu Mail Data"


def test_characters_and_entities_come_through_as_written():
    page = "<h1>Caf&eacute; &lt;menu&gt;</h1><p>上下文 &#x1F600; a&nbsp;b</p>"
    assert html_to_text(page) == "# Café <menu>\n\n上下文 😀 a\u00a0b"
