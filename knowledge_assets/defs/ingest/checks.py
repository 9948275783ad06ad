"""Ingest checks: the store holds what the source holds, and versions form no cycle.

Each failing check names the offending files in its metadata. The SQL lives in
:mod:`knowledge_assets.core.checks_sql`.
"""

from __future__ import annotations

import dagster as dg

from knowledge_assets.core import checks_sql
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.defs.check_results import listing_result
from knowledge_assets.defs.metadata import md_table, path_list
from knowledge_assets.resources import PostgresResource, VaultResource


@dg.asset_check(asset="raw_docs", name="raw_docs_match_source")
def raw_docs_match_source(postgres: PostgresResource, vault: VaultResource) -> dg.AssetCheckResult:
    """``raw_docs`` matches the source: the head last synced is the source's head (commit SHA,
    or tree fingerprint for a plain folder), and every note is stored at its current version.
    Lists the files missing, stale or no longer in the source. Reads a listing of the source,
    never file contents; fails (without raising) when the source is unreachable."""
    source = vault.source()
    try:
        with postgres.connect() as conn:
            drift = checks_sql.source_drift(conn, source)
    except SourceError as exc:
        return dg.AssetCheckResult(passed=False, description=f"source unreachable: {exc}")
    heads = [("source head", drift.head), ("last synced", drift.synced_head or "(never)")]
    return dg.AssetCheckResult(
        passed=drift.in_sync,
        description=_describe(drift),
        metadata={
            "source_head": dg.MetadataValue.text(drift.head),
            "synced_head": dg.MetadataValue.text(drift.synced_head or "(never)"),
            "source_files": dg.MetadataValue.int(drift.source_files),
            "stored_files": dg.MetadataValue.int(drift.stored_files),
            "heads": dg.MetadataValue.md(md_table(("", "head"), heads)),
            "files": dg.MetadataValue.md(
                path_list(
                    {
                        "in the source, not stored": drift.missing,
                        "changed in the source since the sync": drift.stale,
                        "stored, but gone from the source": drift.extra,
                    }
                )
            ),
        },
    )


def _describe(drift: checks_sql.SourceDrift) -> str:
    if drift.in_sync:
        return f"{drift.stored_files} notes, synced at {drift.head[:12]}"
    return (
        f"source at {drift.head[:12]}, last synced {(drift.synced_head or 'never')[:12]}: "
        f"{len(drift.missing)} missing, {len(drift.stale)} stale, {len(drift.extra)} extra"
    )


@dg.asset_check(asset="latest_docs", name="previous_has_no_cycles")
def previous_has_no_cycles(postgres: PostgresResource) -> dg.AssetCheckResult:
    """No note is caught in a cycle of ``previous`` links (a superseded b superseded a).
    ``latest_docs`` breaks a cycle by keeping the highest version, so this is a warning: fix the
    frontmatter of the listed files."""
    with postgres.connect() as conn:
        cycles = checks_sql.supersede_cycles(conn)
    return listing_result(
        cycles,
        problem="notes are in a `previous` cycle",
        count_key="in_cycle",
        table_key="files",
        columns=("table", "file", "superseded by"),
        severity=dg.AssetCheckSeverity.WARN,
    )
