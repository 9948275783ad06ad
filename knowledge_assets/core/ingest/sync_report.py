"""What one sync of a source did, as the UI and the command line report it: the notes new,
changed, renamed and deleted, the files rejected (read now or before) and the warnings."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SyncReport:
    """What one sync did, for the UI and the CLI."""

    source: str
    head: str
    base: str | None
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # rejected files gone: never stored
    rejected: list[tuple[str, str]] = field(default_factory=list)
    # Files rejected before and not read again (unchanged since): still rejected all the same.
    still_rejected: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    # (path, warning) of the notes read in this sync that were stored with a warning (a
    # frontmatter key written twice), and the paths of other notes stored with one before.
    warnings: list[tuple[str, str]] = field(default_factory=list)
    still_warned: list[str] = field(default_factory=list)
    fetched: int = 0

    @property
    def rejected_files(self) -> int:
        """Every file of the source that is rejected now, read in this sync or not."""
        return len(self.rejected) + len(self.still_rejected)

    @property
    def wrote_anything(self) -> bool:
        return bool(
            self.new or self.changed or self.deleted or self.renamed or self.forgotten
            or self.rejected or self.unreadable
        )  # fmt: skip
