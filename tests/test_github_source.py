"""The GitHub source against a loopback GitHub REST server: real HTTP through PyGithub, no mocks."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from github import Auth, Github

from knowledge_assets.core.sources.base import ChangeSet, SourceError
from knowledge_assets.core.sources.github import GitHubSource
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghp_fake_token_0123456789"
VAULT: dict[str, bytes | None] = {
    "notes/a.md": b"# A\n",
    "notes/sub/b.md": b"# B\n",
    "notes/c.markdown": b"# C\n",
    "notes/d.md": b"# D\n",
    "notes/e.md": b"# E\n",
    "notes/image.png": b"\x89PNG\r\n",
    "notes/.obsidian/workspace.md": b"hidden settings",
    "notes/.trash/old.md": b"trashed",
    "notes-archive/x.md": b"a sibling folder sharing the prefix's first letters",
    "drafts/f.md": b"# F, outside the prefix\n",
    "README.md": b"outside the prefix",
}
NOTES = {"notes/a.md", "notes/sub/b.md", "notes/c.markdown", "notes/d.md", "notes/e.md"}


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


@pytest.fixture
def sleeps() -> list[float]:
    return []


def source(gh: FakeGitHub, sleeps: list[float], **options: Any) -> GitHubSource:
    settings: dict[str, Any] = {"prefix": "notes", "token": TOKEN, "base_url": gh.base_url}
    return GitHubSource(gh.repo, **{**settings, **options}, sleep=sleeps.append)


def synced(gh: FakeGitHub, sleeps: list[float]) -> tuple[str, dict[str, str], GitHubSource]:
    """The vault committed and fully synced once: its head, known versions and source."""
    first = gh.commit(VAULT)
    src = source(gh, sleeps)
    changes = src.changes(None, {})
    gh.requests.clear()
    return first, changes.versions, src


def test_first_sync_lists_markdown_under_the_prefix(gh: FakeGitHub, sleeps: list[float]) -> None:
    head = gh.commit(VAULT)
    src = source(gh, sleeps, prefix="/notes/")
    changes = src.changes(None, {"notes/a.md": blob_sha(b"# A\n"), "notes/gone.md": "0" * 40})
    assert (src.table, src.key) == ("docs_github", "github:owner/notes@main/notes")
    assert changes.head == head and changes.base is None and changes.complete
    assert changes.present == NOTES
    assert changes.fetch == sorted(NOTES - {"notes/a.md"})
    assert changes.versions == {path: blob_sha(VAULT[path] or b"") for path in changes.fetch}
    assert changes.deleted == ["notes/gone.md"]
    assert gh.paths("/git/trees/") == [f"/repos/owner/notes/git/trees/{head}?recursive=1"]


def test_no_prefix_reads_the_whole_repository(gh: FakeGitHub, sleeps: list[float]) -> None:
    gh.commit(VAULT)
    src = source(gh, sleeps, prefix="")
    expected = NOTES | {"notes-archive/x.md", "drafts/f.md", "README.md"}
    assert src.key == "github:owner/notes@main/"
    assert src.changes(None, {}).present == expected


def test_incremental_sync_uses_compare_not_the_tree(gh: FakeGitHub, sleeps: list[float]) -> None:
    first, known, src = synced(gh, sleeps)
    edits = {"notes/a.md": b"# A v2\n", "notes/new.md": b"# New\n", "notes/sub/b.md": None}
    head = gh.commit({**edits, "notes/image.png": b"changed, not a note"})
    changes = src.changes(first, known)
    assert changes == ChangeSet(
        head=head,
        fetch=["notes/a.md", "notes/new.md"],
        deleted=["notes/sub/b.md"],
        versions={"notes/a.md": blob_sha(b"# A v2\n"), "notes/new.md": blob_sha(b"# New\n")},
        base=first,
    )
    assert not changes.complete
    # Only the folders holding the files to read are listed (the root and notes/), to leave out
    # symlinks and submodules, whose mode a comparison does not give.
    root = gh.commits[head].tree
    notes = next(sha for name, _, _, sha in gh.trees[root] if name == "notes")
    assert gh.paths("/git/trees/") == [f"/repos/owner/notes/git/trees/{t}" for t in (head, notes)]
    assert gh.paths("/compare/") == [f"/repos/owner/notes/compare/{first}...{head}?page=1"]
    assert [src.read(path) for path in changes.fetch] == [b"# A v2\n", b"# New\n"]


@pytest.mark.parametrize(
    ("renames", "files", "fetch", "deleted", "renamed"),
    [
        pytest.param(
            {"notes/d.md": "notes/z/d.md"}, {}, [], [], [("notes/d.md", "notes/z/d.md")], id="moved"
        ),
        pytest.param(
            {"notes/d.md": "notes/d2.md"},
            {"notes/d2.md": b"# D edited\n"},
            ["notes/d2.md"],
            [],
            [("notes/d.md", "notes/d2.md")],
            id="moved-and-edited",
        ),
        pytest.param({"notes/e.md": "drafts/e.md"}, {}, [], ["notes/e.md"], [], id="out-of-prefix"),
        pytest.param({"drafts/f.md": "notes/f.md"}, {}, ["notes/f.md"], [], [], id="into-prefix"),
        pytest.param({"notes/e.md": "notes/e.txt"}, {}, [], ["notes/e.md"], [], id="not-markdown"),
        pytest.param({"notes/e.md": "notes/.trash/e.md"}, {}, [], ["notes/e.md"], [], id="hidden"),
    ],
)
def test_renames(
    gh: FakeGitHub,
    sleeps: list[float],
    renames: dict[str, str],
    files: dict[str, bytes | None],
    fetch: list[str],
    deleted: list[str],
    renamed: list[tuple[str, str]],
) -> None:
    first, known, src = synced(gh, sleeps)
    gh.commit(files, renames=renames)
    changes = src.changes(first, known)
    assert (changes.fetch, changes.deleted, changes.renamed) == (fetch, deleted, renamed)
    assert [src.read(path) for path in fetch] == [gh.blobs[changes.versions[p]] for p in fetch]
    # The root and notes/ listed when a file is read, to see it is no symlink; never the tree.
    assert len(gh.paths("/git/trees/")) == (2 if fetch else 0) and not gh.paths("recursive=")


def test_several_commits_give_the_net_change(gh: FakeGitHub, sleeps: list[float]) -> None:
    first, known, src = synced(gh, sleeps)
    gh.commit({"notes/a.md": b"v2", "notes/tmp.md": b"short-lived"})
    gh.commit({"notes/a.md": b"v3", "notes/d.md": None})
    gh.commit({"notes/tmp.md": None, "notes/a.md": b"# A\n", "notes/e.md": b"# E v2\n"})
    changes = src.changes(first, known)
    assert (changes.fetch, changes.deleted) == (["notes/e.md"], ["notes/d.md"])


@pytest.mark.parametrize(("count", "uses_tree"), [(299, False), (300, True), (400, True)])
def test_comparisons_github_may_truncate_fall_back_to_the_tree(
    gh: FakeGitHub, sleeps: list[float], count: int, uses_tree: bool
) -> None:
    first, known, src = synced(gh, sleeps)
    new = {f"notes/bulk/{i:03}.md": f"# {i}\n".encode() for i in range(count - 1)}
    gh.commit({**new, "notes/a.md": None})
    changes = src.changes(first, known)
    assert sorted(changes.fetch) == sorted(new)
    assert changes.deleted == ["notes/a.md"]
    assert changes.complete is uses_tree
    assert bool(gh.paths("recursive=1")) is uses_tree


@pytest.mark.parametrize("history", ["unknown-commit", "force-pushed"])
def test_unusable_base_falls_back_to_the_tree(
    gh: FakeGitHub, sleeps: list[float], history: str
) -> None:
    first, known, src = synced(gh, sleeps)
    since = "f" * 40
    if history == "force-pushed":
        since = gh.commit({"notes/abandoned.md": b"pushed, then force-pushed away"})
        known = {**known, "notes/abandoned.md": blob_sha(b"pushed, then force-pushed away")}
        gh.reset(first)
    head = gh.commit({"notes/a.md": b"# A v2\n"})
    changes = src.changes(since, known)
    assert changes.head == head and changes.base == since and changes.complete
    assert changes.fetch == ["notes/a.md"]
    assert changes.deleted == (["notes/abandoned.md"] if history == "force-pushed" else [])


def test_since_equal_to_head_is_one_request(gh: FakeGitHub, sleeps: list[float]) -> None:
    first, known, src = synced(gh, sleeps)
    assert src.changes(first, known) == ChangeSet(head=first, base=first)
    assert gh.paths("") == ["/repos/owner/notes/branches/main"]


def test_truncated_tree_is_walked_folder_by_folder(sleeps: list[float]) -> None:
    with FakeGitHub(token=TOKEN, tree_limit=3) as gh:
        gh.commit({**VAULT, "notes/sub/deeper/g.md": b"# G\n"})
        changes = source(gh, sleeps).changes(None, {})
        trees = gh.paths("/git/trees/")
    assert changes.present == NOTES | {"notes/sub/deeper/g.md"}
    assert trees[0].endswith("?recursive=1")  # truncated, so then: root, notes, sub, deeper
    assert len(trees) == 5 and not any(".obsidian" in path or ".trash" in path for path in trees)


BYTES = {
    "notes/latin1.md": "café, naïve".encode("latin-1"),
    "notes/binary.md": bytes(range(256)),
    "notes/empty.md": b"",
    "notes/huge.md": b"# Huge\n" + b"\xff\xfe line\n" * 150_000,  # over 1 MB
}


@pytest.mark.parametrize("path", sorted(BYTES))
@pytest.mark.parametrize("after_changes", [True, False], ids=["listed", "unlisted"])
def test_read_returns_exact_bytes(
    gh: FakeGitHub, sleeps: list[float], path: str, after_changes: bool
) -> None:
    head = gh.commit(dict(BYTES))
    src = source(gh, sleeps)
    if after_changes:
        src.changes(None, {})
    gh.requests.clear()
    assert src.read(path) == BYTES[path]
    blob = f"/repos/owner/notes/git/blobs/{blob_sha(BYTES[path])}"
    contents = f"/repos/owner/notes/contents/{path}?ref={head}"
    if after_changes:
        assert gh.paths("") == [blob]
    else:
        large = len(BYTES[path]) > 1024 * 1024
        assert gh.paths("/contents/") == [contents] and gh.paths("/git/blobs/") == [blob] * large


def test_reading_a_missing_file_fails(gh: FakeGitHub, sleeps: list[float]) -> None:
    gh.commit(VAULT)
    with pytest.raises(SourceError, match=r"notes/nope\.md not found"):
        source(gh, sleeps).read("notes/nope.md")


@pytest.mark.parametrize(
    ("status", "headers", "waited"),
    [
        (403, {"Retry-After": "2", "X-RateLimit-Remaining": "0"}, 2.0),
        (403, {"Retry-After": "3600"}, 7.0),
        (429, {"Retry-After": "1"}, 1.0),
        (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{in_an_hour}"}, 7.0),
    ],
    ids=["retry-after", "retry-after-capped", "429", "reset-capped"],
)
def test_rate_limits_wait_then_retry(
    gh: FakeGitHub, sleeps: list[float], status: int, headers: dict[str, str], waited: float
) -> None:
    head = gh.commit(VAULT)
    in_an_hour = str(int(time.time()) + 3600)
    headers = {name: value.format(in_an_hour=in_an_hour) for name, value in headers.items()}
    gh.fail_next(status, headers, {"message": "API rate limit exceeded for 127.0.0.1."})
    assert source(gh, sleeps, max_backoff_s=7.0).head() == head
    assert sleeps == [waited]
    assert len(gh.paths("/branches/main")) == 2


def test_server_errors_back_off_exponentially(gh: FakeGitHub, sleeps: list[float]) -> None:
    gh.commit(VAULT)
    gh.fail_next(502, times=2)
    gh.fail_next(503)
    assert len(source(gh, sleeps).changes(None, {}).fetch) == len(NOTES)
    assert sleeps == [1.0, 2.0, 4.0]


def test_persistent_server_errors_give_up(gh: FakeGitHub, sleeps: list[float]) -> None:
    gh.commit(VAULT)
    gh.fail_next(500, times=50)
    with pytest.raises(SourceError, match=r"failed 4 times: HTTP 500 Internal Server Error"):
        source(gh, sleeps, max_retries=3, max_backoff_s=1.5).head()
    assert len(gh.requests) == 4
    assert sleeps == [1.0, 1.5, 1.5]


@pytest.mark.parametrize("token", ["ghp_wrong_secret_value", None])
def test_bad_credentials_fail_at_once(
    gh: FakeGitHub, sleeps: list[float], token: str | None
) -> None:
    gh.commit(VAULT)
    with pytest.raises(SourceError, match="401 Bad credentials") as failure:
        source(gh, sleeps, token=token).changes(None, {})
    assert "GITHUB_TOKEN" in str(failure.value)
    assert "ghp_wrong_secret_value" not in str(failure.value) and TOKEN not in str(failure.value)
    assert (len(gh.requests), sleeps) == (1, [])


def test_forbidden_without_rate_limit_is_not_retried(gh: FakeGitHub, sleeps: list[float]) -> None:
    gh.commit(VAULT)
    gh.fail_next(403, body={"message": "Resource not accessible by personal access token"})
    with pytest.raises(SourceError, match="403 Resource not accessible"):
        source(gh, sleeps).head()
    assert (len(gh.requests), sleeps) == (1, [])


@pytest.mark.parametrize(
    ("repo", "branch", "message"),
    [
        ("owner/notes", "nope", r"branch 'nope' not found in GitHub repository owner/notes"),
        ("owner/missing", "main", r"GitHub repository owner/missing not found \(404\)"),
    ],
)
def test_missing_repository_or_branch(
    gh: FakeGitHub, sleeps: list[float], repo: str, branch: str, message: str
) -> None:
    gh.commit(VAULT)
    src = GitHubSource(repo, branch, token=TOKEN, base_url=gh.base_url, sleep=sleeps.append)
    with pytest.raises(SourceError, match=message):
        src.head()
    assert sleeps == []


def test_an_empty_repository_says_it_has_no_commits_yet(sleeps: list[float]) -> None:
    """It said branch 'main' was not found, 'its default branch is main'."""
    with FakeGitHub(token=TOKEN) as empty:
        src = GitHubSource(empty.repo, "main", token=TOKEN, base_url=empty.base_url, sleep=sleeps.append)  # fmt: skip
        with pytest.raises(SourceError, match="owner/notes has no commits yet on 'main': push"):
            src.head()


def test_unreachable_server_is_retried_then_fails(sleeps: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    src = GitHubSource(
        "owner/notes",
        base_url=f"http://127.0.0.1:{port}",
        max_retries=2,
        timeout_s=2,
        sleep=sleeps.append,
    )
    with pytest.raises(SourceError, match=rf"failed 3 times: cannot reach http://127.0.0.1:{port}"):
        src.head()
    assert sleeps == [1.0, 2.0]


def test_fake_paginates_comparison_commits_like_github(gh: FakeGitHub) -> None:
    first = gh.commit(VAULT)
    later = [gh.commit({f"notes/{i}.md": b"x"}) for i in range(5)]
    client = Github(
        base_url=gh.base_url, auth=Auth.Token(TOKEN), lazy=True, seconds_between_requests=None
    )
    comparison = client.get_repo(gh.repo).compare(first, later[-1], comparison_commits_per_page=2)
    assert [commit.sha for commit in comparison.commits] == later
    assert len(gh.paths("/compare/")) == 3  # pages 1 to 3, followed through the Link header


def test_invalid_repository_name() -> None:
    with pytest.raises(SourceError, match="owner/name"):
        GitHubSource("just-a-name")
