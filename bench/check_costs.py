"""What the data-quality checks cost on a large store: the queries behind each asset check, as
every run of ``embeddings_job`` runs them after its assets (a sensor's run for one edited note
too). Median wall milliseconds over ``--rounds``, after one round that warms the cache.

The ``ROOT`` environment variable (default: this checkout) names the project tree whose queries
run, so two versions can be timed on the same store one after the other; the store is brought
to that version's schema first::

    .venv/bin/python bench/check_costs.py --store /tmp/ka-scale-10000-xxxx
    ROOT=/path/to/older/checkout .venv/bin/python bench/check_costs.py --store /tmp/ka-scale-10000-xxxx

where the store is a folder kept by bench/scale.py or bench/scale_steps.py (``pg/`` and
``vault/``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT]

from knowledge_assets.core import failures  # noqa: E402
from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.index import checks_sql, models  # noqa: E402
from knowledge_assets.resources import VaultResource  # noqa: E402


def check_queries(conn: Any, vault: Path) -> dict[str, Callable[[], object]]:
    """Each check's name and the query (or source listing) behind it."""
    active = models.active_model(conn)
    source = VaultResource(kind="local", path=str(vault)).source()
    return {
        "active_model_covers_every_chunk": lambda: checks_sql.chunks_without_vectors(conn, active),
        "no_orphaned_embeddings": lambda: checks_sql.orphan_embeddings(conn),
        "vectors_match_model_dimension": lambda: checks_sql.wrong_dimension_vectors(conn),
        "chunks_fit_model_input_limit": lambda: checks_sql.oversized_chunks(conn),
        "every_note_indexed": lambda: failures.listed(conn),
        "previous_has_no_cycles": lambda: checks_sql.supersede_cycles(conn),
        "raw_docs_match_source": lambda: checks_sql.source_drift(conn, source),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/ and vault/")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    code = Path(ROOT).name if "ROOT" in os.environ else "this checkout"
    url = db.store_url(db.embedded_url(args.store / "pg"))  # migrated to ROOT's schema
    with db.connect(url) as conn:
        row = conn.execute("SELECT count(*), (SELECT count(*) FROM rag.chunks),"
                           " (SELECT count(*) FROM rag.embeddings) FROM rag.latest_docs").fetchone()  # fmt: skip
        conn.commit()
        notes, chunks, vectors = row if row else (0, 0, 0)
        print(f"command: .venv/bin/python bench/check_costs.py --store {args.store.name}"
              f" --rounds {args.rounds}")  # fmt: skip
        print(f"data: {notes:,} notes, {chunks:,} chunks, {vectors:,} vectors; code: {code};"
              f" load {os.getloadavg()[0]:.2f}")  # fmt: skip
        queries = check_queries(conn, args.store / "vault")
        took: dict[str, list[float]] = {name: [] for name in queries}
        for round_ in range(args.rounds + 1):
            for name, query in queries.items():
                started = time.perf_counter()
                query()
                conn.commit()
                if round_:  # the first round warms the cache
                    took[name].append((time.perf_counter() - started) * 1000)
    total = 0.0
    for name, ms in took.items():
        total += statistics.median(ms)
        print(f"  {name:36s} {statistics.median(ms):8.1f} ms")
    print(f"  {'every check, one after the other':36s} {total:8.1f} ms;"
          f" load {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
