"""Compact renderings of search results for an LLM: JSON without ASCII escapes, short snippets."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from knowledge_assets.core.counts import counted
from knowledge_assets.core.links.backlinks import Backlinks
from knowledge_assets.core.plain_text import plain_heading, plain_snippet
from knowledge_assets.core.search import SearchHit, SearchResponse
from knowledge_assets.core.search.listing import next_offset
from knowledge_assets.core.search.notes import NoteRef, SimilarNote, TaggedNote
from knowledge_assets.core.search.properties import shown_properties
from knowledge_assets.mcp.sections import Part, find_part, note_parts

SNIPPET_CHARS = 360
SECTION_CHARS = 160
PAGE_CHARS = 6000  # get_doc returns a long note in pages of about this many characters
_LISTED_SECTIONS = 40  # a note with hundreds of headings names the first ones, then a count


def clean_snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """A snippet as plain text (:func:`knowledge_assets.core.plain_text.plain_text`): links and
    images as their text, without fence lines, heading marks, tags or quote markers."""
    return plain_snippet(text, limit)


def to_json(value: Any) -> str:
    """One line of JSON; Japanese stays readable (no ``\\uXXXX``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _heading(heading: str | None, parent: str | None) -> str:
    """The heading path a hit shows, ``parent > heading``, as plain text: what get_doc's
    ``section`` takes back."""
    heading, parent = plain_heading(heading), plain_heading(parent)
    if parent and heading and parent != heading:
        return f"{parent} > {heading}"
    return heading or parent


def _payload(hit: SearchHit) -> dict[str, Any]:
    """Seed 004's fields: type, content_type, top_heading, heading_path; url and dates if set."""
    out: dict[str, Any] = {
        "type": hit.type,
        "content_type": hit.content_type,
        "top_heading": hit.top_heading,
        "heading_path": [plain_heading(part) for part in hit.heading_path],
    }
    for key in ("url", "created", "updated"):
        if getattr(hit, key):
            out[key] = getattr(hit, key)
    return out


def _section(hit: SearchHit) -> dict[str, Any]:
    return {
        "heading": _heading(hit.heading, hit.parent_heading),
        "score": round(float(hit.score), 4),
        "snippet": clean_snippet(hit.content, SECTION_CHARS),
    }


def search_result(response: SearchResponse) -> dict[str, Any]:
    """A search response as a compact dict: ranked hits plus model and timings (ms)."""
    hits = [
        {
            "rank": rank,
            "title": hit.title,  # plain text, as get_doc shows it: no Markdown to drop
            "heading": _heading(hit.heading, hit.parent_heading),
            "path": hit.file_path,
            "source": hit.source,
            "score": round(float(hit.score), 4),
            "retrievers": list(hit.retrievers),
            "tags": list(hit.tags),
            "snippet": clean_snippet(hit.content),
            **_payload(hit),
        }
        | ({"more_sections": [_section(s) for s in hit.sections]} if hit.sections else {})
        for rank, hit in enumerate(response.hits, start=1)
    ]
    result: dict[str, Any] = {
        "query": response.query,
        "mode": response.mode,
        "model": response.model,
        "timings_ms": {k.removesuffix("_ms"): round(v, 1) for k, v in response.timings.items()},
        "hits": hits,
    }
    if response.warnings:
        result["warnings"] = list(response.warnings)
    if not hits:
        result["note"] = "no matches: try other words, mode='keyword', or fewer tags"
    return result


def similar_result(
    file_path: str, notes: Sequence[SimilarNote], ref: NoteRef | None = None
) -> dict[str, Any]:
    """Notes similar to ``file_path`` (the note ``ref`` of its source), best first."""
    found: dict[str, Any] = {"source": ref.source} if ref else {}
    if ref and ref.also_in:
        found["also_in"] = list(ref.also_in)
    return found | {
        "file_path": file_path,
        "similar": [
            {
                "title": n.title,
                "path": n.file_path,
                "source": n.source,
                "score": round(float(n.score), 4),
                "heading": plain_heading(n.heading),
                "tags": list(n.tags),
                "snippet": clean_snippet(n.content),
            }
            for n in notes
        ],
    }


def linking_result(found: Backlinks) -> dict[str, Any]:
    """The notes whose links lead to the note ``found`` names, by title."""
    return {
        "source": found.source,
        "file_path": found.path,
        "linking": [{"title": n.title, "path": n.path, "source": n.source} for n in found.notes],
        "more": found.more,
    }


def tags_result(tags: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """Tags with the number of current notes carrying each, most used first."""
    rows = [{"tag": tag, "count": count} for tag, count in tags]
    return {"tags": rows, "total": len(rows)}


def tagged_result(
    tag: str, total: int, notes: Iterable[TaggedNote], offset: int = 0
) -> dict[str, Any]:
    """A page of the notes carrying ``tag`` from ``offset``, most recently updated first, how
    many in all and where the next page starts (``next_offset``, null after the last note)."""
    page = [
        {"title": n.title, "path": n.file_path, "source": n.source, "tags": list(n.tags)}
        | {k: v.isoformat() for k, v in (("created", n.created), ("updated", n.updated)) if v}
        for n in notes
    ]
    after = next_offset(offset, len(page), total)
    return {"tag": tag, "total": total, "offset": offset, "next_offset": after, "notes": page}


def _listed(values: Any) -> str:
    return ", ".join(str(v) for v in values or ())


def section_names(parts: Sequence[Part]) -> str:
    """The parts' names for a listing, the first ``_LISTED_SECTIONS`` of them."""
    names = " | ".join(p.name for p in parts[:_LISTED_SECTIONS])
    more = len(parts) - _LISTED_SECTIONS
    return f"{names} | … {counted(more, 'more section')}" if more > 0 else names


def pages(content: str, size: int = PAGE_CHARS) -> list[str]:
    """The body cut into pages of at most ``size`` characters, at line ends where possible."""
    out: list[str] = []
    while len(content) > size:
        cut = content.rfind("\n", 0, size)
        cut = cut + 1 if cut > size // 2 else size
        out.append(content[:cut])
        content = content[cut:]
    return [*out, content]


def document_part(doc: Mapping[str, Any], section: str | None, page: int) -> str:
    """One section (by its heading path as search_docs shows it, its heading, or words of its
    heading; the note's title names its opening) or one page of a note, with the metadata
    header and a line saying which part this is and what else there is."""
    content = doc.get("content") or ""
    parts = note_parts(content, doc.get("title"))
    # A blank section (spaces, or '#' alone) names none: the whole note, as for "" or None.
    if (section or "").strip().lstrip("#").strip():
        match = find_part(parts, section or "")
        if match is None:
            names = section_names(parts) or "(no ## sections)"
            raise LookupError(f"no section {section!r} in {doc['file_path']}; sections: {names}")
        return document_text(doc, f"section: {match.name}", content[match.start : match.end])
    pieces = pages(content)
    if not 1 <= page <= len(pieces):
        raise LookupError(
            f"page {page} does not exist: {doc['file_path']} has {counted(len(pieces), 'page')}"
        )
    if len(pieces) == 1:
        return document_text(doc)
    note = f"page: {page}/{len(pieces)} (pass page={page + 1} for more)" if page < len(pieces) else f"page: {page}/{len(pieces)}"  # fmt: skip
    listing = "sections: " + section_names(parts) if parts else ""
    return document_text(doc, "\n".join(x for x in (note, listing) if x), pieces[page - 1])


def document_text(doc: Mapping[str, Any], part: str = "", body: str | None = None) -> str:
    """A note as text: a short metadata header, ``---``, then the Markdown body (or ``body``,
    the part of it that ``part`` describes)."""
    lines = [f"path: {doc['file_path']}", f"title: {doc.get('title') or ''}"]
    if doc.get("source"):
        lines.append(f"source: {doc['source']}")
    if doc.get("also_in"):
        lines.append(f"also in: {', '.join(doc['also_in'])} (pass one as source to read its note)")
    for key in ("tags", "aliases"):
        if doc.get(key):
            lines.append(f"{key}: {_listed(doc[key])}")
    for key in ("type", "content_type", "top_heading", "url", "created", "updated"):
        if doc.get(key):
            lines.append(f"{key}: {doc[key]}")
    if doc.get("versions"):
        listed = ", ".join(path for path, _ in doc["versions"])
        lines.append(f"earlier versions: {listed} (newest first; pass one as file_path to read it)")
    if shown := shown_properties(doc.get("frontmatter")):
        lines.append("properties: " + " | ".join(f"{k}: {v}" for k, v in shown))
    lines += [f"warning: {warning}" for warning in doc.get("warnings") or ()]
    why = doc.get("not_searchable")
    if not doc.get("latest", True):
        lines.append(f"latest: false (not searchable: {why or 'not the latest version'})")
    elif why:
        lines.append(f"not searchable: {why}")
    if doc.get("file_rejected"):
        lines.append(f"last good version: the file now is rejected ({doc['file_rejected']})")
    if part:
        lines.append(part)
    return "\n".join(lines) + "\n---\n" + (doc.get("content") or "" if body is None else body)
