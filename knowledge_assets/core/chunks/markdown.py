"""Line-level Markdown structure for the chunker: ATX headings outside fenced code.

A full Markdown parser would normalise the text, and the chunker must keep every character of a
note verbatim (but its comments), so this module only classifies lines:

- ATX headings ``#`` .. ``######`` indented at most 3 spaces, followed by a space/tab or the end of
  the line (so ``#hashtag`` is text), with an optional closing run of ``#`` (``## Title ##``).
- Fenced code blocks opened by 3+ backticks or tildes indented at most 3 spaces (a backtick fence's
  info string may not contain a backtick, so ````` ```inline``` ````` is not a fence) and closed by
  a run of the same character at least as long. Nothing inside a fence is a heading. An unclosed
  fence runs to the end of the note, as in CommonMark.
- Comments (HTML's and Obsidian's ``%%``) are left out, as the note page leaves them out: a
  comment block's lines are not returned at all, and a comment inside a line is cut from it
  (:mod:`knowledge_assets.core.chunks.comments`), also one that a later line of the same
  paragraph closes (the lines between go with it). So a ``# heading`` inside a comment never
  titles a note, and no passage holds a comment.
- Setext headings, other HTML blocks and MDX/JSX lines are ordinary text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from markdown_it.common.html_blocks import block_names

from knowledge_assets.core.chunks.comments import (
    SYNTAXES,
    CommentBlocks,
    block_length,
    blocks_of,
    strip_inline_comments,
    without_code_spans,
)

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t])#+$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Closing fences may be indented more than 3 spaces: fences inside list items are indented with
# their item, and missing a close would swallow every later heading into "code".
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
# What starts a block that ends a paragraph, past which a comment opened in it cannot close, as
# the note page reads it (markdown-it, CommonMark): an ATX heading, a fence, a list item that is
# not empty (an ordered one only from 1), a footnote's definition, a setext underline, a
# thematic break, an HTML block of a block element. Any other line goes on with the paragraph
# (<b> and <span> are inline, "1984. …" or "2) …" no list), lazily too in a quote. Blank lines,
# comment blocks, quotes, tables and, in a list item, the list's next item end it too.
_INTERRUPTS = re.compile(
    r" {0,3}(?:#{1,6}(?:[ \t]|$)|`{3,}[^`]*$|~{3,}|[-*+][ \t]+\S|1[.)][ \t]+\S|\[\^[^\]\s]+\]:"
    r"|(?:=+|-+)[ \t]*$|([-*_])(?:[ \t]*\1){2,}[ \t]*$"
    r"|<(?:script|pre|style|textarea)(?:[ \t>]|$)"
    rf"|</?(?:{'|'.join(block_names)})(?:[ \t/>]|$))",
    re.IGNORECASE,
)
_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_QUOTE_MARK = re.compile(r" {0,3}> ?")
# Matched against a right-stripped line: trailing blanks both inside the last cell and after the
# row made a long run of spaces take quadratic time (2.9 s for one line of 32,000).
_TABLE_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?$")
# Split *after* each sentence end so that the pieces concatenate back to the exact input.
_SENTENCE_END = re.compile(r"(?<=[。．.!?！？\n])")


def normalise_newlines(text: str) -> str:
    """Drop a leading BOM and turn CRLF/CR line endings into LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class Line:
    """One source line; ``level`` is its ATX heading level (0 when it is not a heading)."""

    text: str
    level: int = 0
    title: str = ""
    fenced: bool = False  # inside a fenced code block, the fence lines included


@dataclass
class Section:
    """Lines under one ``#``/``##`` heading; ``heading`` is None for text before any ``##``."""

    h1: str | None
    heading: str | None
    lines: list[Line] = field(default_factory=list)


def parse_heading(line: str) -> tuple[int, str]:
    """``(level, title)`` of an ATX heading line, ``(0, "")`` for any other line."""
    match = _ATX.match(line)
    if match is None:
        return 0, ""
    title = _CLOSING_HASHES.sub("", (match[2] or "").strip()).strip()
    return len(match[1]), title


def _walk(
    raw_lines: list[str], comments: list[CommentBlocks], paragraphs: bool = True
) -> Iterator[tuple[int, str, bool]]:
    """``(index, text, fenced)`` of each line kept: lines of comment blocks outside fences are
    skipped, and comments inside other unfenced lines are cut from them (with ``paragraphs``;
    without, every line comes back as written, one for one)."""
    fence: str | None = None  # the opening run, e.g. "````"
    index = 0
    while index < len(raw_lines):
        raw = raw_lines[index]
        index += 1
        if fence is not None:
            yield index - 1, raw, True
            close = _FENCE_CLOSE.match(raw)
            if close and close[1][0] == fence[0] and len(close[1]) >= len(fence):
                fence = None
            continue
        opened = _FENCE_OPEN.match(raw)
        if opened and not (opened[1][0] == "`" and "`" in opened[2]):
            fence = opened[1]
            yield index - 1, raw, True
            continue
        comment = block_length(comments, index - 1) if comments else None
        if comment is not None:
            index += comment - 1
            continue
        if not paragraphs:
            yield index - 1, raw, False
            continue
        kept, taken = _without_comments(raw_lines, index - 1, comments)
        for offset, text in enumerate(kept):
            yield index - 1 + offset, text, False
        index += taken


def _without_comments(
    raw_lines: list[str], at: int, comments: list[CommentBlocks]
) -> tuple[list[str], int]:
    """Line ``at`` without its comments, and how many lines after it went with it: a comment
    it opens that a later line of the same paragraph closes is cut with the lines between, as
    the note page cuts it. Then the rest of the paragraph is returned too, each of its lines
    read once (a paragraph of unclosed openers stays linear)."""
    line = strip_inline_comments(raw_lines[at])
    bare = without_code_spans(line)
    if not any(s.open in bare for s in SYNTAXES) or parse_heading(line)[0]:
        return [line], 0
    depth, text = _in_quote(raw_lines[at])
    item = _ITEM.match(text)
    column = len(item[0]) if item else len(text) - len(text.lstrip(" "))
    end = at + 1
    while end < len(raw_lines) and _continues(raw_lines, end, depth, column):
        if comments and block_length(comments, end) is not None:
            break
        end += 1
    if end == at + 1:
        return [line], 0
    return strip_inline_comments("\n".join(raw_lines[at:end])).split("\n"), end - at - 1


def _in_quote(line: str) -> tuple[int, str]:
    """How many quotes ``line`` is in, and its text inside them."""
    depth = 0
    while (mark := _QUOTE_MARK.match(line)) is not None:
        depth, line = depth + 1, line[mark.end() :]
    return depth, line


def _continues(raw_lines: list[str], index: int, depth: int, column: int) -> bool:
    """Whether line ``index`` goes on with the paragraph before it, whose lines are ``depth``
    quotes deep and, in a list item, start at ``column``."""
    line_depth, text = _in_quote(raw_lines[index])
    if not text.strip() or line_depth > depth or _INTERRUPTS.match(text):
        return False  # a quote deeper than the paragraph's opens one of its own
    item = _ITEM.match(text)
    if item and len(text) - len(text.lstrip(" ")) < column:
        return False  # the list's next item
    return not _table_starts(text, raw_lines, index)


def _table_starts(text: str, raw_lines: list[str], index: int) -> bool:
    """Whether ``text`` (line ``index``) is a table's header: a delimiter row of as many cells
    follows it."""
    if "|" not in text or index + 1 >= len(raw_lines):
        return False
    delimiter = _in_quote(raw_lines[index + 1])[1].rstrip()
    if "|" not in delimiter or not _TABLE_DELIMITER.match(delimiter):
        return False
    return _cells(text) == _cells(delimiter)


def _cells(row: str) -> int:
    row = row.strip()
    return len(row.removeprefix("|").removesuffix("|").split("|"))


def fenced_flags(lines: list[str]) -> Iterator[bool]:
    """For each line, whether it is part of a fenced code block (its fence lines included), by
    the rules :func:`scan_lines` reads fences with."""
    for _, _, fenced in _walk(lines, [], paragraphs=False):
        yield fenced


def _kept_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    raw_lines = text.split("\n")
    return _walk(raw_lines, blocks_of(raw_lines, text))


def scan_lines(text: str) -> list[Line]:
    """Classify each line of LF-separated ``text``; headings inside fences are plain lines, and
    comments outside fences are left out."""
    return [
        Line(raw, fenced=True) if fenced else Line(raw, *parse_heading(raw))
        for _, raw, fenced in _kept_lines(text)
    ]


def headings(text: str) -> list[tuple[int, int, str]]:
    """``(line index, level, title)`` of each ATX heading of ``text`` that :func:`scan_lines`
    sees: none inside fenced code or comments."""
    found = []
    for index, raw, fenced in _kept_lines(text):
        if not fenced and raw.lstrip(" ").startswith("#"):
            level, title = parse_heading(raw)
            if level:
                found.append((index, level, title))
    return found


def split_sections(lines: list[Line]) -> list[Section]:
    """Cut at ``##`` headings and H1s; heading lines themselves are not kept in any section.

    The first H1 met before any ``##`` titles the leading (intro) section. A later H1 opens a new
    intro section of its own, and becomes the parent of the ``##`` sections that follow it.
    """
    sections = [Section(None, None)]
    current_h1: str | None = None
    for line in lines:
        current = sections[-1]
        if line.level == 1:
            if current.heading is None and current.h1 is None:
                current.h1 = line.title
            else:
                sections.append(Section(line.title, None))
            current_h1 = line.title
        elif line.level == 2:
            sections.append(Section(current_h1, line.title))
        else:
            current.lines.append(line)
    return sections


def split_subsections(lines: list[Line]) -> list[tuple[str | None, list[Line]]]:
    """Cut at ``###`` lines, which stay first in their part; the lead part's title is None."""
    parts: list[tuple[str | None, list[Line]]] = [(None, [])]
    for line in lines:
        if line.level == 3:
            parts.append((line.title, []))
        parts[-1][1].append(line)
    return parts


def paragraphs(lines: list[Line]) -> list[str]:
    """Blocks separated by blank lines; a fenced code block is never cut at its blank lines."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if not line.fenced and not line.text.strip():
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line.text)
    return ["\n".join(block) for block in blocks if block]


def split_sentences(text: str) -> list[str]:
    """Pieces ending at ``。．.!?！？`` or a newline, which concatenate back to ``text`` exactly."""
    return [piece for piece in _SENTENCE_END.split(text) if piece]


_TICK_RUNS = re.compile(r"`+")


def code_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, code) of each code span: a run of backticks closed by the next run of the
    same length (CommonMark), found in one pass over the runs."""
    runs = [(m.start(), m.end()) for m in _TICK_RUNS.finditer(text)]
    closer: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}  # run length -> index of the nearest such run after this one
    for i in range(len(runs) - 1, -1, -1):
        size = runs[i][1] - runs[i][0]
        closer[i] = last.get(size)
        last[size] = i
    i = 0
    while i < len(runs):
        j = closer[i]
        if j is None:
            i += 1
            continue
        yield runs[i][0], runs[j][1], text[runs[i][1] : runs[j][0]]
        i = j + 1
