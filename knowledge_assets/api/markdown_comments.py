"""HTML comments left out of a note's HTML, by the rules of
:mod:`knowledge_assets.core.chunks.html_comments` (which the chunker follows too). Raw HTML is
otherwise shown as text (the renderer's ``html`` option stays off), so these rules only skip
comments: one on lines of its own, or one inside a paragraph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from knowledge_assets.core.chunks.html_comments import CLOSE, OPEN, Closes, CommentBlocks

__all__ = ["skip_comments"]

_T = TypeVar("_T")


def _per_text(env: Any, key: str, text: str, make: Callable[[str], _T]) -> _T:
    """``make`` of ``text``, made once per text of a render (the rules run at every line or
    ``<``, and each lookup must not read the text again)."""
    cached = env.get(key)
    if cached is None or cached[0] is not text:
        cached = env[key] = (text, make(text))
    return cached[1]  # type: ignore[no-any-return]


def _blocks(src: str) -> CommentBlocks:
    return CommentBlocks(src.split("\n"))  # markdown-it's lines are the source's lines


def _comment_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """The lines of a comment block (an indented code block is code, so it is never one)."""
    first = state.src[state.bMarks[start] + state.tShift[start] : state.eMarks[start]]
    if state.is_code_block(start) or not first.startswith(OPEN):
        return False
    taken = _per_text(state.env, "comment_blocks", state.src, _blocks).length(start, first, end)
    if taken is None:
        return False
    if not silent:
        state.line = start + taken
    return True


def _comment_inline(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(OPEN, state.pos):
        return False
    close = _per_text(state.env, "comment_closes", state.src, Closes).after(state.pos + len(OPEN))
    if close < 0:
        return False
    state.pos = close + len(CLOSE)
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
