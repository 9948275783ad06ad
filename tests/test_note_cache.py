"""The note view's render cache and render slots: a note opened again is served from the cache
while nothing its HTML was made from changed (its text, the notes its links name, the notes it
embeds), rendered anew when anything did; the cache is bounded by bytes; and a view that waits
too long behind long notes rendering is refused with a message saying so."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.api.note_cache import Inputs, RenderCache
from knowledge_assets.api.note_html import RenderSlots
from knowledge_assets.api.settings import ApiConfigError
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page
from tests.test_search import ingest


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "rain.md").write_text(
        "# 雨\n\n梅雨の晴れ間に洗濯をした。[[晴れ]]\n", encoding="utf-8"
    )
    (folder / "embeds.md").write_text("# 埋め込み\n\n![[sky]]\n", encoding="utf-8")
    (folder / "sky.md").write_text("# 空\n\n青い空。\n", encoding="utf-8")
    return folder


@pytest.fixture
def served(server_url: str, vault: Path) -> Iterator[tuple[str, httpx.Client]]:
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        yield url, client


def _view(client: httpx.Client, path: str) -> tuple[str, str]:
    response = client.get(f"/api/notes/{path}")
    assert response.status_code == 200, response.text
    return response.headers["x-render-cache"], response.json()["data"]["html"]


def test_a_second_view_of_an_unchanged_note_is_served_from_the_cache(
    served: tuple[str, httpx.Client],
) -> None:
    _, client = served
    first, html = _view(client, "rain.md")
    again, kept = _view(client, "rain.md")
    assert (first, again) == ("miss", "hit")
    assert kept == html and "洗濯" in kept


def test_an_edited_note_is_rendered_anew(served: tuple[str, httpx.Client], vault: Path) -> None:
    url, client = served
    _view(client, "rain.md")
    (vault / "rain.md").write_text("# 雨\n\n梅雨の晴れ間に布団を干した。\n", encoding="utf-8")
    ingest(url, None, vault)
    state, html = _view(client, "rain.md")
    assert state == "miss"
    assert "布団" in html and "洗濯" not in html


def test_a_note_its_link_names_arriving_renders_the_link_anew(
    served: tuple[str, httpx.Client], vault: Path
) -> None:
    """The note's text is unchanged, but [[晴れ]] named no note and now does."""
    url, client = served
    _, html = _view(client, "rain.md")
    assert "wikilink missing" in html
    (vault / "晴れ.md").write_text("# 晴れ\n\n洗濯日和。\n", encoding="utf-8")
    ingest(url, None, vault)
    state, html = _view(client, "rain.md")
    assert state == "miss"
    assert "wikilink missing" not in html and '<a class="wikilink" href="/notes/' in html


def test_an_embedded_note_edited_is_shown_as_edited(
    served: tuple[str, httpx.Client], vault: Path
) -> None:
    url, client = served
    assert "青い空" in _view(client, "embeds.md")[1]
    assert _view(client, "embeds.md")[0] == "hit"
    (vault / "sky.md").write_text("# 空\n\n曇り空。\n", encoding="utf-8")
    ingest(url, None, vault)
    state, html = _view(client, "embeds.md")
    assert state == "miss"
    assert "曇り空" in html and "青い空" not in html


def test_a_link_to_an_older_version_opens_it_and_follows_it_when_it_changes(
    served: tuple[str, httpx.Client], vault: Path
) -> None:
    """[[晴れ-v1]] names a version another note supersedes (previous): the link opens its page,
    which names the note that replaced it; when that note goes, the version is current again
    and the kept render is made anew."""
    url, client = served
    (vault / "晴れ-v1.md").write_text("# 晴れ\n\n初めの版。\n", encoding="utf-8")
    (vault / "晴れ-v2.md").write_text(
        "---\nprevious: 晴れ-v1.md\n---\n# 晴れ\n\n次の版。\n", encoding="utf-8"
    )
    (vault / "rain.md").write_text("# 雨\n\n前の版は [[晴れ-v1]]。\n", encoding="utf-8")
    ingest(url, None, vault)
    href = '<a class="wikilink" href="/notes/' + quote("晴れ-v1.md") + '">'
    assert href in _view(client, "rain.md")[1]
    assert _view(client, "rain.md")[0] == "hit"
    page = client.get("/api/notes/" + quote("晴れ-v1.md")).json()["data"]
    assert page["supersededBy"] == "晴れ-v2.md"
    (vault / "晴れ-v2.md").unlink()  # the version is current again
    ingest(url, None, vault)
    state, html = _view(client, "rain.md")
    assert state == "miss" and href in html


def test_the_cache_is_bounded_by_bytes_not_entries() -> None:
    """A huge note counts its size: it pushes out the least recently viewed, and one larger
    than the whole bound is not kept at all."""
    cache = RenderCache(max_bytes=30_000)
    for name in ("a", "b", "c"):
        cache.put(("local", name, "d", "r"), "x" * 9_000, Inputs())
    assert len(cache) == 3
    assert cache.get(("local", "a", "d", "r")) is not None  # a: now the most recently viewed
    cache.put(("local", "big", "d", "r"), "x" * 12_000, Inputs())
    assert cache.get(("local", "b", "d", "r")) is None  # the least recently viewed went
    assert cache.get(("local", "a", "d", "r")) is not None
    assert cache.bytes <= cache.max_bytes
    cache.put(("local", "huge", "d", "r"), "x" * 40_000, Inputs())
    assert cache.get(("local", "huge", "d", "r")) is None
    assert cache.bytes <= cache.max_bytes


def _table(rows: int) -> str:
    head = "| " + " | ".join(f"列{j}" for j in range(30)) + " |\n|" + "---|" * 30 + "\n"
    body = "\n".join("| " + " | ".join(f"c{i}-{j}" for j in range(30)) + " |" for i in range(rows))  # fmt: skip
    return f"# 大きな表\n\n{head}{body}\n"


def test_views_of_one_note_opened_at_once_render_it_once(server_url: str, vault: Path) -> None:
    """Three tabs opening a long note together: one renders it, the two queued behind it take
    what it kept."""
    (vault / "table.md").write_text(_table(300), encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings()), renders=RenderSlots(renders=1)) as base,
        httpx.Client(base_url=base, timeout=300) as client,
        ThreadPoolExecutor(3) as pool,
    ):
        views = list(pool.map(lambda _: client.get("/api/notes/table.md"), range(3)))
    assert sorted(v.headers["x-render-cache"] for v in views) == ["hit", "hit", "miss"]
    assert len({v.json()["data"]["html"] for v in views}) == 1


@contextmanager
def _rendering_a_long_note(
    server_url: str, vault: Path, rows: int
) -> Iterator[tuple[str, httpx.Client, Future[httpx.Response]]]:
    """A server with one render slot, taken by a table of ``rows`` rows (seconds to render) once
    this yields: its base URL, a client, and the long note's view still being answered. Another
    view waits 0.3 s for the slot."""
    (vault / "table.md").write_text(_table(rows), encoding="utf-8")
    renders = RenderSlots(renders=1, wait_s=0.3)
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings()), renders=renders) as base,
        httpx.Client(base_url=base, timeout=300) as client,
        ThreadPoolExecutor(1) as pool,
    ):
        long_note = pool.submit(client.get, "/api/notes/table.md")
        deadline = time.monotonic() + 120
        while renders.running == 0 and not long_note.done() and time.monotonic() < deadline:
            threading.Event().wait(0.02)
        yield base, client, long_note


def test_a_view_waiting_too_long_behind_long_renders_is_refused(
    server_url: str, vault: Path
) -> None:
    """With one render slot taken by a table of 90,000 cells (seconds), another note's view
    waits its 0.3 s and is answered 503 with a message saying why, not left hanging; the
    long note is still served."""
    with _rendering_a_long_note(server_url, vault, rows=3000) as (_, client, long_note):
        refused = client.get("/api/notes/sky.md")
        opened = long_note.result()
    assert refused.status_code == 503
    assert "note renders stayed busy" in refused.json()["error"]
    assert opened.status_code == 200 and opened.json()["data"]["html"].count("<tr>") == 3001


@pytest.mark.parametrize(
    ("name", "value"),
    [("KA_NOTE_RENDERS", "0"), *(("KA_NOTE_CACHE_MB", v) for v in ("多め", "inf", "nan", "-1"))],
)
def test_a_render_setting_that_is_no_number_is_refused_with_its_name(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ApiConfigError, match=name):
        RenderSlots.from_env() if name == "KA_NOTE_RENDERS" else RenderCache.from_env()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_page_says_a_note_waited_too_long_behind_long_renders(
    server_url: str, vault: Path
) -> None:
    """A view refused after waiting behind a long render says why: long notes are being shown,
    and to open it again in a moment."""
    from playwright.sync_api import expect

    # The browser starts before the long render does, so the render need only outlast the
    # page's own load and the 0.3 s wait, not Chromium's start-up too.
    with (
        chromium_page(timeout_ms=60_000) as page,
        _rendering_a_long_note(server_url, vault, rows=2000) as (base, _, long_note),
    ):
        page.goto(f"{base}/notes/sky.md")
        expect(page.locator("#note-body")).to_contain_text("長いノートの表示が混み合っています")
        assert long_note.result().status_code == 200
