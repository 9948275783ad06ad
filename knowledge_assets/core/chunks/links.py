"""The links a note's text holds, outside code: wikilinks and embeds (``[[target|label]]``,
``![[target#heading]]``) and Markdown links (``[text](path.md)``), with their targets as written.

Kept per note when it is chunked (``rag.latest_docs.link_names``, GIN-indexed): the names its
links lead to, so the notes that link to a note are found from the index rather than by reading
every note (:mod:`knowledge_assets.core.links.backlinks`, which resolves each link as the note view
does before listing it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from itertools import repeat
from urllib.parse import unquote

from knowledge_assets.core.chunks.chunk_text import MAX_NAME_BYTES
from knowledge_assets.core.chunks.comments import without_code_spans
from knowledge_assets.core.chunks.markdown import fenced_flags
from knowledge_assets.core.links.resolve import FOLDER_NOTES, note_stem, path_key

__all__ = ["link_names", "link_targets", "name_key"]

_WIKILINK = re.compile(r"!?\[\[([^\[\]|#^\n]*)")  # [[target, [[target#h, ![[target|alias
# [text](target "title"), or [text](<a target with spaces>)
_MARKDOWN_LINK = re.compile(r"\]\(\s*(?:<([^<>\n]+)>|([^()\s<>]+))")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, obsidian:


def link_targets(body: str) -> Iterator[tuple[str, bool]]:
    """(target, relative) of each link in ``body`` outside code: a wikilink's or embed's target
    (relative False: from the vault's root or by name), a Markdown link's path, decoded
    (relative True: from the linking note's folder). Web addresses are left out."""
    if "[[" not in body and "](" not in body:
        return
    lines = body.split("\n")
    # A fence opens with three backticks or tildes: without them no line is code, and the walk
    # over every line that tells fences apart (most of the time a note's links take) is skipped.
    code = "```" in body or "~~~" in body
    for line, fenced in zip(lines, fenced_flags(lines) if code else repeat(False), strict=False):
        if fenced or ("[[" not in line and "](" not in line):
            continue
        text = without_code_spans(line)
        for found in _WIKILINK.finditer(text):
            yield found[1], False
        for found in _MARKDOWN_LINK.finditer(text):
            target = (found[1] or found[2]).partition("#")[0]
            if target and not _SCHEME.match(target):
                yield unquote(target), True


def name_key(path: str) -> str:
    """The name a link leads to a note by: its file name without ``.md`` (in any case), in
    Unicode's composed form and any case, as links resolve (``日記/Ideas.MD`` and ``[[ideas]]``
    share ``ideas``)."""
    return path_key(note_stem(posixpath.basename(path.rstrip("/"))))


def link_names(body: str) -> list[str]:
    """The names (:func:`name_key`) the links of ``body`` may lead to, each once, in order: a
    Markdown link that may name a folder (``docs/``, ``docs``) may lead to its README or index."""
    names: dict[str, None] = {}
    for target, relative in link_targets(body):
        # No file has a name that long (chunk_text.MAX_NAME_BYTES).
        if (key := name_key(target)) and len(key.encode("utf-8")) <= MAX_NAME_BYTES:
            names[key] = None
        if relative and (target.endswith("/") or not posixpath.splitext(target)[1]):
            names.update(dict.fromkeys(path_key(name) for name in FOLDER_NOTES))
    return list(names)
