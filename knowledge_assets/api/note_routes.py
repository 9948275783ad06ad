"""The ``/api/notes`` endpoint: one note with its body rendered for the note view (links to the
notes it names, the vault's images, the notes it embeds); ``/api/backlinks``: the notes linking
to it."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request

from knowledge_assets.api.attachments import VaultFiles
from knowledge_assets.api.markdown import render_note
from knowledge_assets.api.routes import Source, _no_note, _note_path, _read, _settings
from knowledge_assets.core.links.backlinks import note_backlinks
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.explain import EMPTY
from knowledge_assets.core.search.note_sources import vault_source

router = APIRouter(prefix="/api")


def _current_doc(conn: Any, note_id: str, source: str | None) -> dict[str, Any] | None:
    """The latest version of the note (of ``source``), or its empty one (frontmatter only, a
    cleared file), or None."""
    doc = core_notes.get_doc(conn, note_id, source)
    if doc is None or not (doc.get("latest") or doc.get("not_searchable") == EMPTY):
        return None
    return doc


def _html(request: Request, doc: dict[str, Any], files: VaultFiles | None) -> str:
    """The note's body as HTML. It is rendered holding no store connection: a long note takes
    seconds, and the server's few connections are wanted by searches meanwhile. The notes its
    links and embeds name are read as they are needed, each on a connection held briefly."""
    links = NoteLinks(
        doc["file_path"], lambda: _read(request, core_notes.latest_notes), source=doc["source"],
        vault=vault_source(), files=files,
    )  # fmt: skip

    def body(note: LinkTarget) -> str | None:  # of a note this one embeds
        key = (note.source or vault_source(), note.path)
        found = _read(request, lambda conn: core_notes.latest_fields(conn, [key]).get(key))
        return str(found["content"] or "") if found else None

    return render_note(doc["content"] or "", links, body)


@router.get("/notes/{note_id:path}", summary="One note")
def get_note(note_id: str, request: Request, source: Source = None) -> dict[str, Any]:
    """The current version of a note by its vault-relative path (of ``source``). ``content`` is
    its Markdown body (without the frontmatter), ``html`` the same rendered for display: raw HTML
    in the note shows through an allowlist (no script ever runs), images of the vault show, and
    wikilinks lead to ``/notes/{path}`` of the note they name
    (at the heading they name), a note of the note's own source first (with ``?source=`` when it
    is not the vault's).
    Drafts and superseded versions are not served; an empty note is, with ``empty`` true.
    ``alsoIn`` lists the other sources holding the path; ``warnings`` what was odd in the note
    but cost it nothing (a frontmatter key written twice, with its lines)."""
    note_id, source = _note_path(note_id), source or None  # ?source= names no source
    vault = _settings(request).vault
    files = VaultFiles(vault) if vault else None
    doc = _read(request, lambda conn: _current_doc(conn, note_id, source))
    if doc is None:
        raise _no_note(note_id, source)
    doc["html"] = _html(request, doc, files)
    fields = ("file_path", "title", "tags", "aliases", "content_type", "created", "updated", "content", "html", "source", "warnings")  # fmt: skip
    # fileRejected: the file at the path is now rejected (its reason); this is its last good version.
    data = {k: doc.get(k) for k in fields} | {
        "id": doc["file_path"], "fileRejected": doc.get("file_rejected"), "alsoIn": doc["also_in"],
        "empty": doc.get("not_searchable") == EMPTY,
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
