"""How the MCP server renders notes: pages and sections of long notes, clean snippets."""

from __future__ import annotations

import pytest

from knowledge_assets.core.links.backlinks import Backlink, Backlinks
from knowledge_assets.core.search.notes import SimilarNote
from knowledge_assets.core.search.search_hits import SearchHit, SearchResponse
from knowledge_assets.mcp.format import (
    PAGE_CHARS,
    clean_snippet,
    document_part,
    linking_result,
    pages,
    search_result,
    similar_result,
)
from knowledge_assets.mcp.sections import note_parts


def _long_note() -> dict[str, object]:
    sections = [f"## 第{i}節\n" + ("長い本文の行です。\n" * 60) for i in range(1, 21)]
    return {"file_path": "long.md", "title": "長いノート", "latest": True, "content": "# 長いノート\n" + "".join(sections)}  # fmt: skip


def test_a_19_kb_note_comes_in_pages_that_add_up_to_the_note() -> None:
    doc = _long_note()
    content = str(doc["content"])
    assert len(content.encode()) > 19_000
    parts = pages(content)
    assert len(parts) > 1 and "".join(parts) == content
    assert all(len(p) <= PAGE_CHARS for p in parts)
    first = document_part(doc, None, 1)
    header, body = first.split("\n---\n", 1)
    assert f"page: 1/{len(parts)} (pass page=2 for more)" in header
    assert "sections: 第1節 | 第2節" in header and body == parts[0]
    last = document_part(doc, None, len(parts))
    assert last.endswith(parts[-1]) and "pass page" not in last.split("\n---\n", 1)[0]
    with pytest.raises(LookupError, match="has"):
        document_part(doc, None, len(parts) + 1)


def test_a_section_by_heading() -> None:
    text = document_part(_long_note(), "第12節", 1)
    body = text.split("\n---\n", 1)[1]
    assert body.startswith("## 第12節\n") and "## 第13節" not in body


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("## 手順\n```bash\n## install\nmake\n```\n## 後\n", ["手順", "後"]),
        ("<!--\n## 下書き\n-->\n## 本文\n", ["本文"]),
        ("##\n次の行\n", []),
        ("   ## 字下げ ##\n#### 深い\n### 小節\n", ["字下げ", "小節"]),
        ("## 朝\r\n起きた。\r\n## 夜\r\n", ["朝", "夜"]),
    ],
)
def test_sections_are_the_headings_the_chunker_sees(content: str, expected: list[str]) -> None:
    found = [(p.heads[-1], p.start, p.end) for p in note_parts(content, None) if p.heads]
    assert [title for title, _, _ in found] == expected
    for title, start, end in found:
        assert title in content[start:end].split("\n", 1)[0]
        assert end == len(content) or content[end:].lstrip(" ").startswith("#")


def test_a_note_of_many_sections_lists_the_first_ones_and_a_count() -> None:
    content = "".join(f"## 節{i}\n" + "本文。\n" * 100 for i in range(300))
    doc = {"file_path": "many.md", "title": "many", "content": content}
    header = document_part(doc, None, 1).split("\n---\n", 1)[0]
    assert "節39 | … 260 more sections" in header and "節40" not in header
    with pytest.raises(LookupError, match="260 more sections"):
        document_part(doc, "無い節", 1)


@pytest.mark.parametrize("section", [None, "", "  ", "\u3000", "\t\n", "## "])
def test_a_blank_section_is_the_whole_note_not_its_first_section(section: str | None) -> None:
    doc = {"file_path": "n.md", "title": "n", "content": "# n\n## 朝\n起きた。\n## 夜\n寝た。\n"}
    assert document_part(doc, section, 1).split("\n---\n", 1)[1] == doc["content"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("前\n```python\nprint(1)\n```\n後", "前 print(1) 後"),
        ("図: ![構成図](img/arch.png) と ![[diagram.png]] の説明", "図: 構成図 と の説明"),
        ("~~~\ncode\n~~~", "code"),
        ("前\n\n\n  ```\nx\n```\n\n後", "前 x 後"),
        (
            "> [!tip] 便利な使い方\n> 検索は==ハイブリッド==が既定",
            "便利な使い方 検索はハイブリッドが既定",
        ),
        (":::warning\n古い設定\n:::", "古い設定"),
        ("段落の終わり ^abc1\n次 a == b", "段落の終わり 次 a == b"),
    ],
)
def test_snippets_drop_code_fences_embeds_and_markers(raw: str, expected: str) -> None:
    assert clean_snippet(raw) == expected


@pytest.mark.parametrize("title", ["C++ <vector> の使い方", "<T>", "**太字** と [[リンク]]"])
def test_titles_are_shown_as_written_in_every_listing(title: str) -> None:
    # A title is plain text (get_doc shows it whole): no Markdown or HTML to drop from it.
    hit = SearchHit("a.md", title, "", "", "本文", 1.0, ("keyword",), (), "1", "local")
    near = SimilarNote("a.md", title, 0.9, "", "本文", (), "local")
    found = search_result(SearchResponse("q", "keyword", None, [hit], {}))
    assert found["hits"][0]["title"] == title
    assert similar_result("b.md", [near])["similar"][0]["title"] == title
    backlinks = Backlinks("local", "b.md", [Backlink("local", "a.md", title)], more=False)
    assert linking_result(backlinks)["linking"][0]["title"] == title
