"""HTML comments in a note: ``<!-- … -->`` holds notes to the writer or to a tool (an Obsidian
template's instructions, ``<!-- prettier-ignore -->``), which Obsidian and documentation sites do
not show. So neither the note page, nor a note's title, nor its passages hold them.

The rules, shared by the note page's renderer (:mod:`knowledge_assets.api.markdown_comments`) and
the chunker (:mod:`knowledge_assets.core.chunks.markdown`):

- A comment block runs from a line starting with ``<!--`` (indented at most 3 spaces) to the line
  where ``-->`` closes it, as CommonMark's HTML block of that kind; text after the ``-->`` on
  that line makes the lines ordinary text instead, so that text is kept.
- A comment inside a line of text is left out of it; one inside a code span is code.
- An unclosed ``<!--`` stays text, so nothing after it is lost. Code blocks are never read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain

__all__ = ["COMMENT", "comment_block_lines", "strip_inline_comments"]

OPEN, CLOSE = "<!--", "-->"
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BLOCK_OPEN = re.compile(r" {0,3}<!--")
# A code span (a run of backticks closed by a run as long) is kept whole; a comment is dropped.
_SPAN_OR_COMMENT = re.compile(r"(?P<span>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))|<!--.*?-->")


def comment_block_lines(lines: Iterable[str]) -> int | None:
    """How many of ``lines`` the comment block opened by the first one takes; None when the
    first line opens none, the comment is never closed, or text follows its ``-->``."""
    it = iter(lines)
    first = next(it, None)
    opened = _BLOCK_OPEN.match(first) if first is not None else None
    if first is None or opened is None:
        return None
    start = opened.end()
    for count, line in enumerate(chain([first], it), start=1):
        close = line.find(CLOSE, start)
        if close >= 0:
            return None if line[close + len(CLOSE) :].strip() else count
        start = 0
    return None


def strip_inline_comments(line: str) -> str:
    """``line`` without the comments inside it; code spans are kept as they are."""
    if OPEN not in line:
        return line
    return _SPAN_OR_COMMENT.sub(lambda m: m["span"] or "", line)
