"""``knowledge-assets similar | get | backlinks``: a note by its path, the notes like it and the
notes linking to it.

A path is read as :mod:`knowledge_assets.cli_hints` says (without ``.md``, or absolute inside
the vault), and one that names no note gets the closest stored paths as a hint.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

import psycopg

from knowledge_assets.cli_hints import closest_paths, did_you_mean, vault_relative, with_suffix
from knowledge_assets.core.links.backlinks import Backlinks, note_backlinks
from knowledge_assets.core.plain_text import plain_heading, plain_snippet
from knowledge_assets.core.search import NoActiveModel
from knowledge_assets.core.search.explain import rejection
from knowledge_assets.core.search.note_sources import in_source, source_table
from knowledge_assets.core.search.notes import (
    AmbiguousNote,
    UnknownNote,
    UnknownSource,
    get_doc,
    similar_to,
)
from knowledge_assets.core.search.properties import shown_properties
from knowledge_assets.search_cli import (
    EMPTY_STORE,
    SNIPPET_CHARS,
    _connect,
    _fail,
    _print_json,
    _store_is_empty,
    _where,
    named,
    one_line,
    say,
    shown_path,
)


def _similar(args: argparse.Namespace) -> int:
    path = vault_relative(args.path)
    with _connect() as conn:
        if _store_is_empty(conn):  # before "no active model", which an empty store has too
            return _fail(EMPTY_STORE)
        try:
            ref, notes = _similar_to(conn, path, args)
        except UnknownNote:
            hint = did_you_mean(closest_paths(conn, path, args.source))
            return _fail(
                f"no latest note at {named(path)}{in_source(args.source)}"
                + (hint or " (see `knowledge-assets get`)")
            )
        except (NoActiveModel, UnknownSource, AmbiguousNote) as exc:
            return _fail(_lookup_error(exc))
    if ref.also_in:
        print(
            f"note: similar to the note of {ref.source}; {_also_in(ref.also_in)}", file=sys.stderr
        )
    if args.json:
        _print_json([asdict(n) for n in notes])
        return 0
    for i, n in enumerate(notes, start=1):
        say(f"{i:2d}. {one_line(n.title) or shown_path(n.file_path)}  score {n.score:.4f}")
        say(f"    {_where(n.file_path, n.source)} › {plain_heading(n.heading)}")
        say(f"    {plain_snippet(n.content, SNIPPET_CHARS)}")
    if not notes:
        say("no similar notes")
    return 0


def _similar_to(
    conn: psycopg.Connection, path: str, args: argparse.Namespace
) -> tuple[Any, list[Any]]:
    """The notes similar to the note at ``path``, or at ``path`` with ``.md`` when only that
    names one."""
    try:
        return similar_to(conn, path, limit=args.limit, source=args.source)
    except UnknownNote:
        full = with_suffix(conn, path, args.source)
        if full is None:
            raise
        return similar_to(conn, full, limit=args.limit, source=args.source)


def _backlinks(args: argparse.Namespace) -> int:
    path = vault_relative(args.path)
    with _connect() as conn:
        try:
            found = _without_md(conn, path, args.source, note_backlinks)
        except (UnknownSource, AmbiguousNote) as exc:
            return _fail(_lookup_error(exc))
        hint = did_you_mean(closest_paths(conn, path, args.source)) if found is None else ""
    if found is None:
        return _fail(f"no note at {named(path)}{in_source(args.source)}{hint}")
    if args.json:
        _print_json(asdict(found))
        return 0
    _say_backlinks(found)
    return 0


def _say_backlinks(found: Backlinks) -> None:
    for i, note in enumerate(found.notes, start=1):
        say(f"{i:2d}. {one_line(note.title) or shown_path(note.path)}")
        say(f"    {_where(note.path, note.source)}")
    if not found.notes:
        say(f"no note links to {shown_path(found.path)}")
    elif found.more:
        say(
            f"more notes name {shown_path(found.path)} than were read for their links: these are the first"
        )


T = TypeVar("T")


def _without_md(
    conn: psycopg.Connection, path: str, source: str | None,
    find: Callable[[psycopg.Connection, str, str | None], T | None],
) -> T | None:  # fmt: skip
    """``find`` of the note at ``path``, or at ``path`` with ``.md`` when only that names one."""
    found = find(conn, path, source)
    full = with_suffix(conn, path, source) if found is None else None
    return find(conn, full, source) if full else found


def _lookup_error(exc: Exception) -> str:
    return exc.explain("--source NAME") if isinstance(exc, AmbiguousNote) else str(exc)


def _also_in(others: tuple[str, ...] | list[str]) -> str:
    """The line saying that other sources hold a note at the same path, and how to read them."""
    if len(others) == 1:
        return f"also in source {others[0]}: read it with --source {others[0]}"
    return f"also in sources {', '.join(others)}: read one with --source NAME"


def _get(args: argparse.Namespace) -> int:
    path = vault_relative(args.path)
    with _connect() as conn:
        try:
            doc = _without_md(conn, path, args.source, get_doc)
        except (UnknownSource, AmbiguousNote) as exc:
            return _fail(_lookup_error(exc))
        table = source_table(args.source) if args.source else None
        rejected = rejection(conn, path, table) if doc is None else None
        # The closest paths only for a path that names nothing, not for a rejected file.
        missing = doc is None and not rejected
        if missing and _store_is_empty(conn):
            return _fail(EMPTY_STORE)
        hint = did_you_mean(closest_paths(conn, path, args.source)) if missing else ""
    where = in_source(args.source)
    if doc is None:
        if rejected:
            return _fail(f"{named(path)}{where} is not stored: rejected because {rejected}")
        return _fail(f"no note at {named(path)}{where}{hint}")
    if args.json:
        _print_json(doc)
        return 0
    why = doc.get("not_searchable")
    state = f"not searchable: {why}" if why else "latest"
    say(f"# {shown_path(doc['title'] or doc['file_path'])}")  # a title made from the name
    say(f"path: {shown_path(doc['file_path'])} · source: {doc['source']} · {state}")
    if doc["also_in"]:
        say(_also_in(doc["also_in"]))
    for warning in doc.get("warnings") or ():
        say(f"warning: {warning}")
    if doc.get("file_rejected"):
        say(
            f"the file there now is rejected ({doc['file_rejected']}): this is its last good version"
        )
    if doc["tags"]:
        say(f"tags: {', '.join(doc['tags'])}")
    if doc.get("aliases"):
        say(f"aliases: {', '.join(doc['aliases'])}")
    for name, value in shown_properties(doc.get("frontmatter")):
        say(f"{name}: {value}")
    if doc.get("versions"):
        say(f"earlier versions: {', '.join(shown_path(path) for path, _ in doc['versions'])}")
    say()
    say(doc["content"])
    return 0
