"""Comments (HTML's ``<!-- … -->`` and Obsidian's ``%% … %%``) left out of a note's HTML, by the
rules of :mod:`knowledge_assets.core.chunks.comments` (which the chunker follows too), before
markdown-it's own HTML rules see them: one on lines of its own, or one inside a paragraph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from knowledge_assets.core.chunks.comments import HTML, OBSIDIAN, Closes, CommentBlocks, Syntax

__all__ = ["skip_comments"]

_T = TypeVar("_T")
_BlockRule = Callable[[StateBlock, int, int, bool], bool]
_InlineRule = Callable[[StateInline, bool], bool]


def _per_text(env: Any, key: str, text: str, make: Callable[[str], _T]) -> _T:
    """``make`` of ``text``, made once per text of a render (the rules run at every line or
    opener, and each lookup must not read the text again)."""
    cached = env.get(key)
    if cached is None or cached[0] is not text:
        cached = env[key] = (text, make(text))
    return cached[1]  # type: ignore[no-any-return]


def _block_rule(syntax: Syntax) -> _BlockRule:
    def blocks(src: str) -> CommentBlocks:
        return CommentBlocks(src.split("\n"), syntax)  # markdown-it's lines are the source's

    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        """The lines of a comment block (an indented code block is code, so never one)."""
        first = state.src[state.bMarks[start] + state.tShift[start] : state.eMarks[start]]
        if state.is_code_block(start) or not first.startswith(syntax.open):
            return False
        found = _per_text(state.env, f"comment_blocks {syntax.open}", state.src, blocks)
        taken = found.length(start, first, end)
        if taken is None:
            return False
        if not silent:
            state.line = start + taken
        return True

    return rule


def _inline_rule(syntax: Syntax) -> _InlineRule:
    def closes(src: str) -> Closes:
        return Closes(src, syntax)

    def rule(state: StateInline, silent: bool) -> bool:
        if not state.src.startswith(syntax.open, state.pos):
            return False
        found = _per_text(state.env, f"comment_closes {syntax.open}", state.src, closes)
        close = found.after(state.pos + len(syntax.open))
        if close < 0 or close + len(syntax.close) > state.posMax:  # closed past this text
            return False
        state.pos = close + len(syntax.close)
        return True

    return rule


def skip_comments(md: MarkdownIt) -> None:
    """Leave comments out of what ``md`` renders."""
    for name, syntax in (("html_comment", HTML), ("obsidian_comment", OBSIDIAN)):
        # A comment block ends a paragraph, as an HTML block does in CommonMark.
        md.block.ruler.before(
            "html_block", name, _block_rule(syntax),
            {"alt": ["paragraph", "reference", "blockquote"]},
        )  # fmt: skip
        md.inline.ruler.before("html_inline", name, _inline_rule(syntax))
