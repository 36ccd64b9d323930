"""A web page as the agent reads it: its text, with the structure that matters kept as Markdown.

Stripping the tags, as web_fetch first did, lost what an agent researching a library needs most:
where the links go (the next page of the docs), which lines are code (indentation and all), what
is a heading, a list, a table row. The page is parsed (the standard library's forgiving HTML
parser, for the broken markup of real pages) and written back as plain Markdown: links with their
absolute address, code in fences, headings with #, list items with -, table cells with |.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIPPED = {"script", "style", "noscript", "svg", "template", "head", "iframe", "canvas"}
BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
          "form", "fieldset", "figure", "figcaption", "dl", "dt", "dd", "details", "summary", "address",
          "ul", "ol", "table", "thead", "tbody", "tfoot", "hr", "body", "html"}
HEADINGS = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "#####", "h6": "######"}
VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source", "track"}
MAX_LINK_CHARS = 300  # a data: URL or a tracking link is not worth its length
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_DOUBLE_SPACES = re.compile(r"  +")  # what pieces of text each ending in a collapsed space leave
_LIST_ITEM = re.compile(r"^( *(?:- |1\. ))")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


class _Markdown(HTMLParser):
    def __init__(self, base_url: str):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title: list[str] = []
        self._skipping: list[str] = []  # open tags whose content is not text (script, style, …)
        self._pre = 0
        self._in_title = False
        self._links: list[tuple[str, int]] = []  # (href, where the link's text starts in out)
        self._lists: list[str] = []  # ul / ol, innermost last
        self._cells = 0  # cells so far in the current table row

    # --- tags ------------------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # in <head>, which is otherwise passed over
            self._in_title = True
            return
        if self._skipping:
            if tag in SKIPPED and tag not in VOID:
                self._skipping.append(tag)
            return
        if tag in SKIPPED:
            self._skipping.append(tag)
        elif tag in HEADINGS:
            self._block(HEADINGS[tag] + " ")
        elif tag == "pre":
            self._block("```\n")
            self._pre += 1
        elif tag == "code" and not self._pre:
            self.out.append("`")
        elif tag in ("ul", "ol"):
            self._line() if self._lists else self._block()  # a list within a list item: no blank line
            self._lists.append(tag)
        elif tag == "li":
            depth = max(len(self._lists) - 1, 0)
            self._line("  " * depth + ("1. " if self._lists and self._lists[-1] == "ol" else "- "))
        elif tag == "tr":
            self._line("| ")
            self._cells = 0
        elif tag in ("td", "th"):
            if self._cells:
                self.out.append(" | ")
            self._cells += 1
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            self._links.append((href, len(self.out)))
        elif tag == "br":
            self.out.append("\n")
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self.out.append(f"[image: {alt}]")
        elif tag in ("b", "strong"):
            self.out.append("**")
        elif tag in ("i", "em"):
            self.out.append("*")
        elif tag in BLOCKS:
            self._block()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._line() if self._lists else self._block()
        elif tag in HEADINGS or tag in BLOCKS:
            self._block()
        elif tag == "pre" and self._pre:
            self._pre -= 1
            if self.out and not self.out[-1].endswith("\n"):
                self.out.append("\n")
            self.out.append("```")
            self._block()
        elif tag == "code" and not self._pre:
            self.out.append("`")
        elif tag == "tr":
            self.out.append(" |")
            self._line()
        elif tag == "a" and self._links:
            href, start = self._links.pop()
            self._close_link(href, start)
        elif tag in ("b", "strong"):
            self.out.append("**")
        elif tag in ("i", "em"):
            self.out.append("*")
        elif tag == "li":
            self._line()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif self._skipping:
            return
        elif self._pre:
            self.out.append(data)
        else:
            self.out.append(_SPACES.sub(" ", data))

    # --- writing ---------------------------------------------------------------------------------

    def _close_link(self, href: str, start: int) -> None:
        text = "".join(self.out[start:]).strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")) or not text:
            return  # a link to the same page, a script, or with no text: its text stays as it is
        url = urljoin(self.base_url, href)
        if len(url) > MAX_LINK_CHARS or url == text:
            return
        del self.out[start:]
        self.out.append(f"[{text}]({url})")

    def _line(self, prefix: str = "") -> None:
        last = next((piece for piece in reversed(self.out) if piece), "\n")
        if not last.endswith("\n"):
            self.out.append("\n")
        self.out.append(prefix)

    def _block(self, prefix: str = "") -> None:
        self.out.append("\n\n" + prefix)


def _tidy(out: list[str]) -> list[str]:
    """The lines, with the spaces that collapsed whitespace left at their ends taken off, except in
    code, where every space is the code's (and a list item's indent, which is the list's)."""
    lines, in_code = [], False
    for line in "".join(out).split("\n"):
        if line.strip().startswith("```"):
            in_code = not in_code
            lines.append(line.strip())
        elif in_code:
            lines.append(line)
        else:
            item = _LIST_ITEM.match(line)
            text = _DOUBLE_SPACES.sub(" ", (line[item.end(1):] if item else line).strip())
            lines.append(item.group(1) + text if item else text)
    return lines


def html_to_text(markup: str, base_url: str = "") -> str:
    """A page's Markdown: its title first, then its body as text with links, code and structure."""
    parser = _Markdown(base_url)
    parser.feed(markup)
    parser.close()
    body = _BLANK_LINES.sub("\n\n", "\n".join(_tidy(parser.out))).strip()
    title = _SPACES.sub(" ", "".join(parser.title)).strip()
    if title and not body.startswith(("# " + title, title)):
        body = f"# {title}\n\n{body}"
    return body
