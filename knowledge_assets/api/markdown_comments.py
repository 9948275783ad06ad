"""HTML comments left out of a note's HTML: ``<!-- … -->`` and ``<!--prettier-ignore-->`` are
notes to the writer or to a tool, which Obsidian and documentation sites do not show. Raw HTML is
otherwise shown as text (the renderer's ``html`` option stays off), so these rules only skip
comments: one on lines of its own, or one inside a paragraph. A comment inside code is code, and
an unclosed ``<!--`` stays text, so nothing after it is lost."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

__all__ = ["skip_comments"]

_OPEN, _CLOSE = "<!--", "-->"
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _comment_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Lines from one starting with ``<!--`` to the one ending with ``-->``, as CommonMark's HTML
    block of that kind; text after the ``-->`` on its line makes it a paragraph instead, so the
    text is kept."""
    pos = state.bMarks[start] + state.tShift[start]
    if state.is_code_block(start) or not state.src.startswith(_OPEN, pos):
        return False
    close = state.src.find(_CLOSE, pos + len(_OPEN))
    line = start
    while close >= 0 and line < end and state.eMarks[line] < close + len(_CLOSE):
        line += 1
    if close < 0 or line >= end or state.src[close + len(_CLOSE) : state.eMarks[line]].strip():
        return False
    if not silent:
        state.line = line + 1
    return True


def _comment_inline(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(_OPEN, state.pos):
        return False
    match = _COMMENT.match(state.src, state.pos)
    if match is None:
        return False
    state.pos = match.end()
    return True


def skip_comments(md: MarkdownIt) -> None:
    """Leave HTML comments out of what ``md`` renders."""
    # A comment block ends a paragraph, as an HTML block does in CommonMark.
    md.block.ruler.before(
        "html_block",
        "html_comment",
        _comment_block,
        {"alt": ["paragraph", "reference", "blockquote"]},
    )
    md.inline.ruler.before("html_inline", "html_comment", _comment_inline)
