"""What an incremental GitHub sync asks for: a file GitHub would not serve is looked up by itself
instead of listing the whole tree, and each folder is listed at most once per sync however many
changed files it holds. The loopback GitHub server counts the requests; real sync, real store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.core.sources.github_changes import UNREAD_FOLDER_LIMIT
from tests.fakes.github_server import FakeGitHub, git_sha

TOKEN = "ghp_fake_token_for_request_counts_42"
REFUSED = "GitHub did not serve the file (HTTP 404)"
NOTES: dict[str, bytes | None] = {
    "vault/a.md": b"# a\n",
    "vault/sub/b.md": b"# b\n\nfirst\n",
    "vault/other/c.md": b"# c\n",
}


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


def _sync(url: str, gh: FakeGitHub, since: str | None = None) -> SyncReport:
    gh.requests.clear()
    source = GitHubSource(
        gh.repo, prefix="vault", token=TOKEN, base_url=gh.base_url, max_retries=1,
        sleep=lambda _s: None,
    )  # fmt: skip
    with db.connect(url) as conn:
        return sync_source(conn, source, since=since)


def _notes(url: str) -> dict[str, str]:
    with db.connect(url) as conn:
        return dict(conn.execute("SELECT file_path, content FROM raw.docs_github").fetchall())


def _rejected(url: str) -> list[tuple[str, str]]:
    with db.connect(url) as conn:
        return store.rejections(conn, "docs_github")


def _listed(gh: FakeGitHub) -> int:
    """How many folders the sync listed; a listing of the whole tree fails the test."""
    assert not gh.paths("recursive=")
    return len(gh.paths("/git/trees/"))


def _withhold(gh: FakeGitHub, files: dict[str, bytes | None]) -> str:
    """Commit ``files``, whose blobs GitHub then answers 404 for; returns the commit."""
    head = gh.commit(files)
    for data in files.values():
        del gh.blobs[git_sha("blob", data or b"")]
    return head


def test_a_file_github_would_not_serve_is_retried_alone_until_it_is_read(
    db_url: str, gh: FakeGitHub
) -> None:
    """Such a file forced a listing of the whole tree at every later sync while GitHub still
    refused it; now the folders on its path are listed and its blob asked for again."""
    gh.commit(NOTES)
    _sync(db_url, gh)
    edited = b"# b\n\nsecond\n"
    _withhold(gh, {"vault/sub/b.md": edited})
    assert _sync(db_url, gh).rejected == [("vault/sub/b.md", REFUSED)]
    gh.commit({"vault/other/c.md": b"# c\n\nedited\n"})
    still = _sync(db_url, gh)
    # The root, vault/, vault/other/ and vault/sub/: one listing each, never the whole tree.
    assert _listed(gh) == 4 and len(gh.paths("/compare/")) == 1
    assert len(gh.paths("/git/blobs/")) == 2  # c.md, and b.md asked for again
    assert (still.changed, still.rejected, still.deleted) == (["vault/other/c.md"], [(
        "vault/sub/b.md", REFUSED)], [])  # fmt: skip
    # Nothing new pushed: no comparison, but the refused file is still asked for.
    idle = _sync(db_url, gh)
    assert (_listed(gh), gh.paths("/compare/"), idle.deleted) == (3, [], [])
    assert len(gh.paths("/git/blobs/")) == 1
    # Never taken for deleted: what was stored stays, with the reason it was not read.
    assert _notes(db_url)["vault/sub/b.md"] == "# b\n\nfirst\n"
    assert _rejected(db_url) == [("vault/sub/b.md", REFUSED)]
    gh.blobs[git_sha("blob", edited)] = edited  # GitHub serves it again
    gh.commit({"vault/a.md": b"# a\n\nedited\n"})
    served = _sync(db_url, gh)
    assert _listed(gh) == 3 and served.changed == ["vault/a.md", "vault/sub/b.md"]
    assert _notes(db_url)["vault/sub/b.md"] == "# b\n\nsecond\n" and _rejected(db_url) == []
    # Read with its version: the next diff lists no folder and reads nothing.
    gh.commit({"vault/a.txt": b"not a note"})
    assert _sync(db_url, gh).fetched == 0 and _listed(gh) == 0


def test_a_new_file_github_would_not_serve_is_read_once_it_is_served(
    db_url: str, gh: FakeGitHub
) -> None:
    gh.commit(NOTES)
    _sync(db_url, gh)
    _withhold(gh, {"vault/deep/er/new.md": b"# new\n"})
    assert _sync(db_url, gh).rejected == [("vault/deep/er/new.md", REFUSED)]
    gh.blobs[git_sha("blob", b"# new\n")] = b"# new\n"
    report = _sync(db_url, gh)
    assert _listed(gh) == 4 and report.new == ["vault/deep/er/new.md"]
    assert _notes(db_url)["vault/deep/er/new.md"] == "# new\n" and _rejected(db_url) == []


@pytest.mark.parametrize("seen", ["in-the-diff", "before-the-diff"])
def test_a_file_github_would_not_serve_is_deleted_once_removed(
    db_url: str, gh: FakeGitHub, seen: str
) -> None:
    """Removed at the head, it goes, whether the comparison lists its removal or the removal
    came before the commit the diff starts from (a sensor passes the head it saw)."""
    gh.commit(NOTES)
    _sync(db_url, gh)
    _withhold(gh, {"vault/sub/b.md": b"# b\n\nsecond\n"})
    _sync(db_url, gh)
    removed = gh.commit({"vault/sub/b.md": None})
    gh.commit({"vault/a.md": b"# a\n\nedited\n"})
    report = _sync(db_url, gh, since=removed if seen == "before-the-diff" else None)
    assert (report.deleted, report.changed, report.rejected) == (
        ["vault/sub/b.md"], ["vault/a.md"], [])  # fmt: skip
    # The root and vault/ hold a.md; vault/sub/ is gone, so nothing more is listed.
    assert _listed(gh) == 2 and len(gh.paths("/compare/")) == 1
    assert "vault/sub/b.md" not in _notes(db_url) and _rejected(db_url) == []


@pytest.mark.parametrize("folders", [UNREAD_FOLDER_LIMIT - 2, UNREAD_FOLDER_LIMIT - 1])
def test_files_refused_in_too_many_folders_are_looked_up_in_the_whole_tree(
    db_url: str, gh: FakeGitHub, folders: int
) -> None:
    """Past the bound, one listing of the whole tree costs less than a listing per folder. The
    folders counted are the root, vault/ and one folder per refused file."""
    gh.commit(NOTES)
    _sync(db_url, gh)
    refused = {f"vault/f{i:02}/n.md": f"# n{i}\n".encode() for i in range(folders)}
    _withhold(gh, refused)
    assert len(_sync(db_url, gh).rejected) == folders
    gh.commit({"vault/a.md": b"# a\n\nedited\n"})
    report = _sync(db_url, gh)
    whole = gh.paths("recursive=1")
    assert bool(whole) is (folders + 2 > UNREAD_FOLDER_LIMIT)
    assert len(gh.paths("/git/trees/")) == (1 if whole else folders + 2)
    assert report.changed == ["vault/a.md"] and len(report.rejected) == folders
    assert report.deleted == [] and len(_rejected(db_url)) == folders


def test_each_folder_is_listed_once_however_many_changed_files_it_holds(
    db_url: str, gh: FakeGitHub
) -> None:
    """20 changed files in 3 folders: the root, vault/ and the 3 folders, each listed once, and
    the folder of a refused file listed in the same pass (one more for a folder of its own)."""
    folders = ("vault/x", "vault/y", "vault/z/deep")
    files = {f"{folders[i % 3]}/n{i:02}.md": f"# n{i}\n".encode() for i in range(20)}
    gh.commit({**files, "vault/w/r.md": b"# r\n", "vault/x/r.md": b"# r\n"})
    _sync(db_url, gh)
    _withhold(gh, {"vault/w/r.md": b"# w\n\nedited\n", "vault/x/r.md": b"# x\n\nedited\n"})
    _sync(db_url, gh)
    gh.commit({path: data + b"\nedited\n" for path, data in files.items() if data})
    report = _sync(db_url, gh)
    # root, vault, x, y, z, z/deep, and w for the refused file alone there.
    assert _listed(gh) == 7 and len(gh.paths("/compare/")) == 1
    assert len(gh.paths("/git/blobs/")) == 22 and len(report.changed) == 20
    assert sorted(path for path, _ in report.rejected) == ["vault/w/r.md", "vault/x/r.md"]
