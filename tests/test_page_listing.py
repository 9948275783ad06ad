"""The search page's listing of notes by operators alone (``path:日記/``) in headless Chromium
against a real API server: the first page, then each next one on "さらに表示" below the notes,
in the API's order and without a note twice, until all are shown; a failed page can be tried
again, and a new query starts the listing over. A screenshot of the listing with its control
lands in ``tests/artifacts/search-listing.png``."""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page, screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
ARTIFACTS = Path(__file__).parent / "artifacts"
DIARIES = 120  # more than two pages of 50: a full page, another, then the 20 left
PROJECTS = 3


@pytest.fixture(scope="module")
def base(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API over a vault of 120 daily notes under 日記/, a day apart, and 3 project notes."""
    vault = tmp_path_factory.mktemp("diaries")
    (vault / "日記").mkdir()
    (vault / "projects").mkdir()
    first = dt.date(2025, 1, 1)
    for i in range(DIARIES):
        day = (first + dt.timedelta(days=i)).isoformat()
        _note(vault / "日記" / f"{day}.md", day, f"{day} の日記", ["日記"])
    for i in range(PROJECTS):
        _note(vault / "projects" / f"p{i}.md", f"2024-06-0{i + 1}", f"計画 {i}", ["仕事"])
    # Listings read no vectors: the notes are ingested and left unembedded.
    with sample_vault_database(server_url, None, vault) as url:
        with api_server(url, Asker(LLMSettings())) as base:
            yield base


def _note(path: Path, day: str, title: str, tags: list[str]) -> None:
    front = f"---\ncreated: {day}\nupdated: {day}\ntags: {tags}\n---\n"
    path.write_text(f"{front}# {title}\n\n{title}の記録。\n", encoding="utf-8")


def _api_order(base: str, query: str) -> list[str]:
    """The paths the API lists for ``query``, in its order, in one page."""
    reply = httpx.post(f"{base}/api/search/notes", json={"query": query, "limit": 200}, timeout=60)
    reply.raise_for_status()
    return [n["id"] for n in reply.json()["data"]]


def _list(page: Page, base: str, query: str, count: int) -> Locator:
    """Type ``query`` (operators alone) in the search box; the status once the page lists its
    ``count`` notes, as the API lists them."""
    from playwright.sync_api import expect

    page.goto(base + "/")
    page.fill("#q", query)
    page.press("#q", "Enter")
    status = page.locator("#search-status")
    expect(status).to_have_text(f"「{query}」のノート {count} 件（新しい順）")
    assert sorted(_shown(page)) == sorted(_api_order(base, query))
    return status


def _shown(page: Page) -> list[str]:
    """The paths of the notes the page lists, top to bottom."""
    hrefs = page.locator("#results .result h3 a").evaluate_all("a => a.map(e => e.getAttribute('href'))")  # fmt: skip
    return [urllib.parse.unquote(h.removeprefix("/notes/")) for h in hrefs]


def test_a_listing_loads_its_next_pages_until_every_note_is_shown(base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    order = _api_order(base, "path:日記/")
    assert len(order) == DIARIES
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        status, notes = page.locator("#search-status"), page.locator("#results .result")
        more, shown = page.locator("#results .more"), page.locator("#results .more-bar .shown")
        page.fill("#q", "path:日記/")
        page.press("#q", "Enter")
        expect(notes).to_have_count(50)
        expect(status).to_have_text("「path:日記/」のノート 120 件（新しい順に 50 件を表示）")
        expect(shown).to_have_text("50 / 120 件を表示")
        expect(more).to_have_text("さらに 50 件を表示")
        assert _shown(page) == order[:50]
        # The last notes and the control, as a user scrolled down to them sees them.
        more.evaluate("b => b.scrollIntoView({ block: 'center' })")
        screenshot(page, ARTIFACTS / "search-listing.png")

        # Reachable from the keyboard: Tab from the last note's tag chip lands on it, Enter
        # loads the next page, and the focus stays on the control for the page after.
        page.locator("#results .result").last.locator("h3 a").focus()
        for _ in range(5):
            if page.evaluate("document.activeElement.classList.contains('more')"):
                break
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('more')")
        page.keyboard.press("Enter")
        expect(notes).to_have_count(100)
        expect(shown).to_have_text("100 / 120 件を表示")
        expect(more).to_have_text("さらに 20 件を表示")
        assert page.evaluate("document.activeElement.classList.contains('more')")

        # A failed page says so on the status line, keeps the notes shown and can be retried.
        page.route("**/api/search/notes", lambda route: route.fulfill(status=503, json={"success": False, "error": "down"}))  # fmt: skip
        more.click()
        expect(status).to_have_text(
            "検索できませんでした: ノートの保存先に接続できません。サーバーを確認してから、もう一度試してください。"
        )
        expect(more).to_be_enabled()
        expect(more).to_have_text("さらに 20 件を表示")
        expect(notes).to_have_count(100)
        page.unroute("**/api/search/notes")

        # Disabled while its page loads: a second click in the same instant appends nothing.
        busy = more.evaluate("b => { b.click(); const busy = b.getAttribute('aria-disabled'); b.click(); return busy; }")  # fmt: skip
        assert busy == "true"
        expect(notes).to_have_count(DIARIES)
        expect(more).to_have_count(0)  # everything is shown: the control goes
        expect(shown).to_have_text("120 / 120 件を表示")
        expect(status).to_have_text("「path:日記/」のノート 120 件（新しい順）")
        listed = _shown(page)
        assert len(set(listed)) == DIARIES and listed == order
        assert page.evaluate("document.activeElement.textContent") == "2025-01-20 の日記"

        # A new query starts over: its own notes only, no control for a listing of one page.
        page.fill("#q", "path:projects/")
        page.press("#q", "Enter")
        expect(status).to_have_text("「path:projects/」のノート 3 件（新しい順）")
        expect(notes).to_have_count(PROJECTS)
        expect(page.locator("#results .more-bar")).to_have_count(0)
        assert _shown(page) == _api_order(base, "path:projects/")

        # And the long listing again starts from its first page.
        page.fill("#q", "path:日記/")
        page.press("#q", "Enter")
        expect(shown).to_have_text("50 / 120 件を表示")
        expect(notes).to_have_count(50)
        assert _shown(page) == order[:50]

        # A page still loading when a new query is typed never lands in the new listing.
        page.evaluate("""() => {
            document.querySelector('#results .more').click();
            document.querySelector('#q').value = 'path:projects/';
            document.querySelector('#search-form').requestSubmit();
        }""")
        expect(status).to_have_text("「path:projects/」のノート 3 件（新しい順）")
        page.wait_for_load_state("networkidle")
        expect(notes).to_have_count(PROJECTS)


def test_back_and_reload_bring_back_a_listing_as_long_as_it_was(base: str) -> None:
    """The address keeps how far "さらに表示" reached (?shown=): Back from a note and a reload
    showed the first 50 notes again, and the reader lost their place."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    order = _api_order(base, "path:日記/")
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        notes, more = page.locator("#results .result"), page.locator("#results .more")
        page.fill("#q", "path:日記/")
        page.press("#q", "Enter")
        expect(notes).to_have_count(50)
        assert "shown=" not in page.url  # one page: the address a search always had
        more.click()
        expect(notes).to_have_count(100)
        expect(page).to_have_url(f"{base}/?q=path%3A%E6%97%A5%E8%A8%98%2F&mode=hybrid&shown=100")
        opened = notes.nth(80).locator("h3 a")
        opened.scroll_into_view_if_needed()
        assert page.evaluate("scrollY") > 1000  # far down the second page
        opened.click()
        page.wait_for_url("**/notes/**")
        page.go_back()
        expect(notes).to_have_count(100)
        expect(page.locator("#results .more-bar .shown")).to_have_text("100 / 120 件を表示")
        assert _shown(page) == order[:100]
        assert _in_view(page, opened), "Back did not return to the note the reader had opened"
        page.reload()
        expect(notes).to_have_count(100)
        expect(more).to_have_text("さらに 20 件を表示")
        assert _in_view(page, opened), "a reload did not return to where the reader was"
        # A new query starts from its first page, and so does its address.
        page.fill("#q", "path:projects/")
        page.press("#q", "Enter")
        expect(notes).to_have_count(PROJECTS)
        assert "shown=" not in page.url
        # A hand-written count past the end shows every note once; garbage shows one page.
        page.goto(base + "/?q=path%3A%E6%97%A5%E8%A8%98%2F&shown=100000")
        expect(notes).to_have_count(DIARIES)
        assert _shown(page) == order
        page.goto(base + "/?q=path%3A%E6%97%A5%E8%A8%98%2F&shown=abc")
        expect(notes).to_have_count(50)


def _in_view(page: Page, note: Locator) -> bool:
    """Whether ``note`` comes into the viewport within 5 s (the notes load after the page)."""
    inside = "e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }"  # fmt: skip
    for _ in range(50):
        if page.evaluate("scrollY") > 0 and note.evaluate(inside):
            return True
        page.wait_for_timeout(100)
    return False


def test_a_tags_listing_keeps_its_length_in_the_address(base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/?tag=%E6%97%A5%E8%A8%98")
        notes = page.locator("#results .result")
        expect(notes).to_have_count(50)
        page.locator("#results .more").click()
        expect(notes).to_have_count(100)
        expect(page).to_have_url(f"{base}/?tag=%E6%97%A5%E8%A8%98&shown=100")
        page.reload()
        expect(notes).to_have_count(100)


def test_a_search_with_words_shows_no_listing_control(base: str) -> None:
    """A search of words returns its best hits only: nothing to page through."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#q", "path:日記/")
        page.press("#q", "Enter")
        expect(page.locator("#results .more")).to_be_visible()
        page.fill("#q", "日記")
        page.get_by_text("キーワード", exact=True).click()
        expect(page.locator("#search-status")).to_contain_text("件のノート（")
        expect(page.locator("#results .more-bar")).to_have_count(0)


def test_operators_joined_by_or_list_the_notes_of_either(base: str) -> None:
    """``path:projects/ OR path:2025-01-01`` is operators alone: the page lists the notes of
    both, as the API does; an OR joining two kinds comes back refused, with the reason in the page's words."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    query = "path:projects/ OR path:2025-01-01"
    with chromium_page(timeout_ms=60_000) as page:
        status = _list(page, base, query, PROJECTS + 1)
        assert "日記/2025-01-01.md" in _shown(page)

        page.fill("#q", "tag:仕事 OR path:日記/")
        page.press("#q", "Enter")
        expect(status).to_contain_text("検索できませんでした: ")
        expect(status).to_contain_text("OR は同じ種類の 2 つ（tag:旅行 OR tag:出張、path: どうし")


def test_back_past_an_answer_shows_the_search_its_address_names(base: str) -> None:
    """A search typed after an answer was opened changes only the newer entry of the history:
    Back closed the answer and left that search on the page, under an address naming the one
    before, which a reload then showed instead."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    entry = {"id": "a1", "question": "計画は？", "answer": "計画 0 です。", "createdAt": "2026-01-05T00:00:00Z", "model": "extractive"}  # fmt: skip
    answer = entry | {"conversationId": "c1", "confidence": "low", "metadata": {}, "sources": []}
    with chromium_page(timeout_ms=60_000) as page:
        page.route("**/api/ai/qa/history?*", lambda route: route.fulfill(json={"success": True, "data": [entry]}))  # fmt: skip
        page.route("**/api/ai/qa/history/a1", lambda route: route.fulfill(json={"success": True, "data": answer}))  # fmt: skip
        page.goto(base + "/?q=" + urllib.parse.quote("path:projects/"))
        notes, status = page.locator("#results .result"), page.locator("#search-status")
        expect(notes).to_have_count(PROJECTS)
        page.locator("a.history-entry").click()
        expect(page.locator("#answer-question")).to_have_text("計画は？")
        page.fill("#q", "path:日記/")
        page.press("#q", "Enter")
        expect(notes).to_have_count(50)
        page.go_back()
        expect(page.locator("#answer")).to_be_hidden()
        expect(page.locator("#q")).to_have_value("path:projects/")
        expect(status).to_have_text("「path:projects/」のノート 3 件（新しい順）")
        expect(notes).to_have_count(PROJECTS)
        page.go_forward()  # and Forward shows the later search with its answer
        expect(page.locator("#q")).to_have_value("path:日記/")
        expect(notes).to_have_count(50)
        expect(page.locator("#answer-question")).to_have_text("計画は？")


def test_a_property_test_alone_lists_the_notes_it_keeps(base: str) -> None:
    """``[created:2024-06]`` is Obsidian's property search, operators alone: the page lists the
    three project notes, as the API does; ``[created:]`` comes back with the fix, in Japanese."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    query = "[created:2024-06]"
    with chromium_page(timeout_ms=60_000) as page:
        status = _list(page, base, query, PROJECTS)
        assert {p.split("/")[0] for p in _shown(page)} == {"projects"}

        page.fill("#q", "[created:]")
        page.press("#q", "Enter")
        expect(status).to_contain_text("[プロパティ:値] の : の後に値を書いてください")
        # A bracketed word no note has as a property is text: searched, not listed.
        page.fill("#q", "[計画]")
        page.press("#q", "Enter")
        expect(status).to_contain_text("件のノート（")
        expect(page.locator("#results .result h3 a").first).to_contain_text("計画")
