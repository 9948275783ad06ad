"""Tags written in a note's text (``#日記``, ``#project/alpha``), which Obsidian counts as the
note's tags beside the frontmatter's ``tags``.

A tag is ``#`` at the start of a line or after whitespace, followed by letters, digits, ``_``,
``-`` and ``/`` (nested tags), with at least one letter; Japanese text runs to the next
punctuation or space (``#日記です。`` is the tag 日記です, as in Obsidian). Unlike Obsidian, a
tag may not start with a digit: ``#123を解決する`` names an issue, not a topic. Headings
(``# Title``), fenced and indented code, code spans, comments, links (``[[a#b]]``,
``(#anchor)``, ``https://a/#b``, ``[ref]: #anchor``) and entities (``&#38;``) hold none.

The chunk refresh reads each note it chunks, so it records the note's inline tags too
(:func:`knowledge_assets.core.chunks.chunk_writer.write_note_fields`); ``rag.latest_docs.tags`` is the frontmatter's tags followed by the
inline ones no frontmatter tag has (case-insensitively), and search filters, tag lists and
results all read that column.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from knowledge_assets.core.chunks.comments import without_code_spans
from knowledge_assets.core.chunks.markdown import normalise_newlines, scan_lines

__all__ = ["MAX_INLINE_TAGS", "MAX_TAG_CHARS", "inline_tags"]

MAX_INLINE_TAGS = 100  # a note of thousands of distinct "#x1 #x2 …" is no set of topics
MAX_TAG_CHARS = 200  # a longer "tag" is a run of text (and too long for the tag index)
# Whether a note may hold an inline tag at all: most notes do not, and skip the line scan.
_CANDIDATE = re.compile(r"(?:^|\s)#[^\s#]", re.MULTILINE)
# Combining marks belong to the tag: text written decomposed (NFD, as macOS names files) spells
# ガ as カ plus U+3099 and é as e plus U+0301, which \w alone cut the tag at.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u3099\u309a\ufe20-\ufe2f"
_TAG = re.compile(rf"(?<!\S)#([\w{_MARKS}/-]+)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_LINK_DEFINITION = re.compile(r" {0,3}\[[^\]]+\]:[ \t]")  # [ref]: #anchor or an address


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _prose_lines(content: str) -> Iterator[str]:
    """The lines of ``content`` outside code and comments, code spans blanked out: an indented
    line after a blank or indented one is code, unless it continues a list."""
    in_code = in_list = False
    previous_blank = True
    for line in scan_lines(normalise_newlines(content)):
        blank = not line.text.strip()
        if line.fenced or line.level:  # fenced code, or a heading (whose text is a title)
            in_code, previous_blank = False, blank
            in_list = in_list and not line.level  # a heading ends a list
            continue
        indented = not blank and _indent(line.text) >= 4
        in_code = indented and not in_list and (previous_blank or in_code)
        if not blank and not indented:
            in_list = bool(_LIST_ITEM.match(line.text))
        elif _LIST_ITEM.match(line.text):
            in_list = True
        previous_blank = blank
        if not in_code and not blank and not _LINK_DEFINITION.match(line.text):
            yield without_code_spans(line.text)


def inline_tags(content: str) -> list[str]:
    """The inline tags of a note's body, each once (the first spelling of a tag that differs
    only in case or Unicode form, as ``rag.tag_key`` folds them), in order; at most
    ``MAX_INLINE_TAGS``."""
    if "#" not in content or not _CANDIDATE.search(content):
        return []
    found: dict[str, str] = {}
    for line in _prose_lines(content):
        for match in _TAG.finditer(line):
            tag = match[1].strip("/")
            if len(tag) > MAX_TAG_CHARS or tag[:1].isdigit() or not any(c.isalpha() for c in tag):
                continue
            found.setdefault(unicodedata.normalize("NFC", tag).lower(), tag)
            if len(found) == MAX_INLINE_TAGS:
                return list(found.values())
    return list(found.values())
