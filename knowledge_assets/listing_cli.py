"""``knowledge-assets search`` with Obsidian operators and no words (``search "path:日記/"``,
``search "tag:日記 -tag:運動"``): the notes they keep, listed as Obsidian's search box lists the
files they match, instead of a search with nothing to search for."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

import psycopg

from knowledge_assets.cli_hints import operator_hints
from knowledge_assets.core.counts import counted
from knowledge_assets.core.search import SearchFilters
from knowledge_assets.core.search.listing import EVERY_OTHER_NOTE, ListedNote, notes_kept
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.search.operators import QueryParts, UnsearchableQuery, listed
from knowledge_assets.search_cli import _fail, _print_json, say


def list_notes(
    conn: psycopg.Connection, args: argparse.Namespace, filters: SearchFilters, parts: QueryParts
) -> int:
    """Print the notes the operators of ``parts`` (and ``filters``) keep, newest first.
    Exclusions alone (-tag:仕事) list every note but the excluded ones, as Obsidian does (a
    refusal would leave no way to see "everything but"): a line on stderr and the count line
    say so."""
    try:
        kept = listed(filters, parts)
    except UnsearchableQuery as exc:
        return _fail(str(exc))
    total, notes = notes_kept(conn, kept, limit=args.limit)
    if parts.excludes_only:
        print(f"note: {EVERY_OTHER_NOTE}", file=sys.stderr)
    for hint in [] if total else operator_hints(conn, args.query):
        print(f"warning: {hint}", file=sys.stderr)
    if args.json:
        data = [asdict(n) for n in notes]
        _print_json(
            {"query": args.query, "excludes_only": parts.excludes_only, "total": total,
             "count": len(data), "notes": data}
        )  # fmt: skip
        return 0
    for i, note in enumerate(notes, start=1):
        _print_note(i, note)
    say(_summary(args.query, total, len(notes), parts.excludes_only))
    return 0


def _print_note(rank: int, note: ListedNote) -> None:
    where = "" if note.source == vault_source() else f" ({note.source})"
    say(f"{rank:2d}. {note.title or note.file_path}")
    day = note.updated or note.created
    say(f"    {note.file_path}{where}{f'  {day}' if day else ''}")
    if note.tags:
        say(f"    tags: {', '.join(note.tags)}")


def _summary(query: str, total: int, shown: int, excludes_only: bool) -> str:
    what = f"every note but those {query} leaves out" if excludes_only else f"kept by {query}"
    more = f", the {shown} most recently updated shown (--limit for more)" if total > shown else ""
    return f"-- {counted(total, 'note')} {what}, most recently updated first{more}"
