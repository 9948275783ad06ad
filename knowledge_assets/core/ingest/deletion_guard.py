"""The guard against a sync that would delete most of a source's notes: a wrong folder, another
vault or a wrong prefix look just like a vault whose notes were removed, and every note would
have to be embedded again once the setting is fixed. ``KA_ALLOW_MASS_DELETE=1`` lets a sync
delete them when that is what the user meant."""

from __future__ import annotations

from collections.abc import Mapping

from knowledge_assets.core.counts import counted
from knowledge_assets.core.ingest import store
from knowledge_assets.core.settings import env_flag
from knowledge_assets.core.sources.base import ChangeSet, Source, SourceError

__all__ = [
    "ALLOW_DELETE_ENV",
    "DeletionGuard",
    "MassDeletion",
    "deletions_allowed",
    "refuse_to_empty",
]


ALLOW_DELETE_ENV = "KA_ALLOW_MASS_DELETE"
ALLOW_EMPTY_ENV = "KA_ALLOW_EMPTY_SOURCE"  # its older name, still read
# A sync may delete this many stored notes whatever the share: a small vault's clean-up (or
# leaving the 8 sample notes for a vault of one's own) is never held up.
FEW_DELETIONS = 10


def deletions_allowed() -> bool:
    """True when the user said a sync may delete most (or all) of a source's notes."""
    return env_flag(ALLOW_DELETE_ENV) or env_flag(ALLOW_EMPTY_ENV)


class MassDeletion(SourceError):
    """A sync would delete most of a source's stored notes: refused, nothing deleted."""


def refuse_to_empty(source: Source, stored: int, changes: ChangeSet) -> None:
    """Raise :class:`MassDeletion` when the source lists no note at all while the store holds
    ``stored`` of it, unless ``KA_ALLOW_MASS_DELETE`` is set: a vault on a drive that is not
    mounted, a wrong folder or a wrong prefix look exactly like that, and syncing would delete
    every note (and, with them, every vector worth re-embedding)."""
    if changes.present is None or changes.present or not stored:
        return
    if deletions_allowed():
        return
    raise MassDeletion(
        f"{source.key} lists no notes, while the store holds {stored:,} from it: nothing was"
        " deleted. Mount the drive the vault is on, or fix the folder, branch or prefix; if you"
        f" emptied it on purpose, run once with {ALLOW_DELETE_ENV}=1"
    )


class DeletionGuard:
    """Refuses a sync that would delete more than half of the stored notes, and more than
    :data:`FEW_DELETIONS` of them, unless ``KA_ALLOW_MASS_DELETE`` is set: a wrong folder that
    holds a few notes, another vault, or a wrong prefix look like that, and the notes would
    have to be embedded again once the setting is fixed. A note moved to a new path (the same
    content) is no deletion, nor is a vault folder moved elsewhere with its notes."""

    def __init__(
        self, source: Source, stored: Mapping[str, str], changes: ChangeSet,
        last: store.LastSync | None,
    ) -> None:  # fmt: skip
        self.source, self.stored, self.last = source, len(stored), last
        self.deleting = sum(1 for path in changes.deleted if path in stored)
        arriving = sum(1 for path in changes.fetch if path not in stored)
        # At least this many deletions remain whatever the new files turn out to be renames of.
        self.certain = self.deleting - arriving
        self.listed = len(changes.present) if changes.present is not None else None

    def check(self, deleting: int, shown: int | None = None) -> None:
        """Raise :class:`MassDeletion` when ``deleting`` notes are too many; the message says
        ``shown`` (the stored notes the source no longer lists) when given."""
        if deleting <= max(FEW_DELETIONS, self.stored // 2) or deletions_allowed():
            return
        deleting = deleting if shown is None else shown
        source, last = self.source, self.last
        lists = f"lists {counted(self.listed, 'note')}" if self.listed is not None else ""
        if last is not None and last.location and last.location != source.location:
            where = f"the {source.place} changed from {last.location} to {source.location}"
            where += f", which {lists}" if lists else ""
        else:
            where = f"{source.location} {lists or 'changed'}"
        raise MassDeletion(
            f"refused: {where}: this sync would delete {deleting:,} of the"
            f" {counted(self.stored, 'stored note')}. Nothing was deleted. Check"
            f" {setting(source.table)}; if the notes were removed on purpose, run once with"
            f" {ALLOW_DELETE_ENV}=1"
        )


def setting(table: str) -> str:
    """The settings that say where a source's notes are, as a user changes them."""
    if table == "docs_local":
        return "KA_VAULT_PATH"
    if table == "docs_github":
        return "KA_GITHUB_REPO, KA_GITHUB_BRANCH and KA_GITHUB_PREFIX"
    return f"the settings of source {store.source_name(table)}"
