"""What the known-item lookup (a query that is a note's title or alias, looked up in the store)
costs at 10,000 notes: ``named_notes`` alone, and beside it the keyword search it is part of.

The store: the jsquad vault through the real pipeline (no vectors: keyword search only), copied by
SQL into ``rNNN/`` folders (bench/search_latency.py's ``replicate``) until it holds ``--chunks``
chunks, so every title is held by about 170 notes, the worst case for a lookup (a vault rarely
holds two notes of one title). Queries: the 59 titles as written, in hiragana (24), and 59 jsquad
questions, which name no note. Each runs once to warm up, then ``--repeat`` times::

    .venv/bin/python bench/known_item_latency.py [--chunks 194330] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import JSQUAD, fresh_database, sync_and_chunk
from known_item import hiragana
from search_latency import questions, replicate

from knowledge_assets.core.chunks import chunk_writer
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders.usem3 import MAX_TOKENS as USEM3_MAX_TOKENS
from knowledge_assets.core.search import search
from knowledge_assets.core.search.known_items import named_notes


def store(chunks: int) -> str:
    url = fresh_database()
    sync_and_chunk(url, JSQUAD / "vault", USEM3_MAX_TOKENS)  # as usem3 chunks it
    with db.connect(url) as conn:
        chunk_writer.drop_keyword_index(conn)
        copies = replicate(conn, chunks)
        chunk_writer.ensure_keyword_index(conn)
        conn.commit()
        conn.execute("ANALYZE")
        n = conn.execute("SELECT count(*), count(DISTINCT document_id) FROM rag.chunks").fetchone()
    assert n is not None
    print(f"store: {n[0]:,} chunks in {n[1]:,} notes ({copies} copies)")
    return url


def ms(f: Callable[[], object]) -> float:
    started = time.perf_counter()
    f()
    return (time.perf_counter() - started) * 1000


def measure(url: str, label: str, queries: list[str], repeat: int) -> None:
    lookup, keyword = [], []
    with db.connect(url) as conn:
        for q in queries:
            named_notes(conn, q, None, 10)
            for _ in range(repeat):
                lookup.append(ms(lambda q=q: named_notes(conn, q, None, 10)))
                keyword.append(search(conn, q, mode="keyword").timings["search_ms"])
    p50 = statistics.median
    p95 = statistics.quantiles(lookup, n=20)[-1]
    print(f"{label:28s} {len(queries):3d} queries | lookup p50 {p50(lookup):6.2f} ms"
          f" p95 {p95:6.2f} ms | whole keyword search p50 {p50(keyword):6.2f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/known_item_latency.py --chunks {args.chunks}"
          f" --repeat {args.repeat}")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    url = store(args.chunks)
    with db.connect(url) as conn:
        titles = [r[0] for r in conn.execute(
            "SELECT DISTINCT title FROM rag.latest_docs ORDER BY title").fetchall()]  # fmt: skip
        plan = conn.execute(
            "EXPLAIN SELECT 1 FROM rag.latest_docs d"
            " WHERE d.name_keys @> ARRAY[rag.title_key(%s)]", (titles[0],)
        ).fetchall()  # fmt: skip
    print("plan of the lookup's condition: " + " / ".join(r[0].strip() for r in plan))
    kana = [h for t in titles if (h := hiragana(t)) != t]
    measure(url, "titles as written", titles, args.repeat)
    measure(url, "titles in hiragana", kana, args.repeat)
    measure(url, "jsquad questions", questions(len(titles)), args.repeat)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
