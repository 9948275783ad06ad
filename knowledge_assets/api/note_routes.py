"""The ``/api/notes`` endpoint: one note with its body rendered for the note view (links to the
notes it names, the vault's images, the notes it embeds); ``/api/backlinks``: the notes linking
to it."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from knowledge_assets.api.note_html import CACHE_HEADER, note_html
from knowledge_assets.api.routes import Source, _no_note, _note_path, _read
from knowledge_assets.core.links.backlinks import note_backlinks
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.explain import EMPTY
from knowledge_assets.core.search.properties import shown_properties

router = APIRouter(prefix="/api")


def _current_doc(conn: Any, note_id: str, source: str | None) -> dict[str, Any] | None:
    """The note (of ``source``) as the note view shows it (:func:`core_notes.shown_in_note_view`),
    with the versions it replaces itself; None for a draft or no note."""
    doc = core_notes.get_doc(conn, note_id, source)
    return doc if doc is not None and core_notes.shown_in_note_view(doc) else None


@router.get("/notes/{note_id:path}", summary="One note")
async def get_note(
    note_id: str, request: Request, response: Response, source: Source = None
) -> dict[str, Any]:
    """The current version of a note by its vault-relative path (of ``source``). ``content`` is
    its Markdown body (without the frontmatter), ``html`` the same rendered for display: raw HTML
    in the note shows through an allowlist (no script ever runs), images of the vault show, and
    wikilinks lead to ``/notes/{path}`` of the note they name
    (at the heading they name), a note of the note's own source first (with ``?source=`` when it
    is not the vault's).
    Drafts are not served; an empty note is, with ``empty`` true, and so is a version a newer
    one replaced through ``previous``, with ``supersededBy`` its path. ``versions`` lists the
    versions the note replaces, newest first (``{id, title}``).
    ``properties`` are its other frontmatter properties (not its title, tags, aliases or dates),
    by name, each value as text, as Obsidian's properties block shows them.
    ``alsoIn`` lists the other sources holding the path; ``warnings`` what was odd in the note
    but cost it nothing (a frontmatter key written twice, with its lines).
    The ``X-Render-Cache`` header says whether ``html`` was kept from an earlier view of the
    unchanged note (``hit``) or rendered (``miss``); a view that waited too long behind other
    long notes rendering is refused (503)."""
    note_id, source = _note_path(note_id), source or None  # ?source= names no source
    doc = await run_in_threadpool(_read, request, lambda conn: _current_doc(conn, note_id, source))
    if doc is None:
        raise _no_note(note_id, source)
    doc["html"], response.headers[CACHE_HEADER] = await note_html(request, doc)
    fields = ("file_path", "title", "tags", "aliases", "content_type", "created", "updated", "content", "html", "source", "warnings")  # fmt: skip
    # fileRejected: the file at the path is now rejected (its reason); this is its last good version.
    data = {k: doc.get(k) for k in fields} | {
        "id": doc["file_path"], "fileRejected": doc.get("file_rejected"), "alsoIn": doc["also_in"],
        "empty": doc.get("not_searchable") == EMPTY,
        "properties": [{"name": k, "value": v} for k, v in shown_properties(doc.get("frontmatter"))],
        "supersededBy": doc.get("superseded_by"),
        "versions": [{"id": path, "title": title or path} for path, title in doc["versions"]],
    }  # fmt: skip
    return {"success": True, "data": json.loads(json.dumps(data, default=str))}


@router.get("/backlinks/{note_id:path}", summary="Notes linking to a note")
def get_backlinks(note_id: str, request: Request, source: Source = None) -> dict[str, Any]:
    """The current notes whose links (wikilinks, embeds, Markdown links; not in code) lead to
    the note, by title: Obsidian's linked mentions. ``more`` is true when more notes name it
    than were read for their links."""
    note_id, source = _note_path(note_id), source or None

    found = _read(request, lambda conn: note_backlinks(conn, note_id, source))
    if found is None:
        raise _no_note(note_id, source)
    data = [{"id": b.path, "source": b.source, "title": b.title} for b in found.notes]
    return {"success": True, "count": len(data), "more": found.more, "data": data}
