"""Tags are case-insensitive, as in Obsidian: `project`, `PROJECT` and `#Project` are one tag in
every filter (search, retrieval, the SQL entry point, re-embedding) and in every tag list (core,
CLI, API, MCP); notes keep showing their tags as written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.answer.retrieve import retrieve
from knowledge_assets.cli import main
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index.reembed import DocumentFilter, matching_documents
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.notes import list_tags, notes_tagged
from knowledge_assets.core.search.search_sql import filter_clause
from tests.api_support import api_server
from tests.mcp_support import json_of, server_env, stdio_session
from tests.test_search import ingest

NOTES = {
    "alpha.md": ["Project/Alpha"],
    "upper.md": ["Project"],
    "upper2.md": ["Project", "旅"],
    "lower.md": ["project"],
    "both.md": ["Project", "project"],  # one note carrying two spellings counts once
    "beta-upper.md": ["Beta"],
    "beta-lower.md": ["beta"],
    "kyoto.md": ["#旅"],
    "other.md": ["projects"],
}
PROJECT = {"alpha.md", "upper.md", "upper2.md", "lower.md", "both.md"}
# One entry per tag whatever its case: the most common spelling (Project: 3 notes, project: 2;
# Beta and beta tie, and B comes first), counting the notes carrying any spelling.
LISTED = {"Project": 4, "Beta": 2, "旅": 2, "Project/Alpha": 1, "projects": 1}


@pytest.fixture(scope="module")
def store(
    server_url: str, tmp_path_factory: pytest.TempPathFactory, usem3: Embedder
) -> Iterator[str]:
    from tests.conftest import new_database

    with new_database(server_url) as url:
        db.migrate(url)
        ingest(url, usem3, _vault(tmp_path_factory.mktemp("vault")))
        yield url


def _vault(folder: Path) -> Path:
    for name, tags in NOTES.items():
        text = f"---\ntags: {tags}\n---\n# {name}\n\n京都の寺を歩いた。\n"
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("tag", ["#Project", "Project/Alpha", "PROJECT", "旅", "Beta"])
def test_a_filter_keeps_its_tags_as_written(tag: str) -> None:
    """Python only strips the '#': case folds in the database, the same way on both sides."""
    assert SearchFilters(tags=(tag,)).tags == (tag.lstrip("#"),)


FOUND = [
    ("project", PROJECT),
    ("PROJECT", PROJECT),
    ("#Project", PROJECT),
    ("project/alpha", {"alpha.md"}),
    ("PROJECT/ALPHA", {"alpha.md"}),
    ("beta", {"beta-upper.md", "beta-lower.md"}),
    ("旅", {"upper2.md", "kyoto.md"}),
    ("proj", set()),
]


@pytest.mark.parametrize(("tag", "found"), FOUND)
@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_a_tag_filter_finds_every_spelling(
    store: str, usem3: Embedder, mode: str, tag: str, found: set[str]
) -> None:
    filters = SearchFilters(tags=(tag,))
    with db.connect(store) as conn:
        hits = search(
            conn, "京都の寺", mode=mode, filters=filters, limit=20, threshold=-1, embedder=usem3
        ).hits
    assert {h.file_path for h in hits} == found


def test_hits_show_the_tags_as_the_note_wrote_them(store: str) -> None:
    with db.connect(store) as conn:
        hits = search(conn, "京都の寺", mode="keyword", filters=SearchFilters(tags=("PROJECT",)))
    assert {h.file_path: h.tags for h in hits.hits}["both.md"] == ("Project", "project")


def test_answer_retrieval_filters_tags_in_any_case(store: str, usem3: Embedder) -> None:
    with db.connect(store) as conn:
        filters = SearchFilters(tags=("PROJECT",))
        found = retrieve(conn, "京都の寺", top_k=10, filters=filters, embedder=usem3)
    assert {n.note_id for n in found.notes} == PROJECT
    assert {n.note_id: n.tags for n in found.notes}["alpha.md"] == ("Project/Alpha",)


def test_the_sql_search_function_filters_tags_in_any_case(store: str, usem3: Embedder) -> None:
    vector = usem3.embed(["京都の寺"], "query")[0]
    with db.connect(store) as conn:
        rows = conn.execute(
            "SELECT file_path FROM rag.search_chunks(%s::vector, %s, 20, -1)",
            ("[" + ",".join(map(str, vector)) + "]", ["PROJECT"]),
        ).fetchall()
    assert {r[0] for r in rows} == PROJECT


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("#PROJECT", PROJECT),  # nested tags too, as in search filters
        ("project/ALPHA", {"alpha.md"}),
        ("beta", {"beta-upper.md", "beta-lower.md"}),
    ],
)
def test_re_embedding_a_tag_selects_it_in_any_case(
    store: str, tag: str, expected: set[str]
) -> None:
    with db.connect(store) as conn:
        paths = {p for _, p in matching_documents(conn, DocumentFilter(tag=tag))}
    assert paths == expected


def test_the_folded_tag_filter_reads_the_tag_index(store: str) -> None:
    where, params = filter_clause(SearchFilters(tags=("#PROJECT",)))
    with db.connect(store) as conn:
        conn.execute("SET enable_seqscan = off")  # a store this small is otherwise scanned
        plan = "\n".join(
            row[0]
            for row in conn.execute(
                b"EXPLAIN SELECT d.file_path FROM rag.latest_docs d WHERE " + where.as_bytes(conn),
                params,
                prepare=False,
            )
        )
    assert "latest_docs_tag_paths_idx" in plan
    assert "'{project}'" in plan  # the filter's keys are computed once, before the scan


def test_the_tag_list_groups_spellings_and_counts_notes(store: str) -> None:
    with db.connect(store) as conn:
        tags = list_tags(conn)
    assert dict(tags) == LISTED and len(tags) == len(LISTED)
    assert [count for _, count in tags] == sorted(LISTED.values(), reverse=True)


def test_the_cli_api_and_mcp_list_and_filter_tags_alike(
    store: str, usem3: Embedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tags", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    with api_server(store, Asker(LLMSettings(), embedder=usem3)) as base:
        api = httpx.get(f"{base}/api/tags", timeout=60).json()["data"]
        body = {"query": "京都の寺", "limit": 20, "filters": {"tags": ["PROJECT"]}}
        api_hits = httpx.post(f"{base}/api/search/keyword", json=body, timeout=60).json()["data"]
    with stdio_session(server_env(store)) as client:
        mcp = json_of(client.call("list_tags"))["tags"]
        query = {"query": "京都の寺", "tags": ["PROJECT"], "limit": 20, "mode": "keyword"}
        mcp_hits = json_of(client.call("search_docs", query))["hits"]
    assert {r["tag"]: r["count"] for r in api} == LISTED
    assert api == mcp == cli
    assert {h["id"] for h in api_hits} == {h["path"] for h in mcp_hits} == PROJECT


@pytest.mark.parametrize(("tag", "found"), FOUND)
def test_a_tags_notes_are_every_spelling_and_nested_tag(
    store: str, tag: str, found: set[str]
) -> None:
    with db.connect(store) as conn:
        total, notes = notes_tagged(conn, tag)
    assert total == len(found) and {n.file_path for n in notes} == found


def test_a_tags_notes_come_in_pages(store: str) -> None:
    with db.connect(store) as conn:
        pages = [notes_tagged(conn, "project", limit=2, offset=at) for at in (0, 2, 4, 6)]
    assert [total for total, _ in pages] == [len(PROJECT)] * 4
    assert [len(notes) for _, notes in pages] == [2, 2, 1, 0]
    assert {n.file_path for _, notes in pages for n in notes} == PROJECT


def test_the_cli_api_and_mcp_list_a_tags_notes(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tags", "#PROJECT", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["total"] == len(PROJECT) and {n["file_path"] for n in cli["notes"]} == PROJECT
    assert main(["tags", "project/alpha", "--limit", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "alpha.md  alpha.md",
        "-- 1 note tagged project/alpha",
    ]
    with api_server(store, Asker(LLMSettings())) as base:
        api = httpx.get(f"{base}/api/tags/Project%2FAlpha/notes", timeout=60).json()
        page = httpx.get(f"{base}/api/tags/project/notes?limit=2", timeout=60).json()
        none = httpx.get(f"{base}/api/tags/%E7%84%A1%E3%81%84/notes", timeout=60).json()
        refused = [
            httpx.get(f"{base}/api/tags/{t}/notes", timeout=60) for t in ("a%00b", "x" * 201)
        ]
    assert [n["id"] for n in api["data"]] == ["alpha.md"] and api["data"][0]["source"] == "local"
    assert (page["total"], page["count"]) == (len(PROJECT), 2)
    assert (none["total"], none["data"]) == (0, [])
    assert [r.status_code for r in refused] == [422, 422]  # no note can carry such a tag
    with stdio_session(server_env(store)) as client:
        mcp = json_of(client.call("tagged_docs", {"tag": "#PROJECT", "limit": 2}))
        past = json_of(client.call("tagged_docs", {"tag": "project", "offset": 10}))
    assert (mcp["total"], len(mcp["notes"])) == (len(PROJECT), 2)
    assert [n["path"] for n in mcp["notes"]] == [n["file_path"] for n in cli["notes"][:2]]
    assert (past["total"], past["notes"]) == (len(PROJECT), [])


# The store as the version before tag keys left it: tag_paths as written (sql/027).
BEFORE_029 = """
ALTER TABLE rag.latest_docs DROP COLUMN tag_paths;
DROP FUNCTION rag.tag_keys(text[]);
DROP FUNCTION rag.tag_key(text);
ALTER TABLE rag.latest_docs
    ADD COLUMN tag_paths text[] GENERATED ALWAYS AS (rag.tag_paths(tags)) STORED;
CREATE INDEX latest_docs_tag_paths_idx ON rag.latest_docs USING GIN (tag_paths);
DELETE FROM meta.migrations WHERE name = '029_tags_fold_case.sql';
"""


def _untouched(conn: Any) -> tuple[Any, ...]:
    """What an upgrade must leave alone: chunks (with their row versions), vectors, inputs."""
    return tuple(
        conn.execute(q).fetchall()
        for q in (
            "SELECT id, text_hash, xmin::text FROM rag.chunks ORDER BY id",
            "SELECT model, text_hash, created_at FROM rag.embeddings ORDER BY text_hash",
            "SELECT count(*) FROM rag.embedding_inputs",
            "SELECT count(*) FROM rag.index_writes",
        )
    )


def test_an_upgraded_store_folds_tag_case_without_re_chunking_or_re_embedding(
    blank_db_url: str, tmp_path: Path, usem3: Embedder
) -> None:
    db.migrate(blank_db_url)
    ingest(blank_db_url, usem3, _vault(tmp_path))
    with db.connect(blank_db_url) as conn:
        conn.execute(BEFORE_029.encode())
        conn.commit()
        before = _untouched(conn)
    assert db.migrate(blank_db_url) == ["029_tags_fold_case.sql"]
    with db.connect(blank_db_url) as conn:
        assert _untouched(conn) == before
        row = conn.execute(
            "SELECT tags, tag_paths FROM rag.latest_docs WHERE file_path = 'alpha.md'"
        ).fetchone()
        hits = search(conn, "京都の寺", mode="keyword", filters=SearchFilters(tags=("PROJECT",)))
    assert row == (["Project/Alpha"], ["project/alpha", "project"])
    assert {h.file_path for h in hits.hits} == PROJECT
    ingest(blank_db_url, usem3, tmp_path)  # the next update finds nothing to chunk or embed
    with db.connect(blank_db_url) as conn:
        assert _untouched(conn) == before
