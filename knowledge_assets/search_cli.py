"""``knowledge-assets search | similar | get | backlinks | tags``: read what the pipeline wrote.

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
from typing import Any

import psycopg

from knowledge_assets.cli_args import int_in, iso_date, similarity
from knowledge_assets.cli_errors import EXIT_USAGE
from knowledge_assets.cli_hints import (
    bracket_hints,
    operator_hints,
    prefix_hint,
)
from knowledge_assets.core.chunks.chunk_text import is_blank
from knowledge_assets.core.counts import counted
from knowledge_assets.core.database import db
from knowledge_assets.core.index.coverage import missing_vectors, missing_warning
from knowledge_assets.core.plain_text import plain_heading, plain_snippet
from knowledge_assets.core.search import (
    MAX_QUERY_CHARS,
    MODES,
    NoActiveModel,
    QueryEmbeddingFailed,
    SearchFilters,
    SearchResponse,
    search,
)
from knowledge_assets.core.search.listing import MAX_OFFSET
from knowledge_assets.core.search.note_sources import (
    vault_source,
)
from knowledge_assets.core.search.operators import read_query

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
# is shown as \x1b instead. JSON output escapes them already. The bidirectional overrides and
# isolates (U+202A-U+202E, U+2066-U+2069) too: one in a title would print the rest of its line,
# path and score included, reversed.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")


def shown(text: str) -> str:
    """``text`` safe to print on a terminal: control characters as ``\\xNN`` (``\\u202e``)."""
    return _escaped(_CONTROLS, text)


def _escaped(controls: re.Pattern[str], text: str) -> str:
    return controls.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# Every control character: a file's name is printed on one line, and a newline or tab in it
# (a name saved by a script) would break that line in two or shift its columns.
_NAME_CONTROLS = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")


def shown_path(path: str) -> str:
    """A file's name, or a log line naming one, for a line of its own: control characters as
    ``\\xNN``, newline and tab too (:func:`shown` keeps those for a note's text)."""
    return _escaped(_NAME_CONTROLS, path)


# A path pasted by mistake (a whole paragraph) is named in an error, not echoed back in full.
_NAMED_CHARS = 120


def named(text: str) -> str:
    """``text`` quoted for a one-line message and cut to ``_NAMED_CHARS`` characters."""
    if len(text) <= _NAMED_CHARS:
        return repr(text)
    return f"{text[: _NAMED_CHARS - 1]!r}… ({len(text):,} characters)"


def one_line(title: str) -> str:
    """A note's title on one line, as written otherwise: a title is plain text, not Markdown."""
    return " ".join(title.split())


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
    where = shown_path(file_path)
    return where if source == vault_source() else f"{where} ({source})"


def _print_response(response: SearchResponse) -> None:
    for i, h in enumerate(response.hits, start=1):
        # The title is plain text, shown as written (on one line); the heading is Markdown.
        where = " › ".join(p for p in (one_line(h.title), plain_heading(h.heading)) if p)
        say(f"{i:2d}. {where}")
        say(f"    {_where(h.file_path, h.source)}  score {h.score:.4f}  [{'+'.join(h.retrievers)}]")
        if h.tags:
            say(f"    tags: {', '.join(h.tags)}")
        if h.url:
            say(f"    {h.url}")
        say(f"    {plain_snippet(h.content, SNIPPET_CHARS)}")
        for sec in h.sections:
            say(f"    also › {plain_heading(sec.heading)}  score {sec.score:.4f}")
            say(f"      {plain_snippet(sec.content, SECTION_CHARS)}")
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
    if is_blank(args.query):  # zero-width characters alone too, as the API and MCP refuse
        return _fail("the query is empty: give the words to search for")
    if len(args.query) > MAX_QUERY_CHARS:
        return _fail(
            f"the query is {len(args.query):,} characters long; a search takes at most"
            f" {MAX_QUERY_CHARS:,}: shorten it to the words that matter"
        )
    for what in ("created", "updated"):
        low, high = getattr(args, f"{what}_from"), getattr(args, f"{what}_to")
        if low is not None and high is not None and low > high:
            return _fail(
                f"--{what}-from {low} is after --{what}-to {high}: no note can match; swap them"
            )
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
        parts = read_query(conn, args.query)
        if parts.lists_notes:  # operators alone: the notes they keep, as Obsidian lists them
            from knowledge_assets.listing_cli import list_notes  # it uses this module's helpers

            return list_notes(conn, args, filters, parts)
        if args.offset:  # a search returns its best hits only: ignored, it would repeat them
            return _fail("--offset pages a listing of operators alone (path:日記/, tag:日記)")
        try:
            response = search(
                conn, args.query, mode=args.mode, filters=filters, limit=args.limit,
                threshold=args.threshold, per_note=args.per_note, parts=parts,
            )  # fmt: skip
        except NoActiveModel as exc:
            return _fail(f"{exc} (or use --mode keyword)")
        except (QueryEmbeddingFailed, ValueError) as exc:
            return _fail(str(exc))
        # Vector and hybrid search cannot find a passage the active model has no vector of.
        gap = missing_warning(missing_vectors(conn)) if args.mode != "keyword" else None
        empty = bracket_hints(conn, args.query, parts)  # read as words: said, hits or not
        empty += [] if response.hits else operator_hints(conn, parts)
        if args.path_prefix and not response.hits:
            empty += [h for h in [prefix_hint(conn, args.path_prefix)] if h]
    for warning in (*response.warnings, *([gap] if gap else []), *empty):
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        _print_json(asdict(response))
    else:
        _print_response(response)
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


PATH_HELP = "the note's path in the vault as search prints it, e.g. 日記/2026-01-10.md"


def add_commands(sub: Any) -> None:
    """Register ``search``, ``similar``, ``get`` and ``backlinks`` on the CLI's sub-parsers."""
    from knowledge_assets.note_cli import _backlinks, _get, _similar  # they use these helpers

    s = _add(sub, "search", "search the latest notes (vector, keyword or hybrid)", _search)
    s.add_argument(
        "query",
        help="words to search for; as in Obsidian, tag:T, path:P, file:F and [K:V] (the"
        ' frontmatter property K holds V; [K] any value) narrow it, a "quoted phrase" must be'
        " there as written, -tag:T, -path:P, -file:F, -[K:V] and -word leave notes out, and"
        " operators alone list the notes they keep, newest first"
        " (a query starting with '-': put -- before it)",
    )
    s.add_argument(
        "--mode", choices=MODES, default="hybrid",
        help="hybrid (default): words and meaning; keyword: the words; vector: the meaning",
    )  # fmt: skip
    s.add_argument("--tag", action="append", metavar="T", help="any of these tags (repeatable)")
    s.add_argument(
        "--path-prefix", metavar="P",
        help="only paths starting with P, e.g. 日記/ (path:P in the query: P anywhere in the path)",
    )  # fmt: skip
    s.add_argument("--alias-prefix", metavar="A", help="only notes with an alias starting with A")
    s.add_argument(
        "--content-type", action="append", metavar="C", help="notes, books, articles (repeatable)"
    )
    s.add_argument(
        "--type", action="append", metavar="T", help="markdown_note, bookmark_json (repeatable)"
    )
    s.add_argument(
        "--top-heading", action="append", metavar="H",
        help="only notes whose frontmatter `heading` is H (repeatable)",
    )  # fmt: skip
    for name in ("created-from", "created-to", "updated-from", "updated-to"):
        what, end = name.split("-")
        s.add_argument(
            f"--{name}", type=iso_date, metavar="YYYY-MM-DD",
            help=f"only notes {what} {'on or after' if end == 'from' else 'on or before'} the day",
        )  # fmt: skip
    s.add_argument(
        "--limit", type=int_in(1, MAX_LIMIT), default=10,
        help="hits, or notes listed for operators alone (default 10)",
    )  # fmt: skip
    s.add_argument(
        "--offset", type=int_in(0, MAX_OFFSET), default=0, metavar="N",
        help="with operators alone: skip the N most recently updated notes (the next page)",
    )  # fmt: skip
    s.add_argument(
        "--per-note", action="store_true",
        help="distinct notes, each with its best-matching sections (--limit counts notes)",
    )  # fmt: skip
    s.add_argument(
        "--threshold", type=similarity, help="minimum cosine similarity (default: the model's)"
    )
    sim = _add(sub, "similar", "notes similar to a note (active model)", _similar)
    sim.add_argument("path", help=PATH_HELP)
    sim.add_argument("--limit", type=int_in(1, MAX_LIMIT), default=5, help="notes (default 5)")
    get = _add(sub, "get", "print a note by path", _get)
    get.add_argument("path", help=PATH_HELP)
    back = _add(
        sub, "backlinks", "the notes whose links lead to a note (Obsidian's backlinks)", _backlinks
    )
    back.add_argument("path", help=PATH_HELP)
    for parser in (sim, get, back):
        parser.add_argument("--source", metavar="NAME", help=SOURCE_HELP)
