"""Ingest sensors: sync and re-index as soon as the source's head moves.

``source_changed_sensor`` reads the source head every ``MIN_INTERVAL_S`` seconds (at most; the
daemon may tick later): the head commit SHA of the configured GitHub branch, or for a local vault
(a git work tree too: a save need not be committed) a fingerprint of every note's path, size
and modification time. The head is cheap to read (one REST call, or one directory walk without
reading files), so a short interval costs little; 30 s keeps an edit searchable within a minute
without hammering GitHub's rate limit (120 calls an hour).
"""

from __future__ import annotations

import dagster as dg

from knowledge_assets.core.ingest import store
from knowledge_assets.core.sources.base import SourceError
from knowledge_assets.defs.automation_status import sensor_status
from knowledge_assets.defs.index.jobs import embeddings_job
from knowledge_assets.defs.index.partitions import search_partition
from knowledge_assets.resources import PostgresResource, VaultResource
from knowledge_assets.stale_runs import fail_dead_runs_in_tick

MIN_INTERVAL_S = 30
HEAD_TAG = "knowledge-assets/head"
PREVIOUS_HEAD_TAG = "knowledge-assets/previous-head"
TRIGGER_TAG = "knowledge-assets/trigger"


@dg.sensor(
    name="source_changed_sensor",
    job=embeddings_job,
    minimum_interval_seconds=MIN_INTERVAL_S,
    description="Every 30 seconds, looks at the source's head: the branch's latest commit on "
    "GitHub, or a fingerprint of the file names, sizes and times of a local vault (saved notes "
    "count, committed or not). When it moved, runs embeddings_job for the search model, "
    "reading only the files that changed. When the source cannot be reached, the tick is "
    "skipped and retried.",
    default_status=sensor_status(),
)
def source_changed_sensor(
    context: dg.SensorEvaluationContext, vault: VaultResource, postgres: PostgresResource
) -> dg.SensorResult | dg.SkipReason:
    """Request a sync of the whole graph when the source's head differs from the cursor.

    The cursor is the last head seen. When it moved, one run of ``embeddings_job`` is requested
    (run key: the new head and the tick, see :func:`tick_run_key`): ``raw_docs`` reads only the
    diff, then ``latest_docs``, ``chunks`` and ``embeddings`` follow in the same run.
    The run embeds with the *active* search model (its partition), or the configured model
    before any is active: search is what must stay current. Other models' partitions are not
    re-embedded on every edit (a paid API would be billed for each); activating one that fell
    behind is refused until its partition is materialized again.

    This is a sensor rather than declarative automation because the trigger lives outside
    Dagster (a git push, an Obsidian save): automation conditions only react to materializations
    and would need an observable source asset polled the same way, plus a rule choosing which
    model partition to run.

    Run config ``raw_docs.since_sha`` is the head the store last synced (``meta.sync_state``),
    not the cursor: they differ when a requested run failed, and diffing from the cursor would
    then skip that run's changes. The new and previous heads are run tags. When the source is
    unreachable the tick is skipped with the reason and the cursor kept, so the next tick
    retries; nothing is raised into the daemon.
    """
    fail_dead_runs_in_tick(context)
    previous = context.cursor
    try:
        head = vault.head_sha()
    except (SourceError, OSError) as exc:
        kept = previous[:12] if previous else "none"
        return dg.SkipReason(f"source unreachable, retrying next tick (cursor kept: {kept}): {exc}")
    if head == previous:
        return dg.SkipReason(f"source unchanged at {head[:12]}")
    partition = search_partition(postgres)
    config = {"full": False, "since_sha": _synced_head(postgres, vault)}
    request = dg.RunRequest(
        run_key=tick_run_key(context, head),
        partition_key=partition,
        run_config={"ops": {"raw_docs": {"config": config}}},
        tags={HEAD_TAG: head, PREVIOUS_HEAD_TAG: previous or "", TRIGGER_TAG: "source-changed"},
    )
    # Heads shortened as in the tick's skip reasons; the run's tags keep them whole.
    context.log.info(
        "source moved %s -> %s: syncing for %s", (previous or "none")[:12], head[:12], partition
    )
    return dg.SensorResult(run_requests=[request], cursor=head)


def tick_run_key(context: dg.SensorEvaluationContext, head: str) -> str:
    """The run key of a tick that saw ``head``: the head and the previous tick's end. The cursor
    already keeps a head from being requested twice in a row; a key of the head alone also
    dropped a head the source returns to later (a rename undone, a reset to an older commit),
    whose changes then never reached the store."""
    return f"{head}@{context.last_tick_completion_time or 0:.0f}"


def _synced_head(postgres: PostgresResource, vault: VaultResource) -> str | None:
    """The head the store last synced, or None (first sync, or store unreadable: the run then
    reads it itself and reports any error)."""
    try:
        with postgres.connect() as conn:
            return store.sync_state(conn, vault.source().key)
    except Exception:  # an unavailable store must not fail the tick: the run reports it
        return None
