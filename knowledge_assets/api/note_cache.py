"""Rendered notes kept in memory, so that a note opened again is not rendered again.

A note's HTML is kept under what determines it: the note (source and path), a digest of its
text, and a digest of the renderer's own code. What else its rendering read is recorded with it
and read again before the HTML is served: the list of current notes its links were resolved
against, the bodies of the notes it embeds, the vault images it looked up. So an edited note, a
note that now exists where a link was missing, or an embedded note that changed is rendered anew,
never shown as it was.

The cache is bounded by the memory its HTML takes (``KA_NOTE_CACHE_MB``, default 64; 0 keeps
nothing), least recently viewed first out; a note whose HTML alone is over the bound is not kept.
Hand-written rather than a library's: ``cachetools`` is no dependency, and this is an ordered
dict with a byte count.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from knowledge_assets.api.settings import ApiConfigError
from knowledge_assets.core.links.resolve import ImageFinder
from knowledge_assets.core.settings import env_number

__all__ = [
    "CACHE_ENV", "RENDERER", "Inputs", "Key", "Recorded", "RenderCache", "digest", "listing_digest"
]  # fmt: skip

CACHE_ENV = "KA_NOTE_CACHE_MB"
DEFAULT_MB = 64.0
Key = tuple[str, str, str, str]  # source, path, digest of the text, renderer


def _renderer_version() -> str:
    """A digest of the renderer's modules (``markdown*.py``): HTML of other code is never
    served, however the cache comes to outlive it."""
    h = hashlib.blake2b(digest_size=8)
    for path in sorted(Path(__file__).parent.glob("markdown*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


RENDERER = _renderer_version()


def digest(text: str) -> str:
    """A digest of ``text``: the note's, or an embedded note's body."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def listing_digest(notes: Iterable[tuple[str, str]]) -> str:
    """A digest of the current notes, (source, path) each, in any order."""
    h = hashlib.blake2b(digest_size=16)
    for source, path in sorted(notes):
        h.update(f"{source}\0{path}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass
class Inputs:
    """What a render read besides the note's own text, to be read again before its HTML is
    served: the listing's digest (None: no link was resolved), each embedded note's body digest
    (None: it was not there), each image looked up with where it was found."""

    listing: str | None = None
    older: str | None = None  # the superseded versions' listing, when a link needed it
    bodies: dict[tuple[str, str], str | None] = field(default_factory=dict)
    images: dict[tuple[str, str, bool], str | None] = field(default_factory=dict)

    def size(self) -> int:
        """Roughly the memory the record takes."""
        keys = [*self.bodies, *self.images]
        return 200 + sum(sys.getsizeof(k[0]) + sys.getsizeof(k[1]) + 150 for k in keys)


class Recorded:
    """The vault's images as ``files`` finds them, each lookup recorded in ``inputs``."""

    def __init__(self, files: ImageFinder, inputs: Inputs) -> None:
        self.files, self.inputs = files, inputs

    def find(self, target: str, folder: str, *, relative: bool = False) -> str | None:
        found = self.files.find(target, folder, relative=relative)
        self.inputs.images[(target, folder, relative)] = found
        return found


@dataclass(frozen=True)
class _Entry:
    html: str
    inputs: Inputs
    size: int


class RenderCache:
    """Rendered notes by :data:`Key`, at most ``max_bytes`` of them, the least recently used
    dropped first. Safe across the server's threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = self.misses = 0
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> RenderCache:
        """A cache of ``KA_NOTE_CACHE_MB`` megabytes (default 64)."""
        try:  # NaN, infinities and negative sizes too, which float() takes
            mb = env_number(CACHE_ENV, DEFAULT_MB, low=0, high=100_000)
        except ValueError as exc:
            raise ApiConfigError(f"{exc} (megabytes)") from None
        return cls(int(mb * 1_000_000))

    def get(self, key: Key) -> tuple[str, Inputs] | None:
        """The HTML kept for ``key`` and what its render read, or None; counts a hit or miss
        (:meth:`forget` takes a hit back when the inputs changed)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.html, entry.inputs

    def forget(self, key: Key) -> None:
        """Drop ``key``, found stale: its hit was a miss."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self.bytes -= entry.size
                self.hits, self.misses = self.hits - 1, self.misses + 1

    def put(self, key: Key, html: str, inputs: Inputs) -> None:
        """Keep ``html`` for ``key``, dropping the least recently used to stay in bounds."""
        size = sys.getsizeof(html) + inputs.size()
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            self.bytes += size - (old.size if old else 0)
            self._entries[key] = _Entry(html, inputs, size)
            while self.bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self.bytes -= dropped.size

    def __len__(self) -> int:
        return len(self._entries)
