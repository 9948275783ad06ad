"""Files and folders that exist but cannot be read: rejected with a reason, never taken for deleted."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.base import SourceError, UnreadableFile
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.ingest.checks import raw_docs_match_source
from knowledge_assets.resources import PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT
from .unprivileged import require_unreadable, sync_unprivileged


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    yield root
    for folder, dirs, _ in os.walk(root):  # let pytest clean up what a test locked
        for name in dirs:
            os.chmod(Path(folder) / name, 0o755)


def _sync(db_url: str, vault: Path) -> tuple[dict[str, str], set[str]]:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        return dict(store.rejections(conn, "docs_local")), set(
            store.stored_paths(conn, "docs_local")
        )


def test_symlinks_that_cannot_be_followed_are_rejected_and_the_rest_lands(
    db_url: str, vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# outside the vault\n")
    (vault / "loop.md").symlink_to("loop.md")
    (vault / "dangling.md").symlink_to("nowhere.md")
    (vault / "escape.md").symlink_to(outside)
    (vault / "zero.md").symlink_to("/dev/zero")
    (vault / "alias.md").symlink_to("inbox.md")
    rejected, stored = _sync(db_url, vault)
    assert rejected["loop.md"] == "cannot be read: symlink loop"
    assert rejected["dangling.md"] == "dangling symlink: its target nowhere.md does not exist"
    assert "outside the vault" in rejected["escape.md"]
    assert "outside the vault" in rejected["zero.md"]
    assert "alias.md" in stored and "inbox.md" in stored and "projects/garden.md" in stored


def test_a_fifo_and_a_symlinked_folder_are_recorded_not_skipped_silently(
    db_url: str, vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "ext.md").write_text("# 外のノート\n")
    (vault / "linked").symlink_to(outside)
    os.mkfifo(vault / "pipe.md")
    rejected, stored = _sync(db_url, vault)
    assert rejected["pipe.md"] == (
        "a named pipe (FIFO), not a regular file: rename it so its name does not end in .md,"
        " or remove it"
    )
    assert rejected["linked/"] == f"symlink to a folder ({outside}): not followed"
    assert not any(p.startswith("linked/") for p in stored) and "inbox.md" in stored
    (vault / "linked").unlink()
    (vault / "pipe.md").unlink()
    rejected, _ = _sync(db_url, vault)
    assert rejected == {}


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("a socket", lambda p: socket.socket(socket.AF_UNIX).bind(str(p))),
        ("a named pipe (FIFO)", os.mkfifo),
        ("a folder", lambda p: p.symlink_to(p.parent)),
    ],
)
def test_what_is_no_file_is_named_with_the_fix(
    tmp_path: Path, kind: str, make: Callable[[Path], object]
) -> None:
    (tmp_path / "note.md").write_text("# ノート\n")
    make(tmp_path / "odd.md")
    source = LocalSource(tmp_path)
    assert sorted(source.scan()) == ["note.md", "odd.md"]
    with pytest.raises(UnreadableFile) as caught:
        source.read("odd.md")
    assert str(caught.value) == (
        f"{kind}, not a regular file: rename it so its name does not end in .md, or remove it"
    )


def test_a_file_name_that_is_not_utf8_is_rejected_by_name(db_url: str, vault: Path) -> None:
    with open(os.path.join(os.fsencode(vault), b"caf\xe9.md"), "wb") as f:
        f.write(b"# latin-1 name\n")
    rejected, stored = _sync(db_url, vault)
    assert rejected["caf\ufffd.md"].startswith("file name is not valid UTF-8")
    assert "inbox.md" in stored


def test_an_unreadable_vault_folder_fails_the_sync_before_writing(db_url: str, vault: Path) -> None:
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
    vault.chmod(0o000)
    try:
        require_unreadable(vault)
        failed = sync_unprivileged(db_url, vault)
        assert failed["error"].endswith("cannot be read: Permission denied")
    finally:
        vault.chmod(0o755)
    _, stored = _sync(db_url, vault)
    assert "inbox.md" in stored


def test_unreadable_file_and_folder_keep_their_notes_and_are_reported(
    db_url: str, vault: Path
) -> None:
    locked = vault / "locked"
    locked.mkdir()
    for i in range(5):
        (locked / f"n{i}.md").write_text(f"# note {i}\n\nbody {i}\n")
    _, stored = _sync(db_url, vault)
    assert {f"locked/n{i}.md" for i in range(5)} <= stored
    garden = vault / "projects" / "garden.md"
    garden.write_text(garden.read_text() + "\nedited\n")
    garden.chmod(0o000)
    locked.chmod(0o000)
    (vault / "new.md").write_text("# new note\n")
    require_unreadable(locked)
    report = sync_unprivileged(db_url, vault)
    assert report["deleted"] == []
    assert report["new"] == ["new.md"]
    assert dict(report["rejected"])["projects/garden.md"] == "cannot be read: Permission denied"
    assert dict(report["unreadable"])["locked/"].startswith("folder cannot be read")
    rejected, stored = _sync_readonly(db_url)
    assert {f"locked/n{i}.md" for i in range(5)} <= stored and "projects/garden.md" in stored
    assert "its 5 stored notes are kept" in rejected["locked/"]
    check = raw_docs_match_source(
        PostgresResource(database_url=db_url), VaultResource(path=str(vault))
    )
    assert not check.passed and "1 unreadable" in (check.description or "")
    assert "cannot be read (stored notes kept)" in str(check.metadata["files"].value)
    # readable again: the next run converges, the edit lands, the folder report goes away
    garden.chmod(0o644)
    locked.chmod(0o755)
    again = sync_unprivileged(db_url, vault)
    assert again["rejected"] == [] and again["deleted"] == []
    rejected, stored = _sync_readonly(db_url)
    assert rejected == {}
    with db.connect(db_url) as conn:
        row = conn.execute(
            "SELECT content FROM raw.docs_local WHERE file_path = 'projects/garden.md'"
        ).fetchone()
    assert row is not None and "edited" in row[0]


def test_a_deleted_folder_is_still_deleted(db_url: str, vault: Path) -> None:
    (vault / "gone").mkdir()
    (vault / "gone" / "a.md").write_text("# a\n")
    _sync(db_url, vault)
    shutil.rmtree(vault / "gone")
    with db.connect(db_url) as conn:
        report = sync_source(conn, LocalSource(vault))
    assert report.deleted == ["gone/a.md"]


def _sync_readonly(db_url: str) -> tuple[dict[str, str], set[str]]:
    with db.connect(db_url) as conn:
        return dict(store.rejections(conn, "docs_local")), set(
            store.stored_paths(conn, "docs_local")
        )


@pytest.mark.parametrize(
    ("table", "named"), [("docs_local", "vault folder"), ("docs_books", "books folder")]
)
def test_a_missing_folder_is_named_as_the_folder_of_its_source(
    tmp_path: Path, table: str, named: str
) -> None:
    """A declared source's missing folder was reported as the vault's."""
    with pytest.raises(SourceError, match=f"^{named} .* does not exist or is not a folder$"):
        LocalSource(tmp_path / "gone", table=table).scan()
