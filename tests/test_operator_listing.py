"""A query of Obsidian operators alone lists the notes they keep, as Obsidian's search box does:
the listing itself on real Postgres over the sample vault (every filter, exclusions and excluded
words, order, paging), the CLI's ``search`` printing it and the API's ``/api/search/notes``."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.listing import ListedNote, notes_kept
from knowledge_assets.core.search.notes import notes_tagged
from knowledge_assets.core.search.operators import UnsearchableQuery, listed, split_query
from tests.api_support import api_client
from tests.conftest import DIARY_10, DIARY_11, GARDEN, RAG


@pytest.fixture
def conn(vault_url: str) -> Iterator[psycopg.Connection]:
    with db.connect(vault_url) as c:
        yield c


def _every_note(conn: psycopg.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT file_path FROM rag.latest_docs").fetchall()}


def _kept(conn: psycopg.Connection, query: str, filters: SearchFilters | None = None) -> set[str]:
    total, notes = notes_kept(conn, listed(filters, split_query(query)), limit=100)
    assert total == len(notes)
    return {n.file_path for n in notes}


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("path:日記/", {DIARY_10, DIARY_11}),
        ("PATH:01-11", {DIARY_11}),  # anywhere in the path, in any case
        ("tag:日記 -tag:運動", {DIARY_10}),
        ("tag:#RAG", {RAG}),
        ("path:日記/ -雪", {DIARY_11}),  # an excluded word, through the keyword index
        ("path:日記/ -path:01-10 tag:運動", {DIARY_11}),
        ("tag:日記 tag:運動", {DIARY_11}),  # each tag: must hold, as in Obsidian
        ("tag:運動 OR tag:RAG", {DIARY_11, RAG}),  # either, as Obsidian's OR
        ("tag:運動 OR tag:RAG OR tag:garden", {DIARY_11, RAG, GARDEN}),
        ("tag:日記 OR tag:RAG -tag:運動", {DIARY_10, RAG}),
        ("path:01-10 OR path:01-11", {DIARY_10, DIARY_11}),
        ("path:日記/ tag:運動 OR tag:RAG", {DIARY_11}),  # the group and the path: both hold
        ("path:nowhere/", set()),
        # file: reads the file name alone, in any case: not the folder 日記/ above it.
        ("file:2026-01", {DIARY_10, DIARY_11}),
        ("FILE:01-11.MD", {DIARY_11}),
        ("file:日記", set()),
        ("file:rag-design", {RAG}),
        ("file:01-10 OR file:01-11", {DIARY_10, DIARY_11}),
        ("path:日記/ -file:01-10", {DIARY_11}),
        # [property] reads the frontmatter: RAG設計メモ has version: 2 and aliases
        ("[version:2]", {RAG}),
        ("[content_type:project] OR [aliases]", {GARDEN, RAG}),
        ("path:日記/ -[tags:運動]", {DIARY_10}),
    ],
)
def test_a_query_of_operators_alone_lists_exactly_the_notes_they_keep(
    conn: psycopg.Connection, query: str, kept: set[str]
) -> None:
    assert _kept(conn, query) == kept


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_file_operator_narrows_a_search_to_the_notes_its_text_names(
    conn: psycopg.Connection, usem3: Embedder, mode: str
) -> None:
    """Both diary notes are of 2026-01; file: keeps the one whose file name holds 01-11, and
    -file: the other, whatever the words find."""
    found = {
        q: {h.file_path for h in search(conn, q, mode=mode, embedder=usem3).hits}
        for q in ("日記 file:01-11", "日記 -file:01-11", "日記 file:日記")
    }
    assert found == {
        "日記 file:01-11": {DIARY_11},
        "日記 -file:01-11": {DIARY_10},
        "日記 file:日記": set(),
    }


def test_exclusions_alone_list_every_note_but_those_they_leave_out(
    conn: psycopg.Connection,
) -> None:
    every = _every_note(conn)
    assert split_query("-tag:日記 -tomatoes").excludes_only
    assert _kept(conn, "-tag:日記 -tomatoes") == every - {DIARY_10, DIARY_11, GARDEN}
    assert not split_query("path:日記/ -雪").excludes_only
    assert split_query("-file:2026").excludes_only and not split_query("file:2026").excludes_only
    assert _kept(conn, "-file:2026") == every - {DIARY_10, DIARY_11}


def test_the_filters_given_beside_the_query_narrow_the_listing(conn: psycopg.Connection) -> None:
    assert _kept(conn, "-path:garden", SearchFilters(tags=("日記", "garden"))) == {
        DIARY_10,
        DIARY_11,
    }
    assert _kept(conn, "tag:日記", SearchFilters(updated_to=dt.date(2000, 1, 1))) == set()


def test_the_listing_pages_most_recently_updated_first_as_a_tags_listing_does(
    conn: psycopg.Connection,
) -> None:
    total, first = notes_kept(conn, SearchFilters(), limit=2)
    _, rest = notes_kept(conn, SearchFilters(), limit=100, offset=2)
    assert total == len(_every_note(conn)) and len(first) == 2

    def newest_first(n: ListedNote) -> tuple[bool, int, bool, int]:  # each NULL last
        return tuple(  # type: ignore[return-value]
            x for d in (n.updated, n.created) for x in (d is None, -(d or dt.date.min).toordinal())
        )

    notes = first + rest
    assert len(notes) == total and notes == sorted(notes, key=newest_first)
    tagged_total, tagged = notes_tagged(conn, "日記")
    assert notes_kept(conn, SearchFilters(all_tags=("日記",))) == (tagged_total, tagged)
    assert notes_kept(conn, SearchFilters(), limit=5, offset=1000) == (total, [])


@pytest.mark.parametrize(
    ("query", "reason"),
    [('tag:""', "names nothing"), ('path:""', "names nothing"), ("-tag:#", "names nothing"),
     ("path:日記/ -の", "excludes nothing"), ("tag:日記 OR path:日記/", "OR joins two tag:"),
     ("tag:日記 OR tag:#", "names nothing"), ('file:""', 'file:"" names nothing'),
     ("-file: 旅行", '-file:"" names nothing'), ("file:a OR path:b", "OR joins two tag:"),
     ("[status:] 旅行", "names nothing after the colon"), ("[a:x] OR tag:b", "OR joins two tag:")],
)  # fmt: skip
def test_an_operator_that_names_nothing_is_refused(query: str, reason: str) -> None:
    with pytest.raises(UnsearchableQuery, match=reason):
        listed(None, split_query(query))


@pytest.fixture
def cli_store(vault_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("DATABASE_URL", vault_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    return vault_url


def test_the_cli_lists_the_notes_of_operators_alone(
    cli_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "tag:日記 -tag:運動"]) == 0
    out = capsys.readouterr().out
    assert "2026年1月10日の日記" in out and DIARY_10 in out and "tags: 日記" in out
    assert DIARY_11 not in out and "-- 1 note kept by tag:日記 -tag:運動" in out
    assert main(["search", "path:日記/", "--limit", "1", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert (listing["total"], listing["count"], listing["excludes_only"]) == (2, 1, False)
    assert listing["notes"][0]["file_path"] == DIARY_11  # the most recently updated


def test_the_cli_says_exclusions_alone_list_every_other_note(
    cli_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "--", "-tag:日記"]) == 0
    captured = capsys.readouterr()
    assert (
        "note: the query only leaves notes out: these are every note but those it excludes"
        in captured.err
    )
    assert "every note but those -tag:日記 leaves out" in captured.out
    assert DIARY_10 not in captured.out and GARDEN in captured.out


def test_the_cli_refuses_an_operator_that_names_nothing(
    cli_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", 'path:""']) != 0
    assert 'path:"" names nothing' in capsys.readouterr().err


@pytest.fixture(scope="module")
def client(vault_url: str, usem3: Embedder) -> Iterator[httpx.Client]:
    with api_client(vault_url, Asker(LLMSettings(), embedder=usem3)) as c:
        yield c


def test_the_api_lists_the_notes_of_operators_alone_a_page_at_a_time(
    client: httpx.Client,
) -> None:
    body = {"query": "path:日記/ -雪", "limit": 1}
    listing = client.post("/api/search/notes", json=body).json()
    assert (listing["total"], listing["count"], listing["excludesOnly"]) == (1, 1, False)
    assert listing["data"][0]["id"] == DIARY_11 and listing["data"][0]["tags"] == ["日記", "運動"]
    first, second = (
        client.post(
            "/api/search/notes", json={"query": "path:日記/", "limit": 1, "offset": o}
        ).json()["data"][0]["id"]
        for o in (0, 1)
    )
    assert (first, second) == (DIARY_11, DIARY_10)
    narrowed = {"query": "-tag:運動", "filters": {"tags": ["日記"]}}
    listing = client.post("/api/search/notes", json=narrowed).json()
    assert listing["excludesOnly"] and [n["id"] for n in listing["data"]] == [DIARY_10]


def test_the_api_lists_and_searches_the_notes_of_a_property_test(client: httpx.Client) -> None:
    listing = client.post("/api/search/notes", json={"query": "[version:2]"}).json()
    assert [n["id"] for n in listing["data"]] == [RAG] and not listing["excludesOnly"]

    def found(query: str) -> set[str]:
        response = client.post("/api/search/keyword", json={"query": query})
        assert response.status_code == 200, response.text
        return {h["id"] for h in response.json()["data"]}

    assert {RAG, DIARY_11} <= found("検索")
    assert found("検索 [version]") == {RAG} and found("検索 -[version]") == {DIARY_11}


@pytest.mark.parametrize(
    ("query", "reason"),
    [("旅行 path:日記/", "has words to search for"), ('tag:""', "names nothing"),
     ("[version:]", "names nothing after the colon")],
)  # fmt: skip
def test_the_api_refuses_what_is_no_listing(client: httpx.Client, query: str, reason: str) -> None:
    response = client.post("/api/search/notes", json={"query": query})
    assert response.status_code == 422 and reason in response.json()["error"]


@pytest.mark.parametrize("tag", ["#", "", "##"])
def test_the_api_refuses_a_tag_filter_that_names_nothing(client: httpx.Client, tag: str) -> None:
    # As tag:# in the query is refused, rather than a search that silently finds no note.
    for path, body in [
        ("/api/search/keyword", {"query": "検索", "filters": {"tags": [tag]}}),
        ("/api/search/notes", {"query": "path:日記/", "filters": {"tags": ["日記", tag]}}),
        ("/api/ai/qa", {"question": "検索とは", "options": {"tags": [tag]}}),
    ]:
        response = client.post(path, json=body)
        assert response.status_code == 422, (path, response.text)
        assert "names nothing" in response.json()["error"], response.text
    if tag:  # an empty tag is no address of a tag's notes
        tagged = client.get(f"/api/tags/{quote(tag, safe='')}/notes")
        assert tagged.status_code == 422 and "names nothing" in tagged.json()["error"]


@pytest.mark.parametrize(
    "argv", [["search", "検索", "--tag", "#"], ["tags", "#"], ["search", "tag:日記", "--tag", ""]]
)
def test_the_cli_refuses_a_tag_that_names_nothing(
    cli_store: str, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(argv) != 0
    assert "names nothing: give it a name, e.g. 日記" in capsys.readouterr().err
