"""What a chunk is and the text it is embedded as (seed 000), for every way of chunking.

The ``##`` chunker (:mod:`knowledge_assets.core.chunks.chunking`) and the per-source strategies
(:mod:`knowledge_assets.core.chunks.strategies`) cut notes differently but make the same
:class:`Chunk`: the same header line, ``[prev]`` context and headings in the embedding text, the
same tag and title rules, and the same token estimate to size it by.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from knowledge_assets.core.chunks.markdown import code_spans, fenced_flags

_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_CONTEXT_SPLIT = re.compile(r"[。．.!?！？\n]")
# How many levels of lists a frontmatter list field (tags, inherited fields) is flattened
# through: Obsidian reads ``tags: [[a, b], c]`` as a, b, c; anything deeper is not a tag list
# written by hand. ``rag.flat_items`` (sql/R__views.sql) uses the same bound.
MAX_LIST_DEPTH = 8
# A character that shows nothing: Unicode whitespace (``\s``, as ``str.isspace``: no-break and
# ideographic spaces too) and the zero-width U+200B/U+200C/U+200D, U+2060 and U+FEFF. The blank
# rule of whole notes, ``has_body`` (sql/028), lists the same characters.
# The string holds the zero-width characters themselves (Python's escapes, not the regular
# expression's), so a JSON schema's pattern reads the same (MCP's search_docs).
VISIBLE_PATTERN = "[^\\s\u200b-\u200d\u2060\ufeff]"
_VISIBLE = re.compile(VISIBLE_PATTERN)


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: empty, or only blank characters."""
    return _VISIBLE.search(text) is None


# Letters, numbers and other symbols (emoji): the Unicode categories that name something.
_NAMING = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "So"})


def names_something(text: str | None) -> bool:
    """Whether ``text`` holds a letter, a digit or a symbol such as an emoji: a heading of
    punctuation alone (``-`` left by a template's ``# <!-- number -->-<!-- title -->``) names
    nothing, so it titles no note."""
    return any(unicodedata.category(c) in _NAMING for c in text or "")


# A Markdown link or image, ``[text](target "title")`` / ``![alt](src)``, with one level of
# parentheses inside the target (``Foo_(bar)``). Every run is possessive (``*+``, ``++``): the
# spaces around the target and before a title could otherwise be shared out in many ways, and
# ``[a](`` followed by thousands of spaces took quadratic time. A reference definition,
# ``[label]: target "title"``, on a line of its own.
_INLINE_LINK = re.compile(
    r"!?\[([^\[\]\n]*+)\]\(\s*+<?((?:[^()\s<>]|\([^()\s]*+\))*+)>?"
    r"(?:\s++(?:\"[^\"\n]*+\"|'[^'\n]*+'|\([^()\n]*+\)))?\s*+\)"
)
_LINK_DEFINITION = re.compile(r"^( {0,3}\[[^\]\n]+\]):[ \t]*\S+.*$", re.MULTILINE)


def without_link_targets(text: str) -> str:
    """``text`` with Markdown links and images reduced to the words a reader sees: a link's
    target (``./interface-vs-type-alias.md``, a URL) is where it points, not what the passage
    says, and keyword search matched link lists on their file names. Code, fenced or in
    backticks, is kept as written (``handlers[name](event)`` is no link)."""
    if "](" not in text and "]:" not in text:
        return text
    lines = text.split("\n")
    for i, fenced in enumerate(fenced_flags(lines)):
        if not fenced and ("](" in lines[i] or "]:" in lines[i]):
            lines[i] = _line_without_link_targets(lines[i])
    return "\n".join(lines)


def _line_without_link_targets(line: str) -> str:
    out, at = [], 0
    for start, end, _code in code_spans(line):
        out += [_INLINE_LINK.sub(r"\1", line[at:start]), line[start:end]]
        at = end
    out.append(_INLINE_LINK.sub(r"\1", line[at:]))
    return _LINK_DEFINITION.sub(r"\1", "".join(out))


@dataclass(frozen=True)
class Chunk:
    """One embeddable piece of a note; ``text_hash`` keys its embedding."""

    index: int
    heading: str
    parent_heading: str
    heading_path: str
    content: str
    embedding_text: str
    text_hash: str
    token_estimate: int  # estimate of embedding_text, headers and context included
    warning: str | None
    heading_parts: tuple[str, ...] = ()  # heading_path as a list (seed 004)
    url: str | None = None  # a bookmark's article
    meta: dict[str, Any] = field(default_factory=dict)  # frontmatter the chunk inherits
    title: str = ""  # the note's title as the chunker reads it (the embedding text's title)


def estimate_tokens(text: str) -> int:
    """A token count that errs high for multilingual subword tokenizers.

    Every non-ASCII character (kanji, kana, hangul, full-width punctuation, accents, emoji) counts
    as one token, and each run of ASCII as one token per 3 characters, rounded up. Sentencepiece
    models (voyage, e5, bge-m3) use about 0.6-1 token per Japanese character and ~4 English
    characters per token. The estimate is subadditive, so summing the estimates of pieces bounds
    the estimate of their concatenation. OpenAI cl100k may spend ~1.3 tokens per kanji: pass a real
    tokenizer as ``estimate`` for such models.
    """
    ascii_chars = 0
    ascii_tokens = 0
    for run in _ASCII_RUN.findall(text):
        ascii_chars += len(run)
        ascii_tokens += math.ceil(len(run) / 3)
    return ascii_tokens + len(text) - ascii_chars


def file_name_parts(file_path: str) -> tuple[str, str]:
    """A path's file name and that name without its extension (``""`` for ``.hidden``)."""
    posix = file_path.replace("\\", "/")
    # The last segment by string split (a path object per note cost ~30 µs, 0.3 s per 10,000).
    name = posix.rsplit("/", 1)[-1] or PurePosixPath(posix).name
    return name, name.rsplit(".", 1)[0] if "." in name else name


def slug_from_filename(file_path: str) -> str:
    """Seed 000's slug: file name without extension, minus a ``prefix_`` (``20251230_my-doc``)."""
    name, stem = file_name_parts(file_path)
    slug = stem.split("_", 1)[1] if "_" in stem else stem
    return slug or stem or name


def _context_sentences(previous_content: str | None) -> list[str]:
    if not previous_content:
        return []
    return [s.strip() for s in _CONTEXT_SPLIT.split(previous_content) if s.strip()]


def context_previous(previous_content: str | None, sentences: int = 2) -> str | None:
    """The last ``sentences`` (one or two) sentences of the previous chunk, joined and ended
    with ``。``."""
    found = _context_sentences(previous_content)
    return "。".join(found[-sentences:]) + "。" if found else None


def build_embedding_text(
    *,
    title: str,
    tags: Sequence[str],
    context_prev: str | None,
    parent_heading: str,
    heading: str,
    content: str,
) -> str:
    """Seed 000's embedding text: a one-line metadata header, context, headings, content."""
    parts = [f"title:{title}|tags:{','.join(tags)}"]
    if context_prev:
        parts.append(f"[prev] {context_prev}")
    if parent_heading:
        parts.append(f"# {parent_heading}")
    parts.append(f"## {heading}")
    parts.append(content.strip())
    return "\n\n".join(parts)


# What is trimmed from around a tag: whitespace as str.strip() knows it (the ideographic space
# U+3000 a Japanese input method leaves after a word, tabs, no-break spaces) and the invisible
# zero-width characters, which str.strip() keeps. rag.trim_blanks (sql/R__views.sql) trims the
# same characters.
SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)  # every character str.isspace() accepts (a test checks it)
BLANKS = SPACES + "\u200b\u200c\u200d\u2060\ufeff"
# A tag or a link target longer than this is a paragraph, not a name, and the GIN indexes of tags
# and link names refuse an entry of about 2,700 bytes: one such note stopped the latest_docs step
# for every note. ``rag.note_tags`` (sql/R__views.sql) and name keys (sql/067) use the same bound.
MAX_NAME_BYTES = 1000


def normalise_tags(value: Any) -> list[str]:
    """Frontmatter tags as a list: ``[a, b]``, ``"a, b"``, ``"a b"`` or ``"#a"`` all work.

    Nested lists are flattened into their items, in order (``[[a, b], c]`` is a, b, c); a
    mapping, a boolean or null inside the list is not a tag. Each tag appears once, where it
    first does. ``rag.note_tags`` (sql/R__views.sql) applies the same rule to the frontmatter's
    part of ``latest_docs.tags``. The note's inline tags (``#日記`` in its text) follow them
    there, not in the embedding text: the passage holds them as written."""
    if value is None:
        return []
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",") if "," in value else value.split()
    elif isinstance(value, list | tuple | set):
        items = (item for item in flat_items(value) if _is_tag_value(item))
    elif _is_tag_value(value):
        items = [value]
    else:  # a mapping or a boolean is not a tag list
        return []
    tags = (str(item).strip(BLANKS).lstrip("#").strip(BLANKS) for item in items)
    return list(dict.fromkeys(t for t in tags if t and len(t.encode("utf-8")) <= MAX_NAME_BYTES))


def flat_items(
    values: list[Any] | tuple[Any, ...] | set[Any], depth: int = MAX_LIST_DEPTH
) -> Iterator[Any]:
    """The items of a frontmatter list with nested lists flattened into it, in order, through
    at most ``depth`` levels (deeper lists are left out); a set's items in name order."""
    for item in _ordered(values):
        if not isinstance(item, list | tuple | set):
            yield item
        elif depth > 1:
            yield from flat_items(item, depth - 1)


def _ordered(values: list[Any] | tuple[Any, ...] | set[Any]) -> Iterable[Any]:
    return sorted(values, key=str) if isinstance(values, set) else values


def _is_tag_value(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


def title_text(value: Any) -> str | None:
    """A frontmatter value used as a note's title or heading (``title``, a bookmark file's
    ``heading``), or None: then the title falls back as when the value is missing.

    - text is stripped of Unicode whitespace (the ideographic space too); blank is none, and so
      is text of zero-width characters alone (:func:`is_blank`);
    - a number is its digits, as Postgres prints it (``title: 1984`` is "1984");
    - a list is its texts and numbers, nested lists flattened as for tags, joined by ", ":
      ``title: [[Note]]``, an Obsidian link YAML reads as a list in a list, is "Note", and
      ``title: [上巻, 下巻]`` keeps every word it was written with, shown and searched;
    - a boolean, null or a mapping names nothing: none.

    ``rag.frontmatter_title`` (sql/R__views_frontmatter_titles.sql) reads ``latest_docs.title``
    and ``top_heading`` by the same rule, so a note's title in results is the one its passages
    were embedded with."""
    if isinstance(value, list | tuple):
        items = (_title_item(item) for item in flat_items(value))
        return ", ".join(item for item in items if item) or None
    return _title_item(value)


def _title_item(value: Any) -> str | None:
    if isinstance(value, str):
        text = value.strip()
        return None if is_blank(text) else text  # zero-width characters alone show nothing
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return None
    # Postgres prints a JSON number in full (1e+16 as 10000000000000000) and has no -0.
    return format(Decimal(repr(value + 0.0)), "f")
