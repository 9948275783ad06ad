"""Comments in a note: HTML's ``<!-- … -->`` and Obsidian's ``%% … %%`` hold notes to the writer
or to a tool (a template's instructions, ``<!-- prettier-ignore -->``, a to-do), which Obsidian's
reading view and documentation sites do not show. So neither the note page, nor a note's title,
nor its passages hold them.

The rules, shared by the note page's renderer (:mod:`knowledge_assets.api.markdown_comments`) and
the chunker (:mod:`knowledge_assets.core.chunks.markdown`), are the same for both kinds:

- A comment block runs from a line starting with the opener (indented at most 3 spaces) to the
  line where the closer closes it, as CommonMark's HTML block of that kind; text after the
  closer on that line makes the lines ordinary text instead, so that text is kept.
- A comment inside a line of text is left out of it; one inside a code span is code.
- An unclosed opener stays text, so nothing after it is lost (Obsidian would hide the rest of
  the note). Code blocks are never read here.

Where each closer (and each run of backticks) lies is found once per text and looked up by
binary search: scanning ahead from every opener would make a hostile note of thousands of
unclosed ``<!--`` take quadratic time (minutes to hours for a note of a few hundred KB).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "HTML", "OBSIDIAN", "SYNTAXES", "Closes", "CodeSpans", "CommentBlocks", "Syntax",
    "block_length", "blocks_of", "strip_inline_comments", "without_code_spans",
]  # fmt: skip


@dataclass(frozen=True)
class Syntax:
    """One kind of comment: its opener and closer (Obsidian's are the same ``%%``)."""

    open: str
    close: str

    @property
    def block_open(self) -> re.Pattern[str]:
        return re.compile(" {0,3}" + re.escape(self.open))


HTML = Syntax("<!--", "-->")
OBSIDIAN = Syntax("%%", "%%")
SYNTAXES = (HTML, OBSIDIAN)
_TICKS = re.compile(r"`+")


class Closes:
    """Where the closer of ``syntax`` lies in ``text``."""

    def __init__(self, text: str, syntax: Syntax = HTML) -> None:
        # Neither "-->" nor "%%" overlaps itself in a way that matters: finditer misses none.
        self._at = [m.start() for m in re.finditer(re.escape(syntax.close), text)]

    def after(self, pos: int) -> int:
        """The first closer at or after ``pos``; -1 when there is none."""
        i = bisect_left(self._at, pos)
        return self._at[i] if i < len(self._at) else -1


class CommentBlocks:
    """The comment blocks of one syntax in a note's ``lines`` (its text split at newlines)."""

    def __init__(self, lines: Sequence[str], syntax: Syntax = HTML) -> None:
        self._lines = lines
        self._syntax = syntax
        self._opener = syntax.block_open
        self._closing = [i for i, line in enumerate(lines) if syntax.close in line]

    def length(self, index: int, first: str | None = None, end: int | None = None) -> int | None:
        """How many lines the comment block opened by line ``index`` takes; None when that line
        opens none, the comment is not closed (before line ``end``, if given), or text follows
        its closer. ``first``: the line as the caller reads it (e.g. inside a quote), by
        default the line itself."""
        first = self._lines[index] if first is None else first
        opened = self._opener.match(first)
        if opened is None:
            return None
        close = self._syntax.close
        at = first.find(close, opened.end())
        if at >= 0:
            return None if first[at + len(close) :].strip() else 1
        # The opening line holds no closer after its opener, so the next closing line is later.
        k = bisect_right(self._closing, index)
        if k == len(self._closing) or (end is not None and self._closing[k] >= end):
            return None
        last = self._lines[self._closing[k]]
        return (
            None if last[last.find(close) + len(close) :].strip() else self._closing[k] - index + 1
        )


def blocks_of(lines: Sequence[str], text: str) -> list[CommentBlocks]:
    """The comment blocks of each syntax whose opener ``text`` (the lines joined) holds."""
    return [CommentBlocks(lines, s) for s in SYNTAXES if s.open in text]


def block_length(blocks: Sequence[CommentBlocks], index: int) -> int | None:
    """How many lines a comment block of any syntax opened by line ``index`` takes, or None."""
    for found in blocks:
        taken = found.length(index)
        if taken is not None:
            return taken
    return None


def strip_inline_comments(line: str) -> str:
    """``line`` without the comments inside it; code spans (a run of backticks closed by the
    next run as long, as in CommonMark) are kept as they are."""
    for syntax in SYNTAXES:
        if syntax.open in line:
            line = _strip(line, syntax)
    return line


class CodeSpans:
    """The code spans of a line: a run of backticks closed by the next run as long (CommonMark);
    a run no run closes is text. Found once per line, looked up by binary search."""

    def __init__(self, line: str) -> None:
        self._sizes = {m.start(): len(m[0]) for m in _TICKS.finditer(line)}  # where runs start
        self._runs: dict[int, list[int]] = defaultdict(list)  # length -> where such runs start
        for at, size in self._sizes.items():
            self._runs[size].append(at)

    def end(self, tick: int) -> tuple[int, bool]:
        """Where the code span opened by the run of backticks at ``tick`` ends (just past its
        closing run) and True, or, when no run closes it, where that run ends and False."""
        size = self._sizes[tick]
        same = self._runs[size]
        k = bisect_right(same, tick)
        return (same[k] + size, True) if k < len(same) else (tick + size, False)


def without_code_spans(line: str) -> str:
    """``line`` with each code span replaced by a space (a lone run of backticks stays)."""
    if "`" not in line:
        return line
    spans = CodeSpans(line)
    out: list[str] = []
    pos, tick = 0, line.find("`")
    while tick >= 0:  # pos never lies inside a run: the first backtick after it starts one
        end, closed = spans.end(tick)
        out.append(line[pos:tick] + (" " if closed else line[tick:end]))
        pos = end
        tick = line.find("`", pos)
    out.append(line[pos:])
    return "".join(out)


def _strip(line: str, syntax: Syntax) -> str:
    opener, closer = syntax.open, syntax.close
    closes = Closes(line, syntax)
    spans = CodeSpans(line)
    out: list[str] = []
    pos, start = 0, line.find(opener)
    while start >= 0:
        if start < pos:  # that opener was inside a code span or the comment just cut
            start = line.find(opener, pos)
            continue
        tick = line.find("`", pos, start)
        if tick >= 0:  # a code span (or a lone run of backticks) comes first; pos never lies
            end = spans.end(tick)[0]  # inside a run, so the first backtick after it starts one
            out.append(line[pos:end])
            pos = end
            continue
        close = closes.after(start + len(opener))
        if close < 0:
            break  # unclosed: no later comment can close either, the rest stays text
        out.append(line[pos:start])
        pos = close + len(closer)
    out.append(line[pos:])
    return "".join(out)
