"""``embeddings_schedule``: a nightly full reconciliation of the whole graph."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.definitions import defs
from knowledge_assets.defs.index.partitions import default_model_key
from knowledge_assets.defs.index.schedules import embeddings_schedule
from knowledge_assets.resources import PostgresResource


def evaluate(db_url: str) -> dg.RunRequest:
    context = dg.build_schedule_context(
        scheduled_execution_time=datetime(2026, 1, 10, 3, 0, tzinfo=UTC),
        resources={"postgres": PostgresResource(database_url=db_url)},
    )
    request = embeddings_schedule(context)
    assert isinstance(request, dg.RunRequest)
    return request


def test_schedule_runs_nightly_on_the_whole_graph() -> None:
    assert embeddings_schedule.cron_schedule == "0 3 * * *"
    assert embeddings_schedule.job_name == "embeddings_job"
    job = defs().resolve_job_def("embeddings_job")
    selected = {key.to_user_string() for key in job.asset_layer.executable_asset_keys}
    assert selected == {"raw_docs", "latest_docs", "chunks", "embeddings"}


def test_schedule_requests_a_full_sync_of_the_default_model(db_url: str) -> None:
    request = evaluate(db_url)
    assert request.run_config == {"ops": {"raw_docs": {"config": {"full": True}}}}
    assert request.partition_key == default_model_key()


def test_schedule_keeps_the_active_model_current(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KA_EMBED_MODELS", "voyage:voyage-3-lite")
    with db.connect(db_url) as conn:
        conn.execute(
            "INSERT INTO rag.models (model, provider, dims, max_tokens, is_active, completed_at)"
            " VALUES ('voyage-3-lite', 'voyage', 512, 32000, true, now())"
        )
    assert evaluate(db_url).partition_key == "voyage:voyage-3-lite"
