"""The HTTP API under a real uvicorn server on a free loopback port, in a background thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from knowledge_assets.answer import Asker
from knowledge_assets.api import ApiSettings, create_app
from knowledge_assets.api.note_html import RenderSlots
from knowledge_assets.api.settings import writer_url
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from tests.browser_support import free_port


@contextmanager
def api_server(
    store_url: str,
    asker: Asker,
    token: str = "",
    hosts: tuple[str, ...] = (),
    vault: Path | None = None,
    readers: ReaderStore | None = None,
    renders: RenderSlots | None = None,
) -> Iterator[str]:
    """Serve the API for ``store_url`` (as its ka_reader / ka_qa_writer roles), answering to
    ``hosts`` besides loopback's names and showing the images of the local ``vault`` folder,
    reading on ``readers`` and rendering notes in ``renders`` when given; yields the base URL."""
    port = free_port()
    settings = ApiSettings(
        "127.0.0.1", port, token, reader_url(store_url), writer_url(store_url), hosts, vault
    )
    config = uvicorn.Config(create_app(settings, asker, readers, renders), host="127.0.0.1", port=port, log_level="warning")  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def api_client(store_url: str, asker: Asker) -> Iterator[httpx.Client]:
    """A client of :func:`api_server` for ``store_url``, its base URL set."""
    with api_server(store_url, asker) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client
