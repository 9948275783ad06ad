"""The note view's HTML of notes written as documentation is (a docs folder kept in a vault):
footnotes, HTML comments, Markdown links relative to the note, links to folders, headings with
ids that ``#heading`` links land on, and embedded images with a size. Unit tests of the renderer
and of link resolution."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links.resolve import NoteLinks

DOCS = [
    "README.md", "qa/README.md", "qa/sub/README.md", "qa/sub/guide.md", "qa/sub/inner/index.md",
    "reference/generics/README.md", "reference/values/string.md", "tips/merge.md",
]  # fmt: skip
GUIDE = "qa/sub/guide.md"
MISSING = '<span class="wikilink missing" title="このノートはありません">'
NOT_IN_VAULT = '<span class="image-missing">画像はボールトにありません: '


def docs_notes() -> list[tuple[str, str]]:
    return [("local", p) for p in DOCS]


def render(text: str, path: str = GUIDE) -> str:
    return render_note(text, NoteLinks(path, docs_notes))


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            "> [!tip] 使い方\n> 本文",
            '<div class="callout callout-tip" data-callout="tip">\n'
            '<p class="callout-title">使い方</p>\n<p>本文</p>\n</div>',
        ),
        (
            "> [!WARNING]-\n> 本文",
            '<details class="callout callout-warning" data-callout="warning">\n'
            '<summary class="callout-title">警告</summary>\n<p>本文</p>\n</details>',
        ),
        (
            "> [!faq]+ 開いた問い\n> 答え",
            '<details class="callout callout-warning" data-callout="faq" open>\n'
            '<summary class="callout-title">開いた問い</summary>\n<p>答え</p>\n</details>',
        ),
        (
            "> [!note]- 外\n> > [!tip] 内\n> > 中",
            '<p class="callout-title">内</p>\n<p>中</p>\n</div>\n</details>',
        ),
        (":::details 続きを読む\n本文\n:::", '<summary class="callout-title">続きを読む</summary>'),
        (":::details\n本文\n:::", "<p>本文</p>\n</details>"),
        ("> [!note] 題だけ", '<p class="callout-title">題だけ</p>\n</div>'),
        # A title is Markdown, as in Obsidian: its asterisks, brackets and backticks showed.
        (
            "> [!tip] **重要** な [[inbox]] と `code`\n> 本文",
            '<p class="callout-title"><strong>重要</strong> な <span class="wikilink missing"'
            ' title="このノートはありません">inbox</span> と <code>code</code></p>',
        ),
        ("> [!faq]- 問 <script>x</script>\n> 答", '<summary class="callout-title">問 </summary>'),
        ("> [!custom] x\n> y", 'data-callout="custom">\n<p class="callout-title">x</p>'),
        (
            "> [!note]\n> > [!bug]\n> > 中",
            '<p class="callout-title">バグ</p>\n<p>中</p>\n</div>\n</div>',
        ),
        ("> [!<b>] x", 'data-callout="&lt;b&gt;"'),
        (":::tip\n中身\n:::", '<p class="callout-title">ヒント</p>\n<p>中身</p>\n</div>'),
        (":::note 好みのタイトル\nテキスト\n:::", '<p class="callout-title">好みのタイトル</p>'),
        (
            ":::caution[注意書き]\nx\n:::",
            '<div class="callout callout-warning" data-callout="caution">',
        ),
    ],
)
def test_callouts_are_titled_boxes(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("> 引用\n> [!tip] ではない", "<blockquote>\n<p>引用<br />\n[!tip] ではない</p>"),
        (":::foo\n文字\n:::", "<p>:::foo<br />\n文字<br />\n:::</p>"),  # no kind docs know
        ("```\n> [!tip] x\n:::tip\n```", "<pre><code>&gt; [!tip] x\n:::tip\n</code></pre>"),
    ],
)
def test_what_is_no_callout_stays_as_written(markdown: str, expected: str) -> None:
    html = render(markdown)
    assert expected in html and "callout" not in html


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("前 ==大事== 後", "<p>前 <mark>大事</mark> 後</p>"),
        ("==**太字**==", "<mark><strong>太字</strong></mark>"),
        ("==a== と ==b==", "<mark>a</mark> と <mark>b</mark>"),
        ("a == b == c", "<p>a == b == c</p>"),  # a highlight does not start or end with a space
        ("x===y===", "<p>x===y===</p>"),
        ("==閉じない", "<p>==閉じない</p>"),
        ("`==コード==`", "<code>==コード==</code>"),
    ],
)
def test_highlights_are_marked(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("本文の段落 ^abc-123", '<p id="b-abc-123">本文の段落</p>'),
        ("行1\n行2 ^p2", '<p id="b-p2">行1<br />\n行2</p>'),
        ("- 項目一 ^i1\n- 項目二", '<li id="b-i1">項目一</li>'),  # a tight list's item
        ("| a |\n|---|\n| 1 |\n\n^tbl", '</table>\n</div>\n<p id="b-tbl" class="block-id"></p>'),
        ("[[#^abc-123]]", 'href="#b-abc-123"'),  # a link lands on the block
        ("[[README#^abc]]", 'href="/notes/qa/sub/README.md#b-abc"'),
        ("価格は 2^10 で x ^ y", "<p>価格は 2^10 で x ^ y</p>"),  # no block id
        ("`code ^c`", "<p><code>code ^c</code></p>"),
    ],
)
def test_block_ids_are_hidden_and_links_land_on_their_block(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            "本文[^1]\n\n[^1]: 脚注",
            '<sup class="footnote-ref"><a href="#fn1" id="fnref1">[1]</a></sup>',
        ),
        ("本文[^1]\n\n[^1]: 脚注", '<li id="fn1" class="footnote-item"><p>脚注 <a href="#fnref1"'),
        ("本文^[その場の脚注]", '<li id="fn1" class="footnote-item"><p>その場の脚注 '),
        ("本文[^x]", "<p>本文[^x]</p>"),  # no such footnote: the text as written
        ("<!--prettier-ignore-->\n| a |\n|---|\n| 1 |", '<div class="table-wrap"><table>'),
        ("前 <!-- 隠す --> 後", "<p>前  後</p>"),
        ("段落\n<!-- 一行目\n二行目 -->\n次の段落", "<p>段落</p>\n<p>次の段落</p>"),
        ("`<!-- x -->`", "<code>&lt;!-- x --&gt;</code>"),
        ("```\n<!-- x -->\n```", "<pre><code>&lt;!-- x --&gt;\n</code></pre>"),
        ("前 <!-- 閉じない\n\n後", "<p>前 &lt;!-- 閉じない</p>\n<p>後</p>"),  # nothing lost
        ("<!-- c --> 後", "<p> 後</p>"),
        ("<b>太字</b><!-- c -->", "<p><b>太字</b></p>"),  # other HTML through the allowlist
        ("前 %%隠す%% 後", "<p>前  後</p>"),  # Obsidian's comments
        ("段落\n%%\n一行目\n\n二行目\n%%\n次の段落", "<p>段落</p>\n<p>次の段落</p>"),
        ("`%%x%%` と 50%%", "<p><code>%%x%%</code> と 50%%</p>"),  # code, and a lone %% stays
        ("```\n%% x %%\n```", "<pre><code>%% x %%\n</code></pre>"),
        ("- 項目 %%メモ%%\n> 引用 %%a%%", "<li>項目 </li>"),
        ("![[diagram.png|300]]", NOT_IN_VAULT + "diagram.png</span>"),
        ("![[diagram.png|300x200]]", NOT_IN_VAULT + "diagram.png</span>"),
        (
            "![[diagram.png|構成図]]",
            NOT_IN_VAULT + 'diagram.png<span class="image-alt">構成図</span>',
        ),
        ("[[tips/merge|300]]", ">300</a>"),  # a link's label is a label, digits or not
    ],
)
def test_footnotes_comments_and_embeds_render_as_docs_show_them(markdown: str, expected: str) -> None:  # fmt: skip
    assert expected in render(markdown)


@pytest.mark.parametrize(
    "markdown",
    ["本文[^1]\n\n[^1]: note", "本文[^1]\n\n[^1]: README.md", "[^merge]: merge\n\n本文[^merge]"],
)
def test_a_footnote_marker_is_never_a_note_link(markdown: str) -> None:
    """A footnote "[^1]: note" defined a link to the note "note": the marker showed as a missing note."""
    html = render(markdown)
    assert "wikilink" not in html and "/notes/" not in html


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("# Café au lait", '<h2 id="h-café-au-lait">'),
        ("## テンプレートリテラル", '<h3 id="h-テンプレートリテラル">'),
        ("## `strict` オプション", '<h3 id="h-strict-オプション">'),
        ("## 使い方\n## 使い方", '<h3 id="h-使い方">使い方</h3>\n<h3 id="h-使い方-1">'),
    ],
)
def test_headings_carry_ids_from_their_text(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


def anchor(slug: str) -> str:
    """The fragment of a link to the heading whose slug is ``slug``."""
    return "#" + quote("h-" + slug)


@pytest.mark.parametrize(
    ("markdown", "href"),
    [
        ("[x](README.md)", "/notes/qa/sub/README.md"),  # beside the note, not the vault's
        ("[x](./README.md)", "/notes/qa/sub/README.md"),
        ("[x](../README.md)", "/notes/qa/README.md"),
        ("[x](/README.md)", "/notes/README.md"),  # from the vault root
        ("[x](qa/README.md)", "/notes/qa/README.md"),  # a vault path still works
        ("[x](./inner/)", "/notes/qa/sub/inner/index.md"),  # a folder: its index.md
        ("[x](/reference/generics)", "/notes/reference/generics/README.md"),  # or README.md
        ("[x](/)", "/notes/README.md"),
        ("[x](../../tips/merge)", "/notes/tips/merge.md"),
        ("[[README]]", "/notes/qa/sub/README.md"),  # of the name, the one beside wins
        ("[[qa/README]]", "/notes/qa/README.md"),  # a vault path means that path
        ("[[merge]]", "/notes/tips/merge.md"),
        (
            "[x](/reference/values/string#テンプレートリテラル)",
            "/notes/reference/values/string.md" + anchor("テンプレートリテラル"),
        ),
        ("[x](README.md#Getting%20Started)", "/notes/qa/sub/README.md#h-getting-started"),
        ("[[README#使い方]]", "/notes/qa/sub/README.md" + anchor("使い方")),
        ("[[README#準備#使い方]]", "/notes/qa/sub/README.md" + anchor("使い方")),
        ("[x](#使い方)", anchor("使い方")),  # a heading of this note: no reload
        ("[[#Getting Started]]", "#h-getting-started"),
        ("[[guide#Getting Started]]", "#h-getting-started"),
    ],
)
def test_links_open_the_note_beside_and_land_on_the_heading(markdown: str, href: str) -> None:
    assert f'href="{href}"' in render(markdown)


# A documentation site kept as a vault whole: its pages under docs/, links written from there.
SITE = [
    "README.md", "docs/reference/jsx/README.md", "docs/reference/generics.md",
    "docs/overview/ecosystem.md", "blog/reference/generics.md", "blog/2024/post.md",
]  # fmt: skip


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/reference/jsx", "docs/reference/jsx/README.md"),  # a folder: its README
        ("/reference/jsx/", "docs/reference/jsx/README.md"),
        ("/overview/ecosystem#見出し", "docs/overview/ecosystem.md"),
        ("/docs/reference/jsx", "docs/reference/jsx/README.md"),  # from the vault root still
        ("/2024/post", "blog/2024/post.md"),  # whichever top folder has it
        ("/reference/nope", None),
        ("/README", "README.md"),
    ],
)
def test_a_root_link_of_a_docs_site_finds_its_page_under_the_top_folder(target: str, expected: str | None) -> None:  # fmt: skip
    links = NoteLinks("docs/overview/ecosystem.md", lambda: [("local", p) for p in SITE])
    found = links.resolve(target.partition("#")[0], relative=True)
    assert (found.path if found else None) == expected


def test_a_root_link_two_top_folders_match_stays_missing() -> None:
    """/reference/generics is docs/'s and blog/'s: neither is the one it means."""
    notes = [("local", p) for p in SITE if p != "docs/reference/generics.md"] + [
        ("local", "docs/reference/generics/index.md")
    ]
    html = render_note("[x](/reference/generics)", NoteLinks("docs/a.md", lambda: notes))
    assert MISSING in html
