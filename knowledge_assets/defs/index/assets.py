"""Index assets: ``chunks`` (embeddable sections with keyword tokens) and ``embeddings``
(one vector per model and chunk text, partitioned by model)."""

import dagster as dg
from pydantic import Field

from knowledge_assets.core.indexing import ChunkReport, EmbedReport, refresh_chunks
from knowledge_assets.core.reembed import (
    DocumentFilter,
    NothingSelected,
    SubsetReport,
    embed_selection,
)
from knowledge_assets.defs.index.partitions import embedding_models
from knowledge_assets.defs.metadata import md_table, path_list
from knowledge_assets.resources import EmbedderResource, PostgresResource


@dg.asset(key="chunks", group_name="index", kinds={"postgres"}, deps=["latest_docs"])
def chunks(
    context: dg.AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    """Sections of the latest notes (``rag.chunks``): split at ``##`` (seed 000), each with its
    parent heading, the embedding text (metadata line, previous-section context, headings, body),
    the hash of that text and Japanese/English keyword tokens for full-text search. Only notes
    whose content changed are re-chunked; a chunk whose text is unchanged keeps its row."""
    model = embedder.embedder()
    with postgres.connect() as conn:
        report = refresh_chunks(conn, max_tokens=model.max_tokens)
        total = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    for path, warning in report.warnings:
        context.log.warning("%s: %s", path, warning)
    return dg.MaterializeResult(metadata=_chunk_metadata(report, total[0] if total else 0))


def _chunk_metadata(report: ChunkReport, total: int) -> dict[str, dg.MetadataValue]:
    return {
        "summary": dg.MetadataValue.text(
            f"{len(report.documents)} notes re-chunked: {report.chunks_written} chunks written, "
            f"{report.chunks_unchanged} unchanged, {report.chunks_removed} removed"
        ),
        "total_chunks": dg.MetadataValue.int(total),
        "documents_rechunked": dg.MetadataValue.int(len(report.documents)),
        "chunks_written": dg.MetadataValue.int(report.chunks_written),
        "chunks_unchanged": dg.MetadataValue.int(report.chunks_unchanged),
        "chunks_removed": dg.MetadataValue.int(report.chunks_removed),
        "orphan_embeddings_removed": dg.MetadataValue.int(report.embeddings_removed),
        "warnings": dg.MetadataValue.md(md_table(("file", "warning"), report.warnings)),
        "rechunked": dg.MetadataValue.md(path_list({"notes": report.documents})),
    }


class EmbeddingsConfig(dg.Config):
    """Which notes to embed. By default every chunk text without a vector of the partition's
    model. ``paths`` (exact file paths), ``path_prefix`` (a folder such as ``projects/``) and
    ``tag`` (a frontmatter tag) restrict the run to the notes matching all that are set;
    ``force`` embeds their existing vectors again and overwrites them (after a model update,
    or to repair suspect vectors)."""

    paths: list[str] = Field(default_factory=list)
    path_prefix: str = ""
    tag: str = ""
    force: bool = False

    def selection(self) -> DocumentFilter:
        return DocumentFilter(tuple(self.paths), self.path_prefix, self.tag)


@dg.asset(
    key="embeddings",
    group_name="index",
    kinds={"pgvector"},
    deps=["chunks"],
    partitions_def=embedding_models,
)
def embeddings(
    context: dg.AssetExecutionContext,
    config: EmbeddingsConfig,
    postgres: PostgresResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """Vectors in ``rag.embeddings``, keyed by (model, hash of the embedding text); the partition
    is the model. Texts that already have a vector of the model are reused, never sent again.
    When every chunk has a vector the model is marked complete, and becomes the active search
    model if none is active yet; otherwise switching is explicit (``knowledge-assets models
    activate NAME``), so a backfill of a new model never changes what search serves.

    Each batch of vectors is committed on its own: a failed or cancelled partition re-runs
    embedding only what is still missing, and a finished one re-runs embedding nothing.

    Re-embedding a subset (one note, a folder, a tag) is run config (``EmbeddingsConfig``), not
    a partition dimension: partitions are the models, and a subset is a one-off repair whose
    vectors replace the partition's own, so it must not show up as a separate, forever
    "missing" partition in the UI."""
    model = embedder.embedder(context.partition_key)
    selection = config.selection()
    with postgres.connect() as conn:
        try:
            subset = embed_selection(conn, model, selection, force=config.force)
        except NothingSelected as exc:
            raise dg.Failure(str(exc)) from exc
    report = subset.embed
    context.log.info(
        "%s (%s): %d replaced, %d embedded, %d reused",
        report.model, subset.selection, subset.replaced, report.embedded, report.reused,
    )  # fmt: skip
    return dg.MaterializeResult(metadata=_embed_metadata(report) | _subset_metadata(subset))


def _subset_metadata(subset: SubsetReport) -> dict[str, dg.MetadataValue]:
    return {
        "selection": dg.MetadataValue.text(subset.selection),
        "replaced": dg.MetadataValue.int(subset.replaced),
        "selected_notes": dg.MetadataValue.md(path_list({"notes": subset.documents})),
    }


def _embed_metadata(report: EmbedReport) -> dict[str, dg.MetadataValue]:
    rate = report.embedded / report.seconds_in_model if report.seconds_in_model else 0.0
    return {
        "summary": dg.MetadataValue.text(f"{report.embedded} embedded, {report.reused} reused"),
        "model": dg.MetadataValue.text(report.model),
        "embedded": dg.MetadataValue.int(report.embedded),
        "reused": dg.MetadataValue.int(report.reused),
        "chunk_texts": dg.MetadataValue.int(report.total),
        "batches": dg.MetadataValue.int(report.batches),
        "passages_per_second": dg.MetadataValue.float(round(rate, 1)),
        "seconds": dg.MetadataValue.float(round(report.seconds_total, 2)),
        "complete": dg.MetadataValue.bool(report.complete),
        "active_for_search": dg.MetadataValue.bool(report.active),
    }
