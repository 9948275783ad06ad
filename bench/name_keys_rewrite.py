"""What upgrading a store to sql/058 (or sql/064) costs at 10,000 notes: the migration rewrites
``rag.latest_docs`` once to store each note's short names (or file names) in ``name_keys`` and
builds its GIN index again; no note is read, chunked or embedded again.

The store is bench/known_item_latency.py's: the jsquad vault through the real pipeline (no
vectors), copied by SQL into ``rNNN/`` folders until it holds ``--chunks`` chunks (about 10,000
notes of Wikipedia articles, so the rows carry long texts). Each copy's title gets a Latin gloss
(``ラオス (r012)``), so nearly every title gives both short names: the most work per row. Each
round puts the column back as the migration before made it, then times what a store made then
runs at its next start (``db.migrate``: the migration named, nothing else)::

    .venv/bin/python bench/name_keys_rewrite.py [--chunks 194330] [--rounds 3] [--upgrade 064]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from known_item_latency import store

from knowledge_assets.core.database import db

# Per migration timed: its file, and the column as the migration before made it.
_BEFORE = {
    "058": ("058_short_names_looked_up.sql", "rag.name_keys(title, aliases)"),
    "064": ("064_file_names_looked_up.sql", "rag.note_name_keys(title, aliases)"),
}


def _put_back(upgrade: str) -> list[tuple[str, tuple[str, ...]]]:
    """The statements (with their parameters) that leave the store as it was before migration
    ``upgrade``."""
    name, keys = _BEFORE[upgrade]
    column = f"ALTER TABLE rag.latest_docs ADD COLUMN name_keys text[] GENERATED ALWAYS AS ({keys}) STORED"  # fmt: skip
    return [
        ("ALTER TABLE rag.latest_docs DROP COLUMN name_keys", ()),
        (column, ()),
        ("CREATE INDEX latest_docs_name_keys_idx ON rag.latest_docs USING GIN (name_keys)", ()),
        ("DELETE FROM meta.migrations WHERE name = %s", (name,)),
    ]


def glossed(url: str) -> int:
    """Gives each copied note's title a Latin gloss; returns how many notes have one."""
    with db.connect(url) as conn:
        conn.execute(
            "UPDATE rag.latest_docs SET title = title || ' (' || split_part(file_path, '/', 1)"
            " || ')' WHERE file_path ~ '^r[0-9]{3}/'"
        )
        conn.commit()
        row = conn.execute("SELECT count(*) FROM rag.latest_docs WHERE name_keys[3] <> ''")
        count = int(row.fetchone()[0])  # type: ignore[index]
    compact(url)
    return count


def compact(url: str) -> None:
    """The table without dead rows and written out, as a store that has rested."""
    with db.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM FULL rag.latest_docs")
        conn.execute("CHECKPOINT")


def table_mb(url: str) -> float:
    with db.connect(url) as conn:
        row = conn.execute("SELECT pg_total_relation_size('rag.latest_docs')").fetchone()
    assert row is not None
    return row[0] / 1e6


def upgrade_seconds(url: str, upgrade: str) -> float:
    """The store put back as it was before migration ``upgrade``, then the seconds it takes."""
    with db.connect(url) as conn:
        for statement, params in _put_back(upgrade):
            conn.execute(statement, params)
        conn.commit()
    compact(url)
    started = time.perf_counter()
    applied = db.migrate(url)
    seconds = time.perf_counter() - started
    assert applied == [_BEFORE[upgrade][0]], applied
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--upgrade", choices=sorted(_BEFORE), default="058")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/name_keys_rewrite.py --chunks {args.chunks}"
          f" --rounds {args.rounds} --upgrade {args.upgrade}")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    url = store(args.chunks)
    print(f"notes whose title gives a Latin short name: {glossed(url):,}")
    print(f"rag.latest_docs with its indexes and TOAST: {table_mb(url):.0f} MB")
    times = [upgrade_seconds(url, args.upgrade) for _ in range(args.rounds)]
    print(
        f"upgrade to {args.upgrade} (db.migrate): {', '.join(f'{t:.2f}' for t in times)} s;"
        f" median {statistics.median(times):.2f} s"
    )
    print(f"rag.latest_docs afterwards: {table_mb(url):.0f} MB")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
