"""``knowledge-assets search`` with Obsidian operators and no words (``search "path:日記/"``,
``search "tag:日記 -tag:運動"``): the notes they keep, listed as Obsidian's search box lists the
files they match, instead of a search with nothing to search for."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from knowledge_assets.cli_hints import operator_hints
from knowledge_assets.core.counts import counted
from knowledge_assets.core.search import SearchFilters
from knowledge_assets.core.search.listing import ListedNote, notes_kept
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.search.operators import QueryParts, UnsearchableQuery, listed
from knowledge_assets.search_cli import _connect, _fail, _print_json, say

# Exclusions alone (-tag:仕事) list every note but the excluded ones, as Obsidian does: that is
# what was asked, and a refusal would leave no way to see "everything but". A line on stderr
# says so, and so does the count line, so the whole vault is never listed as if one tag or folder
# had been named.
EVERY_NOTE_BUT = "the query only leaves notes out: listing every note but those it excludes"


def list_notes(args: argparse.Namespace, filters: SearchFilters, parts: QueryParts) -> int:
    """Print the notes the operators of ``parts`` (and ``filters``) keep, newest first."""
    try:
        kept = listed(filters, parts)
    except UnsearchableQuery as exc:
        return _fail(str(exc))
    with _connect() as conn:
        total, notes = notes_kept(conn, kept, limit=args.limit)
        hints = [] if total else operator_hints(conn, args.query)
    if parts.excludes_only:
        hints.insert(0, EVERY_NOTE_BUT)
    for hint in hints:
        print(f"{'note' if hint is EVERY_NOTE_BUT else 'warning'}: {hint}", file=sys.stderr)
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
