"""The note view's HTML: Markdown as Obsidian writes it (tables, lists, task lists, quotes,
emphasis, code, links, images, wikilinks), links resolved to the notes they name, and raw HTML
that never runs. Unit tests of the renderer, then ``GET /api/notes/{id}`` on a real server."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import quote, unquote

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links import resolve as note_links
from knowledge_assets.core.links.resolve import LinkTarget, NoteLinks
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.markdown_vault import HOSTILE, RAMEN, markdown_vault

PATHS = [
    "inbox.md", "a/inbox.md", "日記/2026-01-10.md", "日記/2026-01-11.md", "projects/garden.md",
    "projects/sub/garden.md", unicodedata.normalize("NFD", "Notes/Café.md"),
]  # fmt: skip
MISSING = '<span class="wikilink missing" title="このノートはありません">'
DIARY_URL = "/notes/" + quote("日記/2026-01-10.md")


def vault_notes() -> list[tuple[str, str]]:
    return [("local", p) for p in PATHS]


def render(text: str, source: str = "projects/note.md") -> str:
    return render_note(text, NoteLinks(source, vault_notes))


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("| a | b |\n|---|---|\n| 1 | 2 |", '<div class="table-wrap"><table>'),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "<td>1</td>\n<td>2</td>"),
        ("- 一\n- 二", "<ul>\n<li>一</li>\n<li>二</li>\n</ul>"),
        ("1. 一\n2. 二\n   - 下", "<ol>\n<li>一</li>\n<li>二\n<ul>\n<li>下</li>"),
        ("- [ ] 未\n- [x] 済", '<ul class="contains-task-list">'),
        ("- [ ] 未\n- [x] 済", 'disabled="" type="checkbox"> 未'),
        ("- [ ] 未\n- [x] 済", 'disabled="" type="checkbox" checked=""> 済'),
        ("> 引用", "<blockquote>\n<p>引用</p>\n</blockquote>"),
        ("*斜体* **太字** ~~消す~~", "<em>斜体</em> <strong>太字</strong> <s>消す</s>"),
        ("`x < y`", "<code>x &lt; y</code>"),
        ("<b>太字</b>", "<p><b>太字</b></p>"),  # raw HTML of the allowlist renders
        ("<blink>点滅</blink>", "<p>&lt;blink&gt;点滅&lt;/blink&gt;</p>"),  # other tags: text
        ("```py\nprint(1)\n```", '<pre><code class="language-py">print(1)\n</code></pre>'),
        (
            "# 見出し\n## 小見出し",
            '<h2 id="h-見出し">見出し</h2>\n<h3 id="h-小見出し">小見出し</h3>',
        ),
        ("一行目\n二行目", "一行目<br />\n二行目"),
        (
            "[サイト](https://example.com)",
            '<a href="https://example.com" rel="noopener noreferrer">サイト</a>',
        ),
        ("詳しくはhttps://example.com/a、次", '">https://example.com/a</a>、次'),
        ("README.md を読む", "<p>README.md を読む</p>"),
        (
            "![図](https://example.com/a.png)",
            '<img src="https://example.com/a.png" alt="図" loading="lazy" />',
        ),
        (
            "![図](attachments/a.png)",  # no vault folder here: the image is not in the vault
            '<span class="image-missing">画像はボールトにありません: a.png<span class="image-alt">図</span></span>',
        ),
    ],
)
def test_markdown_renders_as_obsidian_shows_it(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[[inbox]]", '<a class="wikilink" href="/notes/inbox.md">inbox</a>'),
        ("[[2026-01-10|日記]]", f'<a class="wikilink" href="{DIARY_URL}">日記</a>'),
        ("[[日記/2026-01-10.md]]", f'href="{DIARY_URL}">日記/2026-01-10.md</a>'),
        ("[[garden#Basil]]", 'href="/notes/projects/garden.md#h-basil">garden &gt; Basil</a>'),
        ("[[#見出し]]", f'href="#{quote("h-見出し")}">見出し</a>'),
        ("[[旭川のメモ]]", MISSING + "旭川のメモ</span>"),
        ("![[pic.png]]", '<span class="image-missing">画像はボールトにありません: pic.png</span>'),
        ("| a |\n|---|\n| [[inbox\\|受信箱]] |", 'href="/notes/inbox.md">受信箱</a></td>'),
        ("`[[inbox]]`", "<code>[[inbox]]</code>"),
        ("[前のメモ](../inbox.md)", '<a href="/notes/inbox.md">前のメモ</a>'),
        (
            "[日記](../%E6%97%A5%E8%A8%98/2026-01-10.md#料理)",
            f'<a href="{DIARY_URL}#{quote("h-料理")}">日記</a>',
        ),
        ("[ない](nope.md)", MISSING + "ない</span>"),
    ],
)
def test_links_to_notes_open_their_note_view(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("x.md", "inbox", "inbox.md"),
        ("x.md", "INBOX", "inbox.md"),
        ("x.md", "日記/2026-01-10", "日記/2026-01-10.md"),
        ("x.md", "2026-01-11.md", "日記/2026-01-11.md"),
        ("projects/x.md", "garden", "projects/garden.md"),  # the note's own folder first
        ("x.md", "garden", "projects/garden.md"),  # then the shortest path
        ("x.md", "sub/garden", "projects/sub/garden.md"),
        ("projects/garden.md", "../inbox.md", "inbox.md"),
        ("x.md", "café", unicodedata.normalize("NFD", "Notes/Café.md")),
        ("x.md", "", "x.md"),
        ("x.md", "arden", None),
        ("x.md", "2026-01-12", None),
    ],
)
def test_a_target_resolves_by_path_or_by_name(source: str, target: str, expected: str | None) -> None:  # fmt: skip
    found = NoteLinks(source, vault_notes).resolve(target)
    assert (found.path if found else None) == expected
    assert found is None or found.source is None  # a note of the vault needs no source


# The vault (local) and the declared sources archive and journal, some paths in several.
SOURCED = [
    ("local", "daily/x.md"), ("archive", "daily/x.md"), ("local", "garden.md"),
    ("local", "plan.md"), ("archive", "ideas/plan.md"), ("archive", "trains/night.md"),
    ("archive", "shared/memo.md"), ("journal", "shared/memo.md"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("archive", "daily/x", ("daily/x.md", "archive")),  # its own source's, by path
        ("archive", "x", ("daily/x.md", "archive")),
        ("local", "x", ("daily/x.md", None)),
        ("archive", "plan", ("ideas/plan.md", "archive")),  # its own by name before the vault's
        ("local", "plan", ("plan.md", None)),
        ("archive", "garden", ("garden.md", None)),  # not in its source: the vault's
        ("local", "night", ("trains/night.md", "archive")),  # only another source has it
        ("local", "memo", ("shared/memo.md", "archive")),  # several others: the first by name
        ("journal", "memo", ("shared/memo.md", "journal")),
        ("journal", "", ("links.md", "journal")),  # the note itself
        ("archive", "nope", None),
    ],
)
def test_a_target_names_a_note_of_the_linking_notes_source_first(
    source: str, target: str, expected: tuple[str, str | None] | None
) -> None:
    found = NoteLinks("links.md", lambda: SOURCED, source=source, vault="local").resolve(target)
    assert ((found.path, found.source) if found else None) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("archive", '<a class="wikilink" href="/notes/daily/x.md?source=archive">x</a>'),
        ("local", '<a class="wikilink" href="/notes/daily/x.md">x</a>'),
    ],
)
def test_a_link_to_a_note_of_another_source_than_the_vault_names_its_source(
    source: str, expected: str
) -> None:
    links = NoteLinks("links.md", lambda: SOURCED, source=source, vault="local")
    assert expected in render_note("[[x]]", links)


def test_a_note_without_note_links_reads_no_paths() -> None:
    def paths() -> list[tuple[str, str]]:
        raise AssertionError("paths read for a note without links to notes")

    html = render_note("# t\n[web](https://example.com) `[[x]]`", NoteLinks("n.md", paths))
    assert "<code>[[x]]</code>" in html


def test_a_listing_is_indexed_once_and_a_changed_one_anew() -> None:
    listed = [("local", "同じ一覧/a.md"), ("local", "同じ一覧/c.md")]
    assert NoteLinks("n.md", lambda: list(listed)).resolve("a") == LinkTarget("同じ一覧/a.md")
    before = note_links._indexed.cache_info()
    # The same notes, listed in another order (the listing has none): the index is reused.
    again = NoteLinks("m.md", lambda: listed[::-1])
    assert again.resolve("c") == LinkTarget("同じ一覧/c.md") and again.resolve("b") is None
    assert note_links._indexed.cache_info().hits == before.hits + 1
    listed.append(("books", "同じ一覧/b.md"))  # a note added since: the next view finds it
    added = NoteLinks("n.md", lambda: list(listed))
    assert added.resolve("b") == LinkTarget("同じ一覧/b.md", "books")
    assert note_links._indexed.cache_info().misses == before.misses + 1
    listed.pop()  # and deleted again: gone from the next view
    assert NoteLinks("n.md", lambda: list(listed)).resolve("b") is None


def test_a_link_no_current_note_answers_leads_to_the_older_version_it_names() -> None:
    older = [("local", "drafts/plan-v1.md"), ("local", "inbox.md")]  # inbox.md: also current
    read: list[str] = []

    def superseded() -> list[tuple[str, str]]:
        read.append("older")
        return older

    links = NoteLinks("projects/note.md", vault_notes, older=superseded)
    assert links.resolve("inbox") == LinkTarget("inbox.md") and read == []  # current first
    assert links.resolve("plan-v1") == LinkTarget("drafts/plan-v1.md")
    assert links.resolve("plan-v2") is None and read == ["older"]  # read once, when needed
    html = render_note("[[plan-v1]] と [旧版](../drafts/plan-v1.md)", links)
    assert html.count('<a class="wikilink" href="/notes/drafts/plan-v1.md">') == 1
    assert '<a href="/notes/drafts/plan-v1.md">旧版</a>' in html
    # embedded alone, an older version is not shown in place: a link to its page
    embedded = render_note("![[plan-v1]]", links, lambda note: "版1の本文")
    assert "版1の本文" not in embedded and 'href="/notes/drafts/plan-v1.md"' in embedded
    assert links.resolve("plan-v1", older=False) is None


class _Tags(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def assert_inert(html: str) -> None:
    """No element that runs script, no event handler, no script address."""
    for tag, attrs in _Tags(html).tags:
        assert tag not in {"script", "iframe", "object", "embed", "style", "form"}, html
        assert not [name for name in attrs if name.startswith("on")], html
        for name in ("href", "src"):
            # as a browser reads the address: control characters and spaces inside the scheme
            # (java\tscript:) are dropped before it is recognised
            value = re.sub(r"[\x00-\x20]", "", attrs.get(name) or "").lower()
            assert not value.startswith(
                ("javascript:", "vbscript:", "data:text", "data:image/svg")
            ), html


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        '<a href="javascript:alert(1)">x</a>',
        "<iframe src=https://example.com></iframe>",
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](vbscript:msgbox)",
        "[x](data:text/html,<script>alert(1)</script>)",
        "![x](javascript:alert(1))",
        "<javascript:alert(1)>",
        '[[x" onmouseover="alert(1)]]',
        '[[inbox|b" onclick="alert(1)]]',
        '| a |\n|---|\n| <b onmouseover="alert(1)">b</b> |',
    ],
)
def test_raw_html_in_a_note_never_runs(markdown: str) -> None:
    assert_inert(render(markdown))


@pytest.fixture(scope="module")
def base(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    vault = markdown_vault(tmp_path_factory.mktemp("markdown"), hostile=True)
    with sample_vault_database(server_url, None, vault) as url:
        with api_server(url, Asker(LLMSettings())) as base:
            yield base


def test_a_heading_holding_a_wikilink_takes_its_text_in_its_id() -> None:
    """``## [[inbox]] について`` had the id of "について" alone: a link to "inbox について" (the
    heading as it reads) landed nowhere."""
    html = render("## [[inbox]] について\n\n[[#inbox について]]\n")
    anchor = quote("h-inbox-について")
    assert f'id="{unquote(anchor)}"' in html and f'href="#{anchor}"' in html


def test_the_note_api_serves_the_body_as_html(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        note = client.get(f"/api/notes/{quote(RAMEN)}").json()["data"]
        hostile = client.get(f"/api/notes/{HOSTILE}").json()["data"]
    html = note["html"]
    assert f'<a class="wikilink" href="{DIARY_URL}">1月10日の日記</a>' in html
    assert '<a class="wikilink" href="/notes/inbox.md">inbox</a>' in html
    assert MISSING + "旭川ラーメンのメモ</span>" in html
    assert "<th>店</th>" in html and 'type="checkbox" checked=""> 札幌軒' in html
    assert '<h2 id="h-ラーメン屋めぐり">ラーメン屋めぐり</h2>' in html
    assert "created:" not in html and "tags:" not in html  # no frontmatter in the body
    assert_inert(hostile["html"])
    assert "<script" not in hostile["html"] and 'hacked = "script"' not in hostile["html"]
    assert "<a>a タグ</a>" in hostile["html"]  # the link without its javascript: address
