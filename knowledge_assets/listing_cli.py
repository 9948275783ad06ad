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
from knowledge_assets.core.search.listing import (
    EVERY_OTHER_NOTE,
    ListedNote,
    next_offset,
    notes_kept,
)
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.search.operators import QueryParts, UnsearchableQuery, listed
from knowledge_assets.search_cli import _fail, _print_json, one_line, say, shown_path


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
    total, notes = notes_kept(conn, kept, limit=args.limit, offset=args.offset)
    if parts.excludes_only:
        print(f"note: {EVERY_OTHER_NOTE}", file=sys.stderr)
    for hint in [] if total else operator_hints(conn, parts):
        print(f"warning: {hint}", file=sys.stderr)
    if args.json:
        data = [asdict(n) for n in notes]
        _print_json(
            {"query": args.query, "excludes_only": parts.excludes_only, "total": total,
             "offset": args.offset, "next_offset": next_offset(args.offset, len(data), total),
             "count": len(data), "notes": data}
        )  # fmt: skip
        return 0
    for i, note in enumerate(notes, start=args.offset + 1):  # ranks go on from page to page
        _print_note(i, note)
    page = shown_page(total, len(notes), args.offset, args.limit)
    say(f"-- {_kept_by(args.query, total, parts.excludes_only)}, most recently updated first{page}")
    return 0


def _print_note(rank: int, note: ListedNote) -> None:
    where = "" if note.source == vault_source() else f" ({note.source})"
    say(f"{rank:2d}. {one_line(note.title or '') or shown_path(note.file_path)}")
    day = note.updated or note.created
    say(f"    {shown_path(note.file_path)}{where}{f'  {day}' if day else ''}")
    if note.tags:
        say(f"    tags: {', '.join(note.tags)}")


def _kept_by(query: str, total: int, excludes_only: bool) -> str:
    what = f"every note but those {query} leaves out" if excludes_only else f"kept by {query}"
    return f"{counted(total, 'note')} {what}"


def shown_page(total: int, shown: int, offset: int, limit: int) -> str:
    """Which notes of ``total`` a page showed, and the option that shows the next page: with a
    thousand notes under a folder, the reader must be told how to get past the first ones."""
    if not offset and shown >= total:
        return ""
    if not shown:
        return f", none from --offset {offset:,}"
    after = next_offset(offset, shown, total)
    more = f" (--offset {after} for the next {min(limit, total - after)})" if after else ""
    return f", {offset + 1:,}-{offset + shown:,} shown{more}"
