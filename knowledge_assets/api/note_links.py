"""Which stored note a link in a note leads to, found the way Obsidian finds it.

A target is a vault path with or without ``.md`` (``日記/2026-01-10``), a path relative to the
linking note's folder (``../inbox.md``), or a file name or the trailing part of a path
(``2026-01-10``, ``日記/2026-01-10``). Case and Unicode normalization do not matter: a vault
written on macOS stores Japanese file names decomposed, while links are typed composed.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from urllib.parse import quote

__all__ = ["NoteLinks", "note_url"]


def note_url(path: str) -> str:
    """The address of the note view of ``path`` (as the page's ``noteUrl`` builds it)."""
    return "/notes/" + quote(path, safe="/")


def _key(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def _stem(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


class NoteLinks:
    """Resolves the link targets written in the note at ``source``.

    ``paths`` lists the current notes' paths. It is called once, on the first target to
    resolve, so a note without links costs no query.
    """

    def __init__(self, source: str, paths: Callable[[], Iterable[str]]) -> None:
        self.source = source
        self._paths = paths
        self._exact: dict[str, str] | None = None
        self._named: defaultdict[str, list[str]] = defaultdict(list)

    def resolve(self, target: str) -> str | None:
        """The path of the note ``target`` names, or None when no current note matches. An
        empty target (``[[#見出し]]``) is the note itself. Of several notes with the name, the
        one in the linking note's folder wins, then the one with the shortest path."""
        target = target.strip()
        if not target:
            return self.source
        exact = self._index()
        folder = posixpath.dirname(self.source)
        for path in (target.lstrip("/"), posixpath.normpath(posixpath.join(folder, target))):
            if found := exact.get(_key(_stem(path))):
                return found
        return self._by_name(target, folder)

    def _by_name(self, target: str, folder: str) -> str | None:
        tail = _key(_stem(target.lstrip("/")))
        named = self._named.get(tail.rsplit("/", 1)[-1], ())
        matches = [p for p in named if _key(_stem(p)) == tail or _key(_stem(p)).endswith("/" + tail)]  # fmt: skip
        if not matches:
            return None
        return min(matches, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))

    def _index(self) -> dict[str, str]:
        if self._exact is None:
            self._exact = {}
            for path in sorted(self._paths()):
                key = _key(_stem(path))
                self._exact.setdefault(key, path)
                self._named[key.rsplit("/", 1)[-1]].append(path)
        return self._exact
