"""What changed on a GitHub branch since the last synced commit, without listing the whole tree.

The compare API lists the files changed since that commit, but not their mode: the folders
holding the files to read are listed (one folder at a time, from the root, each at most once per
sync) so that a symlink or a submodule is left out as a full sync leaves it out. A file a
previous sync could not read need not be in the comparison at all: it is looked up in the same
listings and read again, or deleted when it is gone from the head.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from knowledge_assets.core.sources.base import ChangeSet
from knowledge_assets.core.sources.github_api import GitHubAPI

# GitHub lists at most 300 changed files in a comparison, without pagination: a comparison that
# lists that many may be truncated, so the full tree is compared instead.
COMPARE_FILE_LIMIT = 300
# Files that waited to be read again are looked up by listing each folder on their paths, one
# request each. The full tree is one recursive listing, but its answer grows with the vault (and
# is walked folder by folder once GitHub truncates it), so a few folders are cheaper. Past this
# many folders the failures are broad (a token that lost access to much of the repository), the
# folder-by-folder look-up would approach a walk of the tree, and the full tree is read instead.
# The number of such files does not matter: each is read again either way.
UNREAD_FOLDER_LIMIT = 32
# "changed" is a path whose kind changed (a note made a symlink or a submodule, or back): the
# comparison does not say what it is now; its folder's listing does.
_RETYPED = "changed"
_FETCH_STATUSES = frozenset({"added", "modified", "copied", _RETYPED})
SYMLINK_MODE = "120000"
_NONE = ("", "", "")  # the kind, mode and SHA of a path missing from its folder's listing
_Change = tuple[str, str, str | None, str]  # status, path, previous path, blob sha
Entries = dict[str, tuple[str, str, str]]  # path -> kind, mode, sha at the head


def is_file(kind: str, mode: str) -> bool:
    """True for a tree entry that is a plain file: not a folder, a symlink or a submodule."""
    return kind == "blob" and mode != SYMLINK_MODE


def folders_on(paths: Iterable[str]) -> set[str]:
    """Every folder on the way to ``paths``, the root ("") included."""
    needed = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        needed.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return needed


def list_folders(api: GitHubAPI, head: str, paths: Iterable[str]) -> Entries | None:
    """The kind, mode and SHA of every entry of the folders holding ``paths`` at ``head``: each
    folder on the way to them is listed once, without recursion, however many of ``paths`` it
    holds. None when GitHub truncated a listing."""
    needed = folders_on(paths)
    entries: Entries = {}
    pending = [("", head)]
    while pending:  # bounded: each folder of ``needed`` is listed at most once
        folder, sha = pending.pop()
        truncated, listing = api.tree(f"tree {folder or '/'}", sha, recursive=False)
        if truncated:
            return None
        for name, kind, mode, child in listing:
            path = f"{folder}/{name}" if folder else name
            entries[path] = (kind, mode, child)
            if kind == "tree" and path in needed:
                pending.append((path, child))
    return entries


class Diff:
    """One incremental sync of a branch: the comparison from ``since`` to ``head``, checked
    against the listings of the folders it touches. ``wanted`` tells a note path under the
    prefix, not excluded; ``blobs`` collects the blob SHA of every path to read."""

    def __init__(self, api: GitHubAPI, wanted: Callable[[str], bool]) -> None:
        self.api = api
        self.wanted = wanted
        self.blobs: dict[str, str] = {}

    def changes(
        self, since: str, head: str, known: Mapping[str, str], excluded: Sequence[str]
    ) -> ChangeSet | None:
        """What changed, or None when only the full tree can tell: the comparison is unusable
        or may be truncated, a listing was truncated, or too many files wait to be read again.

        A file with no version in ``known`` (a previous sync could not read it: GitHub did not
        serve it) is read again when it is a note at the head and deleted when it is not;
        while GitHub still will not serve it, the sync keeps what was stored and its reason."""
        unread = sorted(
            path for path, version in known.items() if not version and self.wanted(path)
        )
        if len(folders_on(unread)) > UNREAD_FOLDER_LIMIT:
            return None
        files = [] if since == head else self._compare(since, head)
        if files is None:
            return None
        changes = ChangeSet(head=head, base=since, deleted=list(excluded))
        for status, path, previous, sha in files:
            self._apply(changes, status, path, previous, sha, known)
        touched = {*changes.fetch, *changes.deleted, *(p for pair in changes.renamed for p in pair)}
        retry = [path for path in unread if path not in touched]
        if not changes.fetch and not retry:
            return changes
        # One set of listings serves the files to read and those to look up again.
        entries = list_folders(self.api, head, [*changes.fetch, *retry])
        if entries is None:
            return None
        self._keep_notes(changes, entries, known)
        self._retry(changes, entries, retry)
        return changes

    def _apply(
        self, changes: ChangeSet, status: str, path: str, previous: str | None, sha: str,
        known: Mapping[str, str],
    ) -> None:  # fmt: skip
        """Add one file of the comparison to ``changes``."""
        if status == "renamed" and previous:
            self._renamed(changes, previous, path, sha, known)
        elif status == "removed" and path in known:  # excluded or not, it is gone
            if path not in changes.deleted:
                changes.deleted.append(path)
        elif status in _FETCH_STATUSES and self.wanted(path):
            # A path whose kind changed is looked at even when its blob did not change.
            have = None if status == _RETYPED else known.get(path)
            self._changed(changes, path, sha, have)

    def _changed(self, changes: ChangeSet, path: str, sha: str, have: str | None) -> None:
        self.blobs[path] = sha
        if have != sha:
            changes.fetch.append(path)
            changes.versions[path] = sha

    def _renamed(
        self, changes: ChangeSet, old: str, new: str, sha: str, known: Mapping[str, str]
    ) -> None:
        """A rename inside the prefix moves the note; one across its edge deletes or adds it."""
        old_in, new_in = self.wanted(old), self.wanted(new)
        if old_in and new_in:
            changes.renamed.append((old, new))
            self._changed(changes, new, sha, known.get(old))
        elif old_in:
            changes.deleted.append(old)
        elif new_in:
            self._changed(changes, new, sha, known.get(new))

    def _compare(self, since: str, head: str) -> list[_Change] | None:
        """The files changed from ``since`` to ``head``, or None when the full tree is needed."""
        repo = self.api.repository()

        def fetch() -> tuple[str, list[_Change]]:
            comparison = repo.compare(since, head)
            files: list[_Change] = [
                (f.status, f.filename, f.previous_filename, f.sha) for f in comparison.files
            ]
            return comparison.status, files

        # 404: ``since`` is unknown; 422: a diff GitHub will not compute.
        found = self.api.found(f"comparison {since[:12]}...{head[:12]}", fetch, (404, 422))
        if found is None or found[0] not in ("ahead", "identical"):
            return None  # unusable, or ``since`` is not an ancestor of the head (a force-push)
        return found[1] if len(found[1]) < COMPARE_FILE_LIMIT else None

    def _keep_notes(self, changes: ChangeSet, entries: Entries, known: Mapping[str, str]) -> None:
        """Leave out of ``changes`` the files to read that are no notes at the head: symlinks
        and submodules, which a comparison lists as files without their mode.

        A symlink's blob is its target's path: read as a note, its text was "a.md" until a full
        sync deleted it. What such a path held before goes, as in a full sync: a stored note
        made a symlink is deleted, a rejection forgotten."""
        for path in [p for p in changes.fetch if not is_file(*entries.get(p, _NONE)[:2])]:
            changes.fetch.remove(path)
            del changes.versions[path]
            del self.blobs[path]
            moved = [old for old, new in changes.renamed if new == path]
            for old in moved:  # renamed onto a symlink: the note at ``old`` is gone
                changes.renamed.remove((old, path))
                changes.deleted.append(old)
            if not moved and path in known:
                changes.deleted.append(path)

    def _retry(self, changes: ChangeSet, entries: Entries, paths: Iterable[str]) -> None:
        """Read again each of ``paths`` (files a previous sync could not read, which the
        comparison did not list) that is a note at the head; the others are gone, or no notes
        any more, and are deleted as a full sync deletes them. A file GitHub lists but will not
        serve is in the listing, so it is only ever rejected again, never deleted."""
        for path in paths:
            kind, mode, sha = entries.get(path, _NONE)
            if is_file(kind, mode):
                self._changed(changes, path, sha, None)
            else:
                changes.deleted.append(path)
        changes.fetch.sort()  # in path order, as a full sync reads them
