"""Runs whose process died are marked failed instead of staying STARTED forever.

``demo`` and ``update`` materialize in their own process, and a run ``dg launch`` or the daemon
starts has a run worker of its own; when such a process is killed, nothing in Dagster notices
(the default run launcher cannot check its workers), the run stays STARTED, and with one run at
a time the queue stops. Every run is tagged with the process id and host running it (by the
store's resource, which every step needs); ``demo``, ``update``, ``dev`` and each tick of the
source sensor fail every unfinished run whose process no longer exists. The store itself needs
no repair: each step's writes are transactional and the next run converges.
"""

from __future__ import annotations

import os
import socket

import dagster as dg

from knowledge_assets.core.database.processes import alive

PID_TAG = "knowledge-assets/pid"
HOST_TAG = "knowledge-assets/host"
# The names these tags had before every tag of the project took the "knowledge-assets/" prefix:
# a run an older version started is still recognised.
_EARLIER = {PID_TAG: "knowledge_assets/pid", HOST_TAG: "knowledge_assets/host"}
UNFINISHED = [
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.CANCELING,
]


def process_tags() -> dict[str, str]:
    """Tags that let a later process tell whether this one is still running the run."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def tag_run_process(instance: dg.DagsterInstance, run: dg.DagsterRun) -> None:
    """Tag ``run`` with this process, unless it already names one (``demo`` tags at launch)."""
    if _tag(run, PID_TAG) is None:
        instance.add_run_tags(run.run_id, process_tags())


def _tag(run: dg.DagsterRun, name: str) -> str | None:
    return run.tags.get(name, run.tags.get(_EARLIER[name]))


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark unfinished runs of dead local processes failed; returns their run ids."""
    failed: list[str] = []
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED))
    host = socket.gethostname()
    for record in records:
        run = record.dagster_run
        pid = _tag(run, PID_TAG)
        if _tag(run, HOST_TAG) != host or not (pid and pid.isdigit()) or alive(int(pid)):
            continue
        instance.report_run_failed(
            run,
            message=f"The process that ran this run (pid {pid}) ended without finishing it "
            "(killed or crashed). Nothing is lost: the next run picks up what is missing.",
        )
        failed.append(run.run_id)
    return failed


def fail_dead_runs_in_tick(context: dg.SensorEvaluationContext) -> None:
    """:func:`fail_dead_runs` from a sensor tick, so the daemon's queue moves on without a
    ``demo`` or ``dev`` restart; never fails the tick."""
    try:
        for run_id in fail_dead_runs(context.instance):
            context.log.info("marked run %s failed: its process had died", run_id)
    except Exception as exc:  # no instance (a test context), or the storage is unreachable
        context.log.debug("looking for runs of dead processes: %s", exc)
