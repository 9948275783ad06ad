"""A sync that would delete most of a source's notes (a wrong folder, another vault, a wrong
prefix) is refused before anything is deleted, unless KA_ALLOW_MASS_DELETE is set; renames and
a vault folder moved with its notes are no deletions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.deletion_guard import MassDeletion
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.index.assets import chunks
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from tests.fakes.github_server import FakeGitHub
from tests.pipeline_support import pipeline_resources

ROOT = Path(__file__).resolve().parents[1]
NOTES = 24


def _vault(root: Path, notes: int = NOTES, folder: str = "") -> Path:
    for n in range(notes):
        path = root / folder / f"note{n:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# ノート{n}\n\n梅雨の話、{n}回目。\n", encoding="utf-8")
    return root


def _stored(url: str, table: str = "docs_local") -> list[str]:
    with db.connect(url) as conn:
        return store.stored_paths(conn, table)


@pytest.fixture(autouse=True)
def _no_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_ALLOW_MASS_DELETE", raising=False)
    monkeypatch.delenv("KA_ALLOW_EMPTY_SOURCE", raising=False)


def test_a_wrong_folder_with_a_few_notes_is_refused_and_deletes_nothing(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "vault")
    wrong = tmp_path / "Downloads"
    (wrong / "sub").mkdir(parents=True)
    (wrong / "readme.md").write_text("# 別のノート\n")
    (wrong / "sub" / "todo.md").write_text("# todo\n")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
    before = _stored(db_url)
    with db.connect(db_url) as conn, pytest.raises(MassDeletion) as refused:
        sync_source(conn, LocalSource(wrong))
    message = str(refused.value)
    assert message == (
        f"refused: the folder changed from {vault} to {wrong}, which lists 2 notes: this sync"
        f" would delete {NOTES} of the {NOTES} stored notes. Nothing was deleted. Check"
        " KA_VAULT_PATH; if the notes were removed on purpose, run once with"
        " KA_ALLOW_MASS_DELETE=1"
    )
    assert _stored(db_url) == before
    with db.connect(db_url) as conn:  # the right folder again: nothing to do, nothing re-read
        back = sync_source(conn, LocalSource(vault))
    assert back.fetched == 0 and back.deleted == [] and back.new == []

    monkeypatch.setenv("KA_ALLOW_MASS_DELETE", "1")
    with db.connect(db_url) as conn:
        allowed = sync_source(conn, LocalSource(wrong))
    assert len(allowed.deleted) == NOTES and allowed.new == ["readme.md", "sub/todo.md"]
    assert _stored(db_url) == ["readme.md", "sub/todo.md"]


def test_the_refusal_is_kept_until_renames_are_known_then_rolled_back(
    db_url: str, tmp_path: Path
) -> None:
    """Another vault of as many notes: each new file could have been a moved note, so the
    files are read first; none is, and the refusal rolls back every deletion."""
    vault = _vault(tmp_path / "vault")
    other = tmp_path / "other"
    other.mkdir()
    for n in range(NOTES):
        (other / f"memo{n}.md").write_text(f"# メモ{n}\n\n別の話。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        with pytest.raises(MassDeletion, match=f"would delete {NOTES} of the {NOTES} stored notes"):
            sync_source(conn, LocalSource(other))
        assert conn.execute("SELECT count(*) FROM raw.rejected_files").fetchone() == (0,)
    assert _stored(db_url) == [f"note{n:02d}.md" for n in range(NOTES)]


def test_moving_every_note_into_a_folder_is_renames_not_deletions(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        (vault / "archive").mkdir()
        for note in sorted(vault.glob("*.md")):
            note.rename(vault / "archive" / note.name)
        report = sync_source(conn, LocalSource(vault))
    assert report.deleted == [] and report.new == []
    assert report.renamed == [(f"note{n:02d}.md", f"archive/note{n:02d}.md") for n in range(NOTES)]
    assert _stored(db_url) == [f"archive/note{n:02d}.md" for n in range(NOTES)]


def test_a_vault_folder_moved_with_its_notes_is_not_refused(db_url: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        moved = tmp_path / "Documents" / "vault"
        moved.parent.mkdir()
        shutil.copytree(vault, moved)  # a copy: new modification times, the same notes
        shutil.rmtree(vault)
        report = sync_source(conn, LocalSource(moved))
        location = conn.execute("SELECT location FROM meta.sync_state WHERE source_key = %s",
                                (LocalSource(moved).key,)).fetchone()  # fmt: skip
    assert report.deleted == [] and report.new == [] and report.unchanged == NOTES
    assert location == (str(moved),)


def test_a_small_clean_up_needs_no_permission(db_url: str, tmp_path: Path) -> None:
    """Up to 10 deletions pass whatever the share: leaving the sample vault for one's own."""
    vault = _vault(tmp_path / "vault", notes=10)
    own = tmp_path / "own"
    own.mkdir()
    (own / "日記.md").write_text("# 日記\n\n今日は晴れ。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        report = sync_source(conn, LocalSource(own))
    assert len(report.deleted) == 10 and _stored(db_url) == ["日記.md"]


def test_deleting_half_of_a_vault_passes_and_more_than_half_is_refused(
    db_url: str, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    notes = sorted(vault.glob("*.md"))
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        for note in notes[: NOTES // 2]:
            note.unlink()
        assert len(sync_source(conn, LocalSource(vault)).deleted) == NOTES // 2
        for note in notes[NOTES // 2 : NOTES // 2 + 11]:  # 11 of the 12 left
            note.unlink()
        with pytest.raises(
            MassDeletion,
            match=f"^refused: {vault} lists 1 note: this sync would delete 11 of the 12 stored",
        ):
            sync_source(conn, LocalSource(vault))
    assert len(_stored(db_url)) == NOTES // 2


def test_a_wrong_github_prefix_is_refused(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_fake_token_for_mass_delete_tests"
    notes: dict[str, bytes | None] = {
        f"vault/n{i:02d}.md": f"# n{i}\n\nbody {i}\n".encode() for i in range(NOTES)
    }
    notes["vaults/old.md"] = b"# an old folder\n"
    with FakeGitHub(token=token) as gh:
        gh.commit(notes)

        def source(prefix: str) -> GitHubSource:
            return GitHubSource(gh.repo, prefix=prefix, token=token, base_url=gh.base_url)

        with db.connect(db_url) as conn:
            sync_source(conn, source("vault"))
            with pytest.raises(MassDeletion) as refused:
                sync_source(conn, source("vaults"))
        assert str(refused.value).startswith(
            "refused: the GitHub repository, branch or prefix changed from"
            " owner/notes@main/vault to owner/notes@main/vaults, which lists 1 note: this sync"
            f" would delete {NOTES} of the {NOTES} stored notes. Nothing was deleted. Check"
            " KA_GITHUB_REPO, KA_GITHUB_BRANCH and KA_GITHUB_PREFIX;"
        )
        assert len(_stored(db_url, "docs_github")) == NOTES
        monkeypatch.setenv("KA_ALLOW_MASS_DELETE", "1")
        with db.connect(db_url) as conn:
            allowed = sync_source(conn, source("vaults"))
    assert len(allowed.deleted) == NOTES and _stored(db_url, "docs_github") == ["vaults/old.md"]


def _update(env: dict[str, str], vault: Path, **more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "update", "--no-embeddings"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env=env | {"KA_VAULT_PATH": str(vault), **more},
    )  # fmt: skip


def test_update_refuses_a_wrong_vault_path_in_one_line_and_runs_once_allowed(
    db_url: str, tmp_path: Path
) -> None:
    """Through the real graph: a folder of one note after a vault of 24."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env |= {"DATABASE_URL": db_url, "KA_DATA_DIR": str(tmp_path / "data"), "KA_AUTOMATION": "off"}
    vault = _vault(tmp_path / "vault")
    wrong = tmp_path / "vault2"
    wrong.mkdir()
    (wrong / "Welcome.md").write_text("# Welcome\n\nObsidian の最初のノート。\n")
    # The vault of 24 stored by the graph in this process, as an update stores it: what is
    # checked is each update after it, and one process fewer takes seconds off the test.
    first = dg.materialize(
        [raw_docs, latest_docs, chunks], resources=pipeline_resources(db_url, vault)
    )
    assert first.success

    refused = _update(env, wrong)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.startswith(
        f"  raw_docs: refused: the folder changed from {vault} to {wrong}, which lists 1 note:"
        f" this sync would delete {NOTES} of the {NOTES} stored notes. Nothing was deleted."
        " Check KA_VAULT_PATH; if the notes were removed on purpose, run once with"
        " KA_ALLOW_MASS_DELETE=1\n"
    )
    assert "update FAILED" in refused.stdout and len(refused.stderr.splitlines()) == 2
    assert len(_stored(db_url)) == NOTES
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone() == (NOTES,)

    moved = tmp_path / "moved"
    vault.rename(moved)  # the vault folder moved: the same notes, nothing to delete
    again = _update(env, moved)
    assert again.returncode == 0, again.stderr
    assert "raw_docs         No changes: nothing written." in again.stdout

    allowed = _update(env, wrong, KA_ALLOW_MASS_DELETE="1")
    assert allowed.returncode == 0, allowed.stderr
    assert f"1 new, 0 changed, 0 unchanged, {NOTES} deleted" in allowed.stdout
    assert _stored(db_url) == ["Welcome.md"]
