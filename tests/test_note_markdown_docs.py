"""The note view's HTML of notes written as documentation is (a docs folder kept in a vault):
footnotes, HTML comments and embedded images with a size. Unit tests of the renderer."""

from __future__ import annotations

import pytest

from knowledge_assets.api.markdown import render_note
from knowledge_assets.api.note_links import NoteLinks

DOCS = [
    "README.md", "qa/README.md", "qa/sub/README.md", "qa/sub/guide.md", "qa/sub/inner/index.md",
    "reference/generics/README.md", "reference/values/string.md", "tips/merge.md",
]  # fmt: skip
GUIDE = "qa/sub/guide.md"
MISSING = '<span class="wikilink missing" title="このノートはありません">'


def docs_notes() -> list[tuple[str, str]]:
    return [("local", p) for p in DOCS]


def render(text: str, path: str = GUIDE) -> str:
    return render_note(text, NoteLinks(path, docs_notes))


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
        ("<b>太字</b><!-- c -->", "<p>&lt;b&gt;太字&lt;/b&gt;</p>"),  # other HTML stays text
        ("![[diagram.png|300]]", MISSING + "diagram.png</span>"),
        ("![[diagram.png|300x200]]", MISSING + "diagram.png</span>"),
        ("![[diagram.png|構成図]]", MISSING + "構成図</span>"),
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
