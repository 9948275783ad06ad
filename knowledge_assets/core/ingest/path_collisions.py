"""Paths that name one file where case and Unicode normalization are ignored (macOS, Windows):
one of each such group is kept, the others are rejected as its duplicates, and a rejected
duplicate is read again once the path it collided with is gone."""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection
from knowledge_assets.core.sources.base import ChangeSet


def same_file_key(path: str) -> str:
    """What a path is on a file system that ignores case and Unicode normalization (macOS,
    Windows): ``Note.md`` and ``note.md``, or が as one character (NFC) and as か plus a
    combining mark (NFD), name the same file there."""
    return unicodedata.normalize("NFC", path).casefold()


def case_losers(stored: set[str], changes: ChangeSet) -> dict[str, str]:
    """Paths equal but for case or Unicode normalization collide on such file systems: keep
    one, reject the rest. Returns each rejected path's kept path.

    The path already stored wins; otherwise the first in sorted order, so the choice is stable.
    """
    present = changes.present if changes.present is not None else _present(stored, changes)
    groups: dict[str, list[str]] = defaultdict(list)
    for path in present:
        groups[same_file_key(path)].append(path)
    losers: dict[str, str] = {}
    for paths in groups.values():
        if len(paths) > 1:
            keep = min(paths, key=lambda p: (p not in stored, p))
            losers.update({p: keep for p in paths if p != keep})
    return losers


def reread_case_duplicates(stored: set[str], known: dict[str, str], changes: ChangeSet) -> None:
    """Add to ``changes.fetch`` the rejected paths that collided (:func:`same_file_key`) with a
    path this sync deletes or renames away: an unchanged rejected file is otherwise never read
    again, so the loser of a collision would stay rejected after its winner is gone.

    Their recorded version is the one they had when rejected; they were not read since, so it
    is still theirs.
    """
    away = {*changes.deleted, *(old for old, _ in changes.renamed)}
    gone = {same_file_key(p) for p in away}
    if not gone:
        return
    skip = set(changes.fetch) | away  # a rejected file renamed away is no longer there to read
    freed = [
        path for path in known
        if path not in stored and path not in skip and same_file_key(path) in gone
        and not path.endswith("/")  # an unreadable folder's entry, not a file
    ]  # fmt: skip
    changes.fetch = sorted([*changes.fetch, *freed])
    changes.versions.update({path: known[path] for path in freed})


@dataclass
class Duplicates:
    """The case and Unicode duplicates of one sync (:func:`case_losers`), sorted out as batches
    are parsed. A duplicate of a path not stored yet waits in ``held`` until the whole sync is
    parsed: when that path turns out to be a bad file, one of its good duplicates lands instead
    (:meth:`settle`), so a broken ``Plan.md`` never keeps a good ``plan.md`` out of search."""

    losers: dict[str, str]
    stored: set[str]
    landed: set[str] = field(default_factory=set)
    held: list[ParsedDoc | Rejection] = field(default_factory=list)

    def split(self, parsed: list[ParsedDoc | Rejection]) -> tuple[list[ParsedDoc], list[Rejection]]:
        """Parsed files to write, and rejections (duplicates of a stored path among them)."""
        accepted: list[ParsedDoc] = []
        rejected: list[Rejection] = []
        for item in parsed:
            kept = self.losers.get(item.path)
            if kept is not None and kept not in self.stored:
                self.held.append(item)
            elif kept is not None:
                rejected.append(_duplicate(item.path, kept))
            elif isinstance(item, Rejection):
                rejected.append(item)
            else:
                accepted.append(item)
        self.landed.update(doc.path for doc in accepted)
        return accepted, rejected

    def settle(self) -> tuple[list[ParsedDoc], list[Rejection]]:
        """The held duplicates once every batch is parsed: rejected as duplicates of the path
        they collided with when it landed, else the first good one of each group lands in its
        place and the rest are its duplicates (a bad one keeps its own reason)."""
        accepted: list[ParsedDoc] = []
        rejected: list[Rejection] = []
        groups: dict[str, list[ParsedDoc | Rejection]] = defaultdict(list)
        for item in sorted(self.held, key=lambda i: i.path):
            groups[self.losers[item.path]].append(item)
        for kept, items in sorted(groups.items()):
            good = [i for i in items if isinstance(i, ParsedDoc)]
            winner = kept if kept in self.landed else good[0].path if good else None
            if good and winner == good[0].path:
                accepted.append(good[0])
            for item in items:
                if winner is None:  # none of them is good: each keeps its own reason
                    rejected.append(item)  # type: ignore[arg-type]
                elif item.path != winner:
                    rejected.append(_duplicate(item.path, winner))
        self.landed.update(doc.path for doc in accepted)
        self.held = []
        return accepted, rejected


def _duplicate(path: str, kept: str) -> Rejection:
    how = (
        "case"
        if path.casefold() == kept.casefold()
        else f"Unicode normalization: {_forms(path, kept)}"
    )
    return Rejection(path, f"duplicate of {kept} (paths differ only in {how})")


def _forms(path: str, kept: str) -> str:
    """Which form each of two paths that print alike is written in, by the first folder or
    file name that differs: without it, the reason names the kept file by what looks like the
    rejected file's own name."""
    for mine, theirs in zip(path.split("/"), kept.split("/"), strict=False):
        if mine != theirs:
            return f"this name is {_form(mine)}, that one {_form(theirs)}"
    return "written in another form"


def _form(name: str) -> str:
    if unicodedata.is_normalized("NFC", name):
        return "composed (NFC)"
    return "decomposed (NFD)" if unicodedata.is_normalized("NFD", name) else "partly decomposed"


def _present(stored: set[str], changes: ChangeSet) -> set[str]:
    """The source's paths after this sync, worked out from the stored ones when the source only
    said what changed (a diff of commits), not what it holds."""
    present = stored - set(changes.deleted) - {old for old, _ in changes.renamed}
    return present | {new for _, new in changes.renamed} | set(changes.fetch)
