"""Syncing a local vault into Postgres: incremental, idempotent, and nothing lost on bad input."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.core.sources.local import RACY, LocalSource, as_stored, settled


def _write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_first_sync_stores_every_note_and_skips_hidden_folders(db_url: str, vault: Path) -> None:
    _write(vault, ".obsidian/ignored.md", "# not a note")
    _write(vault, "sub/.hidden/ignored.md", "# not a note")
    _write(vault, "attachment.png", b"\x89PNG")
    with db.connect(db_url) as conn:
        report = sync_source(conn, LocalSource(vault))
        paths = store.stored_paths(conn, "docs_local")
    expected = sorted(
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )
    assert paths == expected
    assert sorted(report.new) == expected
    assert report.rejected == []


def test_second_sync_over_unchanged_vault_writes_nothing(db_url: str, vault: Path) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        before = conn.execute("SELECT max(xmin::text::bigint) FROM raw.docs_local").fetchone()
        report = sync_source(conn, LocalSource(vault))
        after = conn.execute("SELECT max(xmin::text::bigint) FROM raw.docs_local").fetchone()
    assert not report.wrote_anything
    assert report.fetched == 0
    assert report.unchanged == len(list(vault.rglob("*.md")))
    assert before == after


def test_edit_add_delete_are_detected(db_url: str, vault: Path) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        edited = vault / "inbox.md"
        edited.write_text(edited.read_text() + "\nもう一行。\n")
        os.utime(edited, ns=(1, 1))
        _write(vault, "new/note.md", "# 新しいノート\n\n本文")
        (vault / "projects" / "garden.md").unlink()
        report = sync_source(conn, LocalSource(vault))
        paths = store.stored_paths(conn, "docs_local")
    assert report.changed == ["inbox.md"]
    assert report.new == ["new/note.md"]
    assert report.deleted == ["projects/garden.md"]
    assert report.fetched == 2
    assert "projects/garden.md" not in paths


def test_touched_but_identical_file_counts_as_unchanged(db_url: str, vault: Path) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        os.utime(vault / "inbox.md", ns=(5, 5))
        report = sync_source(conn, LocalSource(vault))
    assert report.fetched == 1
    assert report.changed == [] and report.new == []


def _coarse_mtime(path: Path, seconds: int) -> None:
    """Give ``path`` a whole-second mtime, as FAT or HFS+ store one."""
    os.utime(path, ns=(seconds * 10**9, seconds * 10**9))


def test_a_second_save_within_a_coarse_mtime_of_the_sync_is_read_next_time(
    db_url: str, vault: Path
) -> None:
    note = vault / "inbox.md"
    now = int(time.time())
    _coarse_mtime(note, now)  # saved just now, on a file system of whole seconds
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        # Saved again in the same second, one character changed: size and mtime stay the same.
        note.write_text(note.read_text().replace("idea", "IDEA"))
        _coarse_mtime(note, now)
        report = sync_source(conn, LocalSource(vault))
        (body,) = conn.execute(
            "SELECT content FROM raw.docs_local WHERE file_path = 'inbox.md'"
        ).fetchone()
        again = sync_source(conn, LocalSource(vault))
    assert report.changed == ["inbox.md"]
    assert "IDEA" in body
    assert again.fetched <= 1 and again.changed == []


@pytest.mark.parametrize("mtime", ["whole second, an hour old", "nanoseconds, just now"])
def test_a_settled_file_is_not_read_again(db_url: str, vault: Path, mtime: str) -> None:
    if mtime.startswith("whole second"):
        _coarse_mtime(vault / "inbox.md", int(time.time()) - 3600)
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        report = sync_source(conn, LocalSource(vault))
    assert report.fetched == 0


def test_the_fingerprint_moves_when_a_coarse_save_settles(vault: Path) -> None:
    """A run stores the head of its scan as the sensor's cursor: the head must move once a
    just-saved file has settled, so the sensor starts the run that reads it again."""
    source = LocalSource(vault)
    saved = 100 * 10**9
    versions = {"inbox.md": f"12:{saved}", "other.md": "7:123456789"}
    fresh = source.fingerprint(as_stored(versions, scanned_ns=saved + 10**9))
    settled_head = source.fingerprint(as_stored(versions, scanned_ns=saved + 10 * 10**9))
    assert fresh != settled_head
    assert settled_head == source.fingerprint(as_stored(versions, scanned_ns=saved + 60 * 10**9))


@pytest.mark.parametrize(
    ("mtime_ns", "racy"),
    [
        (100 * 10**9, True),  # whole second, within 2 s of the scan
        (98 * 10**9, True),  # FAT's even second: a save up to 2 s later keeps it
        (97 * 10**9, False),
        (100 * 10**9 - 2 * 10**7, True),  # exFAT's hundredths: within 30 ms
        (100 * 10**9 - 5 * 10**7, False),
        (100 * 10**9 - 1, False),  # nanoseconds: any later save changes the token
        (101 * 10**9, True),  # a coarse mtime ahead of the scan (a skewed clock)
    ],
)
def test_settled_marks_coarse_recent_tokens(mtime_ns: int, racy: bool) -> None:
    token = f"12:{mtime_ns}"
    assert settled(token, 100 * 10**9) == (token + RACY if racy else token)
    assert settled("unreadable", 100 * 10**9) == "unreadable"


BAD_FILES: dict[str, bytes] = {
    "bad/yaml.md": b"---\ntitle: [oops\n---\nbody",
    "bad/list.md": b"---\n- a\n---\nbody",
    "bad/latin1.md": "café".encode("latin-1"),
    "bad/binary.md": b"\x00\x01\x02PK\x03\x04",
    "bad/huge.md": b"# huge\n" + b"a" * (10 * 1024 * 1024),
}


def test_bad_files_are_rejected_with_reasons_and_the_rest_lands(db_url: str, vault: Path) -> None:
    for rel, data in BAD_FILES.items():
        _write(vault, rel, data)
    _write(vault, "Case/Note.md", "# upper")
    _write(vault, "case/note.md", "# lower")
    with db.connect(db_url) as conn:
        report = sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
        paths = set(store.stored_paths(conn, "docs_local"))
    assert set(rejected) == set(BAD_FILES) | {"case/note.md"}
    assert "differ only in case" in rejected["case/note.md"]
    assert "malformed YAML" in rejected["bad/yaml.md"]
    assert "UTF-8" in rejected["bad/latin1.md"]
    assert "binary" in rejected["bad/binary.md"]
    assert "limit" in rejected["bad/huge.md"]
    assert "Case/Note.md" in paths and "20251230_rag-design.md" in paths
    assert len(report.rejected) == len(rejected)


# The two names of a Unicode pair print alike: the reason says which form each is.
REJECTED_NFD = "Unicode normalization: this name is decomposed (NFD), that one composed (NFC)"
REJECTED_NFC = "Unicode normalization: this name is composed (NFC), that one decomposed (NFD)"


@pytest.mark.parametrize(
    ("first", "second", "how"),
    [
        ("Case.md", "case.md", "case"),
        ("\u304c.md", "\u304b\u3099.md", REJECTED_NFC),
        ("\u304b\u3099/\u304c.md", "\u304b\u3099/\u304b\u3099.md", REJECTED_NFC),
        ("\u304b\u3099.md", "\u304c\u304b\u3099.md", None),
    ],
    ids=["case", "nfc-nfd", "in-a-decomposed-folder", "not-twins"],
)
def test_paths_one_file_system_would_merge_keep_one_note(
    db_url: str, vault: Path, first: str, second: str, how: str | None
) -> None:
    _write(vault, first, "# 一つ目\n")
    _write(vault, second, "# 二つ目\n")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
        paths = set(store.stored_paths(conn, "docs_local"))
    if how is None:
        assert rejected == {} and {first, second} <= paths
        return
    loser, kept = max(first, second), min(first, second)
    assert rejected == {loser: f"duplicate of {kept} (paths differ only in {how})"}
    assert kept in paths and loser not in paths


def test_a_decomposed_name_that_came_after_a_stored_composed_one_says_so(
    db_url: str, vault: Path
) -> None:
    _write(vault, "\u304c.md", "# 先に保存\n")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        _write(vault, "\u304b\u3099.md", "# 後から\n")
        sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
    assert rejected == {
        "\u304b\u3099.md": f"duplicate of \u304c.md (paths differ only in {REJECTED_NFD})"
    }


@pytest.mark.parametrize("bad", ["yaml", "fifo", "dangling"])
def test_a_bad_file_does_not_keep_its_good_case_twin_out(
    db_url: str, vault: Path, bad: str
) -> None:
    """The twin sorted first was kept before either was read: a broken ``Plan.md`` had the
    good ``plan.md`` rejected as its duplicate, and neither was stored."""
    broken = vault / "Plan.md"
    if bad == "yaml":
        _write(vault, "Plan.md", "---\ntitle: [unclosed\n---\n壊れた\n")
    elif bad == "fifo":
        os.mkfifo(broken)
    else:
        broken.symlink_to(vault / "nowhere.md")
    _write(vault, "plan.md", "# 計画\n\nキウイの計画")
    with db.connect(db_url) as conn:
        first = sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
        assert "plan.md" in first.new and "plan.md" in store.stored_paths(conn, "docs_local")
        assert set(rejected) == {"Plan.md"} and not rejected["Plan.md"].startswith("duplicate")
        again = sync_source(conn, LocalSource(vault))
        assert (again.new, again.deleted) == ([], []) and "plan.md" not in again.changed
        broken.unlink()
        _write(vault, "Plan.md", "# 直した\n")
        fixed = sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
    assert fixed.new == [] and rejected == {
        "Plan.md": "duplicate of plan.md (paths differ only in case)"
    }


def test_of_two_bad_twins_each_keeps_its_own_reason(db_url: str, vault: Path) -> None:
    _write(vault, "Idea.md", "---\ntitle: [unclosed\n---\n")
    (vault / "idea.md").symlink_to(vault / "nowhere.md")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        rejected = dict(store.rejections(conn, "docs_local"))
    assert set(rejected) == {"Idea.md", "idea.md"}
    assert not any(reason.startswith("duplicate") for reason in rejected.values())


@pytest.mark.parametrize("gone", ["delete", "rename"])
def test_case_duplicate_lands_once_the_note_it_collided_with_is_gone(
    db_url: str, vault: Path, gone: str
) -> None:
    kept = _write(vault, "Case.md", "# upper\n\n大文字のノート")
    _write(vault, "case.md", "# lower\n\n小文字のノート")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        assert [p for p, _ in store.rejections(conn, "docs_local")] == ["case.md"]
        if gone == "delete":
            kept.unlink()
        else:
            kept.rename(vault / "Other.md")
        report = sync_source(conn, LocalSource(vault))
        paths = set(store.stored_paths(conn, "docs_local"))
        assert "case.md" in report.new and "case.md" in paths and "Case.md" not in paths
        assert store.rejections(conn, "docs_local") == []
        assert sync_source(conn, LocalSource(vault)).fetched == 0  # and it stays converged


def test_a_vault_that_lists_no_notes_deletes_nothing_unless_allowed(
    db_url: str, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        count = len(store.stored_paths(conn, "docs_local"))
    unmounted = tmp_path / "aside"
    vault.rename(unmounted)  # what an unmounted drive leaves: an empty folder
    vault.mkdir()
    with db.connect(db_url) as conn:
        with pytest.raises(SourceError, match=f"holds {count:,} from it: nothing was deleted"):
            sync_source(conn, LocalSource(vault))
        assert len(store.stored_paths(conn, "docs_local")) == count
        monkeypatch.setenv("KA_ALLOW_EMPTY_SOURCE", "1")
        report = sync_source(conn, LocalSource(vault))
        assert len(report.deleted) == count and store.stored_paths(conn, "docs_local") == []


def test_fixed_file_lands_and_an_unchanged_bad_file_is_not_reread(db_url: str, vault: Path) -> None:
    bad = _write(vault, "bad.md", b"---\ntitle: [oops\n---\nbody")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        again = sync_source(conn, LocalSource(vault))
        assert again.fetched == 0 and again.rejected == []
        bad.write_bytes(b"---\ntitle: fixed\n---\nbody")
        os.utime(bad, ns=(7, 7))
        fixed = sync_source(conn, LocalSource(vault))
        assert fixed.new == ["bad.md"]
        assert store.rejections(conn, "docs_local") == []


def test_breaking_a_good_note_keeps_its_last_good_version(db_url: str, vault: Path) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        note = vault / "inbox.md"
        note.write_bytes(b"---\ntitle: [broken\n---\nbody")
        os.utime(note, ns=(9, 9))
        report = sync_source(conn, LocalSource(vault))
        content = conn.execute(
            "SELECT content FROM raw.docs_local WHERE file_path = 'inbox.md'"
        ).fetchone()
    assert [p for p, _ in report.rejected] == ["inbox.md"]
    assert content is not None and "Quick idea" in content[0]


def test_latest_docs_excludes_superseded_drafts_and_empty(db_url: str, vault: Path) -> None:
    _write(vault, "only-fm.md", "---\ntitle: nothing here\n---\n# Heading only\n")
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        report = refresh_latest(conn, "docs_local")
        latest = {r[0]: r[1] for r in conn.execute("SELECT file_path, title FROM rag.latest_docs")}
        superseded = conn.execute(
            "SELECT file_path, superseded_by FROM rag.superseded_docs"
        ).fetchall()
        again = refresh_latest(conn, "docs_local")
    assert "20251201_rag-design-draft.md" not in latest
    assert superseded == [("20251201_rag-design-draft.md", "20251230_rag-design.md")]
    assert "projects/reading-list.md" not in latest and "only-fm.md" not in latest
    assert report.plan.empty == ["only-fm.md"]
    assert latest["20251230_rag-design.md"] == "RAG設計メモ"
    assert latest["inbox.md"] == "inbox"  # no title, no H1: the file-name slug
    assert again.upserted == 0 and again.removed == 0


def test_missing_vault_fails_before_writing(db_url: str, tmp_path: Path) -> None:
    from knowledge_assets.core.sources import SourceError

    with db.connect(db_url) as conn, pytest.raises(SourceError, match="does not exist"):
        sync_source(conn, LocalSource(tmp_path / "nope"))


@pytest.mark.parametrize("size", [DEFAULT_MAX_BYTES + 1, 256 * 1024 * 1024])
def test_a_huge_file_is_rejected_by_its_size_without_being_read_whole(
    db_url: str, vault: Path, size: int
) -> None:
    """A file of gigabytes named ``.md`` (a log, a disk image) must not be held in memory only to
    be rejected: a sync that reads it whole can be killed for its memory, run after run."""
    huge = vault / "huge.md"
    with huge.open("wb") as file:
        file.truncate(size)  # sparse: takes no disk space
    tracemalloc.start()
    try:
        with db.connect(db_url) as conn:
            report = sync_source(conn, LocalSource(vault))
            again = sync_source(conn, LocalSource(vault))
            rejected = dict(store.rejections(conn, "docs_local"))
            paths = store.stored_paths(conn, "docs_local")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    limit = f"over the {DEFAULT_MAX_BYTES:,}-byte limit"
    assert rejected == {"huge.md": f"file is {size:,} bytes, {limit}"}
    assert [p for p, _ in report.rejected] == ["huge.md"] and "inbox.md" in paths
    assert again.fetched == 0 and again.rejected == []  # unchanged: not read again
    assert peak < 8 * DEFAULT_MAX_BYTES
