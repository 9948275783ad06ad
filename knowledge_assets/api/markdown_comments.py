"""HTML comments left out of a note's HTML, by the rules of
:mod:`knowledge_assets.core.chunks.html_comments` (which the chunker follows too). Raw HTML is
otherwise shown as text (the renderer's ``html`` option stays off), so these rules only skip
comments: one on lines of its own, or one inside a paragraph."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from knowledge_assets.core.chunks.html_comments import COMMENT, OPEN, comment_block_lines

__all__ = ["skip_comments"]


def _comment_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """The lines of a comment block (an indented code block is code, so it is never one)."""
    if state.is_code_block(start):
        return False
    lines = (
        state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
        for line in range(start, end)
    )
    taken = comment_block_lines(lines)
    if taken is None:
        return False
    if not silent:
        state.line = start + taken
    return True


def _comment_inline(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(OPEN, state.pos):
        return False
    match = COMMENT.match(state.src, state.pos)
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
