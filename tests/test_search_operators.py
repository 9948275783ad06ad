"""Obsidian's search operators typed in a query: ``tag:`` and ``path:`` narrow the search as the
filters do, the words left are searched, and a query they leave nothing to search is refused
with the reason. Unit tests of the reading; the search itself is tested in test_search."""

from __future__ import annotations

import pytest

from knowledge_assets.core.search.operators import (
    QueryParts,
    UnsearchableQuery,
    narrowed,
    split_query,
)
from knowledge_assets.core.search.search_sql import SearchFilters


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("tag:日記 旅行", QueryParts("旅行", tags=("日記",))),
        ("旅行 TAG:#日記", QueryParts("旅行", tags=("#日記",))),
        ("path:日記/ 雨 path:日記/2026/", QueryParts("雨", paths=("日記/", "日記/2026/"))),
        ('path:"my notes/" 雨', QueryParts("雨", paths=("my notes/",))),
        ("東京\u3000tag:旅", QueryParts("東京", tags=("旅",))),  # an ideographic space
        # no operator: a name without a value, inside a word, or glued to a quote
        ("git tag: の使い方", QueryParts("git tag: の使い方")),
        ("mytag:x 検索", QueryParts("mytag:x 検索")),
        ('path:"a b"c 検索', QueryParts('path:"a b"c 検索')),
        ("タグ：日記", QueryParts("タグ：日記")),
    ],
)
def test_operators_are_read_out_of_the_query(query: str, parts: QueryParts) -> None:
    assert split_query(query) == parts


def test_operators_join_the_filters_given_beside_the_query() -> None:
    given = SearchFilters(tags=("運動",), path_prefix="日記/")
    result = narrowed(given, split_query("tag:#Garden path:/日記/2026/ 走った"))
    assert result == SearchFilters(tags=("運動",), all_tags=("Garden",), path_prefix="日記/2026/")
    assert narrowed(given, split_query("走った")) is given  # no operator: as given


@pytest.mark.parametrize(
    ("query", "given", "reason"),
    [
        ("tag:日記", None, "no words to search for"),
        ('tag:"" 旅行', None, 'tag:"" names nothing'),
        ("tag:# 旅行", None, 'tag:"" names nothing'),
        ("tag:## 旅行", None, 'tag:"" names nothing'),
        ('tag:"# " 旅行', None, 'tag:"" names nothing'),
        ("path:日記/ path:projects/ 雨", None, "exclude each other"),
        ("path:projects/ 雨", SearchFilters(path_prefix="日記/"), "exclude each other"),
    ],
)
def test_a_query_operators_leave_nothing_to_search_is_refused_with_the_reason(
    query: str, given: SearchFilters | None, reason: str
) -> None:
    with pytest.raises(UnsearchableQuery, match=reason):
        narrowed(given, split_query(query))
