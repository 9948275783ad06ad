"""Past answers reopened on the search page (headless Chromium against a real API server): a
history entry shows its answer as first given, the address names it (reload, Back, a shared
link), and the next question follows up its conversation."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
QUESTION = "味噌ラーメンを作ったのはいつ？"
QUOTE = "夜は味噌ラーメンを作った。"


@pytest.fixture(scope="module")
def base(vault_url: str, usem3: Embedder) -> Iterator[str]:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3)) as base:
        yield base


def newest(base: str) -> dict[str, str]:
    return httpx.get(f"{base}/api/ai/qa/history", params={"limit": 1}).json()["data"][0]


def test_a_history_entry_reopens_its_answer_and_the_next_question_follows_it_up(
    base: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # the first question loads the query model
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#question", QUESTION)
        page.click("#ask-form button")
        expect(page.locator("a.citation").first).to_have_text("2026年1月10日の日記")
        href = page.locator("a.citation").first.get_attribute("href")
        confidence = page.locator("#confidence").inner_text()
        asked = newest(base)
        expect(page).to_have_url(f"{base}/?answer={asked['id']}")
        page.reload()  # the address names the answer: it opens again
        expect(page.locator("#answer-text blockquote")).to_contain_text(QUOTE)

        page.goto(base + "/")
        expect(page.locator("#answer")).to_be_hidden()
        entry = page.locator("#history a.history-entry").filter(has_text=QUESTION).first
        entry.focus()
        page.keyboard.press("Enter")
        expect(page).to_have_url(f"{base}/?answer={asked['id']}")
        expect(page.locator("#answer-question")).to_have_text(QUESTION)
        expect(page.locator("#answer-text blockquote")).to_contain_text(QUOTE)
        citation = page.locator("a.citation").first
        expect(citation).to_have_text("2026年1月10日の日記")
        expect(citation).to_have_attribute("href", href or "")  # the note, as when first given
        expect(page.locator("#confidence")).to_have_text(confidence)
        # The offline answerer is named in words, not by its internal name "extractive".
        expect(page.locator("#answer-meta")).to_contain_text(
            "の回答 · 引用のみ（LLM なし） · ノート"
        )
        expect(entry.locator(".meta")).to_contain_text(" · 引用のみ（LLM なし）")
        expect(entry).to_have_attribute("aria-current", "true")
        screenshot(page, Path(os.environ.get("KA_SHOTS", tmp_path)) / "reopened-answer.png")

        page.go_back()  # the plain page again: no answer, a new conversation
        expect(page.locator("#answer")).to_be_hidden()
        page.go_forward()
        expect(page.locator("a.citation").first).to_have_text("2026年1月10日の日記")

        page.fill("#question", "それは何曜日？")
        with page.expect_request("**/api/ai/qa") as request:
            page.click("#ask-form button")
        assert json.loads(request.value.post_data or "")["conversationId"] == asked["conversationId"]  # fmt: skip
        expect(page.locator("#history li .q").first).to_have_text("それは何曜日？")
        assert newest(base)["conversationId"] == asked["conversationId"]


def test_an_answer_that_found_nothing_links_the_notes_search_found(
    base: str, tmp_path: Path
) -> None:
    """A question in English over a Japanese note, or in other words than a note's: search finds
    the note by meaning, no sentence of it can be quoted. The page links the note all the same,
    and so does the answer reopened from the history."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # the first question loads the query model
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#question", "庭に何を植える？")
        page.click("#ask-form button")
        expect(page.locator("#answer-text")).to_have_text("情報が見つかりませんでした")
        expect(page.locator("#no-citations")).to_be_visible()
        related = page.locator("#related-notes a.citation")
        expect(related.first).to_have_text("Vegetable garden plan")
        # It opens at the section search ranked first (no section covers the question).
        expect(related.first).to_have_attribute("href", re.compile(r"^/notes/projects/garden\.md#"))
        expect(page.locator("#related")).to_contain_text("検索で見つかったノート")
        screenshot(page, Path(os.environ.get("KA_SHOTS", tmp_path)) / "answer-not-found.png")
        asked = newest(base)
        expect(page).to_have_url(f"{base}/?answer={asked['id']}")
        page.reload()
        expect(related.first).to_have_text("Vegetable garden plan")
        # The next answer, which cites its note, lists no related notes.
        page.fill("#question", QUESTION)
        page.click("#ask-form button")
        expect(page.locator("#citations a.citation").first).to_have_text("2026年1月10日の日記")
        expect(page.locator("#related")).to_be_hidden()


def test_an_answer_no_longer_in_the_history_says_so(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(f"{base}/?answer={uuid.uuid4()}")
        expect(page.locator("#answer-text")).to_have_text(
            "この回答は見つかりませんでした。履歴から消えたか、リンクが正しくありません。"
        )
        expect(page.locator("#citations li")).to_have_count(0)
        expect(page.locator("#answer-foot")).to_be_hidden()
        with page.expect_request("**/api/ai/qa") as request:  # a new conversation
            page.fill("#question", "味噌ラーメン")
            page.click("#ask-form button")
        assert json.loads(request.value.post_data or "")["conversationId"] is None


def test_a_follow_up_to_a_conversation_gone_from_the_history_starts_a_new_one(
    base: str, vault_url: str
) -> None:
    """The API refuses a conversation it does not hold (an old page's, or one deleted since):
    the page asks again as a new conversation and says so, rather than failing."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#question", QUESTION)
        page.click("#ask-form button")
        expect(page.locator("a.citation").first).to_have_text("2026年1月10日の日記")
        gone = newest(base)["conversationId"]
        with psycopg.connect(vault_url, autocommit=True) as conn:
            conn.execute("DELETE FROM qa.history WHERE conversation_id = %s::uuid", (gone,))
        page.fill("#question", "味噌ラーメンは何時ごろ？")
        page.click("#ask-form button")
        expect(page.locator("#answer-warnings")).to_contain_text(
            "前の会話が履歴に見つからないため、新しい会話として答えました。"
        )
        expect(page.locator("#answer-question")).to_have_text("味噌ラーメンは何時ごろ？")
        asked = newest(base)
        assert asked["question"] == "味噌ラーメンは何時ごろ？" and asked["conversationId"] != gone
        expect(page).to_have_url(f"{base}/?answer={asked['id']}")


def test_an_offline_answers_history_entry_opens_with_its_quote(base: str) -> None:
    """Every offline answer opens with the same sentence (no LLM, so the notes are quoted), and
    the history's two-line previews showed that sentence and little else, alike for each."""
    from playwright.sync_api import expect

    question = "夜に作ったラーメンは？"
    answered = httpx.post(f"{base}/api/ai/qa", json={"question": question}, timeout=120).json()
    assert answered["data"]["answer"].startswith("ノートの該当箇所です")
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        entry = page.locator("#history a.history-entry").filter(has_text=question).first
        expect(entry.locator(".a")).to_have_text(re.compile("^" + QUOTE))


def test_code_in_a_quoted_passage_is_shown_as_code_and_markup_as_text(
    base: str, vault_url: str
) -> None:
    from playwright.sync_api import expect

    entry = str(uuid.uuid4())
    answer = "ノートの該当箇所です。\n\n> `any` 型と `unknown` 型 <b>太字</b>\n\n— 型（`types.md`）"
    with psycopg.connect(vault_url, autocommit=True) as conn:  # an old entry: last in the list
        conn.execute(
            "INSERT INTO qa.history (id, conversation_id, question, answer, confidence, model,"
            " created_at) VALUES (%s, %s, 'anyとunknownの違いは？', %s, 'high', 'extractive',"
            " '2020-01-01')",
            (entry, str(uuid.uuid4()), answer),
        )
    try:
        with chromium_page(timeout_ms=60_000) as page:
            page.goto(f"{base}/?answer={entry}")
            quote = page.locator("#answer-text blockquote")
            expect(quote.locator("code")).to_have_text(["any", "unknown"])
            expect(quote).to_contain_text("<b>太字</b>")  # the note's text, not markup
            expect(page.locator("#answer-text p code")).to_have_text(["types.md"])
    finally:
        with psycopg.connect(vault_url, autocommit=True) as conn:
            conn.execute("DELETE FROM qa.history WHERE id = %s", (entry,))


def test_older_questions_are_listed_on_asking_for_more(server_url: str) -> None:
    """Only the last eight questions were listed, with no way to the ones before."""
    from playwright.sync_api import expect

    from tests.answer_support import sample_vault_database

    with sample_vault_database(server_url, None) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            for i in range(30):
                conn.execute(
                    "INSERT INTO qa.history (id, conversation_id, question, answer, sources,"
                    " confidence, model, tokens_used, created_at) VALUES (%s, %s, %s, '答え。',"
                    " '[]', 'low', 'extractive', 0, now() - %s * interval '1 minute')",
                    (str(uuid.uuid4()), str(uuid.uuid4()), f"質問{i}", i),
                )
        with api_server(url, Asker(LLMSettings())) as base, chromium_page() as page:
            page.goto(base + "/")
            entries, more = page.locator("#history .q"), page.locator("#history-more")
            expect(entries).to_have_count(8)
            expect(entries.first).to_have_text("質問0")  # the newest first
            expect(more).to_have_text("さらに 20 件を表示（全 30 件）")
            more.click()
            expect(entries).to_have_count(28)
            expect(more).to_have_text("さらに 2 件を表示（全 30 件）")
            more.click()
            expect(entries).to_have_count(30)
            expect(entries.last).to_have_text("質問29")
            expect(more).to_be_hidden()
