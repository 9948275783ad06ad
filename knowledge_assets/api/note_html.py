"""A note's body as the note view shows it: from the render cache when nothing its HTML was made
from has changed (:mod:`note_cache`), else rendered, a few notes at a time.

Rendering a long note is seconds of Python holding the interpreter's lock. Ten at once left a
search on the same server waiting 4-6 s for its turn (bench/note_render.py), and each render
held one of the worker threads that every request shares. So at most ``KA_NOTE_RENDERS``
notes (default 1) render at once, on threads of their own; a view beyond them waits without a
thread, and is refused after ``RENDER_WAIT_S`` with a 503 the page words as the server being
busy (:class:`RendersBusy`), rather than hanging.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import Request
from starlette.concurrency import run_in_threadpool

from knowledge_assets.api.attachments import VaultFiles
from knowledge_assets.api.markdown import render_note
from knowledge_assets.api.note_cache import (
    RENDERER,
    Inputs,
    Key,
    Recorded,
    RenderCache,
    digest,
    listing_digest,
)
from knowledge_assets.api.routes import _read, _settings
from knowledge_assets.api.settings import ApiConfigError
from knowledge_assets.core.chunks.strategies import BOOKMARK_TYPE
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks
from knowledge_assets.core.search import notes as core_notes
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.sources.bookmarks import bookmarks_markdown

T = TypeVar("T")
__all__ = ["CACHE_HEADER", "RenderSlots", "RendersBusy", "note_html"]

CACHE_HEADER = "X-Render-Cache"  # "hit": the HTML was kept from an earlier view; "miss": rendered
RENDERS_ENV = "KA_NOTE_RENDERS"
# One render at a time: the interpreter's lock runs one anyway, and every render beside it only
# took turns with it and with the searches. Ten views of huge notes at once on 2 cores
# (bench/note_render.py): searches' p95 0.22 s with 1, 0.78 s with 2, 2.6 s with 10 at once; the
# views' p50 6.7 s, 10.1 s, 8.8 s. Its cost: a note of minutes holds the others up to the wait.
RENDERS = 1
RENDER_WAIT_S = 60.0  # ten views of 1 MB notes queue for about 10 s


class RendersBusy(RuntimeError):
    """Every render slot stayed busy for longer than a note view may wait."""


class RenderSlots:
    """At most ``renders`` notes rendering at once, each on a thread of its own (none of the
    threads other requests take); a view waits at most ``wait_s`` for a slot."""

    def __init__(self, renders: int = RENDERS, wait_s: float = RENDER_WAIT_S) -> None:
        self.renders, self.wait_s = renders, wait_s
        self.running = 0  # renders under way: the tests wait for one
        self._slots = anyio.Semaphore(renders)
        self._threads = anyio.CapacityLimiter(renders)

    @classmethod
    def from_env(cls) -> RenderSlots:
        raw = os.environ.get(RENDERS_ENV, "").strip()
        if raw and not (raw.isdigit() and int(raw) > 0):
            raise ApiConfigError(f"{RENDERS_ENV}={raw!r}: give a number of renders, 1 or more")
        return cls(int(raw) if raw else RENDERS)

    async def run(self, render: Callable[[], T]) -> T:
        """``render()`` on a render thread once a slot is free; RendersBusy after ``wait_s``."""
        with anyio.move_on_after(self.wait_s) as waited:
            await self._slots.acquire()
        if waited.cancelled_caught:
            raise RendersBusy(
                f"all {self.renders} note renders stayed busy for {self.wait_s:.0f} s (long "
                "notes are being rendered); retry in a moment"
            )
        self.running += 1
        try:
            return await anyio.to_thread.run_sync(render, limiter=self._threads)
        finally:
            self.running -= 1
            self._slots.release()


def _cache(request: Request) -> RenderCache:
    cache: RenderCache = request.app.state.note_cache
    return cache


def _render(request: Request, doc: dict[str, Any], inputs: Inputs) -> str:
    """The note's body as HTML, recording in ``inputs`` what else it read. It is rendered holding
    no store connection: the notes its links and embeds name are read as they are needed, each
    on a connection held briefly."""
    vault = _settings(request).vault
    files = Recorded(VaultFiles(vault), inputs) if vault else None

    def listing() -> list[tuple[str, str]]:
        notes = _read(request, core_notes.latest_notes)
        inputs.listing = listing_digest(notes)
        return notes

    def body(note: LinkTarget) -> str | None:  # of a note this one embeds
        key = (note.source or vault_source(), note.path)
        found = _read(request, lambda conn: core_notes.latest_fields(conn, [key]).get(key))
        text = str(found["content"] or "") if found else None
        inputs.bodies[key] = digest(text) if text is not None else None
        return text

    def older() -> list[tuple[str, str]]:  # read only for a link no current note answers
        notes = _read(request, core_notes.superseded_notes)
        inputs.older = listing_digest(notes)
        return notes

    links = NoteLinks(
        doc["file_path"], listing, source=doc["source"], vault=vault_source(), files=files,
        older=older,
    )  # fmt: skip
    # A bookmark file's body is its articles as JSON: shown as a list of linked articles.
    text = doc["content"] or ""
    if doc.get("type") == BOOKMARK_TYPE:
        text = bookmarks_markdown(text)
    return render_note(text, links, body)


def _unchanged(request: Request, inputs: Inputs) -> bool:
    """Whether what a kept render read is as it was: the listing, embedded bodies, images."""
    if inputs.listing is not None:
        if listing_digest(_read(request, core_notes.latest_notes)) != inputs.listing:
            return False
    if inputs.older is not None:
        if listing_digest(_read(request, core_notes.superseded_notes)) != inputs.older:
            return False
    if inputs.bodies:
        keys = list(inputs.bodies)
        found = _read(request, lambda conn: core_notes.latest_fields(conn, keys))
        for key, was in inputs.bodies.items():
            now = found.get(key)
            if (digest(str(now["content"] or "")) if now else None) != was:
                return False
    vault = _settings(request).vault
    if inputs.images:
        files = VaultFiles(vault) if vault else None
        for (target, folder, relative), was in inputs.images.items():
            if files is None or files.find(target, folder, relative=relative) != was:
                return False
    return True


def _kept(request: Request, key: Key) -> str | None:
    """The note's kept HTML when nothing it was made from changed, else None."""
    cache = _cache(request)
    kept = cache.get(key)
    if kept is None:
        return None
    if _unchanged(request, kept[1]):
        return kept[0]
    cache.forget(key)
    return None


async def note_html(request: Request, doc: dict[str, Any]) -> tuple[str, str]:
    """The note's body as HTML, and whether it came from the cache (``hit``) or was rendered
    (``miss``). Digests and lookups run on worker threads: a long note's digest is milliseconds
    the event loop would not answer in."""

    def kept() -> tuple[Key, str | None]:
        key = (doc["source"], doc["file_path"], digest(doc["content"] or ""), RENDERER)
        return key, _kept(request, key)

    def render(key: Key) -> tuple[str, str]:
        # Views of a note queued behind its first render (tabs opened at once) take its HTML.
        html = _kept(request, key)
        if html is not None:
            return html, "hit"
        inputs = Inputs()
        html = _render(request, doc, inputs)
        _cache(request).put(key, html, inputs)
        return html, "miss"

    key, html = await run_in_threadpool(kept)
    if html is not None:
        return html, "hit"
    slots: RenderSlots = request.app.state.render_slots
    return await slots.run(lambda: render(key))
