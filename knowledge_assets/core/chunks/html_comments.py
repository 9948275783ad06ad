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

Where each ``-->`` (and each run of backticks) lies is found once per text and looked up by
binary search: scanning ahead from every ``<!--`` would make a hostile note of thousands of
unclosed ``<!--`` take quadratic time (minutes to hours for a note of a few hundred KB).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence

__all__ = ["CLOSE", "OPEN", "Closes", "CommentBlocks", "strip_inline_comments"]

OPEN, CLOSE = "<!--", "-->"
_CLOSE = re.compile(re.escape(CLOSE))  # "-->" cannot overlap itself: finditer misses none
_BLOCK_OPEN = re.compile(r" {0,3}<!--")
_TICKS = re.compile(r"`+")


class Closes:
    """Where ``-->`` lies in ``text``."""

    def __init__(self, text: str) -> None:
        self._at = [m.start() for m in _CLOSE.finditer(text)]

    def after(self, pos: int) -> int:
        """The first ``-->`` at or after ``pos``; -1 when there is none."""
        i = bisect_left(self._at, pos)
        return self._at[i] if i < len(self._at) else -1


class CommentBlocks:
    """The comment blocks of a note's ``lines`` (its text split at newlines)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = lines
        self._closing = [i for i, line in enumerate(lines) if CLOSE in line]

    def length(self, index: int, first: str | None = None, end: int | None = None) -> int | None:
        """How many lines the comment block opened by line ``index`` takes; None when that line
        opens none, the comment is not closed (before line ``end``, if given), or text follows
        its ``-->``. ``first``: the line as the caller reads it (e.g. inside a quote), by
        default the line itself."""
        first = self._lines[index] if first is None else first
        opened = _BLOCK_OPEN.match(first)
        if opened is None:
            return None
        close = first.find(CLOSE, opened.end())
        if close >= 0:
            return None if first[close + len(CLOSE) :].strip() else 1
        k = bisect_right(self._closing, index)
        if k == len(self._closing) or (end is not None and self._closing[k] >= end):
            return None
        last = self._lines[self._closing[k]]
        after = last[last.find(CLOSE) + len(CLOSE) :]
        return None if after.strip() else self._closing[k] - index + 1


def strip_inline_comments(line: str) -> str:
    """``line`` without the comments inside it; code spans (a run of backticks closed by the
    next run as long, as in CommonMark) are kept as they are."""
    if OPEN not in line:
        return line
    closes = Closes(line)
    sizes = {m.start(): len(m[0]) for m in _TICKS.finditer(line)}  # where each run starts
    runs: dict[int, list[int]] = defaultdict(list)  # run length -> where runs that long start
    for at, size in sizes.items():
        runs[size].append(at)
    out: list[str] = []
    pos, start = 0, line.find(OPEN)
    while start >= 0:
        if start < pos:  # that <!-- was inside a code span
            start = line.find(OPEN, pos)
            continue
        tick = line.find("`", pos, start)
        if tick >= 0:  # a code span (or a lone run of backticks) comes first; pos never lies
            size = sizes[tick]  # inside a run, so the first backtick after it starts one
            same = runs[size]
            k = bisect_right(same, tick)
            end = same[k] + size if k < len(same) else tick + size
            out.append(line[pos:end])
            pos = end
            continue
        close = closes.after(start + len(OPEN))
        if close < 0:
            break  # unclosed: no later comment can close either, the rest stays text
        out.append(line[pos:start])
        pos = close + len(CLOSE)
    out.append(line[pos:])
    return "".join(out)
