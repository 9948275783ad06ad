"""Which stored note a link in a note leads to, found the way Obsidian finds it.

A Markdown link's path is relative to the linking note's folder (``README.md``, ``../inbox.md``)
and one starting with ``/`` is from the vault root, as on GitHub or a documentation site; when
nothing there matches, it is tried under each top folder of the vault (a docs site's links are
written from its ``docs/`` folder), and names the one match when exactly one folder has it. A
wikilink's path is from the vault root, then relative. A target without a folder (``[[README]]``)
is a file name: of several notes with it, the one in the linking note's folder wins. A path to a
folder names its ``README.md`` or ``index.md``. Failing all that, a target may be the file name
or the trailing part of a path (``2026-01-10``, ``日記/2026-01-10``), with or without ``.md``.
Case and Unicode normalization do not matter: a vault written on macOS stores Japanese file
names decomposed, while links are typed composed.

Several sources may hold notes (the vault and declared sources, even at the same path). As in
Obsidian, where each is a vault of its own, a link names a note of the linking note's own source
first; a target its source does not hold names the note of another source, the vault's first.
"""

from __future__ import annotations

import functools
import posixpath
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote


class ImageFinder(Protocol):
    """The vault's files beside its notes (the HTTP layer's ``VaultFiles``): images to show."""

    def find(self, target: str, folder: str, *, relative: bool = False) -> str | None: ...


__all__ = ["LinkTarget", "NoteLinks", "note_url"]


def note_url(path: str, source: str | None = None) -> str:
    """The address of the note view of ``path`` of ``source`` (None: the path alone, which names
    the vault's note), as the page's ``noteUrl`` builds it."""
    query = f"?source={quote(source, safe='')}" if source else ""
    return "/notes/" + quote(path, safe="/") + query


@dataclass(frozen=True)
class LinkTarget:
    """The note a link leads to: its path and, when it is not the vault's note, its source."""

    path: str
    source: str | None = None

    @property
    def url(self) -> str:
        return note_url(self.path, self.source)


# The note a link to a folder opens (``./sub/``, ``/reference/generics``), as on GitHub and
# documentation sites.
FOLDER_NOTES = ("README", "index")


def path_key(path: str) -> str:
    """A vault path as links and images are matched: case and Unicode form aside."""
    return unicodedata.normalize("NFC", path).casefold()


def note_stem(path: str) -> str:
    """``path`` without its ``.md``, in any case."""
    return path[:-3] if path.lower().endswith(".md") else path


class _Paths:
    """Finds the path a target names among one set of note paths."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._exact: dict[str, str] = {}
        self._named: defaultdict[str, list[str]] = defaultdict(list)
        self._tops: set[str] = set()  # the vault's top folders
        for path in sorted(paths):
            key = path_key(note_stem(path))
            self._exact.setdefault(key, path)
            self._named[key.rsplit("/", 1)[-1]].append(path)
            if "/" in path:
                self._tops.add(path.split("/", 1)[0])

    def find(self, target: str, folder: str, *, relative: bool = False) -> str | None:
        """The path ``target`` names from a note in ``folder``: by path when it has a folder or
        is a Markdown link (``relative``), else by name; of several notes with the name, the one
        in ``folder`` wins, then the one with the shortest path."""
        if relative or "/" in target:
            for path in _candidates(target, folder, relative):
                if found := self._at(path):
                    return found
        if target.startswith("/"):
            under = self._under_top(target)
            if len(under) == 1:
                return under.pop()
            if under:  # several top folders have it: none is the one it means
                return None
        tail = path_key(note_stem(target.lstrip("/")))
        named = self._named.get(tail.rsplit("/", 1)[-1], ())
        matches = [p for p in named if path_key(note_stem(p)) == tail or path_key(note_stem(p)).endswith("/" + tail)]  # fmt: skip
        if not matches:
            return None
        return min(matches, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))

    def _at(self, path: str) -> str | None:
        """The note at vault path ``path``, or its folder note."""
        for candidate in (path, *(_join(path, name) for name in FOLDER_NOTES)):
            if found := self._exact.get(path_key(note_stem(candidate))):
                return found
        return None

    def _under_top(self, target: str) -> set[str]:
        """The notes a root-absolute ``target`` names under each top folder (``/reference/jsx``
        as ``docs/reference/jsx/README.md``): the link means the one when there is one."""
        root = posixpath.normpath("./" + target.lstrip("/"))
        if root in (".", "..") or root.startswith("../"):
            return set()
        return {f for top in self._tops if (f := self._at(f"{top}/{root}"))}


def note_finder(paths: Iterable[str]) -> Callable[[str, str], str | None]:
    """``find(target, folder)``: the one note of ``paths`` a wikilink target written in a note of
    ``folder`` names, as :class:`NoteLinks` finds it (None: no note has that path or name)."""
    return _Paths(paths).find


class _Listing:
    """One listing of the current notes, indexed: the sources holding each path, every note,
    and each source's own notes (made on first use)."""

    def __init__(self, notes: Iterable[tuple[str, str]]) -> None:
        holders: defaultdict[str, list[str]] = defaultdict(list)
        for source, path in notes:
            holders[path].append(source)
        self.holders = {path: sorted(sources) for path, sources in holders.items()}
        self.every = _Paths(self.holders)
        self._own: dict[str, _Paths] = {}

    def own(self, source: str) -> _Paths:
        """The notes of ``source``: every note when it holds them all (a store of one source)."""
        found = self._own.get(source)
        if found is None:
            paths = [p for p, sources in self.holders.items() if source in sources]
            found = self.every if len(paths) == len(self.holders) else _Paths(paths)
            self._own[source] = found
        return found


@functools.lru_cache(maxsize=2)
def _indexed(notes: frozenset[tuple[str, str]]) -> _Listing:
    """The index of a listing, made once for every note view that reads the same listing: at
    10,000 notes making it costs several times what reading the listing does."""
    return _Listing(notes)


def _candidates(target: str, folder: str, relative: bool) -> list[str]:
    """The vault paths a path target may name, likeliest first: a Markdown link's path is
    relative to the linking note, a wikilink's from the vault root; ``/…`` is from the root."""
    root = posixpath.normpath("./" + target.lstrip("/"))
    if target.startswith("/"):
        return [root]
    beside = posixpath.normpath(posixpath.join(folder, target))
    return [beside, root] if relative else [root, beside]


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else f"{folder}/{name}"


class NoteLinks:
    """Resolves the link targets written in the note at ``path`` of ``source``.

    ``notes`` lists the current notes as (source, path). It is called once, on the first target
    to resolve, so a note without links costs no query; the index of the paths is kept for the
    next note that gets the same listing. ``vault`` is the vault's source: a link
    to its notes needs no source. ``files``: the local vault folder's images, which the vault's
    notes show (None: a GitHub vault, whose files are not here). ``older`` lists the versions
    newer notes supersede (``previous``): a link no current note answers leads to the version it
    names, whose page says which note replaced it (read only for such a link).
    """

    def __init__(
        self, path: str, notes: Callable[[], Iterable[tuple[str, str]]], *,
        source: str = "local", vault: str = "local", files: ImageFinder | None = None,
        older: Callable[[], Iterable[tuple[str, str]]] | None = None,
    ) -> None:  # fmt: skip
        self.path, self.source, self.vault = path, source, vault
        self.files = files
        self._notes = notes
        self._older_notes = older
        self._older: _Listing | None = None
        self._listing: list[tuple[str, str]] | None = None
        self._indexed_listing: _Listing | None = None
        # Notes made by beside() read this note's index: making one per note from the same
        # listing cost 1 ms each at 10,000 notes (hashing the listing to find it in the cache).
        self._listing_index: Callable[[], _Listing] = self._shared_index
        self._own: _Paths | None = None
        self._every = _Paths(())
        self._holders: dict[str, list[str]] = {}
        # Shown inside another note's page (an embed): its headings carry no ids there, so a
        # link to one of them goes to its own page.
        self.embedded = False

    def resolve(
        self, target: str, *, relative: bool = False, older: bool = True
    ) -> LinkTarget | None:
        """The note ``target`` names (failing every current note, a superseded version, unless
        not ``older``), or None; ``relative``: the target is a Markdown link's path, not a
        wikilink's. An empty target (``[[#見出し]]``) is the note itself. The linking note's own
        source is searched first, then every source; a path several other sources hold names
        the vault's note, else the note of the first of them by name."""
        target = target.strip()
        if not target:
            return self._target(self.path, self.source)
        found = self._find(self._index(), self._every, self._holders, target, relative)
        if found is None and older:
            found = self._older_version(target, relative)
        return found

    def _older_version(self, target: str, relative: bool) -> LinkTarget | None:
        """The superseded version ``target`` names (``older``), read on the first such link."""
        if self._older_notes is None:
            return None
        if self._older is None:
            self._older = _Listing(self._older_notes())
        older = self._older
        return self._find(older.own(self.source), older.every, older.holders, target, relative)

    def _find(
        self, own: _Paths, every: _Paths, holders: dict[str, list[str]], target: str,
        relative: bool,
    ) -> LinkTarget | None:  # fmt: skip
        """``target`` among ``own`` (this note's source) first, then ``every`` source's."""
        folder = posixpath.dirname(self.path)
        if found := own.find(target, folder, relative=relative):
            return self._target(found, self.source)
        if found := every.find(target, folder, relative=relative):
            sources = holders[found]
            return self._target(found, self.vault if self.vault in sources else sources[0])
        return None

    def beside(self, note: LinkTarget) -> NoteLinks:
        """The links of ``note`` (one this note embeds), read from the same list of notes."""
        links = NoteLinks(
            note.path, self._listed, source=note.source or self.vault, vault=self.vault,
            files=self.files, older=self._older_notes,
        )  # fmt: skip
        links._listing_index = self._shared_index
        links.embedded = True
        return links

    def image(self, target: str, *, relative: bool = False) -> str | None:
        """The vault path of the image file ``target`` names, when this note is the vault's and
        the vault folder holds it; ``relative``: a Markdown image's path, not a wikilink's."""
        if self.files is None or self.source != self.vault:
            return None
        return self.files.find(target.strip(), posixpath.dirname(self.path), relative=relative)

    def _listed(self) -> list[tuple[str, str]]:
        if self._listing is None:
            self._listing = list(self._notes())
        return self._listing

    def is_here(self, note: LinkTarget) -> bool:
        """Whether ``note`` is the linking note itself."""
        return note == self._target(self.path, self.source)

    def _target(self, path: str, source: str) -> LinkTarget:
        return LinkTarget(path, None if source == self.vault else source)

    def _shared_index(self) -> _Listing:
        if self._indexed_listing is None:
            self._indexed_listing = _indexed(frozenset(self._listed()))
        return self._indexed_listing

    def _index(self) -> _Paths:
        """This note's source's notes (and, read with them, every source's)."""
        if self._own is None:
            listing = self._listing_index()
            self._holders, self._every = listing.holders, listing.every
            self._own = listing.own(self.source)
        return self._own
