"""Per-step timings of the whole graph on a replica vault: a full ingest on a fresh store, or
no-op / edit / delete runs on a kept one, each with the load average.

The ``ROOT`` environment variable (default: this checkout) names the project tree whose code
runs, so two versions can be timed back to back on the same machine state::

    .venv/bin/python bench/scale_steps.py full 1000
    ROOT=/path/to/older/checkout .venv/bin/python bench/scale_steps.py full 1000
    .venv/bin/python bench/scale_steps.py steps /tmp/store noop,noop,edit,delete

``full N`` keeps its store (printed) for ``steps``. Vaults and edits are bench/scale.py's.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, ROOT + "/bench"]

import dagster as dg  # noqa: E402
import scale  # noqa: E402

from knowledge_assets.core import db  # noqa: E402
from knowledge_assets.defs.index.assets import chunks, embeddings  # noqa: E402
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs  # noqa: E402
from knowledge_assets.resources import PostgresResource, VaultResource  # noqa: E402


def db_work(url: str) -> tuple[int, int]:
    """(blocks accessed, rows read) by the store's database so far: load-independent counts of
    the work a run made Postgres do (each step's connections report theirs as they close)."""
    with db.connect(url) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT blks_hit + blks_read, tup_returned + tup_fetched FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def run(label: str, url: str, vault: Path, instance: dg.DagsterInstance) -> None:
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=url),
        "vault": VaultResource(kind="local", path=str(vault)),
        "embedder": scale.HashEmbedderResource(),
    }
    load = os.getloadavg()[0]
    work = db_work(url)
    started = time.perf_counter()
    result = dg.materialize(
        [raw_docs, latest_docs, chunks, embeddings], resources=resources,
        partition_key="usem3", instance=instance, raise_on_error=True,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    )  # fmt: skip
    total = time.perf_counter() - started
    steps = {
        e.step_key: e.event_specific_data.duration_ms / 1000
        for e in result.all_events
        if e.event_type_value == "STEP_SUCCESS"
    }
    hnsw = [
        e.materialization.metadata["index_build_seconds"].value
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "embeddings"
    ]
    time.sleep(0.2)  # the steps' closed connections report their counts
    blocks, rows = (after - before for after, before in zip(db_work(url), work, strict=True))
    print(
        f"{Path(ROOT).name:10s} {label:7s} {total:7.2f} s  "
        + "  ".join(f"{k} {v:.2f}" for k, v in steps.items())
        + f"  (HNSW build {hnsw[0] if hnsw else '-'} s)  load {load:.1f} -> {os.getloadavg()[0]:.1f}"
        + f"  db blocks {blocks:,} rows read {rows:,}",
        flush=True,
    )


def main() -> None:
    mode, arg = sys.argv[1], sys.argv[2]
    instance = dg.DagsterInstance.ephemeral()
    if mode == "full":
        work = Path(tempfile.mkdtemp(prefix="ka-steps-"))
        scale.build_vault(work / "vault", int(arg))
        url = db.store_url(db.embedded_url(work / "pg"))
        run("full", url, work / "vault", instance)
        print(f"store kept in {work}")
        return
    work = Path(arg)
    url = db.store_url(db.embedded_url(work / "pg"))
    files = sorted((work / "vault").glob("*.md"))
    for label in sys.argv[3].split(","):
        if label == "edit":
            scale.edit_one_section(files[0])
        elif label == "delete":
            files.pop(1).unlink()
        run(label, url, work / "vault", instance)


if __name__ == "__main__":
    main()
