"""Search latency at scale: p50/p95 per mode on one connection (what a one-shot CLI search does)
and hybrid on two (``companion``: the keyword and vector legs at once, what the HTTP API and MCP
servers do), plus the server CPU per query from /proc, which other work on the machine does not
inflate.

bench/scale.py runs it on the store it just built; on a kept store (a copy: searching writes
statistics and WAL into the data directory)::

    .venv/bin/python bench/scale_search.py --store /path/to/store [--queries 100] [--rounds 1]

where ``/path/to/store/pg`` is the embedded server's data directory of a scale.py vault. Queries
are jsquad questions with hash query vectors (as the store's vectors), limit 10; each query runs
on one connection and on two, back to back (taking turns at going first), so both see the
same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import JSQUAD

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from knowledge_assets.core import db
from knowledge_assets.core.search import SearchFilters, search

WARM_UP = 10
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def backend_cpu_ms(pids: list[int]) -> float | None:
    """User + system CPU the server processes ``pids`` used so far (None off this machine)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) * TICK_MS  # utime, stime
    return total


def _line(label: str, ms: list[float], cpu: float | None) -> str:
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94]
    per_query = f"  server CPU {cpu / len(ms):5.1f} ms/query" if cpu is not None else ""
    return f"  {label:40s} p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms{per_query}"


def search_latency(url: str, queries: list[str], notes: int, embedder: Any) -> list[str]:
    """One line per configuration: p50 / p95 of ``search_ms`` and server CPU per query."""
    # c00000 .. c00999 of 10,000 notes: a tenth (a hundredth of 100,000 and so on).
    prefix = "c" + "0" * (len(str(notes - 1)) - len(str(notes // 10 - 1)) + 1)
    cases = [("vector", None), ("keyword", None), ("hybrid", None),
             ("hybrid", SearchFilters(path_prefix=prefix))]  # fmt: skip
    lines = [f"  load before {_load()}"]
    with db.connect(url) as conn, db.connect(url) as second:
        pids = [conn.info.backend_pid, second.info.backend_pid]
        for mode, filters in cases:
            label = mode + (f" (path {prefix}*)" if filters else "")

            def run(q: str, companion: Any, m: str = mode, f: Any = filters) -> float:
                r = search(conn, q, mode=m, embedder=embedder, filters=f, companion=companion,
                           threshold=-1.0 if m == "vector" else None)  # fmt: skip
                return float(r.timings["search_ms"])

            configs = {"one connection": None} | ({"two connections": second} if mode == "hybrid" else {})  # fmt: skip
            for name, (ms, cpu) in _timed(queries, run, configs, pids).items():
                lines.append(_line(f"{label}, {name}", ms, cpu))
            lines[-1] += f"  load {_load()}"
    return lines


def _timed(
    queries: list[str], run: Callable[[str, Any], float], configs: dict[str, Any], pids: list[int]
) -> dict[str, tuple[list[float], float | None]]:
    """Each query in every configuration back to back (taking turns at going first); timings
    and server CPU per configuration."""
    ms: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, float | None] = dict.fromkeys(configs, 0.0)
    names = list(configs)
    for i, q in enumerate(queries):
        # Alternate which goes first: the second finds the query's pages freshly read.
        for name in names if i % 2 else names[::-1]:
            companion = configs[name]
            before = backend_cpu_ms(pids)
            took = run(q, companion)
            after = backend_cpu_ms(pids)
            if i < WARM_UP:
                continue
            ms[name].append(took)
            spent = cpu[name]
            cpu[name] = None if spent is None or before is None or after is None else spent + after - before  # fmt: skip
    return {name: (ms[name], cpu[name]) for name in configs}


def _load() -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")"


def jsquad_questions(count: int) -> list[str]:
    """``count`` questions spread over the jsquad set, plus the warm-up ones."""
    lines = (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()
    picked = [json.loads(x)["question"] for x in lines[:: max(1, len(lines) // count)]]
    return picked[: count + WARM_UP]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole measurement")
    args = parser.parse_args()
    from scale import HashEmbedder

    print(f"command: .venv/bin/python bench/scale_search.py --store {args.store.name}"
          f" --queries {args.queries} --rounds {args.rounds}")  # fmt: skip
    url = db.embedded_url(args.store / "pg")
    with db.connect(url) as conn:
        row = conn.execute("SELECT count(*), (SELECT count(*) FROM rag.chunks)"
                           " FROM rag.latest_docs").fetchone()  # fmt: skip
    notes, chunks = (int(row[0]), int(row[1])) if row else (0, 0)
    print(f"data: a bench/scale.py store of {notes:,} notes, {chunks:,} chunks")
    print("search latency (search_ms, hash query vectors, limit 10):")
    for _ in range(args.rounds):
        print("\n".join(search_latency(url, jsquad_questions(args.queries), notes, HashEmbedder())))  # fmt: skip


if __name__ == "__main__":
    main()
