"""Symlinks to folders in a local vault: never followed (a link may leave the vault, or loop),
and recorded, so the user sees why the notes behind one are not in search.

Notes stored under such a path (a folder since replaced by a link to it) follow where the link
leads: into the vault, they are read at their real paths, so the copies under the link's path
go (a move: the notes pair up with their real paths as renames, nothing is embedded again); out
of the vault, or nowhere (a drive not mounted), they are kept, as under a folder that cannot be
read.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

SYMLINKED = "symlink to a folder"
NOT_FOLLOWED = "not followed"


def folder_link(path: str) -> str | None:
    """Where a symlink that points to a folder, or to nothing at all, leads; None for a link to
    a file (an image, say)."""
    if os.path.exists(path) and not os.path.isdir(path):
        return None
    return os.path.realpath(path)


def linked_folders(
    links: Mapping[str, str], root: Path, known: Collection[str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The reason to record for each linked folder (``folder/`` -> its target), and the folders
    whose stored notes are kept. A link that leads nowhere is recorded only when notes were
    stored under its path: it cannot tell a folder from a file otherwise."""
    reasons: dict[str, str] = {}
    kept: list[str] = []
    for folder, target in sorted(links.items()):
        if os.path.isdir(target) and Path(target).is_relative_to(root):
            where = Path(target).relative_to(root).as_posix()
            reasons[folder] = f"{SYMLINKED} in the vault ({where}/): {NOT_FOLLOWED}, read there"
        elif os.path.isdir(target):
            reasons[folder] = f"{SYMLINKED} ({target}): {NOT_FOLLOWED}"
            kept.append(folder)
        elif any(path.startswith(folder) for path in known):
            reasons[folder] = f"{SYMLINKED} that leads nowhere ({target}): {NOT_FOLLOWED}"
            kept.append(folder)
    return reasons, tuple(kept)


def is_symlinked(reason: str) -> bool:
    """Whether a recorded folder is a symlink (not followed), not a folder that cannot be read."""
    return reason.startswith(SYMLINKED)
