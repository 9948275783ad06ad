"""The ``tags`` command: the tags of the latest notes with their counts, or the notes carrying
one (as a click on a tag in the search page lists them)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from rich.cells import cell_len

from knowledge_assets.cli_args import int_in
from knowledge_assets.cli_hints import tag_hint
from knowledge_assets.core.counts import counted
from knowledge_assets.core.search.listing import MAX_OFFSET, next_offset
from knowledge_assets.core.search.note_sources import vault_source
from knowledge_assets.core.search.notes import list_tags, notes_tagged
from knowledge_assets.listing_cli import shown_page
from knowledge_assets.search_cli import (
    MAX_LIMIT,
    _add,
    _connect,
    _print_json,
    one_line,
    say,
    shown,
    shown_path,
)


def _tags(args: argparse.Namespace) -> int:
    if args.tag is not None:
        return _tagged(args)
    with _connect() as conn:
        tags = list_tags(conn)
    if args.json:
        _print_json([{"tag": t, "count": n} for t, n in tags])
        return 0
    # Columns in terminal cells: a Japanese character takes two.
    cells = [cell_len(shown(tag)) for tag, _ in tags]
    for (tag, count), used in zip(tags, cells, strict=True):
        say(f"{tag}{' ' * (max(cells) - used)}  {count}")
    if not tags:
        say("no tags")
    return 0


def _tagged(args: argparse.Namespace) -> int:
    """The notes carrying a tag, most recently updated first."""
    with _connect() as conn:
        total, notes = notes_tagged(conn, args.tag, limit=args.limit, offset=args.offset)
        hint = tag_hint(conn, args.tag) if not total else ""
    if hint:
        print(f"note: no note is tagged {args.tag!r}{hint}", file=sys.stderr)
    if args.json:
        after = next_offset(args.offset, len(notes), total)
        _print_json(
            {"tag": args.tag, "total": total, "offset": args.offset, "next_offset": after,
             "notes": [asdict(n) for n in notes]}
        )  # fmt: skip
        return 0
    for n in notes:
        where = "" if n.source == vault_source() else f" [{n.source}]"
        title = one_line(n.title or "")
        say(f"{shown_path(n.file_path)}{where}  {title}  {n.updated or n.created or ''}".rstrip())
    page = shown_page(total, len(notes), args.offset, args.limit)
    say(f"-- {counted(total, 'note')} tagged {args.tag}{page}")
    return 0


def add_command(sub: Any) -> None:
    """Register ``tags`` on the CLI's sub-parsers."""
    tags = _add(sub, "tags", "tags of the latest notes with their counts, or a tag's notes", _tags)
    tags.add_argument("tag", nargs="?", help="list the notes carrying this tag (or one under it)")
    tags.add_argument("--limit", type=int_in(1, MAX_LIMIT), default=50, help="notes (default 50)")
    tags.add_argument(
        "--offset", type=int_in(0, MAX_OFFSET), default=0, metavar="N",
        help="skip the N most recently updated notes (the next page)",
    )  # fmt: skip
