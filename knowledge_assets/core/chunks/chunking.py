"""Split a note into ``##`` chunks and build the text each chunk is embedded as (seed 000).

Rules (pure Python, deterministic: the same input always gives the same chunks):

- ``##`` starts a chunk; ``###`` and deeper stay inside it. ``#`` (H1) is the note's title and the
  ``parent_heading`` of the chunks under it, else the frontmatter ``title``, else the file-name
  slug (``20251230_my-doc.md`` -> ``my-doc``). Headings in fenced code, ``#hashtag`` and
  setext headings are not chunk boundaries (see :mod:`knowledge_assets.core.chunks.markdown`).
- Text between the H1/frontmatter and the first ``##`` is a chunk of its own whose heading is the
  parent heading, so it stays findable; a blank intro makes no chunk. Blank is
  :func:`~knowledge_assets.core.chunks.chunk_text.is_blank` everywhere: a section of zero-width
  characters is as empty as a heading with no body (a ``##`` chunk with no content). A note without ``##`` is one
  chunk. A later H1 starts a new intro chunk and becomes the parent of the ``##`` after it.
- Size: a chunk's embedding text must fit ``max_tokens`` by ``estimate``. Headers and a
  ``[prev]`` context of at most ``max_tokens // 10`` tokens are reserved first; the rest is the
  content budget. An oversized chunk is re-split at ``###``: the text before the first ``###``
  keeps the section heading and each part is headed ``Section > Subsection``. When there is no
  ``###``, or a part is still too big, ``warning`` is set and the text is packed greedily by
  paragraphs (blank lines; a fenced code block is one paragraph) into parts headed
  ``Section (i/n)``. A paragraph too big on its own is packed by sentences (cut after
  ``。．.!?！？`` or a newline). A single sentence over the budget is kept whole, as its own
  over-limit chunk with a warning (the embedder must cope with it): nothing is cut at a fixed
  length or dropped, so every non-blank character outside H1/``##`` lines and HTML comments is
  in some chunk's content. Packing sums the estimates of the pieces, which bounds the estimate
  of their joined text for :func:`estimate_tokens`. ``heading_path`` is the parent heading and the heading parts
  joined by ``" > "`` (``Title > Section > Subsection (2/3)``).
- ``context_previous`` is the last one or two sentences of the previous chunk (seed 000); in
  :func:`chunk_document` one sentence, then none, is used if two would exceed the reservation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Chunk and the embedding-text rules are shared with the strategies; importing them from here
# still works.
from knowledge_assets.core.chunks.chunk_text import (
    Chunk,
    build_embedding_text,
    context_previous,
    estimate_tokens,
    is_blank,
    names_something,
    normalise_tags,
    slug_from_filename,
    title_text,
)
from knowledge_assets.core.chunks.markdown import (
    Line,
    normalise_newlines,
    paragraphs,
    scan_lines,
    split_sections,
    split_sentences,
    split_subsections,
)
from knowledge_assets.core.index.embedding_text import text_hash

# Raised when a rule changes what every note's chunks hold, so every stored note is chunked again
# once (unchanged texts keep their vectors). A rule that changes only some notes marks just those
# in a migration instead (sql/026: frontmatter lists read as Obsidian reads them).
CHUNKER_VERSION = "1"
# Chunk size limit, the same for every model: chunks never depend on which model is configured,
# so a model switch re-chunks nothing. A model with a smaller input limit embeds an over-long
# chunk in parts (knowledge_assets.core.index.embedding_text.parts). 8,000 is what stores made before
# this rule were chunked with by default, so they keep their chunks.
CHUNK_MAX_TOKENS = 8000

_PARAGRAPH_SEP = "\n\n"


@dataclass(frozen=True)
class _Part:
    """A chunk before context and hashing; ``lines`` is empty once it came from a fallback."""

    parent: str
    heading: str
    path: tuple[str, ...]
    content: str
    lines: tuple[Line, ...] = ()
    warning: str | None = None


def _structured(parent: str, heading: str, path: tuple[str, ...], lines: list[Line]) -> _Part:
    content = "\n".join(line.text for line in lines).strip()
    if is_blank(content):  # zero-width characters only: as empty as a heading with no body
        content = ""
    return _Part(parent, heading, path, content, tuple(lines))


@dataclass(frozen=True)
class _Doc:
    """What every part of one note shares while it is being split."""

    title: str
    tags: list[str]
    max_tokens: int
    estimate: Callable[[str], int]

    @property
    def context_cap(self) -> int:
        return self.max_tokens // 10

    def budget(self, part: _Part) -> int:
        """Tokens left for content once headers (with a worst-case ``(i/n)``) and context fit."""
        header = build_embedding_text(
            title=self.title,
            tags=self.tags,
            context_prev=None,
            parent_heading=part.parent,
            heading=f"{part.heading} (99/99)",
            content="",
        )
        return max(1, self.max_tokens - self.estimate(header) - self.context_cap)

    def context(self, previous_content: str | None) -> str | None:
        for n in (2, 1):
            candidate = context_previous(previous_content, n)
            # "[prev] " and the paragraph break count against the reservation too.
            if candidate and self.estimate(f"[prev] {candidate}\n\n") <= self.context_cap:
                return candidate
        return None


def _fit(doc: _Doc, part: _Part, *, may_split_h3: bool = True) -> list[_Part]:
    """``part`` if it fits, else its ``###`` parts (each fitted), else the fallback split."""
    if doc.estimate(part.content) <= doc.budget(part):
        return [part]
    subsections = split_subsections(list(part.lines)) if may_split_h3 else []
    if len(subsections) < 2:
        reason = "has no ###" if may_split_h3 else "is still too big after the ### split"
        return _fallback(doc, part, reason)
    out: list[_Part] = []
    for title, lines in subsections:
        if title is None:
            sub = _structured(part.parent, part.heading, part.path, lines)
            if not sub.content:
                continue  # nothing before the first ###: no empty lead chunk
        else:
            heading = f"{part.heading} > {title}"
            sub = _structured(part.parent, heading, (*part.path, title), lines)
        out.extend(_fit(doc, sub, may_split_h3=False))
    return out


def _fallback(doc: _Doc, part: _Part, reason: str) -> list[_Part]:
    """Pack paragraphs (or a huge paragraph's sentences) into parts headed ``Heading (i/n)``."""
    budget = doc.budget(part)
    base = f"section '{part.heading}' exceeds {doc.max_tokens} tokens and {reason}"
    pieces: list[tuple[str, str]] = []  # (content, how it was split)
    group: list[str] = []
    group_tokens = 0
    separator = doc.estimate(_PARAGRAPH_SEP)
    for block in paragraphs(list(part.lines)):
        tokens = doc.estimate(block)
        if group and (tokens > budget or group_tokens + separator + tokens > budget):
            pieces.append((_PARAGRAPH_SEP.join(group), "split on paragraphs"))
            group, group_tokens = [], 0
        if tokens > budget:
            pieces.extend(_pack_sentences(doc, block, budget))
            continue
        group_tokens += (separator if group else 0) + tokens
        group.append(block)
    if group:
        pieces.append((_PARAGRAPH_SEP.join(group), "split on paragraphs"))
    return _numbered(part, [(text.strip(), f"{base}: {how}") for text, how in pieces])


def _pack_sentences(doc: _Doc, block: str, budget: int) -> list[tuple[str, str]]:
    """Greedy packing of sentences; a sentence over ``budget`` on its own is kept whole."""
    out: list[tuple[str, str]] = []
    current, current_tokens = "", 0
    for sentence in split_sentences(block):
        tokens = doc.estimate(sentence)
        if current and current_tokens + tokens > budget:
            out.append((current, "split on sentences"))
            current, current_tokens = "", 0
        if tokens > budget and not is_blank(sentence):
            note = f"a single sentence of ~{tokens} tokens is over the limit and kept whole"
            out.append((sentence, note))
            continue
        current += sentence
        current_tokens += tokens
    if not is_blank(current):
        out.append((current, "split on sentences"))
    return out


def _numbered(part: _Part, pieces: list[tuple[str, str]]) -> list[_Part]:
    pieces = [(text, warning) for text, warning in pieces if not is_blank(text)]
    if len(pieces) == 1:
        text, warning = pieces[0]
        return [_Part(part.parent, part.heading, part.path, text, warning=warning)]
    out = []
    for i, (text, warning) in enumerate(pieces, start=1):
        suffix = f" ({i}/{len(pieces)})"
        path = (*part.path[:-1], part.path[-1] + suffix)
        out.append(_Part(part.parent, part.heading + suffix, path, text, warning=warning))
    return out


def chunk_document(
    file_path: str,
    frontmatter: Mapping[str, Any],
    body: str,
    *,
    max_tokens: int = CHUNK_MAX_TOKENS,
    estimate: Callable[[str], int] = estimate_tokens,
) -> list[Chunk]:
    """Chunks of one note's Markdown ``body`` (frontmatter already split off), in order."""
    sections = split_sections(scan_lines(normalise_newlines(body)))
    fm_title = title_text(frontmatter.get("title"))
    slug = slug_from_filename(file_path)
    first_h1 = next((s.h1 for s in sections if names_something(s.h1)), None)
    doc = _Doc(
        title=fm_title or first_h1 or slug,
        tags=normalise_tags(frontmatter.get("tags")),
        max_tokens=max_tokens,
        estimate=estimate,
    )
    parts: list[_Part] = []
    for section in sections:
        parent = (section.h1 if names_something(section.h1) else None) or fm_title or slug
        if section.heading is None:
            part = _structured(parent, parent, (parent,), section.lines)
            if not part.content:
                continue  # a blank intro (or an empty note) makes no chunk
        else:
            part = _structured(parent, section.heading, (parent, section.heading), section.lines)
        parts.extend(_fit(doc, part))
    return _assemble(doc, parts)


def _assemble(doc: _Doc, parts: list[_Part]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for index, part in enumerate(parts):
        previous = parts[index - 1].content if index else None
        text = build_embedding_text(
            title=doc.title,
            tags=doc.tags,
            context_prev=doc.context(previous),
            parent_heading=part.parent,
            heading=part.heading,
            content=part.content,
        )
        chunks.append(
            Chunk(
                index=index,
                heading=part.heading,
                parent_heading=part.parent,
                heading_path=" > ".join(part.path),
                content=part.content,
                embedding_text=text,
                text_hash=text_hash(text),
                token_estimate=doc.estimate(text),
                warning=part.warning,
                heading_parts=part.path,
                title=doc.title,
            )
        )
    return chunks
