"""The definitions of one declared source (see :mod:`knowledge_assets.components.source`): its
``raw_docs_<name>`` asset, its checks, its sensor and the job the sensor starts.

No ``from __future__ import annotations`` here: Dagster reads the asset's config class from its
annotations at definition time."""

from collections.abc import Callable
from typing import Any

import dagster as dg
import psycopg

from knowledge_assets.core.index import checks_sql
from knowledge_assets.core.ingest.sync import store, sync_source
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.base import Source, SourceError
from knowledge_assets.core.sources.registry import SourceProfile, build_source, register
from knowledge_assets.defs.automation_status import sensor_status
from knowledge_assets.defs.check_results import Rows, described, listing_check
from knowledge_assets.defs.index.partitions import search_partition
from knowledge_assets.defs.ingest.assets import RawDocsConfig, log_report, raw_metadata
from knowledge_assets.defs.ingest.checks import drift_result
from knowledge_assets.defs.ingest.sensors import (
    HEAD_TAG,
    PREVIOUS_HEAD_TAG,
    TRIGGER_TAG,
    tick_run_key,
)
from knowledge_assets.resources import PostgresResource
from knowledge_assets.setup_checks import check_setup
from knowledge_assets.stale_runs import fail_dead_runs_in_tick

SOURCE_TAG = "knowledge-assets/source"
DOWNSTREAM = ("latest_docs", "chunks", "embeddings")


def source_definitions(
    profile: SourceProfile, settings: Callable[[], dict[str, str]], interval_s: int
) -> dg.Definitions:
    """Asset, checks, job and sensor of one source. ``settings`` is read at run time only, so
    a token never sits in the definitions."""

    def source() -> Source:
        return build_source(profile, settings())

    asset = _raw_asset(profile, source)
    job = dg.define_asset_job(
        f"{profile.name}_sync_job",
        selection=dg.AssetSelection.assets(profile.asset_key, *DOWNSTREAM),
        description=f"Sync the {profile.name} source, then refresh latest_docs, chunks and the "
        "embeddings of the partition's model.",
    )
    return dg.Definitions(
        assets=[asset],
        asset_checks=_checks(profile, source),
        jobs=[job],
        sensors=[_sensor(profile, source, job, interval_s)],
    )


def _raw_asset(profile: SourceProfile, source: Callable[[], Source]) -> dg.AssetsDefinition:
    @dg.asset(
        key=profile.asset_key,
        group_name="ingest",
        kinds={"postgres"},
        tags={SOURCE_TAG: profile.name},
        metadata={
            "dagster/table_name": f"raw.{profile.table}",
            "source_kind": profile.kind,
            "type": profile.doc_type,
            "content_type": profile.content_type,
            "chunking": profile.chunking.strategy,
        },
        description=(
            f"Every file of the {profile.name} source ({profile.kind}: {profile.content_type}, "
            f"{profile.doc_type}) in raw.{profile.table}. Only changed files are read; files "
            "that cannot be parsed are listed with the reason."
        ),
    )
    def _asset(
        context: dg.AssetExecutionContext, config: RawDocsConfig, postgres: PostgresResource
    ) -> dg.MaterializeResult:
        check_setup(context, postgres)
        try:
            src = source()
            with postgres.writer(context.log) as conn:
                register(conn, profile)
                conn.commit()
                progress = Progress("raw_docs", "files", log=context.log.info)
                report = sync_source(
                    conn, src, full=config.full, since=config.since_sha, progress=progress
                )
        except SourceError as exc:
            return _unsynced(context, profile, exc)
        log_report(context, report, src.table)
        return dg.MaterializeResult(metadata=raw_metadata(report, src.table))

    return _asset


def _unsynced(
    context: dg.AssetExecutionContext, profile: SourceProfile, exc: SourceError
) -> dg.MaterializeResult:
    """A declared source that cannot be read (a folder gone, GitHub down) keeps its notes and
    holds back no other source: failing its step would stop the whole run, so the notes of the
    sources that could be read would wait for this one. Its check and the warning say why."""
    context.log.warning("%s was not synced, its stored notes are kept: %s", profile.name, exc)
    return dg.MaterializeResult(
        metadata={
            "summary": dg.MetadataValue.text(f"Not synced, its stored notes kept: {exc}"),
            "source": dg.MetadataValue.text(profile.name),
            "table": dg.MetadataValue.text(f"raw.{profile.table}"),
        }
    )


def _checks(profile: SourceProfile, source: Callable[[], Source]) -> list[dg.AssetChecksDefinition]:
    resync = f"materialize {profile.name}_sync_job with {profile.asset_key} config `full: true`"

    @dg.asset_check(
        asset=profile.asset_key,
        name="matches_source",
        description=described(
            "The store holds every file of the source at its current version, and nothing else;"
            " the files missing, out of date or gone from the source are listed.",
            resync,
        ),
    )
    def matches_source(postgres: PostgresResource) -> dg.AssetCheckResult:
        """The store holds every file of the source at its current version, and nothing else."""
        try:
            with postgres.connect() as conn:
                drift = checks_sql.source_drift(conn, source())
        except SourceError as exc:
            return dg.AssetCheckResult(passed=False, description=f"source unreachable: {exc}")
        except psycopg.errors.UndefinedTable:
            return dg.AssetCheckResult(
                passed=False, description=f"never synced; fix: materialize {profile.asset_key}"
            )
        return drift_result(drift, resync)

    @listing_check(
        asset=profile.asset_key,
        name="no_rejected_files",
        noun="file",
        problem="rejected",
        fix="correct the listed files: a file is read again once it changes",
        count_key="rejected",
        table_key="files",
        columns=("file", "reason"),
        severity=dg.AssetCheckSeverity.WARN,
    )
    def no_rejected_files(conn: psycopg.Connection) -> Rows:
        """Every file of the source could be read (a warning: the others still landed)."""
        return store.rejections(conn, profile.table)

    return [matches_source, no_rejected_files]


def _sensor(
    profile: SourceProfile,
    source: Callable[[], Source],
    job: Any,
    interval_s: int,
) -> dg.SensorDefinition:
    @dg.sensor(
        name=f"{profile.name}_source_changed_sensor",
        job=job,
        minimum_interval_seconds=interval_s,
        description=f"Syncs the {profile.name} source and re-indexes when its head moves "
        "(a commit, or a file saved in the folder).",
        default_status=sensor_status(),
    )
    def _sensor_fn(
        context: dg.SensorEvaluationContext, postgres: PostgresResource
    ) -> dg.SensorResult | dg.SkipReason:
        fail_dead_runs_in_tick(context)
        previous = context.cursor
        try:
            src = source()
            head = src.head()
        except (SourceError, OSError) as exc:
            return dg.SkipReason(f"source unreachable, retrying next tick: {exc}")
        if head == previous:
            return dg.SkipReason(f"source unchanged at {head[:12]}")
        request = dg.RunRequest(
            run_key=f"{profile.name}:{tick_run_key(context, head)}",
            partition_key=search_partition(postgres),
            run_config={"ops": {profile.asset_key: {"config": {"full": False}}}},
            tags={HEAD_TAG: head, PREVIOUS_HEAD_TAG: previous or "", TRIGGER_TAG: "source-changed"},
        )
        return dg.SensorResult(run_requests=[request], cursor=head)

    return _sensor_fn
