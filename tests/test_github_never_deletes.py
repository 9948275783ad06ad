"""GitHub: a truncated tree listing or a failed fetch never deletes stored notes."""

from __future__ import annotations

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.core.sources.github import GitHubSource
from tests.fakes.github_server import FakeGitHub, git_sha

TOKEN = "ghp_fake_token_for_deletion_tests"
NOTES: dict[str, bytes | None] = {
    f"vault/n{i}.md": f"# n{i}\n\nbody {i}\n".encode() for i in range(6)
}


def _source(gh: FakeGitHub) -> GitHubSource:
    return GitHubSource(
        gh.repo, prefix="vault", token=TOKEN, base_url=gh.base_url, max_retries=2,
        sleep=lambda _s: None,
    )  # fmt: skip


def _paths(url: str) -> set[str]:
    with db.connect(url) as conn:
        return set(store.stored_paths(conn, "docs_github"))


def test_a_truncated_tree_is_completed_not_taken_for_deletions(db_url: str) -> None:
    with FakeGitHub(token=TOKEN, tree_limit=2) as gh:
        gh.commit(NOTES)
        with db.connect(db_url) as conn:
            first = sync_source(conn, _source(gh))
            again = sync_source(conn, _source(gh), full=True)
        assert gh.paths("recursive=1") and gh.paths("/git/trees/")
    assert len(first.new) == 6 and again.deleted == []
    assert _paths(db_url) == set(NOTES)


def test_a_failed_fetch_fails_the_sync_and_deletes_nothing(db_url: str) -> None:
    with FakeGitHub(token=TOKEN) as gh:
        gh.commit(NOTES)
        with db.connect(db_url) as conn:
            sync_source(conn, _source(gh))
        gh.commit({"vault/n0.md": None, "vault/n1.md": b"# n1\n\nedited\n"})
        gh.fail_next(502, times=3)  # the first request and its 2 retries
        with db.connect(db_url) as conn, pytest.raises(SourceError, match="failed 3 times"):
            sync_source(conn, _source(gh), full=True)
        assert _paths(db_url) == set(NOTES)
        with db.connect(db_url) as conn:
            fixed = sync_source(conn, _source(gh), full=True)
    assert fixed.deleted == ["vault/n0.md"] and fixed.changed == ["vault/n1.md"]


def test_a_blob_github_will_not_serve_rejects_that_file_only(db_url: str) -> None:
    with FakeGitHub(token=TOKEN) as gh:
        gh.commit(NOTES)
        with db.connect(db_url) as conn:
            sync_source(conn, _source(gh))
        gh.commit({"vault/n2.md": b"# n2\n\nedited\n", "vault/n3.md": b"# n3\n\nedited\n"})
        lost = git_sha("blob", b"# n2\n\nedited\n")
        del gh.blobs[lost]  # GitHub answers 404 for this one blob
        with db.connect(db_url) as conn:
            report = sync_source(conn, _source(gh))
            kept = conn.execute(
                "SELECT content FROM raw.docs_github WHERE file_path = 'vault/n2.md'"
            ).fetchone()
    assert report.changed == ["vault/n3.md"] and report.deleted == []
    assert report.rejected == [("vault/n2.md", "GitHub did not serve the file (HTTP 404)")]
    assert kept == ("# n2\n\nbody 2\n",)
