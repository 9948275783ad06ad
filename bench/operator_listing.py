"""Latency of a query of operators alone (``path:c00``, ``-tag:x``), which lists the notes it
keeps (core/search/listing.py), on a kept bench/scale_steps.py store::

    .venv/bin/python bench/operator_listing.py --store <store> [--calls 20]

where ``<store>/pg`` is the embedded server's data directory (``full N`` prints ``<store>``).
Each query lists its first 50 notes ``--calls`` times on one connection after two untimed
calls; p50 and the slowest call are of wall time in process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.search.listing import notes_kept  # noqa: E402
from knowledge_assets.core.search.operators import listed, split_query  # noqa: E402

# A replica vault's paths start c00000_ .. c09999_ (path:c00 holds a tenth of them, path:c0000
# ten), every note is tagged jsquad and wikipedia, and 場合 is in about half the notes.
QUERIES = ["path:c00", "path:c0000", "-path:c00", "tag:jsquad", "-tag:wikipedia", "path:c00 -場合"]
WARM = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per query")
    args = parser.parse_args()
    print(
        f"command: .venv/bin/python bench/operator_listing.py --store <store> --calls {args.calls}"
    )
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {os.getloadavg()}")
    url = db.store_url(db.embedded_url(args.store / "pg"))
    with db.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone()
        print(
            f"data: a bench/scale_steps.py store of {row[0] if row else 0:,} notes; first 50 listed"
        )
        for query in QUERIES:
            filters = listed(None, split_query(query))
            took = []
            for i in range(WARM + args.calls):
                started = time.perf_counter()
                total, _ = notes_kept(conn, filters, limit=50)
                if i >= WARM:
                    took.append((time.perf_counter() - started) * 1000)
            print(f"  {query:22s} kept {total:6,}  p50 {statistics.median(took):6.1f} ms"
                  f"  slowest {max(took):6.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
