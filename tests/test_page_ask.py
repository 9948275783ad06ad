"""The search page's ask panel in headless Chromium against a real API server: what it says when
there is nothing to ask, before any request is sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
EMPTY = "質問を入力してから「質問する」を押してください。"


@pytest.fixture(scope="module")
def base(server_url: str) -> Iterator[str]:
    """The API over the sample vault; no question here reaches the store's vectors."""
    with sample_vault_database(server_url, None) as url:
        with api_server(url, Asker(LLMSettings())) as base:
            yield base


@pytest.mark.parametrize("typed", ["", "  \n\u3000 "])  # nothing, or spaces a full-width one too
def test_an_empty_question_says_what_to_do_and_sends_nothing(base: str, typed: str) -> None:
    """Clicking 質問する with nothing typed used to do nothing at all."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    with chromium_page() as page:
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "/api/ai/qa" in r.url and r.method == "POST" else None)  # fmt: skip
        page.goto(base + "/")
        page.wait_for_load_state("networkidle")
        status, question = page.locator("#ask-status"), page.locator("#question")
        expect(status).to_be_hidden()
        page.fill("#question", typed)
        page.click("#ask-form button")
        expect(status).to_have_text(EMPTY)
        expect(status).to_be_visible()
        expect(question).to_be_focused()
        expect(question).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#answer")).to_be_hidden()
        # Ctrl+Enter in the box asks too, and is refused alike.
        page.keyboard.press("Control+Enter")
        expect(status).to_have_text(EMPTY)
        page.wait_for_timeout(300)
        assert asked == []
        # Typing the question takes the note away.
        page.keyboard.type("ラーメン")
        expect(status).to_be_hidden()
        expect(question).not_to_have_attribute("aria-invalid", "true")
