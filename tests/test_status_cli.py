"""``knowledge-assets status``: each source's last sync, what search reads, the active model's
coverage, and every file or note that needs fixing, listed with its reason (the command line
against a real store)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.cli import main
from knowledge_assets.core import failures
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.store import doc_id
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from tests.api_support import api_server
from tests.conftest import EXAMPLE_VAULT
from tests.test_search import ingest

BROKEN = "inbox/broken.md"
TWICE = "twice.md"


@pytest.fixture
def messy(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The sample vault with a file YAML cannot read and a note with a key written twice,
    indexed without vectors."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / "inbox").mkdir()
    (vault / BROKEN).write_text("---\ntitle: [unclosed\n---\n本文\n", encoding="utf-8")
    (vault / TWICE).write_text("---\ntitle: 一\ntitle: 二\n---\n# 二度\n\n本文。\n", encoding="utf-8")  # fmt: skip
    ingest(db_url, None, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KA_VAULT_PATH", str(vault))
    return vault


def test_status_names_the_sources_and_every_file_to_fix(
    messy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"sources   local  {messy}  synced ")
    assert lines[0].endswith("9 stored, 1 rejected")
    assert (
        lines[1] == "search    7 notes (1 draft or empty note left out, 1 superseded), 18 passages"
    )
    assert lines[2] == "model     none active: keyword search only (`knowledge-assets update`)"
    assert lines[3] == "rejected  1 file"
    assert lines[4].startswith(f"  local  {BROKEN}  malformed YAML frontmatter")
    assert lines[5] == "warnings  1 note"
    assert lines[6].startswith(f"  local  {TWICE}  duplicate frontmatter key `title`")
    assert lines[-1].startswith("-- fix a file and run `knowledge-assets update`")


def test_status_lists_notes_a_step_could_not_index_and_caps_each_list(
    messy: Path, db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    garden = "projects/garden.md"
    with db.connect(db_url) as conn:
        failures.record(conn, "chunks", [(doc_id("docs_local", garden), "x", "could not be chunked: boom")])  # fmt: skip
        conn.commit()
    monkeypatch.setattr("knowledge_assets.status_cli.SHOWN", 0)
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "failed    1 note\n  … and 1 more (--all lists them)" in out
    assert main(["status", "--all"]) == 0
    assert f"  local  {garden}  chunks: could not be chunked: boom" in capsys.readouterr().out
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["problems"] == 3 and data["searchable"] == 7 and data["model"] is None
    assert [p["path"] for p in data["rejected"]] == [BROKEN]
    assert data["sources"][0]["name"] == "local" and data["sources"][0]["rejected"] == 1


def test_status_lists_dates_that_are_none_with_the_notes_warnings(
    messy: Path, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A date left empty because it is no date is a warning too: listed beside the ones the
    file's reading stored, on the note's one line when it has both."""
    (messy / "dated.md").write_text("---\ncreated: 2024-02-30\n---\n# 日付\n\n本文。\n")
    (messy / TWICE).write_text(
        "---\ntitle: 一\ntitle: 二\nupdated: いつか\n---\n# 二度\n\n本文。\n", encoding="utf-8"
    )
    ingest(db_url, None, messy)
    assert main(["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("warnings  2 notes")
    assert lines[at + 1] == (
        "  local  dated.md  `created: 2024-02-30` is not a date (YYYY-MM-DD); left empty"
    )
    assert lines[at + 2].startswith(f"  local  {TWICE}  duplicate frontmatter key `title`")
    assert lines[at + 2].endswith("; `updated: いつか` is not a date (YYYY-MM-DD); left empty")
    (messy / "dated.md").write_text("---\ncreated: 2024-02-29\n---\n# 日付\n\n本文。\n")
    ingest(db_url, None, messy)
    assert main(["status"]) == 0
    assert "dated.md" not in capsys.readouterr().out  # fixed: no longer listed


def test_status_of_an_empty_store_says_what_to_run(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sources   none synced yet: run `knowledge-assets update`\n")
    assert "rejected" not in out and "-- fix" not in out


def _overlap_lines(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], books: Path, vault: Path,
) -> list[str]:  # fmt: skip
    """The overlap lines of ``status`` once a books source on ``books`` and the vault on
    ``vault`` are synced."""
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    with db.connect(db_url) as conn:
        conn.execute("SELECT raw.ensure_docs_table(%s)", ("docs_books",))
        sync_source(conn, LocalSource(books, table="docs_books"))
        sync_source(conn, LocalSource(vault))
        conn.commit()
    assert main(["status"]) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("overlap")]


def test_status_says_when_a_source_folder_lies_inside_the_vault(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A books folder kept in the vault had every book indexed, and found, twice."""
    vault = tmp_path / "vault"
    (vault / "Books").mkdir(parents=True)
    (vault / "日記.md").write_text("# 日記\n\n本文。\n", encoding="utf-8")
    (vault / "Books" / "9784003362211.md").write_text("# 本\n\n感想。\n", encoding="utf-8")
    overlap = _overlap_lines(db_url, tmp_path, monkeypatch, capsys, vault / "Books", vault)
    assert overlap == [
        f"overlap   the books folder {vault / 'Books'} is inside the vault folder {vault}: its"
        " notes are indexed and found twice; move it out of the vault, or leave it out:"
        " KA_VAULT_EXCLUDE=Books/ (or Obsidian's Excluded files)"
    ]
    with db.connect(db_url) as conn:  # left out of the vault as the line says
        sync_source(conn, LocalSource(vault, exclude=["Books/"]))
        conn.commit()
    assert main(["status"]) == 0
    assert "overlap" not in capsys.readouterr().out


def test_the_api_lists_the_first_problems_of_each_kind_and_counts_them_all(
    messy: Path, db_url: str
) -> None:
    """Every problem went to the page on each load: megabytes for a vault of broken files."""
    with db.connect(db_url) as conn:
        failures.record(conn, "chunks", [(doc_id("docs_local", "projects/garden.md"), "x", "boom")])  # fmt: skip
        conn.commit()
    with api_server(db_url, Asker(LLMSettings())) as base, httpx.Client(base_url=base, timeout=60) as client:  # fmt: skip
        none = client.get("/api/status", params={"limit": 0}).json()["data"]
        one = client.get("/api/status", params={"limit": 1}).json()["data"]
    assert none["counts"] == {"rejected": 1, "warnings": 1, "failed": 1} and none["problems"] == 3
    assert none["rejected"] == none["warnings"] == none["failed"] == []
    assert [p["path"] for p in one["rejected"]] == [BROKEN]


def test_status_says_when_a_source_reads_the_vaults_own_folder(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source on the vault folder itself (or two on one folder) was not reported: every hit
    came twice, unsaid."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "日記.md").write_text("# 日記\n\n本文。\n", encoding="utf-8")
    overlap = _overlap_lines(db_url, tmp_path, monkeypatch, capsys, vault, vault)
    assert overlap == [
        f"overlap   the books folder {vault} is the vault folder too: its notes are indexed and"
        " found twice; remove one of the two, or point it at another folder"
    ]
