"""A local vault folder: recursive ``.md`` files, hidden folders (``.obsidian/``, ``.git/``) skipped."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.core.ingest.frontmatter import clean_text
from knowledge_assets.core.ingest.store import source_name
from knowledge_assets.core.sources.base import (
    MARKDOWN_SUFFIXES,
    ChangeSet,
    FileTooLarge,
    SourceError,
    UnreadableFile,
    is_markdown,
)
from knowledge_assets.core.sources.exclusions import (
    SETTINGS_FILE,
    Exclusions,
    SettingsUnreadable,
    obsidian_filters,
)
from knowledge_assets.core.sources.folder_links import folder_link, linked_folders

# The version token of a file that is listed but cannot be stat-ed (a symlink loop, a broken
# link): never equal to a stored token, so the file is tried, and rejected with its reason.
UNREADABLE = "unreadable"
_LOOP = "symlink loop"

# A file saved twice within its file system's timestamp resolution keeps its mtime (and, after
# a one-character fix, its size): a sync that read the first save between the two would keep it
# for good, since the token never changes again. FAT and HFS+ store whole seconds (FAT even
# seconds), exFAT hundredths; ext4, APFS and NTFS nanoseconds. A file of whole-second or
# whole-hundredth mtime saved within that resolution of the scan is stored with a token no scan
# gives, so the next sync reads it once more (git's "racily clean" rule).
RACY = ":racy"
_COARSE = ((10**9, 2 * 10**9 + 10**8), (10**7, 3 * 10**7))  # (resolution, window) in ns


class LocalSource:
    """Notes in a folder. Version tokens are ``size:mtime_ns``, so an untouched file is never read."""

    table = "docs_local"
    place = "folder"

    def __init__(
        self,
        root: Path | str,
        *,
        suffixes: tuple[str, ...] = MARKDOWN_SUFFIXES,
        table: str = "docs_local",
        exclude: Iterable[str] = (),
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.suffixes = suffixes
        self.table = table
        self.exclude = tuple(exclude)
        self._load_settings()
        # The default source keeps its historical key; a declared source's key names its table.
        self.key = f"local:{self.root}" if table == "docs_local" else f"{table}:{self.root}"
        self.location = str(self.root)
        # How errors name the folder: the vault's, or a declared source's (``books folder``).
        self.label = "vault folder" if table == "docs_local" else f"{source_name(table)} folder"

    def _load_settings(self) -> None:
        """Obsidian's Excluded files, then the ones given (KA_VAULT_EXCLUDE for the vault); read
        at every scan, so a settings file fixed since is seen by a long-lived source."""
        try:
            filters = obsidian_filters(self.root)
            self.settings_problem: str | None = None
        except SettingsUnreadable as exc:
            filters, self.settings_problem = (), str(exc)
        self.exclusions = Exclusions([*filters, *self.exclude])

    def _check(self) -> None:
        if not self.root.is_dir():
            raise SourceError(f"{self.label} {self.root} does not exist or is not a folder")

    def scan(self) -> dict[str, str]:
        """Every note path (relative, POSIX) with its ``size:mtime_ns`` version token.

        Folders that exist but cannot be listed are collected in ``self.unreadable`` (relative
        folder path ending in ``/`` -> reason); the vault folder itself must be readable.
        """
        self._check()
        self._load_settings()
        self.unreadable: dict[str, str] = {}
        self._links: dict[str, str] = {}  # symlinked folders, recorded by changes()
        return dict(self._walk())

    def _walk(self) -> Iterator[tuple[str, str]]:
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError as exc:
                if folder == self.root:
                    raise SourceError(
                        f"{self.label} {self.root} cannot be read: {_why(exc)}"
                    ) from exc
                # an unreadable sub-folder must not stop the rest of the vault, nor count as deleted
                self.unreadable[self._rel(folder) + "/"] = f"folder cannot be read: {_why(exc)}"
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                found = self._entry(entry, stack)
                if found is not None:
                    yield found

    def _entry(self, entry: os.DirEntry[str], stack: list[Path]) -> tuple[str, str] | None:
        rel = self._rel(entry.path)
        try:
            if entry.is_dir(follow_symlinks=False):
                if not (self.exclusions and self.exclusions.excludes_folder(rel)):
                    stack.append(Path(entry.path))
                return None
            if self.exclusions and self.exclusions.excludes(rel):
                return None
            if not is_markdown(rel, self.suffixes):
                if entry.is_symlink() and (target := folder_link(entry.path)):
                    self._links[rel + "/"] = target  # not followed: it may leave the vault, or loop
                return None
            if not entry.is_file() and not entry.is_symlink():
                return rel, UNREADABLE  # a FIFO or a device with a note's name: read() says so
            st = entry.stat()
        except OSError:
            # a symlink loop or a dangling link with a note's name: offered, then rejected
            return (rel, UNREADABLE) if is_markdown(rel, self.suffixes) else None
        if not os.access(entry.path, os.R_OK):
            # chmod keeps the mtime: without this, a stored note made unreadable looks unchanged
            return rel, UNREADABLE
        return rel, f"{st.st_size}:{st.st_mtime_ns}"

    def _rel(self, path: Path | str) -> str:
        # A string prefix cut: a path object per file cost 0.3 s per 10,000 notes on every sync.
        text = os.fspath(path)
        root = os.fspath(self.root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if text.startswith(prefix):
            rel = text[len(prefix) :]
            return rel if os.sep == "/" else rel.replace(os.sep, "/")
        return Path(text).relative_to(self.root).as_posix()

    def head(self) -> str:
        """A fingerprint of the notes, also of a vault that is a git work tree: a note saved in
        Obsidian and not committed yet must reach search as soon as one in a plain folder."""
        started = time.time_ns()
        return self.fingerprint(as_stored(self.scan(), started))

    def fingerprint(self, stored: Mapping[str, str]) -> str:
        """A hash of every path, size and mtime: cheap, and changes whenever Obsidian saves.

        Tokens are hashed as stored: a file saved within a coarse mtime of the scan changes
        the fingerprint again once it has settled, so the sensor starts the run that reads it
        once more."""
        digest = hashlib.sha256()
        for path, token in sorted(stored.items()):
            digest.update(f"{path}\0{token}\n".encode("utf-8", "surrogateescape"))
        return self._marked("tree:" + digest.hexdigest())

    def _marked(self, head: str) -> str:
        """``head``, told apart while the settings file is unreadable: fixing the file changes
        no note, and the sensor must still see a change to sync the notes held back."""
        return head + "+unreadable-settings" if self.settings_problem else head

    def changes(self, since: str | None, known: Mapping[str, str]) -> ChangeSet:
        """Compare the folder with the stored version tokens; only changed files are read later."""
        started = time.time_ns()
        versions = self._held_back(self.scan(), known)
        stored = as_stored(versions, started)
        # Compared as scanned: a stored racy token matches no scan, so its file is read again.
        fetch = sorted(path for path, token in versions.items() if known.get(path) != token)
        linked, kept = linked_folders(self._links, self.root, known)
        hidden = tuple(self.unreadable) + kept
        self.unreadable.update(linked)
        # Notes under a folder that cannot be listed are not gone: keep them, report the folder.
        # A file name that is not UTF-8 is recorded under a cleaned name: not a deletion either.
        renamed = {clean_text(p) for p in versions if clean_text(p) != p}
        gone = set(known) - set(versions) - renamed
        # A note renamed while the settings are unknown waits at its new path: keep the old one.
        waiting = {p for p in gone if known[p].removesuffix(RACY) in self._waiting}
        deleted = sorted(p for p in gone if not p.startswith(hidden) and p not in waiting)
        return ChangeSet(
            head=self.fingerprint(stored),
            fetch=fetch,
            deleted=deleted,
            versions={path: stored[path] for path in fetch},
            present=set(versions) | waiting | {p for p in known if p.startswith(hidden)},
            base=since,
            unreadable=dict(self.unreadable),
        )

    def _held_back(self, versions: dict[str, str], known: Mapping[str, str]) -> dict[str, str]:
        """``versions`` without the new notes while the settings file is unreadable: any of
        them may lie in a folder it excludes, so they wait until it is fixed. Stored notes
        sync as before (excluded ones were never stored); the file is reported with a fix."""
        self._waiting: set[str] = set()  # the held-back notes' tokens (a rename keeps its own)
        if not self.settings_problem:
            return versions
        kept = {path: token for path, token in versions.items() if path in known}
        self._waiting = {t for p, t in versions.items() if p not in kept and t != UNREADABLE}
        waiting = len(versions) - len(kept)
        held = f"{counted(waiting, 'new note')} {noun_for(waiting, 'waits', 'wait')}"
        self.unreadable[SETTINGS_FILE] = (
            f"{self.settings_problem}: Obsidian's Excluded files are unknown, so {held} until"
            " it is fixed (stored notes are kept). Fix the file, or set Excluded files again"
            " in Obsidian (Settings → Files and links)"
        )
        return kept

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The bytes of one note; :class:`UnreadableFile` when it exists but cannot be read,
        :class:`FileTooLarge` when it holds more than ``limit`` bytes (never read past it)."""
        try:
            target = (self.root / path).resolve(strict=True)
            if not target.is_relative_to(self.root):
                raise UnreadableFile(
                    f"symlink to a file outside the vault ({target}): copy the file into the"
                    " vault in place of the link"
                )
            if not target.is_file():
                raise UnreadableFile(_not_a_file(target))
            with target.open("rb") as file:
                data = file.read() if limit is None else file.read(limit + 1)
                if limit is not None and len(data) > limit:
                    # The size when opened: a file still growing is named by what it held then.
                    raise FileTooLarge(max(len(data), os.fstat(file.fileno()).st_size))
                return data
        except UnreadableFile:
            raise
        except FileNotFoundError as exc:
            raise UnreadableFile(_missing(self.root / path, exc)) from exc
        except OSError as exc:
            raise UnreadableFile(f"cannot be read: {_why(exc)}") from exc
        except RuntimeError as exc:  # Path.resolve on a symlink loop (Python < 3.13)
            raise UnreadableFile(f"cannot be read: {_LOOP}") from exc


# What a path with a note's name is when it is no file, named so the user knows what to look for.
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISDIR, "a folder"),
)


def _not_a_file(target: Path) -> str:
    """Why ``target`` (a FIFO, a socket, a device, or the folder a link points to) cannot be
    read as a note, with the fix: nothing in it is a note, so only its name is wrong."""
    try:
        mode = target.stat().st_mode
    except OSError:
        mode = 0
    kind = next((name for test, name in _KINDS if test(mode)), "something")
    return f"{kind}, not a regular file: rename it so its name does not end in .md, or remove it"


def _missing(link: Path, exc: OSError) -> str:
    """Why a listed file is not there: a symlink whose target is gone says where it points
    (``ls`` shows the file, so "No such file or directory" alone reads as a contradiction)."""
    try:
        return f"dangling symlink: its target {os.readlink(link)} does not exist"
    except OSError:  # not a symlink, or gone since it was listed
        return f"cannot be read: {_why(exc)}"


def _why(exc: OSError) -> str:
    """An OSError's reason without the path (the path is reported beside it). A symlink loop
    reads the same on every Python: 3.13 raises ELOOP ("Too many levels of symbolic links")
    where earlier versions raised RuntimeError."""
    if exc.errno == errno.ELOOP:
        return _LOOP
    return exc.strerror or type(exc).__name__


def as_stored(versions: Mapping[str, str], scanned_ns: int) -> dict[str, str]:
    """Each of ``versions``' tokens as a sync stores it (:func:`settled`)."""
    return {path: settled(token, scanned_ns) for path, token in versions.items()}


def settled(token: str, scanned_ns: int) -> str:
    """``token`` (``size:mtime_ns``) as stored, marked :data:`RACY` when its file could still
    change without changing it: a coarse mtime within the file system's resolution of
    ``scanned_ns``, the time the scan began."""
    _, _, mtime = token.partition(":")
    if not mtime.isdigit():
        return token
    mtime_ns = int(mtime)
    for resolution, window in _COARSE:
        if mtime_ns % resolution == 0:
            return token + RACY if mtime_ns >= scanned_ns - window else token
    return token
