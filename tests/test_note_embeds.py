"""Embedded notes in the note view: ``![[note]]`` and ``![[note#heading]]`` alone in a paragraph
show the note or its section in a box, one level deep and within bounds; anything else stays a
link."""

from __future__ import annotations

import re

import pytest

from knowledge_assets.api.markdown import render_note
from knowledge_assets.api.markdown_embeds import MAX_EMBED_CHARS, MAX_EMBEDS, section
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks

NOTES = {
    "a.md": "# A\n\n本文A\n\n## 節1\n節1の本文\n### 小節\n小節の本文\n## 節2\n節2の本文 ^blk\n",
    "b.md": "# B\n\n![[a]]\n",  # embeds a note itself
    "long.md": "x" * (MAX_EMBED_CHARS + 500),
    "notes.md": "# 注\n\n子の文[^1]\n\n[^1]: 子の注\n",
    "child.md": "# 子\n\n[[#詳細]] と [[#^blk]] を見る。\n\n## 詳細\n\n本文 ^blk\n",
}


def render(body: str) -> str:
    links = NoteLinks("host.md", lambda: [("local", p) for p in [*NOTES, "host.md"]])
    return render_note(body, links, lambda note: NOTES.get(note.path))


def boxes(html: str) -> int:
    return html.count('<div class="embed">')


@pytest.mark.parametrize(
    ("body", "shown", "left_out"),
    [
        ("![[a]]", ["本文A", "節1の本文", "節2の本文"], []),
        (
            "![[a#節1]]",
            ["節1の本文", "小節の本文"],
            ["本文A", "節2の本文"],
        ),  # to the next ## heading
        ("![[a#小節]]", ["小節の本文"], ["節1の本文", "節2の本文"]),
        ("![[a#無い節]]", ["この見出しはありません"], ["本文A"]),
    ],
)
def test_a_note_or_its_section_shows_in_a_box(
    body: str, shown: list[str], left_out: list[str]
) -> None:
    html = render(body)
    assert boxes(html) == 1 and html.count("</div>") == 1
    assert all(text in html for text in shown) and not any(text in html for text in left_out)
    assert 'class="embed-title"><a class="wikilink" href="/notes/a.md' in html


@pytest.mark.parametrize(
    "body",
    [
        "文中の ![[a]] は埋め込まない",  # inside a sentence: a link
        "![[missing]]",
        "![[pic.png]]",  # an attachment the store does not hold
        "![[a#^blk]]",  # a block: a link to it
        "![[host]]",  # the note itself
    ],
)
def test_what_is_no_note_embed_stays_a_link(body: str) -> None:
    assert boxes(render(body)) == 0


def test_one_level_only_so_notes_embedding_each_other_end() -> None:
    html = render("![[b]]")
    assert boxes(html) == 1  # b is shown; the a it embeds is a link inside it
    assert '<a class="wikilink" href="/notes/a.md">a</a>' in html


def test_an_embedded_note_carries_no_ids_of_its_own() -> None:
    html = render("## 節1\n\n![[a]]")
    assert re.findall(r' id="([^"]+)"', html) == ["h-節1"]


def test_embeds_are_bounded_in_number_and_size() -> None:
    html = render("\n\n".join(["![[a]]"] * (MAX_EMBEDS + 2)))
    assert boxes(html) == MAX_EMBEDS and html.count('href="/notes/a.md"') == MAX_EMBEDS + 2
    long = render("![[long]]")
    assert "x" * MAX_EMBED_CHARS in long and "x" * (MAX_EMBED_CHARS + 1) not in long


def test_without_a_loader_embeds_stay_links() -> None:
    links = NoteLinks("host.md", lambda: [("local", "a.md")])
    assert boxes(render_note("![[a]]", links)) == 0


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("節1", "## 節1\n節1の本文\n### 小節\n小節の本文"),
        ("小節", "### 小節\n小節の本文"),
        ("無い", None),
    ],
)
def test_section(heading: str, expected: str | None) -> None:
    assert section(NOTES["a.md"], heading) == expected


def test_links_inside_an_embedded_note_resolve_from_it() -> None:
    links = NoteLinks(
        "top.md", lambda: [("local", "sub/c.md"), ("local", "sub/d.md"), ("local", "d.md")]
    )
    html = render_note(
        "![[c]]", links, lambda note: "[[d]]" if note == LinkTarget("sub/c.md") else None
    )
    assert 'href="/notes/sub/d.md"' in html  # the d beside c, not the one beside the host


def test_footnotes_of_an_embedded_note_have_ids_of_their_own() -> None:
    """fn1 of the note and fn1 of a note it embeds were one id: the note's [1] jumped to the
    embedded note's footnote."""
    html = render("親の文[^1]\n\n![[notes]]\n\n![[notes]]\n\n[^1]: 親の注\n")
    ids = re.findall(r'id="(fn[^"]*)"', html)
    assert len(ids) == 6 and len(set(ids)) == 6, ids  # a note and a ref each, three times


def test_links_inside_an_embedded_note_to_its_own_headings_open_its_page() -> None:
    """They were bare fragments: they scrolled to the host's heading of the same name, or to
    nothing (an embed's headings and blocks carry no ids on the host's page)."""
    html = render("## 詳細\n\n親の節\n\n![[child]]\n")
    assert 'href="/notes/child.md#h-%E8%A9%B3%E7%B4%B0"' in html
    assert 'href="/notes/child.md#b-blk"' in html
    assert 'href="#h-' not in html
