"""What a sync's summary counts: only stored notes as deleted, a moved note as renamed, and
every file still rejected, read again in this run or not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.ingest.assets import holds_no_notes, raw_metadata

ROOT = Path(__file__).resolve().parents[1]
BAD = {f"bad/yaml{n}.md": f"---\ntitle: [oops{n}\n---\n本文\n" for n in range(8)}
DANGLING = [f"links/gone{n}.md" for n in range(4)]  # read again on every run: unreadable


def _summary(report: SyncReport) -> str:
    return str(raw_metadata(report, "docs_local")["summary"].value)


def _bad_vault(vault: Path) -> None:
    for rel, text in BAD.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    for rel in DANGLING:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).symlink_to(vault / "nowhere" / Path(rel).name)


def test_a_rejected_file_that_goes_away_is_no_deleted_note(db_url: str, vault: Path) -> None:
    link = vault / "dangling.md"
    link.symlink_to(vault / "missing.md")
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
        assert [path for path, _ in first.rejected] == ["dangling.md"]
        link.unlink()
        report = sync_source(conn, LocalSource(vault))
        assert store.rejections(conn, "docs_local") == []
    assert report.deleted == [] and report.forgotten == ["dangling.md"]
    assert _summary(report) == (
        "0 new, 0 changed, 8 unchanged, 0 deleted, 0 renamed, 0 rejected, 1 rejected file gone"
    )


def test_a_moved_note_is_renamed_and_an_edited_one_new_and_deleted(
    db_url: str, vault: Path
) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        (vault / "archive").mkdir()
        (vault / "inbox.md").rename(vault / "archive" / "受信箱.md")
        report = sync_source(conn, LocalSource(vault))
        assert (report.new, report.deleted) == ([], [])
        assert report.renamed == [("inbox.md", "archive/受信箱.md")]
        assert _summary(report) == "0 new, 0 changed, 7 unchanged, 0 deleted, 1 renamed, 0 rejected"
        metadata = raw_metadata(report, "docs_local")
        assert metadata["renamed"].value == 1
        [row] = metadata["what_changed"].value.records  # type: ignore[union-attr]
        assert row.data == {"change": "renamed", "file": "inbox.md → archive/受信箱.md"}

        moved = vault / "archive" / "受信箱.md"
        moved.rename(vault / "inbox.md")
        (vault / "inbox.md").write_text("# 受信箱\n\n書き直した。\n", encoding="utf-8")
        edited = sync_source(conn, LocalSource(vault))
    assert (edited.new, edited.deleted, edited.renamed) == (["inbox.md"], ["archive/受信箱.md"], [])


def test_files_still_rejected_are_counted_though_not_read_again(db_url: str, vault: Path) -> None:
    _bad_vault(vault)
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
        second = sync_source(conn, LocalSource(vault))
        stored = store.rejections(conn, "docs_local")
    assert len(first.rejected) == 12 and first.still_rejected == []
    assert _summary(first).endswith(", 12 rejected")
    assert sorted(p for p, _ in second.rejected) == DANGLING  # unreadable: tried again
    assert [p for p, _ in second.still_rejected] == sorted(BAD)
    assert _summary(second).endswith(", 12 still rejected (8 unchanged since the last run)")
    assert raw_metadata(second, "docs_local")["rejected"].value == len(stored) == 12

    for rel in DANGLING:
        (vault / rel).unlink()
    with db.connect(db_url) as conn:
        third = sync_source(conn, LocalSource(vault))
        quiet = sync_source(conn, LocalSource(vault))
    assert third.forgotten == DANGLING and third.deleted == []
    assert _summary(third).endswith(
        ", 0 deleted, 0 renamed, 8 still rejected (8 unchanged since the last run),"
        " 4 rejected files gone"
    )
    assert _summary(quiet) == "No changes: nothing written; 8 files still rejected."


def test_update_names_the_files_still_rejected_in_one_line(db_url: str, tmp_path: Path) -> None:
    """Through the real graph: a second update without touching 12 bad files."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "good.md").write_text("# 良いノート\n\n本文。\n", encoding="utf-8")
    _bad_vault(vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env |= {
        "DATABASE_URL": db_url, "KA_DATA_DIR": str(tmp_path / "data"), "KA_AUTOMATION": "off",
        "KA_VAULT_PATH": str(vault),
    }  # fmt: skip
    command = [sys.executable, "-m", "knowledge_assets.cli", "update", "--no-embeddings"]
    runs = [
        subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        for _ in range(2)
    ]
    assert [run.returncode for run in runs] == [0, 0], runs[1].stderr
    # The summaries as read, whichever line of the 80 columns each part landed on.
    first, second = (" ".join(run.stdout.split()) for run in runs)
    assert "1 new, 0 changed, 0 unchanged, 0 deleted, 0 renamed, 12 rejected" in first
    assert "12 still rejected (8 unchanged since the last run)" in second
    lines = runs[1].stderr.splitlines()
    assert [line.split(":")[1] for line in lines[:4]] == [" rejected links/gone0.md"] + [
        f" rejected links/gone{n}.md" for n in range(1, 4)
    ]
    assert lines[4:] == [
        "  raw_docs: 8 files still rejected, unchanged since the last run: bad/yaml0.md,"
        " bad/yaml1.md, bad/yaml2.md and 5 more (`knowledge-assets status` lists them with their reasons)"
    ]


def test_a_vault_whose_every_note_moved_does_not_hold_no_notes(db_url: str, vault: Path) -> None:
    """Moving every note into a folder warned "holds no notes: check the folder"."""
    with db.connect(db_url) as conn:
        assert not holds_no_notes(sync_source(conn, LocalSource(vault)))
        notes = sorted(vault.rglob("*.md"))
        for note in notes:
            target = vault / "moved" / note.relative_to(vault)
            target.parent.mkdir(parents=True, exist_ok=True)
            note.rename(target)
        moved = sync_source(conn, LocalSource(vault))
        assert len(moved.renamed) == len(notes) and not moved.unchanged
        assert not holds_no_notes(moved)
    assert holds_no_notes(SyncReport(source="local:empty", head="", base=None))
