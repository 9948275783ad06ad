"""The notes that link to a note (Obsidian's *linked mentions*), for the note view, the
``backlinks`` command and MCP's ``linking_docs``.

Found in two steps. The store lists the current notes with a link to the note's file name (the
names each note's links lead to are kept when it is chunked, and indexed:
:mod:`knowledge_assets.core.chunks.links`). Then each one's links are resolved as the note view
resolves them (:class:`NoteLinks`), and only the notes whose links lead to this very note are
kept: a link to a note of the same name in another folder is not a link here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge_assets.core.chunks.links import link_targets, name_key
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.note_sources import vault_source

__all__ = ["Backlink", "Backlinks", "backlinks", "note_backlinks"]

# Notes read for their links: a name that many notes link to (README) is read in the first
# notes by title (the list says when it stopped there).
MAX_CANDIDATES = 500


@dataclass(frozen=True)
class Backlink:
    """A note that links to the note, by its source, path and title."""

    source: str
    path: str
    title: str


@dataclass(frozen=True)
class Backlinks:
    """The notes linking to the note at ``path`` of ``source``; ``more`` when more notes name
    it than were read for their links."""

    source: str
    path: str
    notes: list[Backlink]
    more: bool


def note_backlinks(conn: Any, path: str, source: str | None = None) -> Backlinks | None:
    """The backlinks of the note at ``path`` (of ``source``; without one, the vault's note, else
    the only one there is), also of a version a newer note supersedes (links lead there when no
    current note answers them), or None when no note the note view shows is there (a draft).
    Raises as :func:`~knowledge_assets.core.search.notes.get_doc` does for an unknown source or
    a path several sources hold."""
    doc = core_notes.get_doc(conn, path, source)
    if doc is None or not core_notes.shown_in_note_view(doc):
        return None
    linking, more = backlinks(conn, doc["file_path"], doc["source"], vault_source())
    return Backlinks(doc["source"], doc["file_path"], linking, more)


def backlinks(conn: Any, path: str, source: str, vault: str) -> tuple[list[Backlink], bool]:
    """The current notes linking to the note at ``path`` of ``source``, by title, and whether
    more notes link to its name than were read (:data:`MAX_CANDIDATES`)."""
    name = name_key(path)
    if not name:
        return [], False
    found = core_notes.linking_to(conn, [name], MAX_CANDIDATES + 1)
    if not found:  # most notes: no listing of every note to resolve links against
        return [], False
    listing = core_notes.latest_notes(conn)
    target = LinkTarget(path, None if source == vault else source)
    # Each linking note's links are read beside this note, from one index of the listing.
    here = NoteLinks(
        path, lambda: listing, source=source, vault=vault,
        older=lambda: core_notes.superseded_notes(conn),
    )  # fmt: skip
    linking = []
    for from_source, from_path, title, body in found[:MAX_CANDIDATES]:
        if (from_source, from_path) == (source, path):
            continue
        links = here.beside(LinkTarget(from_path, None if from_source == vault else from_source))
        if any(links.resolve(t, relative=r) == target for t, r in link_targets(body or "")):
            linking.append(Backlink(from_source, from_path, title))
    # By title as Python orders text, whatever the server's collation.
    return sorted(linking, key=lambda b: (b.title, b.path)), len(found) > MAX_CANDIDATES
