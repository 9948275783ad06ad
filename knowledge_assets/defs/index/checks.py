"""Index checks: vectors cover the chunks search reads, nothing is left over, sizes fit.

Each failing check names the offending files in its metadata (a table in the UI). The coverage
and dimension checks block: when they fail, the run fails and nothing downstream of
``embeddings`` runs on vectors search cannot use.
The SQL lives in :mod:`knowledge_assets.core.index.checks_sql`.
"""

# No `from __future__ import annotations`: Dagster reads the check's context annotation as a
# type, and refuses it as a string.
import dagster as dg
import psycopg

from knowledge_assets.core import failures
from knowledge_assets.core.counts import counted
from knowledge_assets.core.index import checks_sql, models
from knowledge_assets.defs.check_results import Rows, described, failed, listing_check
from knowledge_assets.defs.metadata import rows_table
from knowledge_assets.resources import PostgresResource


@dg.asset_check(
    asset="embeddings",
    name="active_model_covers_every_chunk",
    blocking=True,
    description=described(
        "Every section of the latest notes has a vector of the model search uses; otherwise"
        " those sections cannot be found by meaning. A run of another model's partition (a"
        " backfill) is checked for that model's vectors.",
        "materialize the active model's partition of embeddings",
    ),
)
def active_model_covers_every_chunk(
    context: dg.AssetCheckExecutionContext, postgres: PostgresResource
) -> dg.AssetCheckResult:
    """Every chunk of the latest notes has a vector of the active model (of the run's model,
    in a run of another model's partition)."""
    with postgres.connect() as conn:
        active = models.active_model(conn)
        # A backfill of a new model passes or fails on its own vectors, not on the notes the
        # search model has yet to embed (after `update --no-embeddings`, say).
        own = models.stored_name(conn, context.partition_key) if context.has_partition_key else None
        model = own or active
        missing = checks_sql.chunks_without_vectors(conn, model)
    chunks = sum(count for _, count in missing)
    name = model or "(no active model)"
    summary = failed(
        f"no vector of {name} for {counted(chunks, 'chunk')} in {counted(len(missing), 'note')}",
        f"materialize embeddings for model {model}" if model else "materialize embeddings",
    )
    return dg.AssetCheckResult(
        passed=not missing,
        description=summary if missing else f"every chunk has a vector of {name}",
        metadata={
            "active_model": dg.MetadataValue.text(active or "(none)"),
            "checked_model": dg.MetadataValue.text(name),
            "chunks_missing": dg.MetadataValue.int(chunks),
            "files": rows_table(("file", "chunks without a vector"), missing),
        },
    )


@listing_check(
    asset="embeddings",
    name="no_orphaned_embeddings",
    noun="vector",
    problem="without a chunk",
    fix="run `knowledge-assets update --force` (or materialize chunks with force: true), which removes them",
    count_key="orphans",
    table_key="vectors",
    columns=("model", "text hash"),
)
def no_orphaned_embeddings(conn: psycopg.Connection) -> Rows:
    """No vector, of any model, is left over from a section that no longer exists."""
    return checks_sql.orphan_embeddings(conn)


@listing_check(
    asset="embeddings",
    name="vectors_match_model_dimension",
    noun="vector",
    problem="of the wrong dimension",
    fix="re-embed the listed notes with force, or register the model under a new name",
    count_key="wrong_dimension",
    table_key="files",
    columns=("file", "model", "vector dims", "model dims"),
    blocking=True,
)
def vectors_match_model_dimension(conn: psycopg.Connection) -> Rows:
    """Every vector has the size registered for its model; a mismatch breaks that model's
    vector index and its searches."""
    return checks_sql.wrong_dimension_vectors(conn)


@listing_check(
    asset="chunks",
    name="chunks_fit_model_input_limit",
    noun="chunk",
    problem="over a model's input limit",
    fix="split the listed sections with more `###` headings",
    count_key="oversized",
    table_key="chunks",
    columns=("file", "chunk", "heading", "tokens (est.)", "model", "limit"),
    severity=dg.AssetCheckSeverity.WARN,
)
def chunks_fit_model_input_limit(conn: psycopg.Connection) -> Rows:
    """No section is longer than a registered model's input limit. A warning: that model
    embeds such a section in several parts and search scores it by its best part, so it is
    still found, but a part carries less context than the whole section."""
    return checks_sql.oversized_chunks(conn)


@listing_check(
    asset="chunks",
    name="every_note_indexed",
    noun="note",
    problem="not indexed",
    fix="correct the listed notes or the cause named; the next run tries them again",
    count_key="failed_notes",
    table_key="files",
    columns=("file", "step", "reason"),
)
def every_note_indexed(conn: psycopg.Connection) -> Rows:
    """Every latest note could be chunked and its vectors stored. A note that failed (listed
    here with the step and the reason) did not stop the others; its previous chunks, if any,
    are still searched."""
    return failures.listed(conn)
