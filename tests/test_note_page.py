"""The note view of a documentation folder kept as a vault, in headless Chromium against a real
API server: long words wrap on a phone, footnotes and lists show as written, links open the note
beside and land on the heading they name, the back link returns to the search, a note whose file
is now rejected says so, and an address with a stray ``%`` still opens its note."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page, screenshot
from tests.markdown_vault import (
    BESIDE,
    CALLOUTS,
    EMBEDS,
    GUIDE,
    IMAGES,
    LONG,
    LONG_NOTE,
    REJECTED,
    add_images,
    docs_vault,
    png,
)
from tests.test_search import ingest

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
SEARCH = f"/?q={LONG}&mode=keyword"


@pytest.fixture(scope="module")
def store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The store of the documentation folder, after REJECTED got frontmatter YAML cannot read:
    it keeps its last good version and records why the file there now is rejected; yields the
    store's URL and the vault folder."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    vault = add_images(docs_vault(tmp_path_factory.mktemp("docs")))
    with sample_vault_database(server_url, None, vault) as url:
        (vault / REJECTED).write_text("---\ntitle: [壊れた\n---\n本文。\n", encoding="utf-8")
        os.utime(vault / REJECTED, ns=(7, 7))
        ingest(url, None, vault)
        yield url, vault


@pytest.fixture(scope="module")
def base(store: tuple[str, Path]) -> Iterator[str]:
    """The API over that store, on loopback without a token."""
    with api_server(store[0], Asker(LLMSettings()), vault=store[1]) as base:
        yield base


def note(base: str, path: str) -> str:
    return base + "/notes/" + quote(path)


def page_width(page: Page) -> int:
    """How wide the page is laid out: wider than the window, it scrolls sideways."""
    width: int = page.evaluate("document.documentElement.scrollWidth")
    return width


def test_long_words_wrap_instead_of_widening_a_phone_page(base: str) -> None:
    """A note title, heading, list item or search result path with a long unbroken word made the
    page wider than the phone: it scrolled sideways."""
    from playwright.sync_api import expect

    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(note(base, GUIDE))
        expect(page.locator("#note-title")).to_contain_text(LONG)
        expect(page.locator("#note-body ul li").first).to_have_text(LONG)
        expect(page.locator("#similar li").first).to_be_visible()
        assert page_width(page) == 390
        page.goto(base + SEARCH)
        expect(page.locator(".result .path", has_text=LONG_NOTE)).to_be_visible()
        assert page_width(page) == 390


def test_footnotes_and_a_list_of_plain_and_task_items_show_as_written(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, GUIDE))
        body = page.locator("#note-body")
        expect(body.locator("sup.footnote-ref a")).to_have_text("[1]")
        expect(body.locator(".footnotes li")).to_contain_text("tsconfig のリファレンス。")
        expect(body).not_to_contain_text("prettier-ignore")
        expect(body).not_to_contain_text("[^1]")
        items = body.locator("ul").first.locator("li")
        bullets = items.evaluate_all("items => items.map(i => getComputedStyle(i).listStyleType)")
        assert bullets == ["disc", "none"]  # the task's checkbox stands for its bullet


def test_callouts_show_as_titled_boxes_of_their_kind(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, CALLOUTS))
        boxes = page.locator("#note-body .callout")
        expect(boxes.locator(".callout-title")).to_have_text(["使い方のコツ", "警告", "閉じた問い"])
        expect(boxes.nth(1)).to_have_text("警告\n古い設定です。")  # the %% comment left out
        colours = boxes.evaluate_all(
            "boxes => boxes.map(b => [getComputedStyle(b).borderLeftColor, getComputedStyle(b).backgroundColor])"
        )
        assert colours[0] != colours[1] and "rgba(0, 0, 0, 0)" not in colours[0]


def test_a_folded_callout_opens_on_a_click(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, CALLOUTS))
        folded = page.locator("#note-body details.callout")
        answer = folded.get_by_text("開くと見える答え。")
        expect(answer).to_be_hidden()
        folded.locator("summary").click()
        expect(answer).to_be_visible()


def test_a_hits_snippet_leaves_out_callout_and_comment_markup(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/?q=%E7%9F%AD%E3%81%8F%E6%9B%B8%E3%81%8F&mode=keyword")  # 短く書く
        snippet = page.locator(".result .snippet").first
        expect(snippet).to_contain_text("使い方のコツ 短く書く。")
        expect(snippet).not_to_contain_text("[!tip]")
        expect(page.locator(".result .snippet", has_text=">")).to_have_count(0)


def test_an_embedded_note_shows_in_place(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, EMBEDS))
        box = page.locator("#note-body .embed")
        expect(box.locator(".embed-title a")).to_have_text("callouts")
        expect(box.locator(".callout-title")).to_have_text(["使い方のコツ", "警告", "閉じた問い"])
        paragraphs = page.locator("#note-body > p").all_inner_texts()
        assert paragraphs == ["前の段落。", "後の段落。"]  # the box stands between them
        box.locator(".embed-title a").click()
        page.wait_for_url("**/notes/qa/callouts.md")


def test_a_tag_lists_the_notes_carrying_it(base: str) -> None:
    """A note's tags, the frontmatter's and those in its text, open the list of their notes."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, CALLOUTS))
        chips = page.locator("#note-tags a.tag")
        expect(chips).to_have_text(["#書式", "#囲みの例"])
        chips.nth(1).click()
        expect(page).to_have_url(re.compile(r"/\?tag=%E5%9B%B2%E3%81%BF%E3%81%AE%E4%BE%8B$"))
        expect(page.locator("#search-status")).to_have_text("#囲みの例 のノート 1 件（新しい順）")
        expect(page.locator("#results .result h3 a")).to_have_text(["囲み"])
        page.locator("#results .result h3 a").click()
        page.wait_for_url("**/notes/qa/callouts.md")


def test_a_notes_properties_show_under_its_title_and_list_the_notes_that_have_them(
    base: str, tmp_path: Path
) -> None:
    """The frontmatter's other properties (not its tags) show by name, an empty one said so;
    a name opens the notes that have it, as [status] typed in the search box does."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, CALLOUTS))
        block = page.locator("#note-properties")
        expect(block.locator("dt")).to_have_text(["reviewed", "status"])
        expect(block.locator("dd")).to_have_text(["（空）", "下書き"])
        screenshot(page, tmp_path / "note-properties.png")
        block.get_by_role("link", name="status").click()
        expect(page).to_have_url(re.compile(r"/\?q=%5Bstatus%5D"))
        expect(page.locator("#search-status")).to_have_text("「[status]」のノート 1 件（新しい順）")
        expect(page.locator("#results .result h3 a")).to_have_text(["囲み"])
        page.goto(note(base, EMBEDS))  # a note without other properties shows no block
        expect(page.locator("#note-title")).to_have_text("埋め込み")
        expect(block).to_be_hidden()


def test_links_open_the_note_beside_and_land_on_the_heading(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, GUIDE))
        page.locator("#note-body a", has_text="隣の README").click()
        page.wait_for_url("**/notes/" + BESIDE)
        expect(page.locator("#note-title")).to_have_text("サブフォルダの README")
        page.go_back()
        page.locator("#note-body a", has_text="使い方へ").click()
        page.wait_for_url("**/notes/" + BESIDE + "#h-*")
        expect(page.locator("#note-body h3", has_text="使い方")).to_be_in_viewport()


def test_back_to_a_note_returns_to_where_the_reader_was_in_it(base: str) -> None:
    """The note arrives after the page has loaded: Back from a link in it left the reader at
    its top whenever the browser's own attempt to scroll back came before the note (a long
    one, a busy server). Here the browser makes none, so the page's own is what shows."""
    from playwright.sync_api import expect

    with chromium_page(width=390, height=300, timeout_ms=60_000) as page:
        page.add_init_script("history.scrollRestoration = 'manual'")
        page.goto(note(base, GUIDE))
        link = page.locator("#note-body a", has_text="隣の README")
        link.scroll_into_view_if_needed()
        assert page.evaluate("scrollY") > 0  # the link is below the first screen
        link.click()
        page.wait_for_url("**/notes/" + BESIDE)
        page.go_back()
        expect(page.locator("#note-title")).to_contain_text("設定ガイド")
        expect(link).to_be_in_viewport()


def test_a_similar_notes_preview_ends_in_an_ellipsis_only_when_cut(base: str) -> None:
    """Every preview ended in "…", a short note's whole text too; and one opening with the
    note's H1 said its title twice, under the title's link."""
    from playwright.sync_api import expect

    short, long = "短いノートです。", "長い" * 60
    similar = [
        {"id": f"{i}.md", "source": "local", "title": f"ノート{i}", "tags": [], "preview": text}
        for i, text in enumerate((f"# ノート0\n\n{short}", long))
    ]
    with chromium_page(timeout_ms=60_000) as page:
        page.route("**/api/ai/similar/**", lambda route: route.fulfill(json={"success": True, "count": 2, "data": similar}))  # fmt: skip
        page.goto(note(base, GUIDE))
        previews = page.locator("#similar .preview")
        expect(previews).to_have_text([short, "長い" * 40 + "…"])


def test_a_hits_section_opens_the_note_at_that_section(base: str) -> None:
    """A hit far down a long note opened the note at its top, the passage a scroll away."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/?q=" + quote("ここから使い方") + "&mode=keyword")
        section = page.locator(".result .section .heading a", has_text="使い方").first
        expect(section).to_have_text("サブフォルダの README › 使い方")
        section.click()
        page.wait_for_url("**/notes/" + quote(BESIDE) + "#" + quote("使い方"))
        expect(page.locator("#note-body h3", has_text="使い方")).to_be_in_viewport()
    # A heading whose slug differs from its text (capitals, a dot) is found by its text.
    with chromium_page(width=390, height=250, timeout_ms=60_000) as page:
        page.goto(note(base, GUIDE) + "#" + quote(f"{LONG}の見出し"))
        heading = page.locator("#note-body h3", has_text="の見出し")
        expect(heading).to_be_in_viewport()
        assert page.evaluate("scrollY") > 0


def test_the_back_link_returns_to_the_search_the_note_was_opened_from(base: str) -> None:
    """It led to the empty home page."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + SEARCH)
        page.locator(".result h3 a", has_text="設定ガイド").click()
        page.wait_for_url("**/notes/**")
        page.click("#back")
        expect(page.locator(".result h3 a").first).to_be_visible()
        assert page.url == base + SEARCH
        page.go_forward()  # Back went through the history: the note is the next page
        expect(page.locator("#note-title")).to_contain_text("設定ガイド")
        page.locator("#note-body a", has_text="隣の README").click()
        page.wait_for_url("**/notes/" + BESIDE)
        page.click("#back")  # from a note opened from a note: this tab's search
        page.wait_for_url(base + SEARCH)
        expect(page.locator(".result h3 a").first).to_be_visible()
        browser = page.context.browser
        assert browser is not None
        elsewhere = browser.new_page()  # a tab that searched nothing
        elsewhere.goto(note(base, GUIDE))
        expect(elsewhere.locator("#back")).to_have_attribute("href", "/")


def test_a_note_whose_file_is_now_rejected_says_so(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, REJECTED))
        expect(page.locator("#note-body")).to_contain_text("最後に読めた本文。")
        warning = page.locator("#note-rejected")
        expect(warning).to_be_visible()
        expect(warning).to_contain_text("malformed YAML frontmatter")
        expect(warning).to_contain_text("最後に読み込めた版")
        page.goto(note(base, GUIDE))
        expect(page.locator("#note-title")).to_contain_text(LONG)
        expect(warning).to_be_hidden()


def test_a_percent_sign_that_starts_no_escape_is_part_of_the_name(base: str) -> None:
    """decodeURIComponent threw "URI malformed" and the page stayed empty."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/notes/100%.md")
        expect(page.locator("#note-title")).to_have_text("百パーセント")


def test_the_vaults_images_show_and_one_outside_it_says_so(base: str) -> None:
    """Local images showed as greyed links to missing notes, raw HTML as its tags."""
    from playwright.sync_api import expect

    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(note(base, IMAGES))
        body = page.locator("#note-body")
        images = body.locator("img.vault-image")
        expect(images).to_have_count(3)  # beside the note, by name, and in a <figure>
        images.first.scroll_into_view_if_needed()
        page.wait_for_function("() => [...document.querySelectorAll('#note-body img')].every(i => i.complete && i.naturalWidth > 0)")  # fmt: skip
        assert images.first.evaluate("i => i.naturalWidth") == 40
        assert images.nth(1).evaluate("i => i.getBoundingClientRect().width") == 30  # |30
        expect(body.locator(".image-missing")).to_have_text("画像はボールトにありません: outside.png外の図")  # fmt: skip
        expect(body.locator(".wikilink.missing")).to_have_text(["any型"])  # a note, not an image
        expect(body.locator("ruby rt")).to_have_text("かんじ")
        expect(body.locator("kbd")).to_have_text(["Ctrl", "C"])
        expect(body.locator("figcaption")).to_have_text("図の説明")
        expect(body).not_to_contain_text("<ruby>")
        expect(body.locator("h2")).to_have_count(0)  # the H1 repeating the title is left out
        expect(page.locator("#note-title")).to_have_text("画像")
        assert page_width(page) == 390
        # Inline code was 11.7px beside 16px text: a lone "monospace" shrinks it to 13px first.
        sizes = body.locator("code").first.evaluate("c => [c, c.parentElement].map(e => parseFloat(getComputedStyle(e).fontSize))")  # fmt: skip
        assert sizes[0] == pytest.approx(0.9 * sizes[1], abs=0.1)


def test_with_a_token_the_vaults_images_load_through_it(store: tuple[str, Path]) -> None:
    """An <img> cannot send the bearer token: with one, the page fetches each image with it
    and shows it from a data: address."""
    from playwright.sync_api import expect

    url, vault = store
    with (
        api_server(url, Asker(LLMSettings()), token="s3cret-token", vault=vault) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(note(base, IMAGES) + "?token=s3cret-token")
        images = page.locator("#note-body img.vault-image")
        expect(images).to_have_count(3)
        page.wait_for_function("() => [...document.querySelectorAll('#note-body img.vault-image')].every(i => i.src.startsWith('data:image/') && i.complete && i.naturalWidth > 0)")  # fmt: skip
        assert images.first.evaluate("i => i.naturalWidth") == 40
        # The same address fetched without the token is refused: the page's fetch sent it.
        status = page.evaluate(
            "fetch('/api/attachments/qa/img/diagram.png', {cache: 'no-store'}).then(r => r.status)"
        )
        assert status == 401


def test_the_home_page_says_which_files_need_fixing(base: str, tmp_path: Path) -> None:
    """A file the store rejected was only named in run logs and the command line."""
    from playwright.sync_api import expect

    with chromium_page(width=390, height=844, timeout_ms=60_000) as page:
        page.goto(base + "/")
        notice = page.locator("#store-status")
        expect(notice).to_be_visible()
        expect(notice.locator("summary")).to_have_text(["読み込めなかったファイル 1 件"])
        notice.locator("summary").click()
        expect(notice.locator("li")).to_have_text([re.compile(re.escape(REJECTED) + " malformed YAML frontmatter")])  # fmt: skip
        assert page_width(page) == 390
        screenshot(page, tmp_path / "status-phone.png", full_page=False)


def test_a_note_with_warnings_shows_them_where_the_home_page_links(
    server_url: str, tmp_path: Path
) -> None:
    """The home page listed a note's duplicate frontmatter key and linked the note, whose view
    then said nothing of it."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "dup.md").write_text(
        "---\ntitle: 一\ntitle: 二\n---\n# 二\n\n本文。\n", encoding="utf-8"
    )
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings()), vault=vault) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(base + "/")
        page.locator("#store-status summary").click()
        page.locator("#store-status li a").click()
        expect(page.locator("#note-title")).to_have_text("二")
        expect(page.locator("#note-warnings")).to_have_text(
            "frontmatter の警告: duplicate frontmatter key `title` (lines 2 and 3): the last value is kept;"
            " Obsidian shows the note's properties as invalid"
        )


def test_a_note_lists_the_notes_linking_to_it(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, CALLOUTS))  # embedded by EMBEDS
        expect(page.locator("#backlinks li a")).to_have_text(["埋め込み"])
        page.locator("#backlinks li a").click()
        expect(page.locator("#note-title")).to_have_text("埋め込み")
        expect(page.locator("#backlinks li")).to_have_text(["ありません"])


def test_a_path_of_dot_segments_fetches_nothing_outside_the_notes(base: str) -> None:
    """/notes/..%2F..%2Fetc%2Fpasswd made the page fetch /etc/passwd."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(base + "/notes/..%2F..%2Fetc%2Fpasswd")
        expect(page.locator("#note-title")).to_have_text("ノートを表示できません")
        expect(page.locator("#note-body")).to_contain_text("../../etc/passwd")
        page.wait_for_load_state("networkidle")
        assert not [u for u in asked if "passwd" in u and "/notes/..%2F" not in u], asked


def test_a_missing_note_says_so_in_japanese_without_empty_side_panels(base: str) -> None:
    """The page is Japanese, but a path naming no note showed the API's English error under
    its Japanese title, beside the headings of similar notes and links with nothing under them."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(note(base, "どこにもない/メモ.md"))
        expect(page.locator("#note-title")).to_have_text("ノートを表示できません")
        expect(page.locator("#note-body")).to_have_text(
            "「どこにもない/メモ.md」というノートはありません。名前や場所が変わったか、"
            "下書きか削除されたノートです。検索から開き直してください。"
        )
        expect(page.locator("#note-view aside")).to_be_hidden()


def test_snippets_show_links_code_and_html_as_their_text(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/?q=unknown&mode=keyword")
        snippet = page.locator(".result .snippet").first
        expect(snippet).to_contain_text("型は any型 と unknown を 比べる")
        for raw in ("](", "`", "<b>", "any.md"):
            expect(snippet).not_to_contain_text(raw)


def test_ctrl_enter_asks_and_the_focus_goes_to_the_answer(base: str) -> None:
    """Enter is a new line; Ctrl+Enter did nothing, and after asking the focus fell to <body>."""
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + "/")
        expect(page.locator("#ask-hint")).to_contain_text("Ctrl+Enter")
        question = page.locator("#question")
        question.press_sequentially("一行目")
        question.press("Enter")
        question.press_sequentially("二行目")
        expect(question).to_have_value("一行目\n二行目")
        expect(page.locator("#answer")).to_be_hidden()
        question.press("Control+Enter")
        expect(page.locator("#answer-question")).to_have_text("一行目\n二行目")
        assert page.evaluate("document.activeElement.id") == "answer"


def test_a_refused_query_says_why_in_japanese_and_a_blank_one_clears_it(base: str) -> None:
    from playwright.sync_api import expect

    with chromium_page(timeout_ms=60_000) as page:
        page.goto(base + SEARCH)
        expect(page.locator(".result").first).to_be_visible()
        expect(page.locator("#q")).to_have_attribute("maxlength", "2000")
        page.locator("#q").evaluate("q => { q.removeAttribute('maxlength'); q.value = '長'.repeat(2001); }")  # fmt: skip
        page.click("#search-form button")
        status = page.locator("#search-status")
        expect(status).to_have_text("検索できませんでした: 検索語が長すぎます。2,000 文字までにしてください。")  # fmt: skip
        page.fill("#q", "   ")
        page.click("#search-form button")  # the refusal goes; what to type is said instead
        expect(status).to_have_text("検索語を入力してください（例: 会議メモ、tag:日記）。")
        expect(page.locator("#results .result")).to_have_count(0)


def test_a_web_image_loads_from_its_address(server_url: str, tmp_path: Path) -> None:
    """The page's policy let images load from the server only: every `![x](https://…)` of a
    note showed as a broken image, where Obsidian shows it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    picture = png(24, 12)

    class Picture(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(picture)))
            self.end_headers()
            self.wfile.write(picture)

        def log_message(self, *args: object) -> None:
            pass

    web = ThreadingHTTPServer(("127.0.0.1", 0), Picture)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    address = f"http://127.0.0.1:{web.server_address[1]}/pic.png"
    (tmp_path / "web.md").write_text(f"# ウェブの図\n\n![ウェブ]({address})\n", encoding="utf-8")
    try:
        with (
            sample_vault_database(server_url, None, tmp_path) as url,
            api_server(url, Asker(LLMSettings()), vault=tmp_path) as base,
            chromium_page() as page,
        ):
            page.goto(note(base, "web.md"))
            image = page.locator("#note-body img")
            page.wait_for_function("() => document.querySelector('#note-body img')?.complete")
            assert image.evaluate("i => i.naturalWidth") == 24
    finally:
        web.shutdown()
        web.server_close()
