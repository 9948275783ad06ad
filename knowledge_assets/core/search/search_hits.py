"""What a search returns: its hits (a chunk of a latest note, with seed 004's payload fields)
and the response around them, built from the rows the search SQL returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge_assets.core.search.note_sources import source_name

__all__ = ["SearchHit", "SearchResponse", "make_hit", "payload", "snippet"]


@dataclass(frozen=True)
class SearchHit:
    """One matching chunk of a latest note."""

    file_path: str
    title: str
    heading: str
    parent_heading: str
    content: str
    score: float  # vector: cosine similarity; keyword: BM25; hybrid: fused score (see fusion)
    retrievers: tuple[str, ...]  # which of ("vector", "keyword") found it
    tags: tuple[str, ...]
    chunk_id: str
    source: str  # the note's source (``local``, ``books``): with file_path, what names the note
    type: str = "markdown_note"  # seed 004: markdown_note | bookmark_json
    content_type: str | None = None  # notes | books | articles (or the note's own)
    top_heading: str | None = None  # frontmatter ``heading`` or the source's default
    heading_path: tuple[str, ...] = ()  # top heading, title, section, subsection
    url: str | None = None  # a bookmark's article
    created: str | None = None  # ISO dates from the frontmatter
    updated: str | None = None
    # With ``per_note``: the note's further matching sections, best first (this hit is its best).
    sections: tuple[SearchHit, ...] = ()


@dataclass(frozen=True)
class SearchResponse:
    """The hits of one query, best first, with where the time went (milliseconds)."""

    query: str
    mode: str
    model: str | None
    hits: list[SearchHit]
    timings: dict[str, float]  # "embed_ms", "search_ms", "total_ms"
    warnings: tuple[str, ...] = ()  # e.g. hybrid search fell back to keyword results


def make_hit(row: dict[str, Any], score: float, retrievers: tuple[str, ...]) -> SearchHit:
    """A hit from one result row of the search SQL, scored by the retrievers that found it."""
    return SearchHit(
        file_path=row["file_path"],
        title=row["title"] or "",
        heading=row["heading"],
        parent_heading=row["parent_heading"],
        content=row["content"],
        score=float(score),
        retrievers=retrievers,
        tags=tuple(row["tags"] or ()),
        chunk_id=str(row["chunk_id"]),
        source=source_name(row["source_table"]),
        **payload(row),
    )


def payload(row: dict[str, Any]) -> dict[str, Any]:
    """Seed 004's payload fields of a hit row: type, content_type, top_heading, heading_path
    (a list headed by the top heading), url and dates."""
    top = row.get("top_heading")
    parts = tuple(row.get("heading_parts") or ())
    if not parts:  # chunks written before heading lists were stored
        parts = tuple(p for p in str(row.get("heading_path") or "").split(" > ") if p)
    return {
        "type": row.get("doc_type") or "markdown_note",
        "content_type": row.get("content_type"),
        "top_heading": top,
        "heading_path": ((top,) if top else ()) + parts,
        "url": row.get("url"),
        "created": _iso(row.get("created")),
        "updated": _iso(row.get("updated")),
    }


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def snippet(text: str | None, limit: int) -> str:
    """``text`` on one line, cut at ``limit`` characters with an ellipsis (for result lists)."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
