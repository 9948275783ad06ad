"""Ingest assets: ``raw_docs`` (every file of the source) and ``latest_docs`` (newest versions)."""

import inspect
from collections.abc import Sequence

import dagster as dg
from pydantic import Field

from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.core.ingest.conventions import bad_date
from knowledge_assets.core.ingest.deletion_guard import setting
from knowledge_assets.core.ingest.latest import LatestReport, merge_reports, refresh_latest
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.folder_links import is_symlinked
from knowledge_assets.core.sources.registry import remove_undeclared
from knowledge_assets.defs.automation import UPSTREAM_CHANGED
from knowledge_assets.defs.metadata import grouped_table, rows_table, table_metadata
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from knowledge_assets.setup_checks import check_setup


class RawDocsConfig(dg.Config):
    """How much of the source a sync reads."""

    full: bool = Field(
        default=False,
        description="Compare the whole source with the store, ignoring the last synced head "
        "(the nightly repair does this).",
    )
    since_sha: str | None = Field(
        default=None,
        description="Read only what changed since this head, when the store has recorded no "
        "synced head of its own (the head it recorded always wins: it is what the store holds).",
    )


@dg.asset(key="raw_docs", group_name="ingest", kinds={"postgres"}, tags={"layer": "raw"})
def raw_docs(
    context: dg.AssetExecutionContext,
    config: RawDocsConfig,
    postgres: PostgresResource,
    vault: VaultResource,
    embedder: EmbedderResource,  # unused here: required so its settings are checked first
) -> dg.MaterializeResult:
    """Every Markdown file of the source, stored with its frontmatter, body and content hash
    (table `raw.docs_local` for a local folder, `raw.docs_github` for a GitHub repository).

    A sync reads only the files that changed since the last one. A file that cannot be read or
    parsed is kept out with its reason (the materialization's rejected_files, and
    `knowledge-assets status`), and everything else still lands."""
    check_setup(context, postgres)
    source = vault.source()
    with postgres.writer(context.log) as conn:
        report = sync_source(
            conn, source, full=config.full, since=config.since_sha,
            max_bytes=vault.max_file_bytes,
            progress=Progress("raw_docs", "files", log=context.log.info),
        )  # fmt: skip
        table = table_metadata(conn, f"raw.{source.table}")
    if not report.wrote_anything:
        context.log.info("source unchanged since %s: nothing written", report.head[:12])
    log_report(context, report, source.table)
    return dg.MaterializeResult(metadata=table | raw_metadata(report, source.table))


# Files named in the one warning about files still rejected since an earlier run.
NAMED_FILES = 3


def log_report(context: dg.AssetExecutionContext, report: SyncReport, table: str) -> None:
    """A warning per file or folder rejected in this sync, one naming the first few files still
    rejected since an earlier run (not read again: nothing changed), and one when the source
    holds no note at all (a wrong folder, prefix or branch looks just like that, and search
    would find nothing), naming the settings of ``table``'s source to check."""
    for path, reason in report.rejected + report.unreadable:
        context.log.warning("rejected %s: %s", path, reason)
    if report.still_rejected:
        context.log.warning("%s", still_rejected_line(report))
    for path, warning in report.warnings:
        context.log.warning("%s: %s", path, warning)
    if report.still_warned:
        context.log.warning("%s", still_warned_line(report))
    if holds_no_notes(report):
        context.log.warning("%s holds no notes: check %s", report.source, setting(table))


def holds_no_notes(report: SyncReport) -> bool:
    """Whether the sync found no note at all (every note moved to a new folder is renamed)."""
    return not (
        report.new or report.changed or report.unchanged or report.renamed or report.rejected_files
    )


def raw_metadata(report: SyncReport, table: str) -> dict[str, dg.MetadataValue]:
    return {
        "summary": dg.MetadataValue.text(_summary(report)),
        "source": dg.MetadataValue.text(report.source),
        "table": dg.MetadataValue.text(f"raw.{table}"),
        "head_sha": dg.MetadataValue.text(report.head),
        "base_sha": dg.MetadataValue.text(report.base or "(full comparison)"),
        "new": dg.MetadataValue.int(len(report.new)),
        "changed": dg.MetadataValue.int(len(report.changed)),
        "unchanged": dg.MetadataValue.int(report.unchanged),
        "deleted": dg.MetadataValue.int(len(report.deleted)),
        "renamed": dg.MetadataValue.int(len(report.renamed)),
        "rejected": dg.MetadataValue.int(report.rejected_files),
        "rejected_unchanged": dg.MetadataValue.int(len(report.still_rejected)),
        "files_read": dg.MetadataValue.int(report.fetched),
        "unreadable_folders": dg.MetadataValue.int(_unreadable_folders(report)),
        "symlinked_folders": dg.MetadataValue.int(_symlinked_folders(report)),
        "warned_notes": dg.MetadataValue.int(_warned(report)),
        "note_warnings": rows_table(
            ("file", "warning"),
            report.warnings + [(path, "(since an earlier run)") for path in report.still_warned],
        ),
        "rejected_files": rows_table(
            ("file", "reason"), report.rejected + report.unreadable + report.still_rejected
        ),
        "what_changed": grouped_table(
            {
                "new": report.new,
                "changed": report.changed,
                "deleted": report.deleted,
                "renamed": [f"{old} → {new}" for old, new in report.renamed],
            }
        ),
    }


def _first_few(paths: Sequence[str]) -> str:
    """``a.md, b.md, c.md and 5 more``."""
    more = len(paths) - NAMED_FILES
    return ", ".join(paths[:NAMED_FILES]) + (f" and {more:,} more" if more > 0 else "")


def still_rejected_line(report: SyncReport) -> str:
    """``8 files still rejected, unchanged since the last run: a.md, b.md, c.md and 5 more``."""
    paths = [path for path, _ in report.still_rejected]
    return (
        f"{counted(len(paths), 'file')} still rejected, unchanged since the last run:"
        f" {_first_few(paths)} (`knowledge-assets status` lists them with their reasons)"
    )


def still_warned_line(report: SyncReport) -> str:
    """``2 notes still have warnings, unchanged since the last run: a.md, b.md``."""
    paths = report.still_warned
    have = noun_for(len(paths), "has", "have")
    return (
        f"{counted(len(paths), 'note')} still {have} warnings, unchanged since the last run:"
        f" {_first_few(paths)} (`knowledge-assets get PATH` shows them)"
    )


def _summary(report: SyncReport) -> str:
    still, warned = len(report.still_rejected), _warned(report)
    linked, folders = _symlinked_folders(report), _unreadable_folders(report)
    if not report.wrote_anything:
        left = [f"{counted(still, 'file')} still rejected"] if still else []
        left += [f"{counted(warned, 'note')} with warnings"] if warned else []
        return "No changes: nothing written" + (f"; {', '.join(left)}." if left else ".")
    rejected = (
        f"{report.rejected_files:,} still rejected ({still:,} unchanged since the last run)"
        if still
        else f"{len(report.rejected):,} rejected"
    )
    return (
        f"{len(report.new):,} new, {len(report.changed):,} changed, {report.unchanged:,} unchanged,"
        f" {len(report.deleted):,} deleted, {len(report.renamed):,} renamed, {rejected}"
        + (f", {counted(len(report.forgotten), 'rejected file')} gone" if report.forgotten else "")
        + (f", {counted(folders, 'unreadable folder')} kept" if folders else "")
        + (f", {counted(linked, 'symlinked folder')} not followed" if linked else "")
        + "".join(f", {path} unreadable" for path in _unreadable_files(report))
        + (f", {counted(warned, 'note')} with warnings" if warned else "")
    )


def _unreadable_folders(report: SyncReport) -> int:
    """The folders that could not be listed (a settings file that could not be read is
    listed beside them, but is no folder; a symlinked one was never tried)."""
    return sum(1 for path, why in report.unreadable if path.endswith("/") and not is_symlinked(why))


def _symlinked_folders(report: SyncReport) -> int:
    """Of the folders recorded, the symlinked ones: not followed, so not unreadable (notes
    stored under one's path before it was a link are kept when it leads out of the vault)."""
    return sum(1 for path, why in report.unreadable if path.endswith("/") and is_symlinked(why))


def _unreadable_files(report: SyncReport) -> list[str]:
    """Files the source reads for itself that could not be read (``.obsidian/app.json``)."""
    return [path for path, _ in report.unreadable if not path.endswith("/")]


def _warned(report: SyncReport) -> int:
    """The notes stored with a warning: read in this sync or before."""
    return len({path for path, _ in report.warnings}) + len(report.still_warned)


def _latest_docs(
    context: dg.AssetExecutionContext, postgres: PostgresResource, vault: VaultResource
) -> dg.MaterializeResult:
    """The newest version of every note, in `rag.latest_docs`: this is what gets chunked,
    embedded and searched.

    A note named in another note's `previous` frontmatter is superseded by it. Drafts
    (`draft: true` or `published: false`) and notes without a body are left out. Dates come
    from `created`/`updated`, else `createdAt`/`updatedAt`, else `date`; a value that is not a
    date is listed in the metadata, never fatal. Notes of a declared source that is no longer
    declared are removed, and the run lists them."""
    check_setup(context, postgres)
    tables = source_tables(context, vault)
    conventions = vault.conventions()
    reports: list[LatestReport] = []
    with postgres.writer(context.log) as conn:
        removals = remove_undeclared(conn, tables)
        for table in tables:
            if table == vault_table(vault) or store.table_exists(conn, table):
                reports.append(refresh_latest(conn, table, conventions))
        stored = table_metadata(conn, "rag.latest_docs")
    for removal in removals:
        context.log.warning(
            "source %s is no longer declared: removed %s and %s",
            removal.name, counted(removal.notes, "note"), counted(removal.files, "file"),
        )  # fmt: skip
    for cycle in (c for report in reports for c in report.plan.cycles):
        context.log.warning("cycle in `previous`: %s", " -> ".join(cycle))
    for path, key, value in (d for report in reports for d in report.plan.bad_dates):
        context.log.warning("%s: %s", path, bad_date(key, value))
    metadata = stored | _latest_metadata(merge_reports(reports))
    if removals:
        metadata["removed_sources"] = rows_table(
            ("source", "notes removed", "files removed"),
            [(r.name, r.notes, r.files) for r in removals],
        )
    return dg.MaterializeResult(metadata=metadata)


def build_latest_docs(sources: Sequence[str] = ()) -> dg.AssetsDefinition:
    """``latest_docs`` fed by the environment's source and the declared ``sources`` (asset keys
    ``raw_docs_<name>``; see :func:`knowledge_assets.definitions.wire_sources`)."""
    return dg.asset(
        key="latest_docs",
        group_name="ingest",
        kinds={"postgres"},
        deps=["raw_docs", *sources],
        tags={"layer": "curated"},
        automation_condition=UPSTREAM_CHANGED,
        description=inspect.cleandoc(_latest_docs.__doc__ or ""),  # as @asset does with a docstring
    )(_latest_docs)


latest_docs = build_latest_docs()


def vault_table(vault: VaultResource) -> str:
    return "docs_github" if vault.kind == "github" else "docs_local"


def source_tables(context: dg.AssetExecutionContext, vault: VaultResource) -> list[str]:
    """The raw tables feeding this run: the environment's source (``raw_docs``) and each
    declared source (``raw_docs_<name>``), from the asset's dependencies."""
    keys = {
        dep.asset_key.to_user_string() for spec in context.assets_def.specs for dep in spec.deps
    }
    tables = [vault_table(vault)] if "raw_docs" in keys else []
    return tables + sorted(key.removeprefix("raw_") for key in keys if key.startswith("raw_docs_"))


def _latest_metadata(report: LatestReport) -> dict[str, dg.MetadataValue]:
    plan = report.plan
    summary = (
        f"{counted(len(plan.kept), 'note')} to search; left out: {len(plan.superseded):,}"
        f" superseded, {counted(len(plan.drafts), 'draft')}, {len(plan.empty):,} without a body"
    )
    return {
        "summary": dg.MetadataValue.text(summary),
        "latest": dg.MetadataValue.int(len(plan.kept)),
        "superseded": dg.MetadataValue.int(len(plan.superseded)),
        "drafts": dg.MetadataValue.int(len(plan.drafts)),
        "empty": dg.MetadataValue.int(len(plan.empty)),
        "cycles": dg.MetadataValue.int(len(plan.cycles)),
        "unparseable_dates": dg.MetadataValue.int(len(plan.bad_dates)),
        "rows_written": dg.MetadataValue.int(report.upserted),
        "rows_removed": dg.MetadataValue.int(report.removed),
        "bad_dates": rows_table(("file", "key", "value"), plan.bad_dates),
        "superseded_versions": rows_table(
            ("old version", "superseded by"), sorted(plan.superseded.items())
        ),
        "excluded": grouped_table(
            {
                "draft": plan.drafts,
                "no body": plan.empty,
                "cycle": [" → ".join(c) for c in plan.cycles],
            },
            columns=("reason", "file"),
        ),
        # Kept and searched: only the version it names is not found, so nothing is superseded.
        "previous_not_found": rows_table(("file", "previous"), plan.unresolved),
    }
