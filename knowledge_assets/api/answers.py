"""Answers as the API gives them: fresh from ``POST /api/ai/qa`` or reopened from the history,
each cited (or related) note with its address and, while it exists, its current title and tags."""

from __future__ import annotations

from typing import Any

from knowledge_assets.core.links.resolve import note_url
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.note_sources import vault_source


def with_notes(conn: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (an answer's dict) with ``note`` added to each citation and each related note:
    its page's ``url`` and, when the note still exists, its ``title`` and ``tags``. A citation
    recorded without its source (an answer from before citations kept it) names the vault's
    note, as a path alone does."""
    vault = vault_source()
    listed = [*data["sources"], *data.get("relatedNotes", [])]
    named = [(s.get("source") or vault, s["noteId"]) for s in listed]
    found = core_notes.latest_fields(conn, named) if named else {}
    for citation, (source, note) in zip(listed, named, strict=True):
        info = found.get((source, note))
        current = {"title": info["title"], "tags": list(info["tags"] or [])} if info else {}
        citation["note"] = current | {"url": note_url(note, None if source == vault else source)}
    return data
