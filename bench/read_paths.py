"""Latency of the read paths other than search at scale: the note view, similar notes, the tag
list and a tag's notes, the Q&A history, the lookups behind a note's state (why it is not
searchable, a rejected file, its warnings), MCP's tools and the CLI's read commands, each timed
in process against a kept bench/scale_steps.py store::

    .venv/bin/python bench/read_paths.py --store <store> [--calls 40] [--warm 100] [--rejected 2000] [--linked 600]

where ``<store>/pg`` is the embedded server's data directory (``full N`` prints ``<store>``).
The HTTP endpoints go through the FastAPI app (TestClient, the server's own pooled read-only
connections), MCP's tools through their implementations on a ReaderStore, and CLI commands
through ``knowledge_assets.cli.main`` with their output thrown away (a connection of their own
per call, as each command opens; the interpreter's start is not counted). Core lookups run on
one connection.

Each case is called on ``--calls`` different notes, spread over the store by path, after
``WARM_UP`` untimed calls on others; p50 / p95 are of wall time. The server starts with empty
shared buffers: ``--warm N`` first looks up the notes similar to N other notes, untimed, so the
vector index is read as on a server that has been answering for a while (as
bench/scale_search.py's ``--warm``). A replica vault has no rejected files, so ``--rejected N``
adds N rows to ``raw.rejected_files`` for the run (a folder of Shift_JIS exports, say), the
rejected-file lookups run on them, and they are removed at the end (0: the store as built).
A replica vault has no links either, so ``--linked N`` makes each timed note the target of N
others for the run (``[[name]]`` added to their bodies and their link names, as chunking records
them; restored at the end), and the backlinks cases read N notes linking (more than 500: the
most read for their links). The figures are printed with the command, the store's size and the
load average before and after.

``ROOT=<older checkout>`` runs that tree's code on the same store (as bench/scale_search.py),
so two versions can be timed back to back; the store is migrated by the code that runs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, ROOT + "/bench"]

from fastapi.testclient import TestClient  # noqa: E402

from knowledge_assets import cli  # noqa: E402
from knowledge_assets.answer import Asker, LLMSettings  # noqa: E402
from knowledge_assets.api import ApiSettings, create_app  # noqa: E402
from knowledge_assets.api.markdown import render_note  # noqa: E402
from knowledge_assets.api.settings import writer_url  # noqa: E402
from knowledge_assets.cli_hints import closest_paths, tag_hint, with_suffix  # noqa: E402
from knowledge_assets.core import failures  # noqa: E402
from knowledge_assets.core.chunks.links import name_key  # noqa: E402
from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.index import models  # noqa: E402
from knowledge_assets.core.ingest.store import note_warnings  # noqa: E402
from knowledge_assets.core.links.resolve import NoteLinks  # noqa: E402
from knowledge_assets.core.search import notes as core_notes  # noqa: E402
from knowledge_assets.core.search.explain import rejection, why_not_searchable  # noqa: E402
from knowledge_assets.core.search.note_sources import locate, vault_source  # noqa: E402
from knowledge_assets.mcp.reader import ReaderStore, reader_url  # noqa: E402
from knowledge_assets.mcp.tools import KnowledgeTools  # noqa: E402

CODE = Path(ROOT).name if "ROOT" in os.environ else "this checkout"
WARM_UP = 3
TABLE = "docs_local"
REJECTED_PREFIX = "rejected-bench/"


def _load() -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")"


def timed(fn: Callable[[int], object], calls: int) -> list[float]:
    """Wall ms of ``fn(i)`` for ``i`` in ``WARM_UP .. WARM_UP + calls`` after untimed
    ``fn(0 .. WARM_UP - 1)``."""
    for i in range(WARM_UP):
        fn(i)
    took = []
    for i in range(WARM_UP, WARM_UP + calls):
        started = time.perf_counter()
        fn(i)
        took.append((time.perf_counter() - started) * 1000)
    return took


def line(label: str, ms: list[float]) -> str:
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94]
    return f"  {label:58s} p50 {statistics.median(ms):7.1f} ms  p95 {p95:7.1f} ms"


def spread(items: list[str], count: int) -> list[str]:
    """``count`` of ``items`` spread evenly over them (repeating when there are fewer)."""
    step = max(1, len(items) // count)
    picked = items[::step][:count]
    return [picked[i % len(picked)] for i in range(count)]


@contextlib.contextmanager
def rejected_rows(url: str, count: int) -> Any:
    """``count`` rejected files in raw.rejected_files for the run (removed afterwards); their
    paths."""
    paths = [f"{REJECTED_PREFIX}r{i:05d}_壊れたメモ.md" for i in range(count)]
    with db.connect(url) as conn:
        conn.execute(
            "INSERT INTO raw.rejected_files (source_table, file_path, reason, version)"
            " SELECT %s, p, 'not valid UTF-8 (reads as Shift_JIS)', 'bench' FROM unnest(%s::text[]) p"
            " ON CONFLICT DO NOTHING",
            (TABLE, paths),
        )
        conn.execute("ANALYZE raw.rejected_files")
    try:
        yield paths
    finally:
        with db.connect(url) as conn:
            conn.execute(
                "DELETE FROM raw.rejected_files WHERE source_table = %s AND file_path LIKE %s",
                (TABLE, REJECTED_PREFIX + "%"),
            )


@contextlib.contextmanager
def linked_notes(url: str, targets: list[str], every: list[str], count: int) -> Any:
    """Each of ``targets`` linked from ``count`` notes of ``every`` for the run: ``[[name]]``
    added to their bodies and link names, both restored at the end."""
    links: dict[str, list[str]] = {}
    for k, target in enumerate(dict.fromkeys(targets)):
        others = [p for p in every if p != target]
        for path in spread(others[k:] + others[:k], count) if count else []:
            links.setdefault(path, []).append(target.removesuffix(".md").rsplit("/", 1)[-1])
    paths = list(links)
    with db.connect(url) as conn:
        saved = conn.execute(
            "SELECT file_path, content, link_names FROM rag.latest_docs"
            " WHERE source_table = %s AND file_path = ANY(%s)", (TABLE, paths),
        ).fetchall()  # fmt: skip
        conn.execute(
            "UPDATE rag.latest_docs d SET content = d.content || u.added,"
            " link_names = d.link_names || string_to_array(u.names, chr(31))"
            " FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(file_path, added, names)"
            " WHERE d.source_table = %s AND d.file_path = u.file_path",
            (paths, ["\n" + " ".join(f"[[{n}]]" for n in links[p]) for p in paths],
             [chr(31).join(name_key(n) for n in links[p]) for p in paths], TABLE),
        )  # fmt: skip
    try:
        yield
    finally:
        with db.connect(url) as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE rag.latest_docs SET content = %s, link_names = %s"
                " WHERE source_table = %s AND file_path = %s",
                [(content, names, TABLE, path) for path, content, names in saved],
            )


def quiet_cli(*argv: str) -> None:
    """``knowledge-assets ARGV`` in this process, its output thrown away."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli.main(list(argv))


def cases(
    stack: contextlib.ExitStack, url: str, store: Path, paths: list[str], rejected: list[str],
    linked: int = 0,
) -> list[tuple[str, Callable[[int], object]]]:  # fmt: skip
    """(label, fn(i)) of every read path timed, on clients and a connection kept open by
    ``stack``; ``i`` picks the note (or rejected file)."""
    settings = ApiSettings(
        "127.0.0.1", 8000, "", reader_url(url), writer_url(url), (), store / "vault"
    )
    app = create_app(settings, Asker(LLMSettings.from_env()))
    client = stack.enter_context(TestClient(app, base_url="http://127.0.0.1"))
    readers = ReaderStore(reader_url(url))
    stack.callback(readers.close)
    tools = KnowledgeTools(readers)
    conn = stack.enter_context(db.connect(url, autocommit=True))
    tag = core_notes.list_tags(conn)[0][0]
    nfd = [unicodedata.normalize("NFD", p) for p in paths]
    missing = [p.replace(".md", "x.md") for p in paths]
    links = [f"# リンク\n\n[[{p.removesuffix('.md')}]] と [[{q}#第1段落]]\n"
             for p, q in zip(paths, reversed(paths), strict=True)]  # fmt: skip
    gone = rejected or missing  # with no rejected files, unknown paths

    def ok(response: Any) -> Any:
        if response.status_code != 200:
            raise RuntimeError(f"{response.request.url}: {response.status_code} {response.text[:200]}")  # fmt: skip
        return response

    def view(i: int) -> Any:
        return ok(client.get("/api/notes/" + quote(paths[i])))

    def render_links(i: int) -> str:  # a note naming two others: NoteLinks lists the notes
        note = NoteLinks(paths[i], lambda: core_notes.latest_notes(conn), source=vault_source())
        return render_note(links[i], note, lambda _target: None)

    def mcp(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # an isError result (unknown note, rejected file)
            return exc

    # fmt: off
    return [
        ("API GET /api/notes/{path} (note view)", view),
        ("API GET /api/notes/{path} typed in NFD", lambda i: ok(client.get("/api/notes/" + quote(nfd[i])))),
        ("API GET /api/notes/{path} unknown (404)", lambda i: client.get("/api/notes/" + quote(missing[i]))),
        ("API GET /api/ai/similar/{path}", lambda i: ok(client.get("/api/ai/similar/" + quote(paths[i])))),
        (f"API GET /api/backlinks/{{path}} ({linked} notes linking)", lambda i: ok(client.get("/api/backlinks/" + quote(paths[i])))),
        (f"MCP linking_docs ({linked} notes linking)", lambda i: tools.linking_docs(paths[i])),
        (f"CLI backlinks PATH ({linked} notes linking)", lambda i: quiet_cli("backlinks", paths[i])),
        ("API GET /api/status", lambda i: ok(client.get("/api/status"))),
        ("API GET /api/tags", lambda i: ok(client.get("/api/tags"))),
        (f"API GET /api/tags/{tag}/notes (first page)", lambda i: ok(client.get(f"/api/tags/{quote(tag)}/notes"))),
        (f"API GET /api/tags/{tag}/notes?offset=i*200", lambda i: ok(client.get(f"/api/tags/{quote(tag)}/notes?offset={i * 200}"))),
        ("API GET /api/ai/qa/history", lambda i: ok(client.get("/api/ai/qa/history"))),
        ("MCP get_doc", lambda i: tools.get_doc(paths[i])),
        ("MCP get_doc of a rejected file", lambda i: mcp(tools.get_doc, gone[i])),
        ("MCP similar_docs", lambda i: tools.similar_docs(paths[i])),
        ("MCP list_tags", lambda i: tools.list_tags()),
        ("MCP tagged_docs", lambda i: tools.tagged_docs(tag)),
        ("CLI get PATH", lambda i: quiet_cli("get", paths[i])),
        ("CLI get PATH without .md", lambda i: quiet_cli("get", paths[i].removesuffix(".md"))),
        ("CLI get PATH unknown (did you mean)", lambda i: quiet_cli("get", missing[i])),
        ("CLI get PATH of a rejected file", lambda i: quiet_cli("get", gone[i])),
        ("CLI similar PATH", lambda i: quiet_cli("similar", paths[i])),
        ("CLI tags", lambda i: quiet_cli("tags")),
        ("CLI tags TAG", lambda i: quiet_cli("tags", tag)),
        ("CLI models list", lambda i: quiet_cli("models", "list")),
        ("core get_doc", lambda i: core_notes.get_doc(conn, paths[i])),
        ("core locate", lambda i: locate(conn, paths[i])),
        ("core why_not_searchable", lambda i: why_not_searchable(conn, paths[i], table=TABLE)),
        ("core rejection (a stored note)", lambda i: rejection(conn, paths[i], TABLE)),
        ("core rejection (a rejected file)", lambda i: rejection(conn, gone[i], TABLE)),
        ("core rejection (a rejected file, typed in NFD)", lambda i: rejection(conn, unicodedata.normalize("NFD", gone[i]), TABLE)),
        ("core note_warnings of one note", lambda i: note_warnings(conn, TABLE, [paths[i]])),
        ("core note_warnings of the source (the sync's list)", lambda i: note_warnings(conn, TABLE)),
        ("core failures.listed", lambda i: failures.listed(conn)),
        ("core latest_notes (what links resolve against)", lambda i: core_notes.latest_notes(conn)),
        ("core render_note with two wikilinks", render_links),
        ("core with_suffix (a path without .md)", lambda i: with_suffix(conn, paths[i].removesuffix(".md"), None)),
        ("core closest_paths (an unknown path)", lambda i: closest_paths(conn, missing[i])),
        ("core tag_hint (an unknown tag)", lambda i: tag_hint(conn, "jsqad")),
        ("core models.list_models", lambda i: models.list_models(conn)),
    ]
    # fmt: on


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/ and vault/")
    parser.add_argument("--calls", type=int, default=40, help="timed calls per case")
    parser.add_argument("--warm", type=int, default=100, help="untimed similar lookups first")
    parser.add_argument("--rejected", type=int, default=2000, help="rejected files added")
    parser.add_argument("--linked", type=int, default=600, help="notes linking to each timed note")
    parser.add_argument("--only", default="", help="only the cases whose label holds this")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/read_paths.py --store <store> --calls {args.calls}"
          f" --warm {args.warm} --rejected {args.rejected} --linked {args.linked}" + (f" --only {args.only!r}" if args.only else ""))  # fmt: skip
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load before {_load()}"
          f" on {os.cpu_count()} cores")  # fmt: skip
    url = db.store_url(db.embedded_url(args.store / "pg"))
    os.environ["DATABASE_URL"] = url  # the CLI's store
    os.environ.setdefault("KA_VAULT_PATH", str(args.store / "vault"))
    with db.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*), (SELECT count(*) FROM rag.chunks),"
            " (SELECT count(*) FROM raw.docs_local) FROM rag.latest_docs"
        ).fetchone()
        every = [r[0] for r in conn.execute(
            "SELECT file_path FROM rag.latest_docs WHERE source_table = %s ORDER BY file_path",
            (TABLE,),
        )]  # fmt: skip
    notes, chunks, stored = (int(x) for x in row) if row else (0, 0, 0)
    print(f"data: a bench/scale_steps.py store of {notes:,} notes ({stored:,} stored versions),"
          f" {chunks:,} chunks; {args.rejected:,} rejected files added for the run; code: {CODE}")  # fmt: skip
    total = WARM_UP + args.calls
    paths = spread(every, total)
    if args.warm:
        others = [p for p in spread(every[1:], args.warm) if p not in set(paths)]
        with db.connect(url) as conn:
            for path in others:
                core_notes.similar_to(conn, path)
        print(f"warm-up: notes similar to {len(others)} other notes, untimed")
    print(f"{args.calls} timed calls per case (+{WARM_UP} warm-up), each on another note:")
    with (
        rejected_rows(url, args.rejected) as rejected,
        linked_notes(url, paths, every, args.linked),
        contextlib.ExitStack() as stack,
    ):
        gone = spread(rejected, total) if rejected else []
        for label, fn in cases(stack, url, args.store, paths, gone, args.linked):
            if args.only and args.only not in label:
                continue
            print(line(label, timed(fn, args.calls)), flush=True)
    print(f"load after {_load()}")


if __name__ == "__main__":
    main()
