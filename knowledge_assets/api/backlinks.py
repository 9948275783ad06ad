"""The notes that link to a note (Obsidian's *linked mentions*), for the note view.

Found in two steps. The store lists the current notes whose body holds the note's file name
(without ``.md``, also percent-encoded as a Markdown link writes it): one scan of the bodies.
Then each one's links, outside code, are resolved as the note view resolves them
(:class:`NoteLinks`), and only the notes whose links lead to this very note are kept: a note of
the same name in another folder, or a name only mentioned in the text, is not a link here.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from knowledge_assets.api.note_links import LinkTarget, NoteLinks
from knowledge_assets.core.chunks.comments import without_code_spans
from knowledge_assets.core.chunks.markdown import fenced_flags
from knowledge_assets.core.search import notes as core_notes

__all__ = ["Backlink", "backlinks", "link_targets"]

# Notes read for their links: a name that many notes mention in their text is read in the
# first notes by title (the list says when it stopped there).
MAX_CANDIDATES = 500
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#^\n]*)")  # [[target, [[target#h, ![[target|alias
# [text](target "title"), or [text](<a target with spaces>)
_MARKDOWN_LINK = re.compile(r"\]\(\s*(?:<([^<>\n]+)>|([^()\s<>]+))")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, obsidian:


@dataclass(frozen=True)
class Backlink:
    """A note that links to the note, by its source, path and title."""

    source: str
    path: str
    title: str


def link_targets(body: str) -> Iterator[tuple[str, bool]]:
    """(target, relative) of each link in ``body`` outside code: a wikilink's or embed's target
    (relative False: from the vault's root or by name), a Markdown link's path, decoded
    (relative True: from the linking note's folder). Web addresses are left out."""
    lines = body.split("\n")
    for line, fenced in zip(lines, fenced_flags(lines), strict=True):
        if fenced or ("[[" not in line and "](" not in line):
            continue
        text = without_code_spans(line)
        for found in _WIKILINK.finditer(text):
            yield found[1], False
        for found in _MARKDOWN_LINK.finditer(text):
            target = (found[1] or found[2]).partition("#")[0]
            if target and not _SCHEME.match(target):
                yield unquote(target), True


def backlinks(conn: Any, path: str, source: str, vault: str) -> tuple[list[Backlink], bool]:
    """The current notes linking to the note at ``path`` of ``source``, by title, and whether
    more notes named it than were read (:data:`MAX_CANDIDATES`)."""
    name = posixpath.basename(path).removesuffix(".md")
    if not name:
        return [], False
    needles = sorted({name, quote(name)})
    found = core_notes.mentioning(conn, needles, MAX_CANDIDATES + 1)
    listing = core_notes.latest_notes(conn)
    target = LinkTarget(path, None if source == vault else source)
    linking = []
    for from_source, from_path, title, body in found[:MAX_CANDIDATES]:
        if (from_source, from_path) == (source, path):
            continue
        links = NoteLinks(from_path, lambda: listing, source=from_source, vault=vault)
        if any(links.resolve(t, relative=r) == target for t, r in link_targets(body or "")):
            linking.append(Backlink(from_source, from_path, title))
    # By title as Python orders text, whatever the server's collation.
    return sorted(linking, key=lambda b: (b.title, b.path)), len(found) > MAX_CANDIDATES
