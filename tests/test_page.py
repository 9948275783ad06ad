"""The search page in headless Chromium against a real API server: search with highlighted
snippets grouped by note, ask a question, open a citation's note view, and a note written as
Obsidian notes are (tables, lists, wikilinks). Screenshots of the page are kept in ``docs/``
(``search-page.png``, ``note-view.png``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.embedders import Embedder
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page, screenshot
from tests.markdown_vault import HOSTILE, RAMEN, hostile_vault, markdown_vault
from tests.test_search import DIARY, DRAFT, LATEST

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
        # What the picture shows: notes found both ways and by meaning alone, with their sections.
        page.fill("#q", "ハイブリッド検索")
        page.click("#search-form button")
        expect(page.locator(".result .score").first).to_contain_text("両方")
        expect(page.locator(".result .score").last).to_contain_text("セマンティック")

        page.fill("#question", "夜に何のラーメンを作った？")
        page.click("#ask-form button")
        citation = page.locator("a.citation").first
        expect(citation).to_have_text("2026年1月10日の日記")
        expect(page.locator("#answer-text blockquote")).to_contain_text(
            "夜は味噌ラーメンを作った。"
        )
        expect(page.locator("#history li .q").first).to_have_text("夜に何のラーメンを作った？")
        screenshot(page, DOCS / "search-page.png", full_page=True)

        citation.click()  # opens the note at the section that answers
        page.wait_for_url("**/notes/**#%E6%96%99%E7%90%86")  # 料理
        expect(page.locator("#note-title")).to_have_text("2026年1月10日の日記")
        expect(page.locator("#note-body")).to_contain_text("夜は味噌ラーメンを作った。")
        expect(page.locator("#note-meta")).to_contain_text(DIARY)
        expect(page.locator("#similar li").first).to_be_visible()


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
        page.locator("#q").evaluate("q => { q.removeAttribute('maxlength'); q.value = '長'.repeat(2001); }")  # fmt: skip
        page.click("#search-form button")
        status = page.locator("#search-status")
        expect(status).to_contain_text("検索語が長すぎます。2,000 文字までにしてください。")
        assert "[object Object]" not in status.inner_text()


def test_a_phone_keeps_each_mode_and_badge_on_one_line(base: str) -> None:
    """At 390 px the modes broke mid-word ("ハイブリッ/ド"), the badge 確信度: 高 wrapped."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(base + "/?q=%E3%83%A9%E3%83%BC%E3%83%A1%E3%83%B3&mode=keyword")
        expect(page.locator(".result").first).to_be_visible()
        page.fill("#question", "夜に何のラーメンを作った？")
        page.click("#ask-form button")
        expect(page.locator("#confidence")).not_to_be_empty()
        labels = [
            box for label in page.locator(".modes label").all() if (box := label.bounding_box())
        ]
        line = page.locator(".modes label").first.evaluate("l => parseFloat(getComputedStyle(l).lineHeight)")  # fmt: skip
        assert len({round(b["y"]) for b in labels}) == 1  # one row
        assert all(b["height"] < 2 * line for b in labels)  # each on one line
        badge = page.locator("#confidence").evaluate("b => [b.getClientRects().length, b.scrollHeight, parseFloat(getComputedStyle(b).lineHeight)]")  # fmt: skip
        assert badge[1] < 2 * badge[2]
        scores = page.locator(".section .score").evaluate_all("s => s.map(e => e.getClientRects().length)")  # fmt: skip
        assert scores and all(n == 1 for n in scores)


def test_each_hit_says_in_japanese_which_search_found_it(base: str) -> None:
    """The modes are ハイブリッド, キーワード and セマンティック, but each hit was marked
    hybrid, keyword or vector."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(
            base + "/?q=%E3%83%8F%E3%82%A4%E3%83%96%E3%83%AA%E3%83%83%E3%83%89%E6%A4%9C%E7%B4%A2"
        )  # ハイブリッド検索, hybrid
        expect(page.locator(".result").first).to_be_visible()
        badges = page.locator(".section .score")
        texts = badges.all_inner_texts()
        assert texts and all(
            re.fullmatch(r"(両方|キーワード|セマンティック) · \d\.\d{3}", t) for t in texts
        ), texts
        assert {t.split(" ")[0] for t in texts} >= {"両方", "セマンティック"}
        expect(badges.first).to_have_attribute(
            "title", "キーワードとセマンティックの両方で見つかった箇所"
        )


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


def test_a_store_with_nothing_to_fix_shows_no_notice(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        with page.expect_response(lambda r: "/api/status" in r.url) as status:
            page.goto(base + "/")
        assert status.value.ok  # the page asked, and all is well: no notice
        assert status.value.json()["data"]["problems"] == 0
        page.wait_for_load_state("networkidle")
        expect(page.locator("#store-status")).to_be_hidden()


def test_obsidians_operators_and_exclusions_work_in_the_search_box(base: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        status = page.locator("#search-status")
        page.fill("#q", "tag:日記")  # alone: the notes carrying the tag, as the tag list shows
        page.press("#q", "Enter")
        expect(status).to_have_text("#日記 のノート 2 件（新しい順）")
        page.fill("#q", "path:projects/ plan 設計")
        page.get_by_text("キーワード", exact=True).click()
        expect(status).to_contain_text("件のノート（")
        links = page.locator(".result h3 a").evaluate_all("a => a.map(e => e.getAttribute('href'))")  # fmt: skip
        assert links and all(href.startswith("/notes/projects/") for href in links), links
        page.fill("#q", "plan 設計")  # without the operator, notes elsewhere match too
        page.press("#q", "Enter")
        expect(page.locator(".result h3 a[href^='/notes/2025']").first).to_be_visible()
        expect(page.locator(".result h3 a[href^='/notes/projects/']").first).to_be_visible()
        page.fill("#q", "plan 設計 -path:projects -tag:日記")  # as in Obsidian: leave them out
        page.press("#q", "Enter")
        expect(page.locator(".result h3 a[href^='/notes/projects/']")).to_have_count(0)
        expect(page.locator(".result h3 a[href^='/notes/2025']").first).to_be_visible()
        links = page.locator(".result h3 a").evaluate_all("a => a.map(e => e.getAttribute('href'))")  # fmt: skip
        assert not [h for h in links if h.startswith("/notes/日記/")], links
        page.fill("#q", "path:projects/ -tag:books")  # operators alone: the notes they keep
        page.press("#q", "Enter")
        expect(status).to_have_text("「path:projects/ -tag:books」のノート 1 件（新しい順）")
        expect(page.locator(".result h3 a")).to_have_text(["Vegetable garden plan"])
        page.fill("#q", "-path:projects -tag:日記")  # exclusions alone: every other note, said so
        page.press("#q", "Enter")
        expect(status).to_contain_text(
            "「-path:projects -tag:日記」で除外したもの以外のすべてのノート"
        )
        expect(page.locator(".result h3 a[href^='/notes/projects/']")).to_have_count(0)
        expect(page.locator(".result h3 a[href^='/notes/2025']").first).to_be_visible()
        page.fill("#q", "tag:#")  # a tag of "#" alone names none: no list of a tag "#"
        page.press("#q", "Enter")
        expect(status).to_have_text("検索できませんでした: tag: や path:、file:、- の後に値を書いてください（例: tag:日記、-雪）。")  # fmt: skip
        page.fill("#q", "設計 -の")
        page.press("#q", "Enter")
        expect(status).to_have_text("検索できませんでした: 助詞や記号だけでは除外できません。- の後に言葉を書いてください（例: -雪）。")  # fmt: skip
        page.fill("#q", "旅行 OR tag:日記")  # an OR joining a word and an operator: refused
        page.press("#q", "Enter")
        expect(status).to_have_text("検索できませんでした: OR は同じ種類の 2 つ（tag:旅行 OR tag:出張、path: どうし、[プロパティ] どうし、言葉どうし）をつなぎます。この OR を外すか、別々に検索してください。")  # fmt: skip
        page.fill("#q", '設計 "の"')  # a quoted phrase of a particle alone finds nothing to keep
        page.press("#q", "Enter")
        expect(status).to_have_text('検索できませんでした: 助詞や記号だけのフレーズでは探せません。"" の中に言葉を書いてください（例: "東京 大学"）。')  # fmt: skip


def test_a_refused_question_says_why_in_japanese(base: str) -> None:
    """A question refused while its answer streams comes as an event with no HTTP status: the
    panel says why in the page's words, not in the server's English."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        page.fill("#question", "tag:日記")
        page.click("#ask-form button")
        expect(page.locator("#answer-text")).to_have_text(
            "答えられませんでした: tag: や path:、file:、[プロパティ]、- での除外のほかに、探す言葉も入力してください（例: 旅行 -tag:日記）。"
        )


@pytest.fixture(scope="module")
def notes_base(
    server_url: str, usem3: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The API over the sample vault plus a note with tables, lists and wikilinks."""
    vault = markdown_vault(tmp_path_factory.mktemp("notes"))
    with sample_vault_database(server_url, usem3, vault) as url:
        with api_server(url, Asker(LLMSettings(), embedder=usem3)) as base:
            yield base


def test_the_note_view_shows_tables_lists_and_wikilinks(notes_base: str) -> None:
    """The note view showed only headings, paragraphs and code: tables, lists, task lists and
    wikilinks came out as raw Markdown."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(notes_base + "/notes/" + RAMEN)
        body = page.locator("#note-body")
        expect(body.locator("table").first.locator("tr")).to_have_count(4)
        expect(body.locator("th").first).to_have_text("店")
        tasks = body.locator(".contains-task-list input[type=checkbox]")
        expect(tasks).to_have_count(3)
        expect(tasks.first).to_be_checked()
        expect(body.locator("ol > li")).to_have_count(2)
        expect(body.locator("blockquote code")).to_have_text("味噌")
        expect(body.locator(".wikilink.missing")).to_have_text("旭川ラーメンのメモ")
        expect(body).not_to_contain_text("created:")  # the frontmatter is not in the body
        expect(page.locator("#similar li").first).to_be_visible()
        screenshot(page, DOCS / "note-view.png", full_page=True)

        body.get_by_role("link", name="1月10日の日記").click()
        page.wait_for_url("**/2026-01-10.md")
        expect(page.locator("#note-title")).to_have_text("2026年1月10日の日記")


def test_script_in_a_note_never_runs_in_the_page(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Raw HTML renders through its allowlist (a script left out, a javascript: address and an
    onerror handler dropped), a javascript: link shows as its Markdown, and a wikilink whose name
    tries to break out of its attribute is a plain (missing) link: hovering it runs nothing."""
    from playwright.sync_api import expect

    vault = hostile_vault(tmp_path_factory.mktemp("hostile"))
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(base + "/notes/" + HOSTILE)
        expect(page.locator("#note-body")).to_contain_text("[リンク](javascript:")
        expect(page.locator("#note-body")).not_to_contain_text('window.hacked = "script"')
        expect(page.locator("#note-body a", has_text="a タグ")).not_to_have_attribute("href", re.compile(".*"))  # fmt: skip
        page.locator("#note-body .wikilink.missing").hover()
        page.wait_for_load_state("networkidle")  # an injected image would have failed by now
        assert page.evaluate("window.hacked") is None


def test_a_wide_table_scrolls_by_itself_on_a_phone(notes_base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(notes_base + "/notes/" + RAMEN)
        wide = page.locator("#note-body .table-wrap").last
        expect(wide).to_contain_text("11:00-21:00")
        assert wide.evaluate("e => e.scrollWidth > e.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_an_older_version_is_shown_as_history_linked_both_ways(base: str, tmp_path: Path) -> None:
    """The version a newer note names in ``previous`` opens with a notice linking the newer
    one, which lists it among its earlier versions."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    with chromium_page(timeout_ms=60_000) as page:
        page.goto(f"{base}/notes/{DRAFT}")
        notice = page.locator("#note-superseded")
        expect(notice).to_contain_text("この版は新しい版に置き換えられています")
        expect(page.locator("#note-title")).to_have_text("RAG設計メモ（初版）")
        # not searched, so nothing similar of its own: the newer version's, in the page's words
        expect(page.locator("#similar")).to_have_text(
            f"古い版です。似ているノートは新しい版（{LATEST}）で見られます"
        )
        expect(page.locator("#backlinks")).to_have_text("ありません")
        screenshot(page, tmp_path / "note-older-version.png")
        notice.get_by_role("link", name=LATEST).click()
        page.wait_for_url(f"**/notes/{LATEST}")
        expect(notice).to_be_hidden()
        versions = page.locator("#note-versions")
        expect(versions).to_have_text("以前の版: RAG設計メモ（初版）")
        versions.get_by_role("link").click()
        page.wait_for_url(f"**/notes/{DRAFT}")
        expect(versions).to_be_hidden()


def test_a_store_without_vectors_says_so_in_japanese(server_url: str, tmp_path: Path) -> None:
    """Notes synced with --no-embeddings: keyword search works, and what needs vectors (similar
    notes, semantic search) says in the page's words how to get them, not the server's English."""
    from playwright.sync_api import expect

    vault = markdown_vault(tmp_path / "notes")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as keyword_base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        said = "ノートのベクトルがまだありません。knowledge-assets update を実行すると"
        page.goto(keyword_base + "/notes/" + RAMEN)
        expect(page.locator("#note-title")).to_be_visible()
        expect(page.locator("#similar")).to_contain_text(said)
        page.goto(keyword_base + "/")
        page.fill("#q", "ラーメン")
        page.get_by_text("セマンティック", exact=True).click()
        expect(page.locator("#search-status")).to_contain_text(said)
