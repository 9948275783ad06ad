"""Seed 002's chunking strategies (A whole document, B scenes, C recursive) and metadata
inheritance, on small texts and on the longest real Japanese articles of jsquad."""

from __future__ import annotations

import itertools
import re

import pytest

from knowledge_assets.core.chunks.strategies import (
    ChunkingOptions,
    chunk_for,
    inherited,
    pick_strategy,
    split_recursive,
    tail,
)
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document
from tests.conftest import JSQUAD

SCENES = """# 灰かぶり姫の日常

屋敷の朝は早い。

## 朝

シンデレラは夜明け前に起き出した。暖炉の灰をかき出す。

## 昼

継母が呼んだ。昼食の支度をする。
"""


def _opts(strategy: str, **kw: object) -> ChunkingOptions:
    return ChunkingOptions(strategy=strategy, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (100, "document"),
        (3000, "document"),
        (3001, "scene"),
        (15000, "scene"),
        (15001, "recursive"),
    ],
)
def test_size_strategy_picks_a_b_c_by_characters(length: int, expected: str) -> None:
    assert pick_strategy(_opts("size"), "あ" * length) == expected


def test_document_strategy_keeps_the_whole_note_in_one_chunk() -> None:
    chunks = chunk_for("c1.md", {}, SCENES, options=_opts("document"))
    assert len(chunks) == 1
    assert chunks[0].heading == "灰かぶり姫の日常"
    assert "暖炉の灰" in chunks[0].content and "昼食の支度" in chunks[0].content


def test_scene_strategy_splits_at_h2_and_overlaps_the_previous_scene() -> None:
    chunks = chunk_for("c1.md", {}, SCENES, options=_opts("scene", scene_overlap=0.4))
    assert [c.heading for c in chunks] == ["灰かぶり姫の日常", "朝", "昼"]
    assert chunks[2].heading_parts == ("灰かぶり姫の日常", "昼")
    # the last part of the 朝 scene opens the 昼 scene's embedding text, not its content
    assert "[prev] 暖炉の灰をかき出す。" in chunks[2].embedding_text
    assert "暖炉" not in chunks[2].content


def test_a_scene_overlap_of_zero_carries_nothing_over() -> None:
    """Floored at one character, scene_overlap: 0 still opened each scene with a [prev] line."""
    chunks = chunk_for("c1.md", {}, SCENES, options=_opts("scene", scene_overlap=0))
    assert len(chunks) == 3 and not any("[prev]" in c.embedding_text for c in chunks)


def test_recursive_split_respects_size_and_overlaps() -> None:
    text = "".join(f"これは{i}番目の文です。" for i in range(200))
    pieces = split_recursive(text, 400, 60)
    assert all(len(p) <= 400 for p in pieces)
    for before, after in itertools.pairwise(pieces):
        shared = tail(before, 60)
        assert shared and after.startswith(shared)
        assert 30 <= len(shared) <= 60  # from a sentence start in the last 15%
    # every sentence is in some piece: nothing lost
    assert all(any(f"{i}番目" in p for p in pieces) for i in range(200))


def test_recursive_prefers_paragraphs_then_sentences_then_characters() -> None:
    paragraph = "短い段落。" * 10
    assert split_recursive(f"{paragraph}\n\n{paragraph}", 60, 0) == [paragraph, paragraph]
    assert all(len(p) <= 50 for p in split_recursive("あ" * 500, 50, 5))


def test_frontmatter_is_inherited_into_metadata_and_embedding_text() -> None:
    fm = {
        "chapter_id": "chapter01",
        "characters": ["cinderella", "stepmother"],
        "settings": "mansion",
    }
    for strategy in ("headings", "document", "scene", "recursive"):
        chunks = chunk_for("c1.md", fm, SCENES, options=_opts(strategy))
        assert chunks
        for chunk in chunks:
            assert chunk.meta == {
                "chapter_id": "chapter01",
                "characters": ["cinderella", "stepmother"],
                "settings": "mansion",
            }
            assert "characters:cinderella,stepmother" in chunk.embedding_text
            assert "chapter_id:chapter01" in chunk.embedding_text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([["cinderella", "stepmother"], "cinderella"], ["cinderella", "stepmother"]),
        (["fairy", [" godmother ", ["", None]]], ["fairy", "godmother"]),
        ([[]], None),
    ],
    ids=["nested", "blanks", "empty"],
)
def test_inherited_lists_are_flattened_once(value: object, expected: list[str] | None) -> None:
    assert inherited({"characters": value}, ["characters"]).get("characters") == expected


PARTS = (
    "# 第一部\n\n" + "前半の文章。" * 30 + "\n\n## 場面一\n\n" + "本文。" * 40
    + "\n\n# 第二部\n\n" + "後半の文章。" * 30 + "\n\n## 場面二\n\n" + "本文二。" * 40 + "\n"
)  # fmt: skip


@pytest.mark.parametrize(
    ("strategy", "frontmatter", "paths"),
    [
        # The title is the first H1: the second H1 heads its own part, as under `headings`.
        ("scene", {}, ["第一部", "第一部 > 場面一", "第二部", "第二部 > 場面二"]),
        ("recursive", {}, ["第一部", "第一部 > 場面一", "第二部", "第二部 > 場面二"]),
        # A frontmatter title heads every part.
        (
            "scene",
            {"title": "小説"},
            ["小説 > 第一部", "小説 > 場面一", "小説 > 第二部", "小説 > 場面二"],
        ),
        (
            "recursive",
            {"title": "小説"},
            ["小説 > 第一部", "小説 > 第一部 > 場面一", "小説 > 第二部", "小説 > 第二部 > 場面二"],
        ),
    ],
)
def test_a_second_h1_heads_its_own_sections(
    strategy: str, frontmatter: dict[str, str], paths: list[str]
) -> None:
    chunks = chunk_for("novel.md", frontmatter, PARTS, options=_opts(strategy, chunk_chars=400))
    assert [c.heading_path for c in chunks] == paths
    # A chunk's parent is the heading above it in its path (the part itself heads a part).
    assert [c.parent_heading for c in chunks] == [
        (p.split(" > ")[-2] if " > " in p else p) for p in paths
    ]
    assert {c.title for c in chunks} == {frontmatter.get("title", "第一部")}


def test_the_strategies_rules_are_part_of_a_sources_signature() -> None:
    """Notes of a source with options of its own are chunked again when the rules change."""
    from knowledge_assets.core.chunks import strategies

    before = _opts("scene").signature()
    strategies.STRATEGY_RULES += 1
    try:
        assert _opts("scene").signature() != before
        assert ChunkingOptions().signature() == ""  # notes chunked by headings are left alone
    finally:
        strategies.STRATEGY_RULES -= 1


def test_default_options_keep_note_chunking_and_signature() -> None:
    assert ChunkingOptions().signature() == ""
    assert _opts("scene").signature() != _opts("recursive").signature()
    assert ChunkingOptions.from_json(_opts("size").to_json()) == _opts("size")
    with pytest.raises(ValueError, match="unknown chunking strategy"):
        _opts("semantic")


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"strategy": "scene", "max_chunk_chars": 0}, "max_chunk_chars must be at least 50"),
        ({"strategy": "scene", "max_chunk_chars": -5}, "max_chunk_chars must be at least 50"),
        ({"strategy": "size", "small_max_chars": -1}, "small_max_chars and scene_max_chars"),
        ({"strategy": "size", "scene_max_chars": -1}, "small_max_chars and scene_max_chars"),
    ],
)
def test_sizes_that_would_cut_a_scene_into_characters_are_refused(
    options: dict[str, object], says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        ChunkingOptions(**options)  # type: ignore[arg-type]


def _longest_articles(count: int) -> list[ParsedDoc]:
    files = sorted((JSQUAD / "vault").glob("*.md"), key=lambda p: p.stat().st_size)[-count:]
    docs = [parse_document(p.name, p.read_bytes()) for p in files]
    return [d for d in docs if isinstance(d, ParsedDoc)]


def _without_headings(body: str) -> str:
    return re.sub(r"(?m)^#{1,6} .*\n", "", body)


@pytest.mark.skipif(not JSQUAD.exists(), reason="needs ../shared/eval/jsquad")
@pytest.mark.parametrize("headings", [True, False], ids=["with-headings", "without-headings"])
def test_longest_jsquad_articles_under_each_strategy(headings: bool) -> None:
    docs = _longest_articles(3)
    assert max(len(d.body) for d in docs) > 15000  # the longest article takes strategy C
    for doc in docs:
        body = doc.body if headings else _without_headings(doc.body)
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", _without_headings(body)) if p.strip()]
        for strategy in ("size", "scene", "recursive"):
            chunks = chunk_for(doc.path, doc.frontmatter, body, options=_opts(strategy))
            text = "\n".join(c.content for c in chunks)
            # every paragraph's first sentence survives chunking (no text is dropped)
            assert all(p.split("。")[0][:40] in text for p in paragraphs), strategy
        recursive = chunk_for(doc.path, doc.frontmatter, body, options=_opts("recursive"))
        assert max(len(c.content) for c in recursive) <= 400
        if not headings:
            # without headings, scenes fall back to recursive pieces of at most max_chunk_chars
            scenes = chunk_for(doc.path, doc.frontmatter, body, options=_opts("scene"))
            assert max(len(c.content) for c in scenes) <= 5000
