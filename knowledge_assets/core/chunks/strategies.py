"""Chunking strategies per source (seed 002 §3) and per format (seed 004 §4).

- ``headings`` (default for notes): :func:`knowledge_assets.core.chunks.chunking.chunk_document`,
  one chunk per ``##`` section.
- ``document`` (A): the whole note is one chunk.
- ``scene`` (B): one chunk per ``##`` scene; each scene's embedding text starts with the last
  ~10% of the scene before it (``[prev]``). A scene over ``max_chunk_chars`` is split as in C.
- ``recursive`` (C): cut at headings (``#``..``###``), then pack paragraphs, then sentences
  (``。``), then characters into chunks of about ``chunk_chars`` characters; consecutive chunks
  of a section share ``overlap`` of their length (the next one starts with the end of the last).
- ``size``: seed 002's flow: A up to ``small_max_chars`` characters of body, B up to
  ``scene_max_chars``, C above.

Frontmatter fields named in ``inherit`` (``characters``, ``settings``, ``chapter_id``) are copied
into every chunk's metadata and into a line of its embedding text. Bookmark files
(``bookmark_json``) always make one chunk per saved article.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from knowledge_assets.core.chunks.chunk_text import (
    Chunk,
    build_embedding_text,
    estimate_tokens,
    flat_items,
    is_blank,
    names_something,
    normalise_tags,
    slug_from_filename,
    title_text,
)
from knowledge_assets.core.chunks.chunking import chunk_document
from knowledge_assets.core.chunks.markdown import normalise_newlines, scan_lines, split_sections

# The text splitting lives in its own module; tests and callers also import it from here.
from knowledge_assets.core.chunks.text_split import heading_sections, split_recursive, tail
from knowledge_assets.core.index.embedding_text import text_hash

STRATEGIES = ("headings", "size", "document", "scene", "recursive")
# Part of a source's chunking signature: raised when the strategies' rules change what they
# make of a note, so the notes of sources with options of their own are chunked again once
# (their unchanged texts keep their vectors). 2: a second H1 heads its own sections.
STRATEGY_RULES = 2
BOOKMARK_TYPE = "bookmark_json"
NOTE_TYPE = "markdown_note"


@dataclass(frozen=True)
class ChunkingOptions:
    """How a source's documents are chunked; every field is part of the chunker signature."""

    strategy: str = "headings"
    small_max_chars: int = 3000
    scene_max_chars: int = 15000
    max_chunk_chars: int = 5000
    chunk_chars: int = 400
    overlap: float = 0.15
    scene_overlap: float = 0.10
    inherit: tuple[str, ...] = ("characters", "settings", "chapter_id")

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"unknown chunking strategy {self.strategy!r}: use one of {STRATEGIES}"
            )
        if not 0 <= self.overlap < 0.5 or not 0 <= self.scene_overlap < 0.5:
            raise ValueError("overlap must be between 0 and 0.5")
        if self.chunk_chars < 50:
            raise ValueError("chunk_chars must be at least 50")
        # A scene is split into pieces of max_chunk_chars: 0 cut a 50 KB scene into 50,000
        # one-character chunks, each embedded; a negative size limit picks C for every note.
        if self.max_chunk_chars < 50:
            raise ValueError("max_chunk_chars must be at least 50")
        if self.small_max_chars < 0 or self.scene_max_chars < 0:
            raise ValueError("small_max_chars and scene_max_chars must be 0 or more")

    @classmethod
    def from_json(cls, value: Mapping[str, Any] | None) -> ChunkingOptions:
        """Options stored as JSON (``meta.sources.chunking``); unknown keys are ignored."""
        known = {k: v for k, v in (value or {}).items() if k in cls.__dataclass_fields__}
        if "inherit" in known:
            known["inherit"] = tuple(known["inherit"])
        return cls(**known)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "inherit": list(self.inherit)}

    def signature(self) -> str:
        """A short hash of the options; the default options have the empty signature, so notes
        chunked before strategies existed are not re-chunked."""
        if self == ChunkingOptions():
            return ""
        text = json.dumps({**self.to_json(), "rules": STRATEGY_RULES}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class _Piece:
    path: tuple[str, ...]
    content: str
    prev: str | None = None
    url: str | None = None


@dataclass
class _Context:
    file_path: str
    title: str
    tags: list[str]
    meta: dict[str, Any] = field(default_factory=dict)
    # The title is the note's first H1 (no frontmatter title): a later H1 (第二部 after 第一部)
    # then heads the sections under it, beside the first, rather than nesting under it.
    h1_title: bool = False


def chunk_for(
    file_path: str,
    frontmatter: Mapping[str, Any],
    content: str,
    *,
    doc_type: str = NOTE_TYPE,
    options: ChunkingOptions | None = None,
    max_tokens: int = 8000,
    estimate: Callable[[str], int] = estimate_tokens,
) -> list[Chunk]:
    """The chunks of one stored document, by its format and its source's strategy."""
    opts = options or ChunkingOptions()
    if doc_type == BOOKMARK_TYPE:
        return _bookmark_chunks(file_path, frontmatter, content, opts, estimate)
    strategy = pick_strategy(opts, content)
    if strategy == "headings":
        chunks = chunk_document(
            file_path, frontmatter, content, max_tokens=max_tokens, estimate=estimate
        )
        return _with_meta(chunks, inherited(frontmatter, opts.inherit))
    ctx = _context(file_path, frontmatter, content, opts)
    if strategy == "document":
        pieces = [_Piece((ctx.title,), _strip_h1(content).strip())]
    elif strategy == "scene":
        pieces = _scenes(ctx, content, opts)
    else:
        pieces = _recursive(ctx, content, opts)
    chunks = _assemble(ctx, [p for p in pieces if not is_blank(p.content)], estimate)
    over = [c for c in chunks if c.token_estimate > max_tokens]
    return [
        replace(c, warning=f"chunk of ~{c.token_estimate} tokens is over the {max_tokens}-token limit")
        if c in over else c
        for c in chunks
    ]  # fmt: skip


def pick_strategy(options: ChunkingOptions, content: str) -> str:
    """The strategy applied to a body: ``size`` picks A, B or C by its length in characters."""
    if options.strategy != "size":
        return options.strategy
    length = len(content.strip())
    if length <= options.small_max_chars:
        return "document"
    return "scene" if length <= options.scene_max_chars else "recursive"


def inherited(frontmatter: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The frontmatter fields a chunk inherits, lists kept as lists (nested lists flattened,
    as for tags), blanks and repeats dropped."""
    out: dict[str, Any] = {}
    for key in keys:
        value = frontmatter.get(key)
        if isinstance(value, list):
            texts = (str(v).strip() for v in flat_items(value) if v is not None)
            items = list(dict.fromkeys(t for t in texts if t))
            if items:
                out[key] = items
        elif value is not None and str(value).strip() and not isinstance(value, dict):
            out[key] = str(value).strip()
    return out


def meta_line(meta: Mapping[str, Any]) -> str:
    """``characters:a,b|chapter_id:c``: inherited metadata as one line of the embedding text."""
    return "|".join(
        f"{k}:{','.join(v) if isinstance(v, list) else v}" for k, v in sorted(meta.items())
    )


def _with_meta(chunks: list[Chunk], meta: dict[str, Any]) -> list[Chunk]:
    if not meta:
        return chunks
    out = []
    for c in chunks:
        head, _, rest = c.embedding_text.partition("\n\n")
        text = f"{head}\n{meta_line(meta)}\n\n{rest}" if rest else f"{head}\n{meta_line(meta)}"
        out.append(replace(c, embedding_text=text, text_hash=text_hash(text), meta=meta))
    return out


def _context(
    file_path: str, frontmatter: Mapping[str, Any], content: str, opts: ChunkingOptions
) -> _Context:
    sections = split_sections(scan_lines(normalise_newlines(content)))
    h1 = next((s.h1 for s in sections if names_something(s.h1)), None)
    fm_title = title_text(frontmatter.get("title"))
    return _Context(
        file_path,
        fm_title or h1 or slug_from_filename(file_path),
        normalise_tags(frontmatter.get("tags")),
        inherited(frontmatter, opts.inherit),
        h1_title=fm_title is None and h1 is not None,
    )


def _strip_h1(content: str) -> str:
    lines = scan_lines(normalise_newlines(content))
    return "\n".join(line.text for line in lines if line.level != 1)


def _scenes(ctx: _Context, content: str, opts: ChunkingOptions) -> list[_Piece]:
    pieces: list[_Piece] = []
    previous = ""
    for section in split_sections(scan_lines(normalise_newlines(content))):
        text = "\n".join(line.text for line in section.lines).strip()
        if is_blank(text):
            continue
        h1 = section.h1 if names_something(section.h1) else None
        top = h1 if ctx.h1_title and h1 else ctx.title
        heading = section.heading or h1 or ctx.title
        path = (top, heading) if heading != top else (top,)
        share = max(1, int(len(previous) * opts.scene_overlap))
        prev = (tail(previous, share) or None) if opts.scene_overlap else None  # 0: no [prev]
        if len(text) <= opts.max_chunk_chars:
            pieces.append(_Piece(path, text, prev=prev))
        else:
            size = opts.max_chunk_chars
            parts = split_recursive(text, size, int(size * opts.scene_overlap))
            pieces += [_Piece(path, p, prev=prev if i == 0 else None) for i, p in enumerate(parts)]
        previous = text
    return pieces


def _recursive(ctx: _Context, content: str, opts: ChunkingOptions) -> list[_Piece]:
    pieces: list[_Piece] = []
    overlap = int(opts.chunk_chars * opts.overlap)
    for path, text in heading_sections(content, ctx.title, h1_roots=ctx.h1_title):
        for part in split_recursive(text, opts.chunk_chars, overlap):
            pieces.append(_Piece(path, part))
    return pieces


def _assemble(ctx: _Context, pieces: list[_Piece], estimate: Callable[[str], int]) -> list[Chunk]:
    chunks = []
    for index, piece in enumerate(pieces):
        heading = piece.path[-1]
        parent = piece.path[-2] if len(piece.path) > 1 else piece.path[0]
        text = build_embedding_text(
            title=ctx.title,
            tags=ctx.tags,
            context_prev=piece.prev,
            parent_heading=parent,
            heading=heading,
            content=piece.content,
        )
        if ctx.meta:
            head, _, rest = text.partition("\n\n")
            text = f"{head}\n{meta_line(ctx.meta)}\n\n{rest}"
        chunks.append(
            Chunk(
                index=index,
                heading=heading,
                parent_heading=parent,
                heading_path=" > ".join(piece.path),
                content=piece.content,
                embedding_text=text,
                text_hash=text_hash(text),
                token_estimate=estimate(text),
                warning=None,
                heading_parts=piece.path,
                title=ctx.title,
                url=piece.url,
                meta=ctx.meta,
            )
        )
    return chunks


def _bookmark_chunks(
    file_path: str,
    frontmatter: Mapping[str, Any],
    content: str,
    opts: ChunkingOptions,
    estimate: Callable[[str], int],
) -> list[Chunk]:
    from knowledge_assets.core.sources.bookmarks import bookmark_sections

    named = (title_text(frontmatter.get(k)) for k in ("title", "description", "heading"))
    title = next((t for t in named if t), slug_from_filename(file_path))
    ctx = _Context(file_path, title, normalise_tags(frontmatter.get("tags")))
    ctx.meta = inherited(frontmatter, opts.inherit)
    pieces = [
        _Piece((title, b.title), b.text, url=b.url) for b in bookmark_sections(content) if b.text
    ]
    return _assemble(ctx, pieces, estimate)
