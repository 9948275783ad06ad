"""Runs whose process died are marked failed instead of staying STARTED forever.

``demo`` materializes in its own process (``execute_in_process``), outside the daemon and the
code server that would notice a dead run worker. Each such run is tagged with the process id
and host that run it; the next ``demo`` or ``dev`` fails every unfinished run whose process no
longer exists. The store itself needs no repair: each step's writes are transactional and the
next run converges.
"""

from __future__ import annotations

import os
import socket

import dagster as dg

from knowledge_assets.core.database.processes import alive

PID_TAG = "knowledge_assets/pid"
HOST_TAG = "knowledge_assets/host"
UNFINISHED = [
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.CANCELING,
]


def process_tags() -> dict[str, str]:
    """Tags that let a later process tell whether this one is still running the run."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark unfinished runs of dead local processes failed; returns their run ids."""
    failed: list[str] = []
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED))
    host = socket.gethostname()
    for record in records:
        run = record.dagster_run
        pid = run.tags.get(PID_TAG)
        if run.tags.get(HOST_TAG) != host or not (pid and pid.isdigit()) or alive(int(pid)):
            continue
        instance.report_run_failed(
            run,
            message=f"The process that ran this run (pid {pid}) ended without finishing it "
            "(killed or crashed). Nothing is lost: the next run picks up what is missing.",
        )
        failed.append(run.run_id)
    return failed
