"""What the command line says when a path, a path prefix, a tag or a query's operator matches
nothing, and the paths it reads the way they were meant.

A note is named by its vault-relative path as search prints it. A path without ``.md``, when
exactly one note has it with ``.md``, and an absolute path inside the vault folder name that
note; any other path that names no note gets the closest stored paths as a hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

import psycopg

from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.listing import notes_kept
from knowledge_assets.core.search.notes import is_latest_note, latest_notes, list_tags, titled
from knowledge_assets.core.search.operators import QueryParts, property_terms
from knowledge_assets.core.search.properties import (
    PropertyTest,
    property_names,
    property_values,
    read_property,
)

NOTE_SUFFIX = ".md"
_SUGGESTED = 3
_CUTOFF = 0.75  # below it difflib offers paths that only share a folder


def vault_relative(path: str) -> str:
    """``path`` relative to the vault folder (``KA_VAULT_PATH``) when it is an absolute path
    inside it, else ``path`` as given."""
    if not Path(path).is_absolute():
        return path
    from knowledge_assets.core.settings import SourceSettings

    vault = SourceSettings.from_env().vault_path
    try:
        return Path(path).resolve().relative_to(Path(vault).resolve()).as_posix()
    except (ValueError, OSError):
        return path


def _paths(conn: psycopg.Connection, source: str | None) -> list[str]:
    return sorted({path for name, path in latest_notes(conn) if source in (None, name)})


def with_suffix(conn: psycopg.Connection, path: str, source: str | None) -> str | None:
    """The note path ``path`` names without its ``.md``, when exactly one note has it."""
    if path.endswith(NOTE_SUFFIX):
        return None
    full = path.rstrip("/") + NOTE_SUFFIX
    return full if is_latest_note(conn, full, source) else None


def closest_paths(conn: psycopg.Connection, path: str, source: str | None = None) -> list[str]:
    """The stored note paths most like ``path``, best first: the notes titled ``path`` (a note
    named as Obsidian shows it), the closest one with the same file name (``README.md`` in
    another folder), then the paths difflib finds close."""
    named = [
        p for name, p in titled(conn, path.removesuffix(NOTE_SUFFIX)) if source in (None, name)
    ]
    paths = _paths(conn, source)
    stem = _stem(path)
    same_name = [p for p in paths if _stem(p) == stem]
    best = max(
        same_name, key=lambda p: difflib.SequenceMatcher(None, path, p).ratio(), default=None
    )
    close = difflib.get_close_matches(path, paths, n=_SUGGESTED, cutoff=_CUTOFF)
    return list(dict.fromkeys([*named, *([best] if best else []), *close]))[:_SUGGESTED]


def _stem(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1].removesuffix(NOTE_SUFFIX).casefold()


def did_you_mean(options: Iterable[str]) -> str:
    """``; did you mean a, b or c?`` for the options, or nothing."""
    listed = list(options)
    if not listed:
        return ""
    named = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"
    return f"; did you mean {named}?"


def prefix_hint(conn: psycopg.Connection, prefix: str) -> str | None:
    """When no note path starts with ``prefix``, a line saying so and naming the top folders."""
    if _keeps_any(conn, SearchFilters(path_prefix=prefix)):
        return None
    return f"no note path starts with {prefix!r}{_top_folders(conn)}"


def operator_hints(conn: psycopg.Connection, parts: QueryParts) -> list[str]:
    """For a search that found nothing, a line for each ``path:`` operator whose text no note
    path holds (naming the top folders), each ``file:`` whose text no file name holds, each
    ``tag:`` no note carries (the closest tags) and each ``[property]`` test no note passes,
    each judged by the filter the search applied. ``parts``: the query as the search read it
    (:func:`read_query`)."""
    hints = [
        f"no note path holds {text!r}{_top_folders(conn)}"
        for text in parts.all_paths
        if not _keeps_any(conn, SearchFilters(path_contains=(text,)))
    ]
    hints += [
        f"no note's file name holds {text!r} (file: reads the name alone; path: the folders too)"
        for text in parts.all_files
        if not _keeps_any(conn, SearchFilters(file_contains=(text,)))
    ]
    hints += [
        f"no note carries the tag {tag!r}{tag_hint(conn, tag)}"
        for tag in parts.all_tags
        if not _keeps_any(conn, SearchFilters(tags=(tag,)))
    ]
    tests = [read_property(typed) for typed in parts.all_properties]
    failing = [t for t in tests if not _keeps_any(conn, SearchFilters(properties=(t,)))]
    names = property_names(conn) if failing else []
    return hints + [property_hint(conn, test, names) for test in failing]


def property_hint(conn: psycopg.Connection, test: PropertyTest, names: list[str]) -> str:
    """Why no note passes ``test``: no note has its property (in an ``OR`` group, where a
    bracketed term stays a test), or the values notes give it. ``names``: the property names
    in use (:func:`property_names`)."""
    if test.name not in names:
        return f"no note has the property {test.name!r}{_closest_property(test.name, names)}"
    wanted = [f"holds {' or '.join(map(repr, test.values))}"] if test.values else []
    wanted += ["is empty"] if test.empty else []
    values = ", ".join(map(repr, property_values(conn, test.name)))
    used = f"; its values include {values}" if values else "; it is empty in every note"
    return f"no note's {test.name} {' or '.join(wanted)}{used}"


def bracket_hints(conn: psycopg.Connection, query: str, parts: QueryParts) -> list[str]:
    """A line for each bracketed term of ``query`` that the search read as words (``parts``,
    as :func:`read_query` read it), since no note has the property it names: the closest
    names, or those in use."""
    tests = {*parts.all_properties, *parts.not_properties}
    words = [
        (text, read_property(text).name) for text in property_terms(query) if text not in tests
    ]
    names = property_names(conn) if words else []
    return [
        f"[{text}] was searched as words: no note has the property {name!r}"
        + _closest_property(name, names)
        for text, name in words
    ]


def _closest_property(name: str, names: list[str]) -> str:
    """``; did you mean [a]?`` for the property names closest to ``name``, else those in use."""
    close = difflib.get_close_matches(name, names, n=_SUGGESTED, cutoff=0.6)
    if close:
        return did_you_mean(f"[{n}]" for n in close)
    shown = ", ".join(names[:10]) + (", …" if len(names) > 10 else "")
    return f"; the properties in use are {shown}" if names else "; no note has properties"


def _keeps_any(conn: psycopg.Connection, filters: SearchFilters) -> bool:
    return notes_kept(conn, filters, limit=1)[0] > 0


def _top_folders(conn: psycopg.Connection) -> str:
    folders = sorted({p.split("/", 1)[0] + "/" for p in _paths(conn, None) if "/" in p})
    return f"; the top folders are {', '.join(folders)}" if folders else "; notes have no folders"


def tag_hint(conn: psycopg.Connection, tag: str) -> str:
    """What to try when no note carries ``tag``: the closest tags, else the tags command."""
    tags = [name for name, _ in list_tags(conn)]
    if not tags:
        return "; no note has tags"
    close = difflib.get_close_matches(tag.lstrip("#"), tags, n=_SUGGESTED, cutoff=0.6)
    return did_you_mean(close) if close else "; see `knowledge-assets tags` for the tags in use"
