"""``knowledge-assets search | similar | get | tags``: read what the pipeline wrote.

They use the same store as the rest of the command (``DATABASE_URL``, else the embedded
Postgres in the project's data directory). Every command takes ``--json`` for scripts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import asdict
from datetime import date
from typing import Any

import psycopg

from knowledge_assets.cli_args import int_in, similarity
from knowledge_assets.cli_errors import EXIT_USAGE
from knowledge_assets.core.counts import counted
from knowledge_assets.core.database import db
from knowledge_assets.core.search import (
    MODES,
    NoActiveModel,
    QueryEmbeddingFailed,
    SearchFilters,
    SearchResponse,
    search,
    snippet,
)
from knowledge_assets.core.search.explain import rejection
from knowledge_assets.core.search.note_sources import (
    in_source,
    source_table,
    vault_source,
)
from knowledge_assets.core.search.notes import (
    AmbiguousNote,
    UnknownNote,
    UnknownSource,
    get_doc,
    similar_to,
)

MAX_LIMIT = 1000  # hits or notes a command prints at most
SNIPPET_CHARS = 120
SECTION_CHARS = 80
SOURCE_HELP = (
    "the note of this source (local, or a declared source's name) when several hold the path;"
    " default: the vault's, else the only one that has it"
)
EMPTY_STORE = (
    "the store holds no notes yet: run `knowledge-assets demo` to ingest and embed a vault"
)


# C0 controls but tab and newline, DEL and C1 controls. A note's text is printed as written, and
# an escape sequence in it (ESC ] 0; title BEL, ESC [2J) would retitle or clear the terminal: it
# is shown as \x1b instead. JSON output escapes them already.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """``text`` safe to print on a terminal: control characters as ``\\xNN``."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


# A path pasted by mistake (a whole paragraph) is named in an error, not echoed back in full.
_NAMED_CHARS = 120


def named(text: str) -> str:
    """``text`` quoted for a one-line message and cut to ``_NAMED_CHARS`` characters."""
    if len(text) <= _NAMED_CHARS:
        return repr(text)
    return f"{text[: _NAMED_CHARS - 1]!r}… ({len(text):,} characters)"


def say(text: str = "", **kwargs: Any) -> None:
    """``print`` for text that holds a note's words (see :func:`shown`)."""
    print(shown(text), **kwargs)


def _connect() -> Any:
    """The store every other command uses (``DATABASE_URL`` or the embedded server), migrated."""
    return db.connect(db.store_url())


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _store_is_empty(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM rag.chunks)").fetchone() == (True,)


def _where(file_path: str, source: str) -> str:
    """A note's path, and its source when it is not the vault's: what `get` needs to reach it."""
    return file_path if source == vault_source() else f"{file_path} ({source})"


def _print_response(response: SearchResponse) -> None:
    for i, h in enumerate(response.hits, start=1):
        where = " › ".join(p for p in (h.title, h.heading) if p)
        say(f"{i:2d}. {where}")
        say(f"    {_where(h.file_path, h.source)}  score {h.score:.4f}  [{'+'.join(h.retrievers)}]")
        if h.tags:
            say(f"    tags: {', '.join(h.tags)}")
        if h.url:
            say(f"    {h.url}")
        say(f"    {snippet(h.content, SNIPPET_CHARS)}")
        for sec in h.sections:
            say(f"    also › {sec.heading}  score {sec.score:.4f}")
            say(f"      {snippet(sec.content, SECTION_CHARS)}")
    t = response.timings
    # A keyword search uses no model, whatever the active one is.
    model = response.model or (
        "" if response.mode == "keyword" else "no active model: keyword only"
    )
    say(
        f"-- {counted(len(response.hits), 'hit')} · {response.mode}{f' · {model}' if model else ''}"
        f" · embed {t['embed_ms']:.1f} ms · search {t['search_ms']:.1f} ms"
        f" · total {t['total_ms']:.1f} ms"
    )


def _search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        return _fail("the query is empty: give the words to search for")
    filters = SearchFilters(
        tags=tuple(args.tag or ()),
        path_prefix=args.path_prefix,
        alias_prefix=args.alias_prefix,
        content_types=tuple(args.content_type or ()),
        types=tuple(args.type or ()),
        top_headings=tuple(args.top_heading or ()),
        created_from=args.created_from,
        created_to=args.created_to,
        updated_from=args.updated_from,
        updated_to=args.updated_to,
    )
    with _connect() as conn:
        if _store_is_empty(conn):
            return _fail(EMPTY_STORE)
        try:
            response = search(
                conn, args.query, mode=args.mode, filters=filters, limit=args.limit,
                threshold=args.threshold, per_note=args.per_note,
            )  # fmt: skip
        except NoActiveModel as exc:
            return _fail(f"{exc} (or use --mode keyword)")
        except (QueryEmbeddingFailed, ValueError) as exc:
            return _fail(str(exc))
    for warning in response.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        _print_json(asdict(response))
    else:
        _print_response(response)
    return 0


def _similar(args: argparse.Namespace) -> int:
    with _connect() as conn:
        try:
            ref, notes = similar_to(conn, args.path, limit=args.limit, source=args.source)
        except UnknownNote:
            where = in_source(args.source)
            return _fail(
                f"no latest note at {named(args.path)}{where} (see `knowledge-assets get`)"
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
        say(f"{i:2d}. {n.title or n.file_path}  score {n.score:.4f}")
        say(f"    {_where(n.file_path, n.source)} › {n.heading}")
        say(f"    {snippet(n.content, SNIPPET_CHARS)}")
    if not notes:
        say("no similar notes")
    return 0


def _lookup_error(exc: Exception) -> str:
    return exc.explain("--source NAME") if isinstance(exc, AmbiguousNote) else str(exc)


def _also_in(others: tuple[str, ...] | list[str]) -> str:
    """The line saying that other sources hold a note at the same path, and how to read them."""
    if len(others) == 1:
        return f"also in source {others[0]}: read it with --source {others[0]}"
    return f"also in sources {', '.join(others)}: read one with --source NAME"


def _get(args: argparse.Namespace) -> int:
    with _connect() as conn:
        try:
            doc = get_doc(conn, args.path, args.source)
        except (UnknownSource, AmbiguousNote) as exc:
            return _fail(_lookup_error(exc))
        table = source_table(args.source) if args.source else None
        rejected = rejection(conn, args.path, table) if doc is None else None
    where = in_source(args.source)
    if doc is None:
        if rejected:
            return _fail(f"{named(args.path)}{where} is not stored: rejected because {rejected}")
        return _fail(f"no note at {named(args.path)}{where}")
    if args.json:
        _print_json(doc)
        return 0
    why = doc.get("not_searchable")
    state = f"not searchable: {why}" if why else "latest"
    say(f"# {doc['title'] or doc['file_path']}")
    say(f"path: {doc['file_path']} · source: {doc['source']} · {state}")
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
    say()
    say(doc["content"])
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _add(
    sub: Any, name: str, help_: str, func: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_, description=help_)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=func)
    return parser


def add_commands(sub: Any) -> None:
    """Register ``search``, ``similar`` and ``get`` on the CLI's sub-parsers."""
    s = _add(sub, "search", "search the latest notes (vector, keyword or hybrid)", _search)
    s.add_argument("query")
    s.add_argument("--mode", choices=MODES, default="hybrid")
    s.add_argument("--tag", action="append", metavar="T", help="any of these tags (repeatable)")
    s.add_argument("--path-prefix", metavar="P", help="only paths starting with P, e.g. 日記/")
    s.add_argument("--alias-prefix", metavar="A", help="only notes with an alias starting with A")
    s.add_argument(
        "--content-type", action="append", metavar="C", help="notes, books, articles (repeatable)"
    )
    s.add_argument(
        "--type", action="append", metavar="T", help="markdown_note, bookmark_json (repeatable)"
    )
    s.add_argument("--top-heading", action="append", metavar="H", help="repeatable")
    for name in ("created-from", "created-to", "updated-from", "updated-to"):
        s.add_argument(f"--{name}", type=date.fromisoformat, metavar="YYYY-MM-DD")
    s.add_argument("--limit", type=int_in(1, MAX_LIMIT), default=10, help="hits (default 10)")
    s.add_argument(
        "--per-note", action="store_true",
        help="distinct notes, each with its best-matching sections (--limit counts notes)",
    )  # fmt: skip
    s.add_argument(
        "--threshold", type=similarity, help="minimum cosine similarity (default: the model's)"
    )
    sim = _add(sub, "similar", "notes similar to a note (active model)", _similar)
    sim.add_argument("path")
    sim.add_argument("--limit", type=int_in(1, MAX_LIMIT), default=5, help="notes (default 5)")
    get = _add(sub, "get", "print a note by path", _get)
    get.add_argument("path")
    for parser in (sim, get):
        parser.add_argument("--source", metavar="NAME", help=SOURCE_HELP)
