"""Images kept in the vault (Obsidian's attachments, a docs folder's pictures), found the way a
note's links find notes and served to the note view.

Only image files (:data:`IMAGE_TYPES`) that lie inside the configured local vault folder are
ever found or served: no ``..``, no hidden folders (``.obsidian``, ``.git``), no symlink that
leads out of the vault, and nothing but the image types with their own content type. Every
image is sent with ``nosniff`` and a sandboxing Content-Security-Policy, and an SVG as an
attachment, so that one opened on its own runs no script (in an ``<img>`` none ever runs).
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from knowledge_assets.core.links.resolve import path_key

__all__ = ["IMAGE_TYPES", "VaultFiles", "attachment_url", "is_image"]

log = logging.getLogger(__name__)

IMAGE_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
    ".webp": "image/webp", ".svg": "image/svg+xml", ".avif": "image/avif",
}  # fmt: skip
ROUTE = "/api/attachments/"
# The images of a vault are listed once in a while, not at every note: a note of 40 images
# costs one walk of the folder.
INDEX_SECONDS = 10.0
MAX_LISTED = 200_000  # files looked at in one walk: a runaway folder stays bounded
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "Cache-Control": "private, max-age=60",
}


def is_image(path: str) -> bool:
    """Whether ``path`` names an image by its extension."""
    return posixpath.splitext(path.lower())[1] in IMAGE_TYPES


def attachment_url(path: str) -> str:
    """The address the page loads the vault image at vault path ``path`` from."""
    return ROUTE + quote(path, safe="/")


class _Index:
    """The vault's image files by vault path and by file name (case and Unicode form aside)."""

    def __init__(self, root: Path) -> None:
        self.exact: dict[str, str] = {}
        self.named: defaultdict[str, list[str]] = defaultdict(list)
        self.tops: set[str] = set()
        self.complete = True
        seen = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            base = Path(folder).relative_to(root).as_posix()
            for name in sorted(files):
                seen += 1
                if seen > MAX_LISTED:
                    self.complete = False
                    return
                path = name if base == "." else f"{base}/{name}"
                if is_image(name) and not name.startswith("."):
                    self.exact.setdefault(path_key(path), path)
                    self.named[path_key(name)].append(path)
            if base == ".":
                self.tops.update(dirs)


@dataclass
class _Listing:
    """One vault's latest image index, and the lock held by the request that lists it again."""

    index: _Index | None = None
    at: float = 0.0
    warned: bool = False
    walking: threading.Lock = field(default_factory=threading.Lock)

    def fresh(self) -> _Index | None:
        if self.index is not None and time.monotonic() - self.at <= INDEX_SECONDS:
            return self.index
        return None


_CACHE: dict[Path, _Listing] = {}
_LOCK = threading.Lock()  # guards _CACHE itself, never held during a walk


class VaultFiles:
    """The image files of the local vault folder ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _index(self) -> _Index:
        """The vault's image index, listed again when older than INDEX_SECONDS.

        One request at a time walks a vault. The others go on with the previous listing
        meanwhile instead of waiting behind the walk (and no request for another vault ever
        waits), except before the first listing, which they all need.
        """
        with _LOCK:
            listing = _CACHE.setdefault(self.root, _Listing())
        if index := listing.fresh():
            return index
        stale = listing.index
        if stale is not None and not listing.walking.acquire(blocking=False):
            return stale
        if stale is None:
            listing.walking.acquire()
        try:
            if index := listing.fresh():  # listed by the request this one waited for
                return index
            index = _Index(self.root)
            if not index.complete and not listing.warned:
                listing.warned = True  # once per vault, not at every listing
                log.warning(
                    "the vault folder holds more than %s files: images past them are not found"
                    " in notes; keep large non-note folders outside the vault",
                    f"{MAX_LISTED:,}",
                )
            listing.index, listing.at = index, time.monotonic()
            return index
        finally:
            listing.walking.release()

    def find(self, target: str, folder: str, *, relative: bool = False) -> str | None:
        """The vault path of the image ``target`` names from a note in ``folder``, or None: a
        Markdown image's path is relative to the note, a wikilink's from the vault root; ``/…``
        is from the root, else under the one top folder that has it; failing that, the file
        name (the note's folder first, then the shortest path), as Obsidian finds attachments."""
        if not is_image(target) or not target.strip():
            return None
        index = self._index()
        root = posixpath.normpath("./" + target.lstrip("/"))
        if target.startswith("/"):
            paths = [root]
        else:
            beside = posixpath.normpath(posixpath.join(folder, target))
            paths = [beside, root] if relative else [root, beside]
        for path in paths:
            if found := index.exact.get(path_key(path)):
                return self._inside(found)
        if target.startswith("/"):
            under = {f for top in index.tops if (f := index.exact.get(path_key(f"{top}/{root}")))}
            if len(under) == 1:
                return self._inside(under.pop())
            if under:  # several top folders have it: none is the one it means
                return None
        named = index.named.get(path_key(posixpath.basename(root)), [])
        tail = path_key(root)
        matches = [p for p in named if path_key(p) == tail or path_key(p).endswith("/" + tail)]
        if not matches:
            return None
        best = min(matches, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))
        return self._inside(best)

    def _inside(self, path: str) -> str | None:
        return path if self.file(path) is not None else None

    def file(self, path: str) -> tuple[Path, str] | None:
        """The file to send for vault path ``path`` and its content type, or None unless it is an
        image file inside the vault (after following every symlink)."""
        parts = path.split("/")
        if "\x00" in path or "\\" in path or any(p in ("", ".", "..") or p.startswith(".") for p in parts):  # fmt: skip
            return None
        try:
            vault = self.root.resolve(strict=True)
            real = (vault / path).resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a symlink loop, unreadable
            return None
        kind = IMAGE_TYPES.get(real.suffix.lower())
        if kind is None or not is_image(path) or not real.is_relative_to(vault):
            return None
        if any(p.startswith(".") for p in real.relative_to(vault).parts):  # led into .git
            return None
        return (real, kind) if real.is_file() else None
