"""What the search page says, in Japanese, when a click cannot do what it was for: nothing typed
to search or ask (said before any request is sent), or the server failing. In headless
Chromium against a real API server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page
from tests.fakes.llm_server import FakeLLMServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
EMPTY = "質問を入力してから「質問する」を押してください。"
FAILED = "サーバーでエラーが起きました（{}）。もう一度試して、続くようならサーバーのログを確認してください。"
UNEXPECTED = {"success": False, "error": "the server failed on this request (its log has the details): retry, or report it with that log"}  # fmt: skip


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


def test_an_empty_search_says_what_to_type(base: str) -> None:
    """検索 with nothing typed used to clear the page and say nothing."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    with chromium_page() as page:
        page.goto(base + "/")
        status = page.locator("#search-status")
        page.fill("#q", "ラーメン")
        page.press("#q", "Enter")
        expect(page.locator("#results .result").first).to_be_visible()
        page.fill("#q", "   ")
        page.click("#search-form button")
        expect(status).to_have_text("検索語を入力してください（例: 会議メモ、tag:日記）。")
        expect(page.locator("#results .result")).to_have_count(0)
        # Choosing no tag with an empty box is no search asked for: nothing said.
        page.select_option("#tag", "日記")
        expect(status).to_contain_text("#日記 のノート")
        page.select_option("#tag", "")
        expect(status).to_have_text("")


@pytest.mark.parametrize(
    ("status", "reply"), [(500, {"json": UNEXPECTED}), (502, {"body": "<html>Bad Gateway</html>", "content_type": "text/html"})]
)  # fmt: skip
def test_a_server_failure_is_said_in_japanese(
    base: str, status: int, reply: dict[str, Any]
) -> None:
    """The server's English message (meant for its log), or a proxy's status phrase, used to be
    shown as it came, on a page otherwise in Japanese."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    with chromium_page() as page:
        page.route("**/api/search/keyword", lambda route: route.fulfill(status=status, **reply))
        page.route("**/api/ai/qa", lambda route: route.fulfill(status=status, **reply))
        page.goto(base + "/")
        page.get_by_text("キーワード", exact=True).click()
        page.fill("#q", "ラーメン")
        page.press("#q", "Enter")
        expect(page.locator("#search-status")).to_have_text("検索できませんでした: " + FAILED.format(status))  # fmt: skip
        page.fill("#question", "ラーメンの店は？")
        page.click("#ask-form button")
        expect(page.locator("#answer-text")).to_have_text("答えられませんでした: " + FAILED.format(status))  # fmt: skip


def test_an_answers_warnings_are_said_in_japanese(base: str) -> None:
    """The API words an answer's warnings in English; the page showed them so."""
    from playwright.sync_api import expect

    warnings = [
        "dropped citations of notes that were not retrieved: 日記/x.md, y.md",
        "the model did not answer in clean JSON (read as text)",
        "the answer stopped at its length limit of 1,024 tokens: raise KA_LLM_MAX_TOKENS for a whole answer",
        "Anthropic retires claude-old on 2026-01-05: set KA_LLM_MODEL to a current model (unset, it is claude-new)",
        "something new",  # one the page does not know is shown as it comes
    ]
    said = [
        "検索で見つからなかったノートが出典に挙がっていたため外しました: 日記/x.md, y.md",
        "モデルの返答が決まった形（JSON）ではなかったため、読み取れた範囲で表示しています（text）",
        "回答は長さの上限（1,024 トークン）で途切れています。全文には KA_LLM_MAX_TOKENS を増やしてください",
        "claude-old は 2026-01-05 に提供が終わります。KA_LLM_MODEL を現行のモデルにしてください（未設定なら claude-new）",
        "something new",
    ]
    answer = {
        "id": "a1",
        "conversationId": "c1",
        "question": "質問",
        "answer": "答え。",
        "confidence": "medium",
        "metadata": {"model": "claude-old"},
        "createdAt": "2026-01-05T00:00:00Z",
        "sources": [],
        "warnings": warnings,
    }
    with chromium_page() as page:
        page.route("**/api/ai/qa/history/a1", lambda route: route.fulfill(json={"success": True, "data": answer}))  # fmt: skip
        page.goto(base + "/?answer=a1")
        expect(page.locator("#answer-warnings")).to_have_text(" / ".join(said), timeout=30_000)


@pytest.mark.parametrize("sent", ["", 'event: delta\ndata: {"text": "途中まで"}\n\n'])
def test_an_answer_whose_stream_ends_early_says_so(base: str, sent: str) -> None:
    """A stream closed before its answer (a proxy's timeout, a server stopped) left the panel
    saying ノートを探しています… for good."""
    from playwright.sync_api import expect

    with chromium_page() as page:
        page.route("**/api/ai/qa", lambda route: route.fulfill(body=sent, content_type="text/event-stream"))  # fmt: skip
        page.goto(base + "/")
        page.fill("#question", "ラーメンの店は？")
        page.click("#ask-form button")
        expect(page.locator("#answer-text")).to_have_text(
            "答えられませんでした: 回答の途中でサーバーとの接続が切れました。もう一度質問してください。",
            timeout=30_000,
        )
        expect(page.locator("#ask-form button")).to_be_enabled()


def test_an_answer_can_be_stopped_while_the_model_is_slow(server_url: str) -> None:
    """A slow model's answer kept the ask button disabled until the stream ended: 回答を止める
    ends it at once, says so, and the next question can be asked."""
    from playwright.sync_api import expect

    with FakeLLMServer(delay_s=3) as llm:
        settings = LLMSettings(
            provider="openai", model="test-model", base_url=llm.openai_base_url,
            api_key=llm.api_key,
        )  # fmt: skip
        with (
            sample_vault_database(server_url, None) as url,
            api_server(url, Asker(settings)) as base,
            chromium_page() as page,
        ):
            page.goto(base + "/")
            stop = page.locator("#answer-stop")
            expect(stop).to_be_hidden()
            page.fill("#question", "夜に何のラーメンを作った？")
            page.click("#ask-form button")
            expect(page.locator("#ask-form button")).to_be_disabled()
            stop.click(timeout=2_000)  # while the model has not answered yet
            expect(page.locator("#answer-text")).to_have_text("回答を止めました。", timeout=2_000)
            expect(stop).to_be_hidden()
            expect(page.locator("#ask-form button")).to_be_enabled()
