"""GitHub sync at the edges a real repository meets: files GitHub would not serve for a while,
renames onto a path's case or Unicode twin, and a server that echoes the token in its errors.
The loopback GitHub server, real sync, real store."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.core.sources.github import GitHubSource
from tests.fakes.github_server import DROPPED, SUBMODULE, SYMLINK, FakeGitHub, git_sha

TOKEN = "ghp_fake_token_for_edge_tests_0123"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


def _sync(url: str, gh: FakeGitHub, **options: bool) -> SyncReport:
    source = GitHubSource(
        gh.repo, prefix="vault", token=TOKEN, base_url=gh.base_url, max_retries=1,
        sleep=lambda _s: None,
    )  # fmt: skip
    with db.connect(url) as conn:
        return sync_source(conn, source, **options)


def _notes(url: str) -> dict[str, str]:
    with db.connect(url) as conn:
        return dict(conn.execute("SELECT file_path, content FROM raw.docs_github").fetchall())


def _listed(gh: FakeGitHub) -> int:
    """How many folders the sync listed; a listing of the whole tree fails the test."""
    assert not gh.paths("recursive=")
    return len(gh.paths("/git/trees/"))


def _rejected(url: str) -> list[str]:
    with db.connect(url) as conn:
        return [path for path, _ in store.rejections(conn, "docs_github")]


@pytest.mark.parametrize("stored", [True, False], ids=["edited-note", "new-note"])
def test_a_file_github_did_not_serve_is_read_at_a_later_sync(
    db_url: str, gh: FakeGitHub, stored: bool
) -> None:
    """A file GitHub did not serve once (a 404 or 403 for its blob) was never read again by
    the diffs that followed, which do not list it: an edited note stayed stale, a new one
    missing, until a full sync."""
    gh.commit({"vault/a.md": b"# a\n\nfirst\n", "vault/b.md": b"# b\n"} if stored else {})
    _sync(db_url, gh)
    text = "# a\n\n二度目\n".encode()
    gh.commit({"vault/a.md": text, "vault/b.md": b"# b\n"})
    blob = gh.blobs.pop(git_sha("blob", text))  # GitHub answers 404 for this blob for a while
    failed = _sync(db_url, gh)
    assert failed.rejected == [("vault/a.md", "GitHub did not serve the file (HTTP 404)")]
    assert _notes(db_url).get("vault/a.md") == ("# a\n\nfirst\n" if stored else None)
    gh.blobs[git_sha("blob", text)] = blob
    gh.commit({"vault/c.md": b"# c\n"})  # a later push that does not touch the file
    later = _sync(db_url, gh)
    assert (later.changed, later.new) == (
        (["vault/a.md"], ["vault/c.md"]) if stored else ([], ["vault/a.md", "vault/c.md"])
    )
    assert _notes(db_url)["vault/a.md"] == "# a\n\n二度目\n" and _rejected(db_url) == []
    # Read with its version: the sync after that is a diff again, and reads nothing.
    gh.requests.clear()
    gh.commit({"vault/d.md": b"# d\n"})
    assert _sync(db_url, gh).fetched == 1 and _listed(gh) == 2


@pytest.mark.parametrize(
    "twin",
    ["vault/note.md", unicodedata.normalize("NFD", "vault/ガイド.md")],
    ids=["case", "nfd"],
)
def test_a_note_renamed_onto_a_twin_path_is_rejected_as_its_duplicate(
    db_url: str, gh: FakeGitHub, twin: str
) -> None:
    """A note renamed to the case or Unicode twin of another note's path was moved unread and
    stored beside it; a first sync of the same tree rejects it as that note's duplicate."""
    kept = "vault/Note.md" if twin == "vault/note.md" else unicodedata.normalize("NFC", twin)
    gh.commit({"vault/x.md": b"# x\n", kept: b"# kept\n"})
    _sync(db_url, gh)
    gh.commit({}, {"vault/x.md": twin})
    report = _sync(db_url, gh)
    nfd = "Unicode normalization: this name is decomposed (NFD), that one composed (NFC)"
    how = "case" if twin == "vault/note.md" else nfd
    assert report.rejected == [(twin, f"duplicate of {kept} (paths differ only in {how})")]
    assert (report.deleted, report.renamed) == (["vault/x.md"], [])
    assert _notes(db_url) == {kept: "# kept\n"} and _rejected(db_url) == [twin]
    # Its twin renamed away, it is read again and stored.
    gh.commit({}, {kept: "vault/other.md"})
    again = _sync(db_url, gh)
    assert again.new == [twin] and _notes(db_url) == {"vault/other.md": "# kept\n", twin: "# x\n"}


def test_a_server_echoing_the_token_in_errors_still_gets_them_handled(db_url: str) -> None:
    """An error whose body quoted the token was scrubbed into a RuntimeError, which the sync no
    longer recognised: a blob GitHub would not serve ended the sync instead of rejecting that
    file, and a comparison after a force-push failed instead of reading the whole tree."""
    with FakeGitHub(token=TOKEN, echo_auth=True) as gh:
        gh.commit({"vault/a.md": b"# a\n", "vault/b.md": b"# b\n"})
        _sync(db_url, gh)
        gh.commit({"vault/a.md": b"# a\n\nedited\n", "vault/b.md": b"# b\n\nedited\n"})
        del gh.blobs[git_sha("blob", b"# a\n\nedited\n")]
        report = _sync(db_url, gh)
        assert report.rejected == [("vault/a.md", "GitHub did not serve the file (HTTP 404)")]
        assert report.changed == ["vault/b.md"] and TOKEN not in repr(report)
        gh.blobs[git_sha("blob", b"# a\n\nedited\n")] = b"# a\n\nedited\n"
        assert _sync(db_url, gh).changed == ["vault/a.md"]
        gh.branches.pop("main")  # a force-push of an unrelated history: no common ancestor
        gh.commit({"vault/a.md": b"# a\n", "vault/b.md": b"# b\n"})
        gh.requests.clear()
        forced = _sync(db_url, gh)
        assert gh.paths("/compare/") and gh.paths("/git/trees/")
    assert forced.changed == ["vault/a.md", "vault/b.md"]
    assert _notes(db_url) == {"vault/a.md": "# a\n", "vault/b.md": "# b\n"}


@pytest.mark.parametrize("mode", [SYMLINK, SUBMODULE], ids=["symlink", "submodule"])
def test_a_note_made_a_symlink_or_submodule_goes_in_a_diff_as_in_a_full_sync(
    db_url: str, gh: FakeGitHub, mode: str
) -> None:
    """A comparison lists a note made a symlink as "changed" without its new kind: its blob,
    the link's target, was stored as the note's text ("a.md"), which a full sync then deleted."""
    gh.commit({"vault/a.md": b"# a\n", "vault/b.md": b"# b\n"})
    _sync(db_url, gh)
    gh.commit({"vault/b.md": b"a.md" if mode == SYMLINK else b"0" * 40}, modes={"vault/b.md": mode})
    gh.requests.clear()
    report = _sync(db_url, gh)
    # Read from the comparison and the listings of the root and vault/, not the whole tree.
    assert gh.paths("/compare/") and _listed(gh) == 2 and not gh.paths("/git/blobs/")
    assert (report.deleted, report.changed, report.rejected) == (["vault/b.md"], [], [])
    assert _notes(db_url) == {"vault/a.md": "# a\n"}
    full = _sync(db_url, gh, full=True)
    assert (full.deleted, full.new, full.fetched) == ([], [], 0)
    gh.commit({"vault/b.md": "# b\n\n戻った\n".encode()})  # a note again
    back = _sync(db_url, gh)
    assert back.new == ["vault/b.md"] and _notes(db_url)["vault/b.md"] == "# b\n\n戻った\n"


@pytest.mark.parametrize("mode", [SYMLINK, SUBMODULE], ids=["symlink", "submodule"])
def test_a_new_symlink_or_submodule_in_a_diff_is_left_out_as_in_a_full_sync(
    db_url: str, gh: FakeGitHub, mode: str
) -> None:
    """A comparison lists a new symlink as an added file without its mode: its blob, the link's
    target, was stored as a note ("../a.md"), and a new submodule's commit asked for as a blob
    and rejected, where a full sync leaves both out."""
    gh.commit({"vault/a.md": b"# a\n"})
    _sync(db_url, gh)
    big = b"# big\n\n" + b"a line of a note over 1 MB\n" * 45_000  # the blob API serves it
    link = b"../a.md" if mode == SYMLINK else b"0" * 40
    gh.commit(
        {"vault/sub/l.md": link, "vault/sub/c.md": b"# c\n", "vault/big.md": big},
        modes={"vault/sub/l.md": mode},
    )
    gh.requests.clear()
    report = _sync(db_url, gh)
    assert (sorted(report.new), report.rejected) == (["vault/big.md", "vault/sub/c.md"], [])
    # One blob per note read, and the root, vault/ and vault/sub/ listed once each.
    assert len(gh.paths("/git/blobs/")) == 2 and _listed(gh) == 3
    assert set(_notes(db_url)) == {"vault/a.md", "vault/big.md", "vault/sub/c.md"}
    full = _sync(db_url, gh, full=True)
    assert (full.deleted, full.new, full.fetched, full.rejected) == ([], [], 0, [])


def test_a_symlink_given_a_new_target_is_left_out_as_in_a_full_sync(
    db_url: str, gh: FakeGitHub
) -> None:
    """A symlink retargeted is a modified file in a comparison: its new target ("b.md") was
    stored as a note, which the next full sync deleted."""
    gh.commit(
        {"vault/a.md": b"# a\n", "vault/b.md": b"# b\n", "vault/l.md": b"a.md"},
        modes={"vault/l.md": SYMLINK},
    )
    assert _sync(db_url, gh).new == ["vault/a.md", "vault/b.md"]
    gh.commit({"vault/l.md": b"b.md"}, modes={"vault/l.md": SYMLINK})
    gh.requests.clear()
    report = _sync(db_url, gh)
    assert (report.new, report.changed, report.rejected, report.fetched) == ([], [], [], 0)
    assert gh.paths("/compare/") and _listed(gh) == 2 and not gh.paths("/git/blobs/")
    assert set(_notes(db_url)) == {"vault/a.md", "vault/b.md"}
    assert _sync(db_url, gh, full=True).fetched == 0
    gh.commit({"vault/l.md": b"# l\n"})  # a note again: read as a full sync reads it
    assert _sync(db_url, gh).new == ["vault/l.md"] and _notes(db_url)["vault/l.md"] == "# l\n"


def test_a_note_made_a_symlink_with_the_same_blob_leaves_the_store(
    db_url: str, gh: FakeGitHub
) -> None:
    """A note whose text was the path it now links to keeps its blob SHA as a symlink: its
    version was unchanged, so it was never looked at and stayed stored."""
    gh.commit({"vault/a.md": b"# a\n", "vault/b.md": b"a.md"})
    _sync(db_url, gh)
    gh.commit({"vault/b.md": b"a.md"}, modes={"vault/b.md": SYMLINK})
    report = _sync(db_url, gh)
    assert (report.deleted, report.fetched) == (["vault/b.md"], 0)
    assert _notes(db_url) == {"vault/a.md": "# a\n"}


@pytest.mark.parametrize("full", [True, False], ids=["nightly-full-sync", "first-sync"])
def test_a_renamed_repository_is_read_whole_under_its_old_name(db_url: str, full: bool) -> None:
    """GitHub answers the old name with redirects, which PyGithub follows without their query:
    the recursive tree came back as the root folder's listing, and a full sync deleted every
    note in a folder (a first sync under a prefix stored none)."""
    files = {f"vault/{i}.md": f"# {i}\n".encode() for i in range(4)}
    files |= {f"vault/projects/p{i}.md": f"# p{i}\n".encode() for i in range(3)}
    with FakeGitHub(repo="owner/renamed", renamed_from="owner/notes") as gh:
        gh.commit(files)
        source = GitHubSource(
            "owner/notes", prefix="vault", base_url=gh.base_url, max_retries=1,
            sleep=lambda _s: None,
        )  # fmt: skip
        with db.connect(db_url) as conn:
            first = sync_source(conn, source)
            again = sync_source(conn, source, full=True) if full else first
            stored = set(store.stored_paths(conn, "docs_github"))
        moved = [p for p in gh.paths("/repos/owner/renamed/") if "/git/trees/" in p]
    assert len(first.new) == 7 and again.deleted == []
    assert stored == set(files)
    assert moved and all("recursive=" in p for p in moved)  # asked under the new name


def test_a_run_requested_before_another_synced_diffs_from_what_the_store_holds(
    db_url: str, gh: FakeGitHub
) -> None:
    """The sensor passes the head the store had synced when it ticked; a run that started after
    another run synced a newer head diffed from the old one, so a note added and deleted in
    between stayed, and an edit reverted since kept its edited text, for good."""
    x = gh.commit({"vault/a.md": b"# a\n\nfirst\n"})
    _sync(db_url, gh)
    gh.commit({"vault/new.md": b"# new\n", "vault/a.md": b"# a\n\nedited\n"})
    _sync(db_url, gh)  # the other run: the store now holds Y
    gh.commit({"vault/new.md": None, "vault/a.md": b"# a\n\nfirst\n"})
    source = GitHubSource(
        gh.repo, prefix="vault", token=TOKEN, base_url=gh.base_url, max_retries=1,
        sleep=lambda _s: None,
    )  # fmt: skip
    with db.connect(db_url) as conn:
        report = sync_source(conn, source, since=x)  # the sensor's run, requested before Y
    assert report.deleted == ["vault/new.md"]
    assert _notes(db_url) == {"vault/a.md": "# a\n\nfirst\n"}


def test_a_connection_dropped_mid_answer_is_retried(db_url: str, gh: FakeGitHub) -> None:
    """A 502 was retried, a connection dropped in the middle of the answer failed the sync with
    requests' raw ChunkedEncodingError."""
    gh.commit({"vault/a.md": b"# a\n"})
    gh.fail_next(200, body=DROPPED)
    assert _sync(db_url, gh).new == ["vault/a.md"]


def test_a_page_that_is_not_the_api_is_one_clear_source_error(gh: FakeGitHub) -> None:
    """A proxy's or portal's page with status 200: PyGithub's AttributeError reached the sensor,
    which catches source errors only, and so the daemon."""
    gh.commit({"vault/a.md": b"# a\n"})
    gh.fail_next(200, body=b"<html><body>Sign in to the network</body></html>", times=3)
    source = GitHubSource(
        gh.repo, prefix="vault", token=TOKEN, base_url=gh.base_url, max_retries=1,
        sleep=lambda _s: None,
    )  # fmt: skip
    with pytest.raises(SourceError, match=r"is not GitHub's API .* check KA_GITHUB_BASE_URL"):
        source.head()


def test_a_broken_note_renamed_takes_its_rejection_with_it(db_url: str, gh: FakeGitHub) -> None:
    """A stored note that broke keeps its last good text; renamed, the text moved and the
    rejection stayed under the old path, which no longer exists, until a full sync."""
    gh.commit({"vault/a.md": b"---\ntitle: ok\n---\n# a\n\ngood\n", "vault/z.md": b"# z\n"})
    _sync(db_url, gh)
    gh.commit({"vault/a.md": b"---\ntitle: [unclosed\n---\n# a\n\nbroken\n"})
    assert [p for p, _ in _sync(db_url, gh).rejected] == ["vault/a.md"]
    gh.commit({}, renames={"vault/a.md": "vault/moved.md"})
    assert _sync(db_url, gh).renamed == [("vault/a.md", "vault/moved.md")]
    assert _notes(db_url)["vault/moved.md"].endswith("good\n")  # the last good text, moved
    assert _rejected(db_url) == ["vault/moved.md"]
    full = _sync(db_url, gh, full=True)  # and a full comparison agrees
    assert (full.forgotten, _rejected(db_url)) == ([], ["vault/moved.md"])
