"""A path, a path prefix or a tag that names nothing gets a hint; a path without ``.md`` or an
absolute one inside the vault names its note (the command line against a real store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge_assets.cli import main
from knowledge_assets.cli_hints import did_you_mean, with_suffix
from knowledge_assets.core.database import db
from knowledge_assets.core.search.notes import is_latest_note
from tests.conftest import EXAMPLE_VAULT
from tests.test_search import ingest

GARDEN = "projects/garden.md"


@pytest.fixture
def store(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    ingest(db_url, None)  # the sample vault, keyword index only
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KA_VAULT_PATH", str(EXAMPLE_VAULT))
    return db_url


@pytest.mark.parametrize(
    "given",
    ["projects/garden", str(EXAMPLE_VAULT / GARDEN), str(EXAMPLE_VAULT / "projects" / "garden")],
)
def test_get_reads_a_path_without_md_or_inside_the_vault(
    store: str, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    assert main(["get", given]) == 0
    assert f"path: {GARDEN} · source: local" in capsys.readouterr().out


def test_a_latest_note_is_found_by_its_exact_path_alone(store: str) -> None:
    older = "20251201_rag-design-draft.md"  # stored, superseded by 20251230_rag-design.md
    with db.connect(store) as conn:
        stored = "SELECT 1 FROM raw.docs_local WHERE file_path = %s"
        assert conn.execute(stored, (older,)).fetchone()
        assert is_latest_note(conn, GARDEN) and is_latest_note(conn, GARDEN, "local")
        assert not is_latest_note(conn, GARDEN, "books")  # a source that holds no note there
        assert not is_latest_note(conn, older)
        assert not is_latest_note(conn, "projects/garden")
        assert not is_latest_note(conn, "Projects/garden.md")  # as stored, not case-folded
        assert with_suffix(conn, "projects/garden", None) == GARDEN
        assert with_suffix(conn, "projects/garden/", "local") == GARDEN
        assert with_suffix(conn, "projects/garden", "books") is None
        assert with_suffix(conn, older.removesuffix(".md"), None) is None
        assert with_suffix(conn, GARDEN, None) is None  # already a note path


def test_similar_reads_a_path_without_md(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["similar", "projects/garden"]) == 2  # no model: the note was found, not the path
    assert "no active embedding model" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "given", "says"),
    [
        ("get", "projekts/garden.md", f"error: no note at 'projekts/garden.md'; did you mean {GARDEN}?"),
        ("get", "old/garden.md", f"error: no note at 'old/garden.md'; did you mean {GARDEN}?"),
        ("get", "garden", f"error: no note at 'garden'; did you mean {GARDEN}?"),
        ("get", "/elsewhere/garden.md", f"error: no note at '/elsewhere/garden.md'; did you mean {GARDEN}?"),
        ("get", "zzzz.md", "error: no note at 'zzzz.md'"),
        # A note named by its title, as Obsidian shows it, was answered with nothing to try.
        ("get", "RAG設計メモ", "error: no note at 'RAG設計メモ'; did you mean 20251230_rag-design.md?"),
        ("get", "vegetable garden plan", f"error: no note at 'vegetable garden plan'; did you mean {GARDEN}?"),
    ],
)  # fmt: skip
def test_a_path_that_names_no_note_suggests_the_closest(
    store: str, capsys: pytest.CaptureFixture[str], command: str, given: str, says: str
) -> None:
    assert main([command, given]) == 2
    assert capsys.readouterr().err.splitlines()[0] == says


def test_a_path_prefix_that_no_note_has_names_the_top_folders(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "トマト", "--path-prefix", "tutorials/"]) == 0
    assert capsys.readouterr().err == (
        "warning: no note path starts with 'tutorials/'; the top folders are projects/, 日記/\n"
    )
    assert main(["search", "存在しない語彙", "--path-prefix", "projects/"]) == 0
    assert capsys.readouterr().err == ""  # the folder exists: nothing matched the words


@pytest.mark.parametrize(
    ("tag", "says"),
    [
        ("nonexistent", "note: no note is tagged 'nonexistent'; see `knowledge-assets tags` for the tags in use"),
        ("desing", "note: no note is tagged 'desing'; did you mean design?"),
    ],
)  # fmt: skip
def test_a_tag_no_note_carries_gets_a_hint(
    store: str, capsys: pytest.CaptureFixture[str], tag: str, says: str
) -> None:
    assert main(["tags", tag]) == 0
    captured = capsys.readouterr()
    assert captured.err == says + "\n" and f"-- 0 notes tagged {tag}" in captured.out


@pytest.mark.parametrize(
    ("options", "expected"),
    [([], ""), (["a"], "; did you mean a?"), (["a", "b", "c"], "; did you mean a, b or c?")],
)
def test_did_you_mean(options: list[str], expected: str) -> None:
    assert did_you_mean(options) == expected
