"""Compact renderings of search results for an LLM: JSON without ASCII escapes, short snippets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from knowledge_assets.core.chunks.markdown import headings
from knowledge_assets.core.counts import counted
from knowledge_assets.core.search import SearchHit, SearchResponse, snippet
from knowledge_assets.core.search.notes import NoteRef, SimilarNote, TaggedNote

SNIPPET_CHARS = 360
SECTION_CHARS = 160
PAGE_CHARS = 6000  # get_doc returns a long note in pages of about this many characters
# [ \t]*, not \s*: \s also matches newlines, and on a run of blank lines every line start would
# scan the whole run again (quadratic; 80,000 newlines took 36 s).
_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~).*$", re.MULTILINE)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|!\[\[[^\]]*\]\]")
# Markers a snippet drops, as the search page's does: quotes and callouts (> [!tip], :::tip),
# highlights (==text==, the text kept) and block ids (^id).
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?:\[![^\]\s]+\][+-]?[ \t]*)?", re.MULTILINE)
_SITE_FENCE = re.compile(r"^[ \t]*:::.*$", re.MULTILINE)
_HIGHLIGHT = re.compile(r"==([^\s=](?:[^=\n]*[^\s=])?)==")
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)
_LISTED_SECTIONS = 40  # a note with hundreds of headings names the first ones, then a count


def clean_snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """A snippet without code-fence markers, image syntax (Markdown and Obsidian embeds) and the
    markers of quotes, callouts, highlights and block ids."""
    text = _IMAGE.sub("", _FENCE_LINE.sub("", text or ""))
    text = _HIGHLIGHT.sub(r"\1", _SITE_FENCE.sub("", _QUOTE.sub("", text)))
    return snippet(_BLOCK_ID.sub("", text), limit)


def to_json(value: Any) -> str:
    """One line of JSON; Japanese stays readable (no ``\\uXXXX``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _heading(heading: str | None, parent: str | None) -> str:
    heading, parent = heading or "", parent or ""
    if parent and heading and parent != heading:
        return f"{parent} > {heading}"
    return heading or parent


def _payload(hit: SearchHit) -> dict[str, Any]:
    """Seed 004's fields: type, content_type, top_heading, heading_path; url and dates if set."""
    out: dict[str, Any] = {
        "type": hit.type,
        "content_type": hit.content_type,
        "top_heading": hit.top_heading,
        "heading_path": list(hit.heading_path),
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
            "title": hit.title,
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
                "heading": n.heading,
                "tags": list(n.tags),
                "snippet": clean_snippet(n.content),
            }
            for n in notes
        ],
    }


def tags_result(tags: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """Tags with the number of current notes carrying each, most used first."""
    rows = [{"tag": tag, "count": count} for tag, count in tags]
    return {"tags": rows, "total": len(rows)}


def tagged_result(tag: str, total: int, notes: Iterable[TaggedNote]) -> dict[str, Any]:
    """A page of the notes carrying ``tag``, most recently updated first, and how many in all."""
    return {
        "tag": tag,
        "total": total,
        "notes": [
            {"title": n.title, "path": n.file_path, "source": n.source, "tags": list(n.tags)}
            | {k: v.isoformat() for k, v in (("created", n.created), ("updated", n.updated)) if v}
            for n in notes
        ],
    }


def _listed(values: Any) -> str:
    return ", ".join(str(v) for v in values or ())


def sections(content: str) -> list[tuple[str, int, int]]:
    """(heading, start, end) of each ``##``/``###`` section of a body: the headings the chunker
    sees, so none inside fenced code (a shell comment ``## install``) or an HTML comment."""
    starts = [0, *accumulate(len(line) + 1 for line in content.split("\n"))]
    found = [
        (title, starts[i]) for i, level, title in headings(content) if level in (2, 3) and title
    ]
    return [(title, start, found[n + 1][1] if n + 1 < len(found) else len(content)) for n, (title, start) in enumerate(found)]  # fmt: skip


def section_names(heads: Sequence[tuple[str, int, int]]) -> str:
    """The sections' headings for a listing, the first ``_LISTED_SECTIONS`` of them."""
    names = " | ".join(h[0] for h in heads[:_LISTED_SECTIONS])
    more = len(heads) - _LISTED_SECTIONS
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
    """One section (by heading, case-insensitive substring) or one page of a note, with the
    metadata header and a line saying which part this is and what else there is."""
    content = doc.get("content") or ""
    heads = sections(content)
    # A blank section (spaces, or '#' alone) names none: the whole note, as for "" or None.
    wanted = (section or "").strip().lstrip("#").strip().lower()
    if wanted:
        match = next((h for h in heads if h[0].lower() == wanted), None) or next((h for h in heads if wanted in h[0].lower()), None)  # fmt: skip
        if match is None:
            names = section_names(heads) or "(no ## sections)"
            raise LookupError(f"no section {section!r} in {doc['file_path']}; sections: {names}")
        return document_text(doc, f"section: {match[0]}", content[match[1] : match[2]])
    parts = pages(content)
    if not 1 <= page <= len(parts):
        raise LookupError(
            f"page {page} does not exist: {doc['file_path']} has {counted(len(parts), 'page')}"
        )
    if len(parts) == 1:
        return document_text(doc)
    note = f"page: {page}/{len(parts)} (pass page={page + 1} for more)" if page < len(parts) else f"page: {page}/{len(parts)}"  # fmt: skip
    listing = "sections: " + section_names(heads) if heads else ""
    return document_text(doc, "\n".join(x for x in (note, listing) if x), parts[page - 1])


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
