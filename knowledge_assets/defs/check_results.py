"""One shape for every check that fails by listing offending rows (files, vectors, chunks)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import dagster as dg
import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.defs.metadata import rows_table
from knowledge_assets.resources import PostgresResource

Rows = Sequence[Sequence[object]]


def described(about: str, fix: str) -> str:
    """A check's description in the UI: what it checks, then what to do when it fails."""
    return f"{about.strip()} Fix: {fix}."


def failed(summary: str, fix: str) -> str:
    """A failed check's result: what is wrong and what to do, on the line the UI shows first
    (the check's page and the run log), not only in the description further down."""
    return f"{summary}; fix: {fix}"


def listing_result(
    rows: Rows,
    *,
    noun: str,
    problem: str,
    fix: str,
    count_key: str,
    table_key: str,
    columns: Sequence[str],
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    """Pass when ``rows`` is empty; else fail with "N <noun(s)> <problem>; fix: <fix>" (``1
    vector without a chunk``, ``2 vectors ...``) and the rows as a table."""
    return dg.AssetCheckResult(
        passed=not rows,
        severity=severity,
        description=failed(f"{counted(len(rows), noun)} {problem}", fix) if rows else None,
        metadata={
            count_key: dg.MetadataValue.int(len(rows)),
            table_key: rows_table(columns, rows),
        },
    )


def listing_check(
    *,
    asset: str,
    name: str,
    noun: str,
    problem: str,
    fix: str,
    count_key: str,
    table_key: str,
    columns: Sequence[str],
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
    blocking: bool = False,
) -> Callable[[Callable[[psycopg.Connection], Rows]], dg.AssetChecksDefinition]:
    """Turn a query for the offending rows into a check on the store that lists them.

    Such checks differ only in their query and the words of their result, so the decorated
    function is just the query; its docstring, followed by ``fix``, is the check's description
    in the UI, and a failed result ends with ``fix`` too.
    """

    def decorate(query: Callable[[psycopg.Connection], Rows]) -> dg.AssetChecksDefinition:
        about = described(inspect.getdoc(query) or "", fix)

        @dg.asset_check(asset=asset, name=name, description=about, blocking=blocking)
        def check(postgres: PostgresResource) -> dg.AssetCheckResult:
            with postgres.connect() as conn:
                rows = query(conn)
            return listing_result(
                rows,
                noun=noun,
                problem=problem,
                fix=fix,
                count_key=count_key,
                table_key=table_key,
                columns=columns,
                severity=severity,
            )

        return check

    return decorate
