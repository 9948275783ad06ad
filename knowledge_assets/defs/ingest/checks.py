"""Ingest checks: the store holds what the source holds, and versions form no cycle.

Each failing check names the offending files in its metadata. The SQL lives in
:mod:`knowledge_assets.core.index.checks_sql`.
"""

from __future__ import annotations

import dagster as dg
import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.core.index import checks_sql
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.defs.check_results import Rows, described, failed, listing_check
from knowledge_assets.defs.metadata import grouped_table, rows_table
from knowledge_assets.resources import PostgresResource, VaultResource

# A full sync compares the whole source with the store, whatever the last synced head says.
RESYNC = "materialize embeddings_job with raw_docs config `full: true` (the nightly schedule does)"


@dg.asset_check(
    asset="raw_docs",
    name="raw_docs_match_source",
    description=described(
        "The store holds what the source holds: the last synced head is the source's head (a"
        " commit, or a fingerprint of a plain folder) and every note is stored at its current"
        " version. Lists the files missing, out of date or gone from the source; fails when the"
        " source cannot be reached. Reads the source's file listing, never the files themselves.",
        RESYNC,
    ),
)
def raw_docs_match_source(postgres: PostgresResource, vault: VaultResource) -> dg.AssetCheckResult:
    """The store holds every note of the source at its current version, and nothing else."""
    source = vault.source()
    try:
        with postgres.connect() as conn:
            drift = checks_sql.source_drift(conn, source)
    except SourceError as exc:
        return dg.AssetCheckResult(passed=False, description=f"source unreachable: {exc}")
    return drift_result(drift, RESYNC)


def drift_result(drift: checks_sql.SourceDrift, fix: str) -> dg.AssetCheckResult:
    """Whether the store matches its source, with the files that differ listed by problem."""
    heads = [("source head", drift.head), ("last synced", drift.synced_head or "(never)")]
    return dg.AssetCheckResult(
        passed=drift.in_sync,
        description=_describe(drift, fix),
        metadata={
            "source_head": dg.MetadataValue.text(drift.head),
            "synced_head": dg.MetadataValue.text(drift.synced_head or "(never)"),
            "source_files": dg.MetadataValue.int(drift.source_files),
            "stored_files": dg.MetadataValue.int(drift.stored_files),
            "heads": rows_table(("which", "head"), heads),
            "files": grouped_table(
                {
                    "in the source, not stored": drift.missing,
                    "changed in the source since the sync": drift.stale,
                    "stored, but gone from the source": drift.extra,
                    "cannot be read (stored notes kept)": drift.unreadable,
                },
                columns=("problem", "file"),
            ),
        },
    )


def _describe(drift: checks_sql.SourceDrift, fix: str) -> str:
    if drift.in_sync:
        return f"{counted(drift.stored_files, 'note')}, synced at {drift.head[:12]}"
    return failed(
        f"source at {drift.head[:12]}, last synced {(drift.synced_head or 'never')[:12]}: "
        f"{len(drift.missing):,} missing, {len(drift.stale):,} stale, {len(drift.extra):,} extra"
        + (f", {len(drift.unreadable):,} unreadable" if drift.unreadable else ""),
        fix,
    )


@listing_check(
    asset="latest_docs",
    name="previous_has_no_cycles",
    noun="note",
    problem="superseded in a `previous` cycle",
    fix="correct the `previous` frontmatter of the listed files",
    count_key="in_cycle",
    table_key="files",
    columns=("table", "file", "superseded by"),
    severity=dg.AssetCheckSeverity.WARN,
)
def previous_has_no_cycles(conn: psycopg.Connection) -> Rows:
    """No notes name each other in their `previous` frontmatter (a cycle: a supersedes b,
    b supersedes a). The newest version is kept meanwhile, so this is a warning."""
    return checks_sql.supersede_cycles(conn)
