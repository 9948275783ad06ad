"""Compact renderings of search results for an LLM: JSON without ASCII escapes, short snippets."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from knowledge_assets.core.search import SearchHit, SearchResponse, SimilarNote, snippet

SNIPPET_CHARS = 360
SECTION_CHARS = 160


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
        "snippet": snippet(hit.content, SECTION_CHARS),
    }


def search_result(response: SearchResponse) -> dict[str, Any]:
    """A search response as a compact dict: ranked hits plus model and timings (ms)."""
    hits = [
        {
            "rank": rank,
            "title": hit.title,
            "heading": _heading(hit.heading, hit.parent_heading),
            "path": hit.file_path,
            "score": round(float(hit.score), 4),
            "retrievers": list(hit.retrievers),
            "tags": list(hit.tags),
            "snippet": snippet(hit.content, SNIPPET_CHARS),
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


def similar_result(file_path: str, notes: Sequence[SimilarNote]) -> dict[str, Any]:
    """Notes similar to ``file_path``, best first."""
    return {
        "file_path": file_path,
        "similar": [
            {
                "title": n.title,
                "path": n.file_path,
                "score": round(float(n.score), 4),
                "heading": n.heading,
                "tags": list(n.tags),
                "snippet": snippet(n.content, SNIPPET_CHARS),
            }
            for n in notes
        ],
    }


def tags_result(tags: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """Tags with the number of current notes carrying each, most used first."""
    rows = [{"tag": tag, "count": count} for tag, count in tags]
    return {"tags": rows, "total": len(rows)}


def _listed(values: Any) -> str:
    return ", ".join(str(v) for v in values or ())


def document_text(doc: Mapping[str, Any]) -> str:
    """A note as text: a short metadata header, ``---``, then the Markdown body."""
    lines = [f"path: {doc['file_path']}", f"title: {doc.get('title') or ''}"]
    for key in ("tags", "aliases"):
        if doc.get(key):
            lines.append(f"{key}: {_listed(doc[key])}")
    for key in ("content_type", "created", "updated"):
        if doc.get(key):
            lines.append(f"{key}: {doc[key]}")
    why = doc.get("not_searchable")
    if not doc.get("latest", True):
        lines.append(f"latest: false (not searchable: {why or 'not the latest version'})")
    elif why:
        lines.append(f"not searchable: {why}")
    return "\n".join(lines) + "\n---\n" + (doc.get("content") or "")
