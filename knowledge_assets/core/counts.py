"""Counts in the English that users read (CLI output, run logs, asset summaries, errors):
"1 note", "2 notes", "1,204 notes", never "1 notes"."""

from __future__ import annotations

__all__ = ["counted", "noun_for"]


def noun_for(count: int, noun: str, plural: str | None = None) -> str:
    """``noun`` as said of ``count`` things: itself for exactly one, else ``plural`` (by
    default the noun with an ``s``)."""
    return noun if count == 1 else plural or f"{noun}s"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun: ``1 note``, ``0 notes``, ``1,204 notes``."""
    return f"{count:,} {noun_for(count, noun, plural)}"
