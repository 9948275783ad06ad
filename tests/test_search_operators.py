"""Obsidian's search operators typed in a query: ``tag:`` and ``path:`` narrow the search as the
filters do, ``-tag:``, ``-path:`` and ``-word`` leave notes out, the words left are searched, and
a query they leave nothing to search is refused with the reason. Unit tests of the reading; the
search itself is tested in test_search and test_search_exclusions."""

from __future__ import annotations

import pytest

from knowledge_assets.core.search.filters import SearchFilters, filter_clause, word_lexemes
from knowledge_assets.core.search.operators import (
    QueryParts,
    UnsearchableQuery,
    narrowed,
    split_query,
)


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
        ('file:2026-01 雨 FILE:"my notes"', QueryParts("雨", files=("2026-01", "my notes"))),
        ("旅行 -file:draft", QueryParts("旅行", not_files=("draft",))),
        ("file:a OR file:b 雨", QueryParts("雨", any_files=(("a", "b"),))),
        ("profile:x 検索", QueryParts("profile:x 検索")),  # an operator is a word of its own
        ('path:"a b"c 検索', QueryParts('path:"a b"c 検索')),
        ("タグ：日記", QueryParts("タグ：日記")),
    ],
)
def test_operators_are_read_out_of_the_query(query: str, parts: QueryParts) -> None:
    assert split_query(query) == parts


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("旅行 -tag:日記", QueryParts("旅行", not_tags=("日記",))),
        ("-TAG:#日記 旅行 -tag:運動", QueryParts("旅行", not_tags=("#日記", "運動"))),
        ("旅行 -path:日記/", QueryParts("旅行", not_paths=("日記/",))),
        ('旅行 -path:"my notes"', QueryParts("旅行", not_paths=("my notes",))),
        ("旅行 -雪 -Rain", QueryParts("旅行", not_words=("雪", "Rain"))),
        ('旅行 -"味噌 ラーメン"', QueryParts("旅行", not_words=("味噌 ラーメン",))),
        ("旅行\u3000-雪", QueryParts("旅行", not_words=("雪",))),
        (
            "tag:旅 -tag:仕事 path:2026 -path:下書き 京都 -雨",
            QueryParts(
                "京都",
                tags=("旅",),
                paths=("2026",),
                not_tags=("仕事",),
                not_paths=("下書き",),
                not_words=("雨",),
            ),
        ),
        # left empty, to be refused: "-tag:" is an unfinished exclusion, not the word "tag"
        ("旅行 -tag:", QueryParts("旅行", not_tags=("",))),
        ('旅行 -path:""', QueryParts("旅行", not_paths=("",))),
        ('旅行 -""', QueryParts("旅行", not_words=("",))),
        # words, not exclusions: a hyphen inside a word, a lone one, two, an arrow, full width
        ("e-mail 2024-01 の設定", QueryParts("e-mail 2024-01 の設定")),
        ("A - B", QueryParts("A - B")),
        ("--force の意味", QueryParts("--force の意味")),
        ("入力 -> 出力", QueryParts("入力 -> 出力")),
        ("旅行 －雪", QueryParts("旅行 －雪")),
        ('旅行 -"雪"だるま', QueryParts('旅行 -"雪"だるま')),
    ],
)
def test_exclusions_are_read_out_of_the_query(query: str, parts: QueryParts) -> None:
    assert split_query(query) == parts


def test_operators_join_the_filters_given_beside_the_query() -> None:
    given = SearchFilters(tags=("運動",), path_prefix="日記/")
    result = narrowed(
        given, split_query("tag:#Garden path:2026/ -tag:仕事 -path:下書き 走った -雨")
    )
    assert result == SearchFilters(
        tags=("運動",), all_tags=("Garden",), path_prefix="日記/", path_contains=("2026/",),
        exclude_tags=("仕事",), exclude_paths=("下書き",), exclude_words=("雨",),
    )  # fmt: skip
    assert narrowed(given, split_query("走った")) is given  # no operator: as given


@pytest.mark.parametrize(
    "query", ["path:日記/ path:projects/ 雨", "path:projects 雨 -path:projects/old"]
)
def test_several_paths_each_hold_anywhere_in_the_path(query: str) -> None:
    """Two texts can both lie in one path (``projects/日記/x.md``), so neither is refused."""
    parts = split_query(query)
    result = narrowed(SearchFilters(path_prefix="日記/"), parts)
    assert result is not None and result.path_contains == parts.paths
    assert result.path_prefix == "日記/"


@pytest.mark.parametrize(
    ("query", "given", "reason"),
    [
        ("tag:日記", None, "no words to search for"),
        ("-tag:日記", None, "no words to search for"),
        ("-path:日記 -雪", SearchFilters(tags=("旅",)), "no words to search for"),
        ('tag:"" 旅行', None, 'tag:"" names nothing'),
        ("tag:# 旅行", None, 'tag:"" names nothing'),
        ("tag:## 旅行", None, 'tag:"" names nothing'),
        ('tag:"# " 旅行', None, 'tag:"" names nothing'),
        ("-tag: 旅行", None, '-tag:"" names nothing'),
        ("-tag:# 旅行", None, '-tag:"" names nothing'),
        ("-PATH: 旅行", None, '-path:"" names nothing'),
        ('旅行 -""', None, '-"" names nothing'),
        ("旅行 -の", None, "-の excludes nothing"),
        ('旅行 -"。、"', None, "-。、 excludes nothing"),
    ],
)
def test_a_query_operators_leave_nothing_to_search_is_refused_with_the_reason(
    query: str, given: SearchFilters | None, reason: str
) -> None:
    with pytest.raises(UnsearchableQuery, match=reason):
        narrowed(given, split_query(query))


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("tag:旅行 OR tag:出張 京都", QueryParts("京都", any_tags=(("旅行", "出張"),))),
        ("tag:a OR TAG:b OR tag:#c", QueryParts("", any_tags=(("a", "b", "#c"),))),
        ('path:日記 OR path:"my notes"', QueryParts("", any_paths=(("日記", "my notes"),))),
        (
            "tag:x OR tag:y tag:z path:p OR path:q",
            QueryParts("", tags=("z",), any_tags=(("x", "y"),), any_paths=(("p", "q"),)),
        ),
        # between words OR goes: search already ranks a note holding any of them
        ("雨 OR 雪", QueryParts("雨 雪")),
        ("旅行 tag:日記 雨 OR 雪", QueryParts("旅行 雨 雪", tags=("日記",))),
        # not between two terms, or not upper case: a word
        ("OR", QueryParts("OR")),
        ("雨 OR", QueryParts("雨 OR")),
        ("雨 OR OR 雪", QueryParts("雨 OR OR 雪")),
        ("雨 or 雪", QueryParts("雨 or 雪")),
        ("tag:a or tag:b", QueryParts("or", tags=("a", "b"))),
    ],
)
def test_or_joins_operators_of_one_kind_and_goes_between_words(
    query: str, parts: QueryParts
) -> None:
    assert split_query(query) == parts


@pytest.mark.parametrize(
    "query",
    [
        "旅行 OR tag:日記",
        "tag:a OR path:b 旅行",
        "-tag:a OR -tag:b 旅行",
        "-雪 OR 雨",
        '-"味噌 ラーメン" OR 雨',
        "tag:a OR tag: 旅行",
    ],
)
def test_an_or_joining_two_kinds_is_refused_with_the_reason(query: str) -> None:
    """No parentheses group such an OR, so any reading of it would be a guess."""
    with pytest.raises(
        UnsearchableQuery, match="OR joins two tag:, two path: or two file: operators"
    ):
        narrowed(None, split_query(query))


def test_an_or_group_is_one_condition_of_any_of_its_values() -> None:
    given = SearchFilters(path_contains=("a",))
    result = narrowed(given, split_query("tag:#Garden OR tag:旅 path:x OR path:Y 雨"))
    assert result == SearchFilters(
        path_contains=("a",), tag_groups=(("Garden", "旅"),), path_groups=(("x", "Y"),)
    )
    clause, params = filter_clause(result)
    assert params == {"f_anytags0": ["Garden", "旅"], "f_path0": ["%a%"], "f_path1": ["%x%", "%y%"]}
    assert "&&" in clause.as_string(None)


@pytest.mark.parametrize(
    ("word", "lexemes"),
    [
        ("雪", ["雪"]),
        ("走っ", ["走る"]),  # as keyword search reads it: the normalized form
        ("Rain", ["rain"]),
        ("味噌ラーメン", ["味噌 ラーメン"]),  # cut in two: the pair, not either half alone
        ("東京都庁舎", ["東京 都庁", "都庁 舎"]),
        ("の", []),
        ("!!", []),
    ],
)
def test_an_excluded_word_is_matched_by_its_keyword_tokens(word: str, lexemes: list[str]) -> None:
    assert word_lexemes(word) == lexemes


def test_path_texts_match_literally_in_any_case_and_either_unicode_form() -> None:
    """``%``, ``_`` and ``\\`` in a path are the characters themselves, not LIKE's wildcards; the
    text is lower-cased as the path is, and matched composed or decomposed (as macOS stores a
    Japanese name)."""
    given = SearchFilters(path_contains=("100%_A\\b", "ブログ"), exclude_paths=("X_", "ガ"))
    _, params = filter_clause(given)
    assert params == {
        "f_path0": ["%100\\%\\_a\\\\b%"],
        "f_path1": ["%ブログ%", "%フ\u3099ロク\u3099%"],
        "f_nopaths": ["%x\\_%", "%ガ%", "%カ\u3099%"],
    }
