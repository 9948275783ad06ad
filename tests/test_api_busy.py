"""The API's few store connections under notes that take long to render: rendering a note's
Markdown holds none of them, so searches go on meanwhile; and when all of them are busy, the
search page says so rather than that the store cannot be reached."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.mcp.reader import ReaderStore, reader_url
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page

pytestmark = pytest.mark.slow
COLUMNS, ROWS = 30, 1000  # a table of 30,000 cells: seconds of rendering


def _table() -> str:
    head = "| " + " | ".join(f"列{j}" for j in range(COLUMNS)) + " |\n|" + "---|" * COLUMNS + "\n"
    rows = "\n".join("| " + " | ".join(f"c{i}-{j}" for j in range(COLUMNS)) + " |" for i in range(ROWS))  # fmt: skip
    return f"# 大きな表\n\n梅雨の記録。\n\n{head}{rows}\n"


def test_a_search_is_answered_while_long_notes_render(server_url: str, tmp_path: Path) -> None:
    """Two readers opening a large note took both connections for as long as its table
    rendered, and a search meanwhile waited, then failed with 503 'all store connections
    stayed busy'. The note is read, its connection given back, and then rendered."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "table.md").write_text(_table(), encoding="utf-8")
    (vault / "rain.md").write_text("# 雨\n\n梅雨の晴れ間に洗濯をした。\n", encoding="utf-8")
    with sample_vault_database(server_url, None, vault) as url:
        readers = ReaderStore(reader_url(url), max_connections=2, wait_s=0.5)
        with (
            api_server(url, Asker(LLMSettings()), readers=readers) as base,
            httpx.Client(base_url=base, timeout=120) as client,
            ThreadPoolExecutor(2) as pool,
        ):
            notes = [pool.submit(client.get, "/api/notes/table.md") for _ in range(2)]
            time.sleep(0.5)  # both notes read: their tables are rendering
            search = client.post("/api/search/keyword", json={"query": "洗濯"})
            opened = [note.result() for note in notes]
    assert search.status_code == 200, search.text
    assert search.json()["data"][0]["id"] == "rain.md"
    for note in opened:
        assert note.status_code == 200 and note.json()["data"]["html"].count("<tr>") == ROWS + 1


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_page_says_the_server_is_busy_when_every_connection_is(
    server_url: str, tmp_path: Path
) -> None:
    """A 503 for connections that all stayed busy read 「ノートの保存先に接続できません。サーバーを
    確認して…」: the store was fine, and checking the server found nothing to fix."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "rain.md").write_text("# 雨\n\n梅雨の晴れ間に洗濯をした。\n", encoding="utf-8")
    release = threading.Event()
    with sample_vault_database(server_url, None, vault) as url:
        readers = ReaderStore(reader_url(url), max_connections=1, wait_s=0.2)
        holder = threading.Thread(target=readers.run, args=(lambda conn: release.wait(60),))
        holder.start()  # a long call holds the one connection
        try:
            with (
                api_server(url, Asker(LLMSettings()), readers=readers) as base,
                chromium_page(timeout_ms=60_000) as page,
            ):
                page.goto(f"{base}/?q=洗濯&mode=keyword")
                expect(page.locator("#search-status")).to_contain_text("サーバーが混み合っています")
        finally:
            release.set()
            holder.join()
