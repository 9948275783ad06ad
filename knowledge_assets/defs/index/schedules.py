"""The nightly full reconciliation of the whole graph."""

from __future__ import annotations

import dagster as dg

from knowledge_assets.defs.automation_status import schedule_status
from knowledge_assets.defs.index.jobs import embeddings_job
from knowledge_assets.defs.index.partitions import search_partition
from knowledge_assets.resources import PostgresResource

NIGHTLY_CRON = "0 3 * * *"


@dg.schedule(
    name="embeddings_schedule",
    job=embeddings_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone="UTC",
    description="Every night at 03:00 UTC, compares the whole source with the store, then "
    "refreshes latest_docs, chunks and the search model's embeddings. Repairs whatever a missed "
    "sensor tick or a failed run left behind; on an unchanged vault it reads no file and embeds "
    "nothing.",
    default_status=schedule_status(),
)
def embeddings_schedule(
    context: dg.ScheduleEvaluationContext, postgres: PostgresResource
) -> dg.RunRequest:
    """Every night at 03:00 UTC: sync with ``raw_docs`` config ``full: true`` (compare the whole
    source with the store, ignoring the last synced head), then refresh ``latest_docs``,
    ``chunks`` and the active model's ``embeddings`` partition. This repairs whatever a missed
    sensor tick, a failed run or a force-push left behind; on an unchanged vault it reads no
    file and embeds nothing."""
    partition = search_partition(postgres)
    return dg.RunRequest(
        partition_key=partition,
        run_config={"ops": {"raw_docs": {"config": {"full": True}}}},
        tags={"knowledge-assets/trigger": "nightly-full-sync"},
    )
