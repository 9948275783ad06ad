"""Chunking strategies on shared/eval/jsquad: chunk counts and keyword retrieval per strategy,
on the articles with their headings and with every heading removed.

Each (strategy, headings) pair is a declared source of its own in one fresh store (its
``content_type`` names the pair), going through the real pipeline: sync_source ->
refresh_latest -> refresh_chunks with that source's chunking options. Every question of
queries.jsonl then runs through ``search(mode="keyword")`` filtered to the pair's content type.
A hit is relevant when it comes from the question's article and its text contains one of the
judged answers, so a strategy is not rewarded merely for returning whole articles; the mean size
of the top 5 hits shows what each strategy costs as context. "long" restricts the questions to the
10 longest articles (8,000+ characters).

    .venv/bin/python bench/chunking_strategies.py [--queries N] > bench/results/chunking_strategies.txt
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import JSQUAD, fresh_database

from knowledge_assets.core import db
from knowledge_assets.core.indexing import refresh_chunks
from knowledge_assets.core.ingest import sync_source
from knowledge_assets.core.latest import refresh_latest
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.sources.registry import SourceProfile, build_source, register
from knowledge_assets.core.strategies import ChunkingOptions

STRATEGIES = ("headings", "size", "document", "scene", "recursive")
LONG_ARTICLES = 10


@dataclass
class Row:
    name: str
    chunks: int
    mean_chars: float
    max_chars: int
    seconds: float
    scores: dict[str, tuple[float, float, float, float]]  # subset -> R@1, R@5, R@10, MRR@10
    context_chars: float


def _vault(folder: Path, headings: bool) -> Path:
    folder.mkdir(parents=True)
    for path in sorted((JSQUAD / "vault").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not headings:
            text = re.sub(r"(?m)^#{1,6} .*\n", "", text)
        (folder / path.name).write_text(text, encoding="utf-8")
    return folder


def _ingest(url: str, name: str, strategy: str, folder: Path) -> tuple[int, float, int, float]:
    profile = SourceProfile(
        name, "local", "markdown_note", name, chunking=ChunkingOptions(strategy=strategy)
    )
    started = time.perf_counter()
    with db.connect(url) as conn:
        register(conn, profile)
        conn.commit()
        source = build_source(profile, {"path": str(folder)})
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=8000)
        sizes = [
            n
            for (n,) in conn.execute(
                "SELECT length(c.content) FROM rag.chunks c JOIN rag.latest_docs d"
                " ON d.id = c.document_id WHERE d.source_table = %s",
                (source.table,),
            )
        ]
    seconds = time.perf_counter() - started
    return len(sizes), statistics.mean(sizes), max(sizes), seconds


def _evaluate(
    url: str, content_type: str, queries: list[dict[str, object]], long: set[str]
) -> tuple[dict[str, tuple[float, float, float, float]], float]:
    ranks: dict[str, list[int | None]] = {"all": [], "long": []}
    context: list[int] = []
    filters = SearchFilters(content_types=(content_type,))
    with db.connect(url) as conn:
        for q in queries:
            hits = search(conn, str(q["question"]), mode="keyword", filters=filters, limit=10).hits
            answers = [str(a) for a in q["answers"]]  # type: ignore[attr-defined]
            rank = next(
                (
                    i
                    for i, h in enumerate(hits, start=1)
                    if h.file_path == q["file_path"] and any(a in h.content for a in answers)
                ),
                None,
            )
            ranks["all"].append(rank)
            if q["file_path"] in long:
                ranks["long"].append(rank)
            context.append(sum(len(h.content) for h in hits[:5]))
    return {k: _scores(v) for k, v in ranks.items()}, statistics.mean(context)


def _scores(ranks: list[int | None]) -> tuple[float, float, float, float]:
    n = len(ranks) or 1
    r1 = sum(1 for r in ranks if r == 1) / n
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    r10 = sum(1 for r in ranks if r is not None) / n
    mrr = sum(1 / r for r in ranks if r is not None) / n
    return r1, r5, r10, mrr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=0, help="every k-th query so N remain")
    args = parser.parse_args()
    queries = [json.loads(line) for line in (JSQUAD / "queries.jsonl").open(encoding="utf-8")]
    if args.queries:
        step = max(1, len(queries) // args.queries)
        queries = queries[::step][: args.queries]
    files = sorted((JSQUAD / "vault").glob("*.md"), key=lambda p: p.stat().st_size)
    long = {p.name for p in files[-LONG_ARTICLES:]}
    n_long = sum(1 for q in queries if q["file_path"] in long)
    url = fresh_database()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for headings in (True, False):
            folder = _vault(Path(tmp) / ("h" if headings else "n"), headings)
            for strategy in STRATEGIES:
                name = f"{strategy}_{'h' if headings else 'n'}"
                chunks, mean, biggest, seconds = _ingest(url, name, strategy, folder)
                scores, ctx = _evaluate(url, name, queries, long)
                rows.append(Row(name, chunks, mean, biggest, seconds, scores, ctx))
    print(f"jsquad: {len(files)} articles, {len(queries)} questions ({n_long} on the 10 longest)")
    print("keyword search (BM25, SudachiPy); relevant = the question's article and an answer")
    print("_h: with headings (## per paragraph), _n: every heading removed\n")
    head = "| source | chunks | mean chars | max chars | chunk s | R@1 | R@5 | R@10 | MRR@10 | long R@1 | long MRR@10 | top-5 chars |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        a, lg = r.scores["all"], r.scores["long"]
        print(
            f"| {r.name} | {r.chunks} | {r.mean_chars:.0f} | {r.max_chars} | {r.seconds:.1f} |"
            f" {a[0]:.3f} | {a[1]:.3f} | {a[2]:.3f} | {a[3]:.3f} | {lg[0]:.3f} | {lg[3]:.3f} |"
            f" {r.context_chars:.0f} |"
        )


if __name__ == "__main__":
    main()
