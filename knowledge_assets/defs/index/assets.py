"""Index assets: ``chunks`` (embeddable sections with keyword tokens) and ``embeddings``
(one vector per model and chunk text, partitioned by model)."""

import dagster as dg
from pydantic import Field

from knowledge_assets.core.indexing import ChunkReport, EmbedReport, refresh_chunks
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.reembed import (
    DocumentFilter,
    NothingSelected,
    SubsetReport,
    embed_selection,
)
from knowledge_assets.defs.index.partitions import embedding_models
from knowledge_assets.defs.metadata import md_table, path_list
from knowledge_assets.resources import EmbedderResource, PostgresResource


class ChunksConfig(dg.Config):
    """``force``: split every note again, even those whose content did not change."""

    force: bool = Field(default=False, description="Re-chunk every note, changed or not.")


@dg.asset(key="chunks", group_name="index", kinds={"postgres"}, deps=["latest_docs"])
def chunks(
    context: dg.AssetExecutionContext,
    config: ChunksConfig,
    postgres: PostgresResource,
    embedder: EmbedderResource,
) -> dg.MaterializeResult:
    """The searchable sections of the latest notes, in `rag.chunks`, split at `##` headings.

    Each section keeps its heading path, the text sent to the embedding model (a metadata line,
    the previous section for context, the headings and the body), a hash of that text, and
    Japanese and English keyword tokens for full-text search. Only notes whose content changed
    are split again; a section whose text did not change keeps its row and its vectors."""
    model = embedder.embedder()
    progress = Progress("chunks", "notes", log=context.log.info)
    with postgres.writer(context.log) as conn:
        report = refresh_chunks(
            conn, max_tokens=model.max_tokens, progress=progress, force=config.force
        )
        total = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    for path, warning in report.warnings:
        context.log.warning("%s: %s", path, warning)
    for path, reason in report.failed:
        context.log.error(
            "%s could not be chunked (kept its previous chunks, retried next run): %s", path, reason
        )
    return dg.MaterializeResult(metadata=_chunk_metadata(report, total[0] if total else 0))


def _chunk_metadata(report: ChunkReport, total: int) -> dict[str, dg.MetadataValue]:
    return {
        "summary": dg.MetadataValue.text(
            f"{len(report.documents)} notes re-chunked: {report.chunks_written} chunks written, "
            f"{report.chunks_unchanged} unchanged, {report.chunks_removed} removed"
            + (f", {len(report.failed)} notes failed" if report.failed else "")
        ),
        "total_chunks": dg.MetadataValue.int(total),
        "documents_rechunked": dg.MetadataValue.int(len(report.documents)),
        "chunks_written": dg.MetadataValue.int(report.chunks_written),
        "chunks_unchanged": dg.MetadataValue.int(report.chunks_unchanged),
        "chunks_removed": dg.MetadataValue.int(report.chunks_removed),
        "keyword_tokens_reused": dg.MetadataValue.int(report.tokens_reused),
        "notes_failed": dg.MetadataValue.md(md_table(("file", "reason"), report.failed)),
        "orphan_embeddings_removed": dg.MetadataValue.int(report.embeddings_removed),
        "warnings": dg.MetadataValue.md(md_table(("file", "warning"), report.warnings)),
        "failed_notes": dg.MetadataValue.int(len(report.failed)),
        "rechunked": dg.MetadataValue.md(path_list({"notes": report.documents})),
    }


class EmbeddingsConfig(dg.Config):
    """Which notes to embed. Left empty: every section without a vector of the partition's
    model. Criteria that are set must all match."""

    paths: list[str] = Field(
        default_factory=list, description="Exact file paths, e.g. projects/garden.md."
    )
    path_prefix: str = Field(default="", description="A folder, e.g. projects/.")
    tag: str = Field(default="", description="A frontmatter tag (the # is optional).")
    force: bool = Field(
        default=False,
        description="Embed the selected notes again and overwrite their vectors (after a model "
        "update, or to repair suspect vectors).",
    )

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
    """One vector per embedding model and section text, in `rag.embeddings`. Each partition
    is one model.

    A text that already has a vector of the model is never sent again, and every batch is saved
    as it completes: a failed partition resumes where it stopped, a finished one embeds nothing.
    When every section has a vector the model is marked complete, and the first complete model
    becomes the one search uses. Switching to another is explicit
    (`knowledge-assets models activate NAME`), so materializing a new model never changes what
    search serves. To re-embed a few notes, set paths, path_prefix or tag (and force) in the
    run config."""
    # Re-embedding a subset is run config, not a partition dimension: partitions are the
    # models, and a subset is a one-off repair whose vectors replace the partition's own, so it
    # must not show up as a separate, forever "missing" partition in the UI.
    if not context.has_partition_key:
        keys = ", ".join(embedding_models.get_partition_keys())
        raise dg.Failure(f"choose the embedding model to embed with: a partition ({keys})")
    model = embedder.embedder(context.partition_key)
    selection = config.selection()
    with postgres.writer(context.log) as conn:
        try:
            progress = Progress("embeddings", "passages", log=context.log.info)
            subset = embed_selection(conn, model, selection, force=config.force, progress=progress)
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
        "summary": dg.MetadataValue.text(
            f"{report.embedded} embedded, {report.reused} reused"
            + (f", {report.failed_texts} failed" if report.failed_texts else "")
        ),
        "failed": dg.MetadataValue.int(report.failed_texts),
        "model": dg.MetadataValue.text(report.model),
        "embedded": dg.MetadataValue.int(report.embedded),
        "reused": dg.MetadataValue.int(report.reused),
        "chunk_texts": dg.MetadataValue.int(report.total),
        "batches": dg.MetadataValue.int(report.batches),
        "passages_per_second": dg.MetadataValue.float(round(rate, 1)),
        "seconds": dg.MetadataValue.float(round(report.seconds_total, 2)),
        "index_build_seconds": dg.MetadataValue.float(round(report.seconds_index, 2)),
        "complete": dg.MetadataValue.bool(report.complete),
        "active_for_search": dg.MetadataValue.bool(report.active),
    }
