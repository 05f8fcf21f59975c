"""Conversation text -> HTML that is safe to put in a page.

Two renderings, both escaped:
- `verbatim_html` (the `verbatim` filter): the text as it was written, every line break and space kept (the page
  styles it `white-space: pre-wrap`), nothing turned into a link or a heading. User, system and tool turns are
  shown this way: a user's pasted code keeps its lines and its `# comment` lines stay comments.
- `markdown_html` (the `md` filter): Markdown with every line break kept (CommonMark would join single newlines
  into one paragraph), raw HTML disabled (markdown-it escapes it), then sanitised by nh3 (an allow-list): no
  script, no event handler attribute, no `javascript:` or `data:` URL survives either step; links keep http(s)
  and mailto only and open without a referrer. Assistant turns are shown this way, with a switch to the
  verbatim text (`templates/macros.html`, macro `message`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

_TAGS = {"p", "br", "hr", "pre", "code", "em", "strong", "del", "s", "blockquote", "ul", "ol", "li", "a", "h1",
         "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "span", "sup", "sub", "img"}
_ATTRIBUTES: dict[str, set[str]] = {"a": {"href", "title"}, "img": {"alt", "title"}, "th": {"align"},
                                    "td": {"align"}, "code": {"class"}, "ol": {"start"}}
"""Images keep their alt text only: a remote `src` would make the page fetch from the network."""
_SCHEMES = {"http", "https", "mailto"}


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True}
                      ).enable("table")


def markdown_html(text: str | None) -> Markup:
    """Markdown rendered and sanitised (for conversation turns, replies and judge outputs)."""
    if not text:
        return Markup("")
    html = _markdown().render(text)
    return Markup(nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes=_SCHEMES,
                            link_rel="noopener noreferrer nofollow"))


def verbatim_html(text: str | None) -> Markup:
    """The text escaped and nothing else: its line breaks and spacing are kept by the style (`.verbatim`)."""
    return escape(text or "")


_SCRIPTS = ((re.compile(r"[\u3040-\u30ff]"), "ja"), (re.compile(r"[\uac00-\ud7af]"), "ko"),
            (re.compile(r"[\u3400-\u9fff\uf900-\ufaff]"), "zh"))


def text_lang(text: str | None) -> str:
    """'zh', 'ja' or 'ko' when the text is written in that script, '' otherwise: set as the element's `lang`, it
    makes the browser draw Han characters with the Chinese (not the Japanese) forms of a CJK font."""
    sample = (text or "")[:2000]
    for pattern, lang in _SCRIPTS:
        if pattern.search(sample):
            return lang
    return ""


_BREAK_AFTER = re.compile(r"([/:_.,=-]+)(?=\w)")


def breakable(text: Any) -> Markup:
    """The text escaped, with a line-break opportunity (`<wbr>`) after each `/ : _ . , = -` inside it: a model spec,
    a path or a run id then wraps at its parts (`scripted:file:/tmp/` `model_a.json`) instead of widening its
    table or being cut in the middle of a word."""
    if text is None:
        return Markup("")
    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(text)))))


def highlight(text: str | None, needle: str | None) -> Markup:
    """The text escaped, with every case-insensitive match of `needle` in a `<mark>` (the browser's search)."""
    if not text:
        return Markup("")
    if not needle:
        return escape(text)
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    out, at = [], 0
    for found in pattern.finditer(text):
        out.append(str(escape(text[at:found.start()])))
        out.append(f"<mark>{escape(found.group(0))}</mark>")
        at = found.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percentage; an em dash when there is none."""
    if value is None:
        return "—"
    return f"{100 * float(value):.{digits}f}"


def cell_text(cell: Any, digits: int = 1) -> str:
    """'52.3 [48.0, 56.5]' for a summary cell {value, ci_low, ci_high}."""
    if not isinstance(cell, dict) or cell.get("value") is None:
        return "—"
    text = pct(cell["value"], digits)
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{pct(cell['ci_low'], digits)}, {pct(cell['ci_high'], digits)}]"
    return text


def board_filters() -> dict[str, Any]:
    """The leaderboard's texts, worded as `uxbench leaderboard` words them: a pair's difference (`pair`) and a
    scaling trend (`trend`)."""
    from uxbench.report.leaderboard_render import pair_text, trend_text

    return {"pair": pair_text, "trend": trend_text}
