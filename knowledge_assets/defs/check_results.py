"""One shape for every check that fails by listing offending rows (files, vectors, chunks)."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from knowledge_assets.defs.metadata import rows_table


def listing_result(
    rows: Sequence[Sequence[object]],
    *,
    problem: str,
    count_key: str,
    table_key: str,
    columns: Sequence[str],
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    """Pass when ``rows`` is empty; else fail with "N <problem>" and the rows as a table."""
    return dg.AssetCheckResult(
        passed=not rows,
        severity=severity,
        description=f"{len(rows)} {problem}" if rows else None,
        metadata={
            count_key: dg.MetadataValue.int(len(rows)),
            table_key: rows_table(columns, rows),
        },
    )
