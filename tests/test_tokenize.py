"""Keyword tokens: Sudachi normalized forms, function words dropped, Latin kept, NFKC + lowercase."""

from __future__ import annotations

import psycopg
import pytest

from knowledge_assets.core.chunks.tokenize import (
    _capped_tsvector,
    chunk_keywords,
    chunk_tsvector,
    query_lexemes,
    query_terms,
    tokens,
    tsquery_input,
    tsvector_input,
)

from .conftest import JSQUAD


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("行いました", ["行う"]),
        ("走った", ["走る"]),
        ("見られる", ["見る"]),
        ("コンピュータ", ["コンピューター"]),  # spelling variants share one normalized form
        ("ｶﾀｶﾅ", ["片仮名"]),
    ],
)
def test_japanese_words_become_their_normalized_form(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("東京の大学で", ["東京", "大学"]),  # の, で: particles
        ("雪が降っていた", ["雪", "降る", "居る"]),  # が particle; た auxiliary verb
        ("検索、検索。", ["検索", "検索"]),  # punctuation; repeats kept for term frequency
    ],
)
def test_particles_auxiliaries_and_punctuation_are_dropped(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PostgreSQL and pgvector", ["postgresql", "and", "pgvector"]),
        ("not", ["not"]),  # Sudachi alone would give ノット
        ("東京の大学でdon't!", ["東京", "大学", "dont"]),
    ],
)
def test_latin_words_are_kept_as_written_and_lowercased(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ＡＢＣ\u3000ｄｅｆ", ["abc", "def"]),  # full-width letters and space
        ("①②", ["12"]),
        ("ＢＭ２５", ["bm", "25"]),  # Sudachi splits letters from digits
    ],
)
def test_nfkc_folding_and_lowercasing(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("E-mail: a.b@example.com", ["email", "a", "b", "example", "com"]),
        ("C++ と C#", ["c", "c"]),
        ("😀絵文字", ["絵", "文字"]),
        ("", []),
        ("  \n\t ", []),
    ],
)
def test_symbols_are_reduced_to_letters_and_digits(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_query_terms_are_distinct_in_first_seen_order() -> None:
    assert query_terms("検索 システム 検索") == ["検索", "システム"]
    assert tsquery_input("検索の速度") == "'検索' | '速度'"
    assert tsquery_input("のに") == ""


@pytest.mark.parametrize(
    "text",
    ["東京の大学でdon't!", "E-mail: a.b@example.com", "ＡＢＣ　ｄｅｆ 走った", "x" * 80 + " 雪"],
)
def test_postgres_keeps_every_token_as_one_lexeme(db_url: str, text: str) -> None:
    expected = [t for t in tokens(text)]
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT array_agg(lexeme ORDER BY positions[1]) FROM unnest(to_tsvector('simple', %s))",
            (tsvector_input(text),),
        ).fetchone()
    assert row is not None
    assert row[0] == list(dict.fromkeys(expected))


def test_chunk_tsvector_weights_headings_and_indexes_adjacent_pairs() -> None:
    literal = chunk_tsvector("料理", "味噌を煮る")
    assert literal == "'料理':1A '味噌':2D '煮る':3D '味噌 煮る':2C"


def test_chunk_tsvector_is_read_by_postgres_with_its_token_count(db_url: str) -> None:
    head, body = "設計 メモ", "検索の速度と検索の品質を測った。" * 3
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT rag.tsvector_token_count(%s::tsvector), %s::tsvector @@ %s::tsquery",
            (chunk_tsvector(head, body), chunk_tsvector(head, body), "'検索 速度'"),
        ).fetchone()
    assert row == (len(tokens(head)) + len(tokens(body)), True)


@pytest.mark.parametrize(
    ("head", "body"),
    [
        ("料理", "味噌を煮る"),
        ("", ""),
        ("検索", "検索 " * 300),  # one lexeme past the 256 positions Postgres keeps
        ("東京 大学", "東京の大学 " * 200 + "京都 " * 257),
    ],
)
def test_chunk_keywords_count_the_tokens_postgres_keeps(db_url: str, head: str, body: str) -> None:
    literal, count = chunk_keywords(head, body)
    assert literal == chunk_tsvector(head, body)
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT rag.tsvector_token_count(%s::tsvector)", (literal,)).fetchone()
    assert row == (count,)


def test_chunk_keywords_leave_the_count_of_a_chunk_over_the_limits_to_postgres() -> None:
    assert chunk_keywords("", "検索 " * 17_000)[1] is None


def test_query_lexemes_are_words_and_adjacent_pairs() -> None:
    assert query_lexemes("東京の大学の東京") == (["東京", "大学"], ["東京 大学", "大学 東京"])


def _jsquad_token_sources() -> list[tuple[str, str]]:
    from knowledge_assets.core.chunks.chunk_writer import token_source
    from knowledge_assets.core.chunks.strategies import chunk_for
    from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document

    vault = JSQUAD / "vault"
    sources = []
    for path in sorted(vault.rglob("*.md")):
        doc = parse_document(str(path.relative_to(vault)), path.read_bytes())
        assert isinstance(doc, ParsedDoc)
        sources += [token_source(c) for c in chunk_for(doc.path, doc.frontmatter, doc.body)]
    return sources


@pytest.mark.skipif(not (JSQUAD / "vault").is_dir(), reason="shared/eval/jsquad/vault is missing")
def test_chunk_tsvector_of_every_jsquad_chunk_equals_the_general_capped_build() -> None:
    sources = _jsquad_token_sources()
    assert len(sources) > 1000
    for head, body in sources:
        expected = _capped_tsvector(tokens(head), tokens(body))
        assert chunk_tsvector(head, body) == expected, (head, body[:80])


def test_chunk_tsvector_clamps_positions_past_the_tsvector_limit(db_url: str) -> None:
    body = "検索 " * 17_000
    literal = chunk_tsvector("", body)
    assert literal == _capped_tsvector([], tokens(body))
    assert literal.startswith("'検索':1D,2D,") and literal.endswith(",16383C")
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT length(%s::tsvector), rag.tsvector_token_count(%s::tsvector)",
            (literal, literal),
        ).fetchone()
    assert row == (2, 256)  # Postgres keeps the first 256 positions of a lexeme


def test_chunk_tsvector_caps_distinct_lexeme_bytes_below_postgres_limit(db_url: str) -> None:
    body = " ".join(f"lexeme{i:07d}" for i in range(40_000))  # ~1.1 MB of distinct lexemes
    literal = chunk_tsvector("", body)
    assert literal == _capped_tsvector([], tokens(body))
    assert "'lexeme 0000000':1C" in literal  # the start stays searchable
    assert "'0039999':" in literal  # every word fits; the pairs met last do not
    assert "'lexeme 0039999'" not in literal
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT length(%s::tsvector) > 1000", (literal,)).fetchone()
    assert row == (True,)
