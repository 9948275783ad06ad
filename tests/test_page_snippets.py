"""The search page's snippets in headless Chromium: a searched word is highlighted where the note
says it, never inside the escaping of the characters around it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knowledge_assets.answer import Asker, LLMSettings
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING),
]
# Each searched word is also in the escaping of a character beside it (&#39; &amp; &lt; &quot;).
TEXT = 'Tom\'s 39 cats, R&D amp, 1 < 2 lt, "quot" の記録'
TERMS = ["39", "amp", "lt", "quot"]


def test_a_searched_word_is_highlighted_in_the_text_not_in_its_escaping(
    server_url: str, tmp_path: Path
) -> None:
    """'39' was also found in the &#39; that shows an apostrophe, and split it: the snippet
    read "Tom&#39;s"; so did 'amp' in R&D, 'lt' in 1 < 2 and 'quot' around a quote."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "cats.md").write_text(f"# 猫\n\n{TEXT}\n", encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        for term in TERMS:
            page.goto(f"{base}/?q={term}&mode=keyword")
            snippet = page.locator(".result .snippet").first
            expect(snippet).to_have_text(TEXT)
            marks = snippet.locator("mark").all_text_contents()
            assert marks == [term], (term, marks)


def test_a_snippet_leaves_out_the_text_of_scripts_and_styles(
    server_url: str, tmp_path: Path
) -> None:
    """The note view never shows a <script>'s or <style>'s text; the snippet showed it."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    note = (
        "# 庭\n\n水やりの記録 <style>.x { color: red }</style>を付けた。\n\n"
        "<script>\nconst 隠し = 1;\n</script>\n\n`<style>` の後も記録は続く。\n"
    )
    (vault / "garden.md").write_text(note, encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(f"{base}/?q=記録&mode=keyword")
        snippet = page.locator(".result .snippet").first
        expect(snippet).to_have_text("水やりの記録 を付けた。 の後も記録は続く。")


def test_a_notes_hits_past_the_first_three_are_named_with_links(
    server_url: str, tmp_path: Path
) -> None:
    """The status counted every hit, but a note showed three and said nothing of the others."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    sections = "".join(f"## 第{i}段落\n\n{i}日目も雪が降った。\n\n" for i in range(1, 6))
    (vault / "snow.md").write_text(f"# 雪の記録\n\n{sections}", encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(f"{base}/?q=雪&mode=keyword")
        expect(page.locator("#search-status")).to_contain_text("1 件のノート（5 箇所）")
        expect(page.locator(".result .section")).to_have_count(3)
        more = page.locator(".result .more-hits")
        expect(more).to_have_text(
            re.compile(r"^このノートのほかの一致 2 箇所: 第\d段落、第\d段落$")
        )
        shown = page.locator(".result .section .heading").all_inner_texts()
        named = more.locator("a").all_inner_texts()
        assert sorted([h.split(" › ")[-1] for h in shown] + named) == [f"第{i}段落" for i in range(1, 6)]  # fmt: skip
        more.locator("a").first.click()
        page.wait_for_url(re.compile(r"/notes/snow\.md#"))
        expect(page.locator("#note-body h3", has_text=named[0])).to_be_in_viewport()


def test_a_long_note_of_many_matches_leaves_room_for_the_other_notes(
    server_url: str, tmp_path: Path
) -> None:
    """Two dozen sections of one note matched best: twenty passages were that note's alone, and
    the page showed one note. By note, the others are listed too, the long note's further
    sections linked under its first three."""
    from playwright.sync_api import expect

    vault = tmp_path / "vault"
    vault.mkdir()
    long = "# 梅雨の記録\n\n" + "".join(f"## 第{i}週\n\n梅雨。梅雨の雨。\n\n" for i in range(1, 25))
    (vault / "long.md").write_text(long, encoding="utf-8")
    for name, place in (("a", "旅先"), ("b", "庭")):
        text = f"# {place}\n\n{place}は梅雨だったが、それ以外の話が長く続いた一日の記録。\n"
        (vault / f"{name}.md").write_text(text, encoding="utf-8")
    with (
        sample_vault_database(server_url, None, vault) as url,
        api_server(url, Asker(LLMSettings())) as base,
        chromium_page(timeout_ms=60_000) as page,
    ):
        page.goto(f"{base}/?q=梅雨&mode=keyword")
        expect(page.locator(".result")).to_have_count(3)
        first = page.locator(".result").first
        expect(first.locator(".section")).to_have_count(3)
        expect(first.locator(".more-hits a")).to_have_count(7)  # its best and 9 more: 3 + 7
        expect(page.locator("#search-status")).to_contain_text("3 件のノート（12 箇所）")
