"""A folder replaced by a symlink: never followed, and its stored notes follow where the link
leads (into the vault: read there, so no stale copies stay; out of it or nowhere: kept)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.index.checks_sql import source_drift
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.ingest.assets import raw_metadata


def _notes_under(vault: Path, folder: str) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in (vault / folder).rglob("*.md"))


def test_a_folder_moved_and_linked_back_inside_the_vault_leaves_no_stale_copies(
    db_url: str, vault: Path
) -> None:
    """The copies under the link's path stayed searchable beside the moved notes, and an edit
    to a moved note never reached them."""
    before = _notes_under(vault, "projects")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        (vault / "projects").rename(vault / "archive")
        (vault / "projects").symlink_to(vault / "archive", target_is_directory=True)
        report = sync_source(conn, LocalSource(vault))
        paths = set(store.stored_paths(conn, "docs_local"))
        assert not any(p.startswith("projects/") for p in paths)
        assert sorted(old for old, _ in report.renamed) == before and report.deleted == []
        assert raw_metadata(report, "docs_local")["symlinked_folders"].value == 1
        assert dict(report.unreadable)["projects/"].startswith(
            "symlink to a folder in the vault (archive/): not followed"
        )
        assert source_drift(conn, LocalSource(vault)).in_sync
        assert sync_source(conn, LocalSource(vault)).fetched == 0


@pytest.mark.parametrize("where", ["outside", "nowhere"])
def test_a_folder_moved_out_of_the_vault_and_linked_keeps_its_notes(
    db_url: str, vault: Path, tmp_path: Path, where: str
) -> None:
    """Out of the vault, or on a drive not mounted (a link that leads nowhere, which was
    listed as no folder at all and had its notes deleted unrecorded)."""
    before = _notes_under(vault, "projects")
    drive = tmp_path / "drive" / "projects"
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        drive.parent.mkdir()
        shutil.move(vault / "projects", drive)
        (vault / "projects").symlink_to(drive, target_is_directory=True)
        if where == "nowhere":
            drive.parent.rename(tmp_path / "unmounted")
        report = sync_source(conn, LocalSource(vault))
        paths = set(store.stored_paths(conn, "docs_local"))
        rejected = dict(store.rejections(conn, "docs_local"))
    assert set(before) <= paths and report.deleted == []
    reason = rejected["projects/"]
    assert reason.startswith("symlink to a folder") and "not followed" in reason
    assert reason.endswith(f"its {len(before)} stored notes are kept")
    metadata = raw_metadata(report, "docs_local")
    assert (metadata["symlinked_folders"].value, metadata["unreadable_folders"].value) == (1, 0)


def test_a_symlinked_folder_with_nothing_stored_is_no_drift(
    db_url: str, vault: Path, tmp_path: Path
) -> None:
    """Never followed, so never stale: the source check no longer failed for good over it."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "note.md").write_text("# よそ\n", encoding="utf-8")
    (vault / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (vault / "gone").symlink_to(tmp_path / "missing")  # not a folder as far as anyone knows
    with db.connect(db_url) as conn:
        report = sync_source(conn, LocalSource(vault))
        drift = source_drift(conn, LocalSource(vault))
    assert [p for p, _ in report.unreadable] == ["linked/"]
    assert drift.in_sync, drift
