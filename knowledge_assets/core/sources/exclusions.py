"""Folders and files of a vault that are not indexed, as Obsidian's *Excluded files* setting
(``userIgnoreFilters`` in ``.obsidian/app.json``) leaves them out of its search, plus the ones
``KA_VAULT_EXCLUDE`` names (comma-separated).

Each entry is vault-relative, as Obsidian writes them:

- a path: ``Templates/`` (or ``Templates``) leaves out that folder, ``Daily/2023`` a folder or
  anything whose path starts with it, ``inbox.md`` one note;
- a pattern with ``*`` or ``?`` (``*.excalidraw.md``, ``Archive/*/old``), matched against the
  whole path, ``*`` crossing folders (any other character, ``[`` included, is itself: a folder
  may be named ``Archive [2020]``);
- a regular expression between slashes (``/^Clippings\\//``), searched in the path.

Entries and paths are compared in Unicode's composed form (NFC): macOS may hand a folder's name
decomposed (``ブ`` as ``フ`` and ``゛``) where the setting holds it composed. A backslash in a path
entry is a folder separator (Obsidian allows none in names); an entry naming no path (``/``)
leaves nothing out.

A note excluded later is removed from the store at the next sync, as a deleted note is (the
mass-deletion guard still refuses to remove most of a vault at once). While ``app.json`` cannot
be read as Obsidian's settings, the local source indexes no new note (it may lie in a folder the
file excludes) and deletes none for it; see :mod:`~knowledge_assets.core.sources.local`.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import re
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SETTINGS_FILE", "Exclusions", "SettingsUnreadable", "obsidian_filters"]

log = logging.getLogger(__name__)
SETTINGS_FILE = ".obsidian/app.json"  # where Obsidian keeps Excluded files
_MAX_APP_JSON = 1_000_000  # bytes: Obsidian's settings file is a few KB


class Exclusions:
    """Which vault-relative paths are left out."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries = tuple(dict.fromkeys(_nfc(e.strip()) for e in entries if e and e.strip()))
        self._prefixes: list[str] = []
        self._globs: list[re.Pattern[str]] = []
        self._regexes: list[re.Pattern[str]] = []
        for entry in self.entries:
            if (pattern := _regex_text(entry)) is not None:
                try:
                    self._regexes.append(re.compile(pattern))
                except re.error:
                    log.warning("excluded-files entry %r is not a regular expression: ignored", entry)  # fmt: skip
                continue
            path = entry.replace("\\", "/").lstrip("/")
            if not path:  # "/" names no path; as a prefix it would leave out the whole vault
                log.warning("excluded-files entry %r names no path: ignored", entry)
            elif "*" in path or "?" in path:
                self._globs.append(re.compile(fnmatch.translate(path.replace("[", "[[]"))))
            else:
                self._prefixes.append(path)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def excludes(self, path: str) -> bool:
        """Whether the note or folder at vault-relative ``path`` (POSIX) is left out: a path
        entry is a prefix of it, as in Obsidian (``Daily/2023`` covers ``Daily/2023-01-01.md``)."""
        path = _nfc(path)
        return (
            any(path.startswith(prefix) for prefix in self._prefixes)
            or any(g.match(path) for g in self._globs)
            or any(r.search(path) for r in self._regexes)
        )

    def excludes_anywhere(self, path: str) -> bool:
        """Whether ``path`` or a folder it lies in is left out: for sources that list whole
        paths (GitHub's tree) rather than walk folder by folder."""
        if not self.entries:
            return False
        parts = path.split("/")
        return self.excludes(path) or any(
            self.excludes_folder("/".join(parts[:i])) for i in range(1, len(parts))
        )

    def excludes_folder(self, folder: str) -> bool:
        """Whether everything under vault-relative ``folder`` is left out (``Templates/``, or a
        pattern that matches the folder itself, such as ``Archive/*/old``). A regular expression
        is tried on the folder with its slash (``/^Clippings\\//``): one that matches only the
        name without it (``/old$/``) matches none of the files in it, as in Obsidian."""
        return self.excludes(folder + "/") or any(g.match(_nfc(folder)) for g in self._globs)


def _nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def obsidian_filters(root: Path) -> tuple[str, ...]:
    """The *Excluded files* of the Obsidian vault at ``root``: none when it has no
    ``.obsidian/app.json`` or the file sets none. :class:`SettingsUnreadable` when the file is
    there but cannot be read as Obsidian's settings: then which paths it excludes is unknown,
    and taking it for "none" would index the folders the user left out."""
    path = root / SETTINGS_FILE
    try:
        settings = json.loads(_settings_bytes(path).decode("utf-8"))
    except SettingsUnreadable:  # a ValueError, which the handlers below would reword
        raise
    except FileNotFoundError:  # not an Obsidian vault, or one with default settings
        return ()
    except OSError as exc:
        raise SettingsUnreadable(f"cannot be read: {exc.strerror or type(exc).__name__}") from exc
    except json.JSONDecodeError as exc:  # also a file Obsidian is in the middle of writing
        raise SettingsUnreadable(
            f"is not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from exc
    except ValueError as exc:
        raise SettingsUnreadable("is not UTF-8 text") from exc
    except RecursionError as exc:  # valid JSON nested deeper than Python reads
        raise SettingsUnreadable("is nested too deeply to be Obsidian's settings") from exc
    if not isinstance(settings, dict):
        raise SettingsUnreadable(f"holds a JSON {_json_kind(settings)}, not an object")
    filters = settings.get("userIgnoreFilters", [])
    if not isinstance(filters, list) or not all(isinstance(f, str) for f in filters):
        raise SettingsUnreadable('has a "userIgnoreFilters" that is not a list of texts')
    for entry in filters:
        # Ignoring the entry would index the notes it leaves out (a private folder, perhaps).
        if problem := _regex_problem(entry.strip()):
            raise SettingsUnreadable(
                f"has an Excluded files entry {entry[:100]!r} that is not a regular expression"
                f" Python reads ({problem})"
            )
    return tuple(filters)


def _settings_bytes(path: Path) -> bytes:
    """The bytes of the settings file, never more than the limit: a named pipe would block the
    sync (and the sensor) for good, and a link to a device could be read without end."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise SettingsUnreadable("is not a regular file (a named pipe, a device or a folder)")
    with path.open("rb") as file:
        data = file.read(_MAX_APP_JSON + 1)
    if len(data) > _MAX_APP_JSON:
        raise SettingsUnreadable(f"is over {_MAX_APP_JSON:,} bytes")
    return data


def _regex_text(entry: str) -> str | None:
    """The regular expression an entry written as ``/.../`` holds, else None (a path)."""
    return entry[1:-1] if len(entry) > 2 and entry.startswith("/") and entry.endswith("/") else None


def _regex_problem(entry: str) -> str | None:
    """Why ``entry``, written as a regular expression (``/.../``), does not compile, else None."""
    if (pattern := _regex_text(entry)) is None:
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        return str(exc)
    return None


class SettingsUnreadable(ValueError):
    """``.obsidian/app.json`` is there but is not Obsidian's settings: the message says why,
    as a phrase following the file's name (``is not valid JSON (...)``)."""


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"
