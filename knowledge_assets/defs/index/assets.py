"""Index assets: ``chunks`` (embeddable sections with keyword tokens) and ``embeddings``
(one vector per model and chunk text, partitioned by model)."""

import inspect

import dagster as dg
import psycopg
from pydantic import Field

from knowledge_assets.core.chunks.chunk_refresh import ChunkReport, refresh_chunks
from knowledge_assets.core.chunks.chunking import CHUNKER_VERSION
from knowledge_assets.core.counts import counted
from knowledge_assets.core.index.embed_batches import EmbedReport
from knowledge_assets.core.index.reembed import (
    DocumentFilter,
    NothingSelected,
    SubsetReport,
    embed_selection,
)
from knowledge_assets.core.progress import Progress
from knowledge_assets.defs.automation import SEARCH_MODEL_CHANGED, UPSTREAM_CHANGED
from knowledge_assets.defs.index.partitions import embedding_models
from knowledge_assets.defs.metadata import rows_table, split_notices, table_metadata
from knowledge_assets.resources import EmbedderResource, PostgresResource
from knowledge_assets.setup_checks import SetupError, check_setup


class ChunksConfig(dg.Config):
    """Whether to split every note again."""

    force: bool = Field(default=False, description="Re-chunk every note, changed or not.")


@dg.asset(
    key="chunks",
    group_name="index",
    kinds={"postgres"},
    deps=["latest_docs"],
    tags={"layer": "search"},
    # The chunking rules: a new version re-splits every note (and shows as a code change).
    code_version=CHUNKER_VERSION,
    automation_condition=UPSTREAM_CHANGED,
)
def chunks(
    context: dg.AssetExecutionContext, config: ChunksConfig, postgres: PostgresResource
) -> dg.MaterializeResult:
    """The searchable sections of the latest notes, in `rag.chunks`, split at `##` headings.

    Each section keeps its heading path, the text sent to the embedding model (a metadata line,
    the previous section for context, the headings and the body), a hash of that text, and
    Japanese and English keyword tokens for full-text search. Only notes whose content changed
    are split again; a section whose text did not change keeps its row and its vectors.
    Sections do not depend on the embedding model, so switching models never splits again."""
    check_setup(context, postgres)
    progress = Progress("chunks", "notes", log=context.log.info)
    with postgres.writer(context.log) as conn:
        # latest_docs has already removed the chunks of notes that left it (ON DELETE CASCADE).
        before = _row_count(conn)
        last = _last_row_count(context)
        report = refresh_chunks(
            conn, progress=progress, force=config.force, helper=postgres.connect
        )
        # Only re-chunked notes change the row count (a failed note keeps its chunks).
        unchanged = before if not report.documents else None
        table = table_metadata(conn, "rag.chunks", row_count=unchanged)
    notices = split_notices(report.warnings)
    for path, notice in notices:
        context.log.warning("%s: %s", path, notice)
    for path, reason in report.failed:
        context.log.error(
            "%s could not be chunked (kept its previous chunks, retried next run): %s", path, reason
        )
    with_notes = max(last - before, 0) if last is not None else None
    return dg.MaterializeResult(
        metadata=table | _chunk_metadata(report, table, with_notes, notices)
    )


def _row_count(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
    return int(row[0]) if row else 0


def _last_row_count(context: dg.AssetExecutionContext) -> int | None:
    """The row count of the last materialization, None when there is none. Minus the count now,
    it is how many chunks went with notes deleted (or superseded, or turned into drafts)."""
    last = context.instance.get_latest_materialization_event(context.asset_key)
    previous = last.asset_materialization.metadata.get("dagster/row_count") if last else None
    count = getattr(previous, "value", None) if last and last.asset_materialization else None
    return count if isinstance(count, int) else None


def _chunk_metadata(
    report: ChunkReport,
    table: dict[str, dg.MetadataValue],
    with_notes: int | None,
    notices: list[tuple[str, str]],
) -> dict[str, dg.MetadataValue]:
    total = int(table["dagster/row_count"].value)  # type: ignore[arg-type]
    kept = total - report.chunks_written
    removed = report.chunks_removed + (with_notes or 0)
    gone = f", {with_notes:,} removed with their notes" if with_notes else ""
    if report.documents:
        summary = (
            f"{counted(len(report.documents), 'note')} re-chunked:"
            f" {counted(report.chunks_written, 'chunk')} written, {kept:,} unchanged,"
            f" {removed:,} removed"
            + (f", {counted(len(report.failed), 'note')} failed" if report.failed else "")
        )
    else:
        summary = f"No note changed: {counted(total, 'chunk')} kept{gone}"
    return {
        "summary": dg.MetadataValue.text(summary),
        "documents_rechunked": dg.MetadataValue.int(len(report.documents)),
        "chunks_written": dg.MetadataValue.int(report.chunks_written),
        "chunks_unchanged": dg.MetadataValue.int(kept),
        "chunks_removed": dg.MetadataValue.int(removed),
        "chunks_removed_with_notes": dg.MetadataValue.int(with_notes or 0),
        "keyword_tokens_reused": dg.MetadataValue.int(report.tokens_reused),
        "orphan_embeddings_removed": dg.MetadataValue.int(report.embeddings_removed),
        "failed_notes": dg.MetadataValue.int(len(report.failed)),
        "notes_failed": rows_table(("file", "reason"), report.failed),
        "split_sections": rows_table(("file", "section"), notices),
        "rechunked": rows_table(("file",), [(path,) for path in report.documents]),
    }


class EmbeddingsConfig(dg.Config):
    """Which notes to embed. Left empty: every section without a vector of the partition's
    model. Criteria that are set must all match."""

    paths: list[str] = Field(
        default_factory=list, description="Exact file paths, e.g. projects/garden.md."
    )
    path_prefix: str = Field(default="", description="A folder, e.g. projects/.")
    tag: str = Field(
        default="",
        description=(
            "A tag (of the frontmatter or the text) in any case, with the tags nested under it"
            " (the # is optional)."
        ),
    )
    force: bool = Field(
        default=False,
        description="Embed the selected notes again and overwrite their vectors (after a model "
        "update, or to repair suspect vectors).",
    )

    def selection(self) -> DocumentFilter:
        return DocumentFilter(tuple(self.paths), self.path_prefix, self.tag)


def _embed_partition(
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
    check_setup(context, postgres)
    if not context.has_partition_key:
        keys = ", ".join(context.assets_def.partitions_def.get_partition_keys())
        raise SetupError(f"choose the embedding model to embed with: a partition ({keys})")
    model = embedder.embedder(context.partition_key)  # SetupError when it cannot run here
    template = embedder.template_for(context.partition_key)
    selection = config.selection()
    with postgres.writer(context.log) as conn:
        try:
            progress = Progress("embeddings", "passages", log=context.log.info)
            subset = embed_selection(
                conn, model, selection, force=config.force, template=template, progress=progress,
                watch=postgres.connect,
            )  # fmt: skip
        except NothingSelected as exc:
            raise dg.Failure(str(exc)) from exc
        table = table_metadata(conn, "rag.embeddings", partition_filter=("model", model.model))
    report = subset.embed
    context.log.info("%s", embed_log_line(subset))
    return dg.MaterializeResult(metadata=table | _embed_metadata(report) | _subset_metadata(subset))


def build_embeddings(partitions_def: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """The ``embeddings`` asset over the given model partitions (the configured ones in the
    code location; tests and tools pass their own)."""

    @dg.asset(
        key="embeddings",
        group_name="index",
        kinds={"pgvector"},
        deps=["chunks"],
        partitions_def=partitions_def,
        tags={"layer": "search"},
        automation_condition=SEARCH_MODEL_CHANGED,
        description=inspect.cleandoc(_embed_partition.__doc__ or ""),
    )
    def embeddings(
        context: dg.AssetExecutionContext,
        config: EmbeddingsConfig,
        postgres: PostgresResource,
        embedder: EmbedderResource,
    ) -> dg.MaterializeResult:
        return _embed_partition(context, config, postgres, embedder)

    return embeddings


embeddings = build_embeddings(embedding_models)


def embed_log_line(subset: SubsetReport) -> str:
    """The run log's last line of a pass: ``usem3 (every note): 12 embedded, 1,122 reused,
    12 vectors written``; the vectors replaced first only when ``force`` replaced some (a
    ``0 replaced`` in every ordinary run left the reader wondering what it was about)."""
    report = subset.embed
    replaced = f"{counted(subset.replaced, 'vector')} replaced, " if subset.replaced else ""
    return (
        f"{report.model} ({subset.selection}): {replaced}{report.texts_embedded:,} embedded,"
        f" {report.reused:,} reused, {counted(report.embedded, 'vector')} written"
    )


def _subset_metadata(subset: SubsetReport) -> dict[str, dg.MetadataValue]:
    return {
        "selection": dg.MetadataValue.text(subset.selection),
        "replaced": dg.MetadataValue.int(subset.replaced),
        "selected_notes": rows_table(("file",), [(path,) for path in subset.documents]),
    }


def _in_parts(report: EmbedReport) -> str:
    """How many vectors the texts embedded took, when more than one each: a text over the
    model's input limit is embedded in parts. The summary counts texts, as the next run's
    ``already has a vector for N texts`` does, so the two runs agree on one figure."""
    if report.embedded == report.texts_embedded:
        return ""
    return f" ({report.embedded:,} vectors: long texts go in parts)"


def _embed_metadata(report: EmbedReport) -> dict[str, dg.MetadataValue]:
    # Model time only: loading the model is timed on its own (model_load_seconds), except in
    # worker processes, which load their own copies while the pass waits for its first batches.
    rate = report.embedded / report.seconds_in_model if report.seconds_in_model else 0.0
    if report.embedded:
        summary = f"{report.texts_embedded:,} embedded, {report.reused:,} reused" + _in_parts(
            report
        )
    else:
        reused = counted(report.reused, "text")
        summary = f"Nothing to embed: {report.model} already has a vector for {reused}"
    return {
        "summary": dg.MetadataValue.text(
            summary + (f", {report.failed_texts:,} failed" if report.failed_texts else "")
        ),
        "failed": dg.MetadataValue.int(report.failed_texts),
        "model": dg.MetadataValue.text(report.model),
        "embedded": dg.MetadataValue.int(report.texts_embedded),
        "vectors_written": dg.MetadataValue.int(report.embedded),
        "reused": dg.MetadataValue.int(report.reused),
        "chunk_texts": dg.MetadataValue.int(report.total),
        "batches": dg.MetadataValue.int(report.batches),
        "passages_per_second": dg.MetadataValue.float(round(rate, 1)),
        "model_load_seconds": dg.MetadataValue.float(round(report.seconds_loading, 2)),
        "model_processes": dg.MetadataValue.int(report.processes),
        "seconds": dg.MetadataValue.float(round(report.seconds_total, 2)),
        "index_build_seconds": dg.MetadataValue.float(round(report.seconds_index, 2)),
        "complete": dg.MetadataValue.bool(report.complete),
        "active_for_search": dg.MetadataValue.bool(report.active),
    }
