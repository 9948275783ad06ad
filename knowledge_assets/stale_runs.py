"""Runs whose process died are marked failed instead of staying STARTED forever.

``demo`` and ``update`` materialize in their own process, and a run ``dg launch`` or the daemon
starts has a run worker of its own; when such a process is killed, nothing in Dagster notices
(the default run launcher cannot check its workers), the run stays STARTED, and with one run at
a time the queue stops. Every run records the process id and host running it in its log (by the
store's resource, which every step needs); ``demo``, ``update``, ``dev`` and each tick of the
source sensor fail every unfinished run whose process no longer exists. The store itself needs
no repair: each step's writes are transactional and the next run converges.

The process is a line of the run's log rather than a run tag: the runs list shows every tag of
a run as a label, and a process id and host name on each row told a reader nothing.
"""

from __future__ import annotations

import os
import socket
import time

import dagster as dg
from dagster._core.events import EngineEventData  # report_engine_event's metadata; not exported

from knowledge_assets.core.database.processes import alive

# Runs tagged by an earlier version with their process (the names those tags had, then the
# "knowledge-assets/" prefix every tag of the project took) are still recognised.
PID_TAG = "knowledge-assets/pid"
HOST_TAG = "knowledge-assets/host"
_EARLIER = {PID_TAG: "knowledge_assets/pid", HOST_TAG: "knowledge_assets/host"}
# The metadata keys of the log line that names a run's process.
PID_KEY = "pid"
HOST_KEY = "host"
UNFINISHED = [
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.CANCELING,
]


def this_process() -> tuple[str, str]:
    """The process id and host of this process, as a later process compares them."""
    return str(os.getpid()), socket.gethostname()


def record_run_process(
    instance: dg.DagsterInstance, run: dg.DagsterRun, process: tuple[str, str] | None = None
) -> None:
    """Log which process runs ``run`` (default: this one), unless its log (or an earlier
    version's tags) already names one: the first process to start a run's steps runs them all."""
    if run_process(instance, run) != (None, None):
        return
    pid, host = process or this_process()
    instance.report_engine_event(
        f"Running in process {pid} on {host}: if that process ends without finishing the run,"
        " the next update, demo, dev or source sensor tick marks the run failed",
        run,
        EngineEventData(metadata={PID_KEY: pid, HOST_KEY: host}),
    )


def run_process(instance: dg.DagsterInstance, run: dg.DagsterRun) -> tuple[str | None, str | None]:
    """(pid, host) of the process running ``run``, or (None, None) when nothing names one."""
    pid = run.tags.get(PID_TAG, run.tags.get(_EARLIER[PID_TAG]))
    if pid is not None:
        return pid, run.tags.get(HOST_TAG, run.tags.get(_EARLIER[HOST_TAG]))
    for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        data = event.engine_event_data if event is not None else None
        named = data.metadata if data is not None else {}
        if PID_KEY in named and HOST_KEY in named:
            return str(named[PID_KEY].value), str(named[HOST_KEY].value)
    return None, None


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark unfinished runs of dead local processes failed; returns their run ids."""
    failed: list[str] = []
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED))
    host = socket.gethostname()
    for record in records:
        run = record.dagster_run
        pid, ran_on = run_process(instance, run)
        if ran_on != host or not (pid and pid.isdigit()) or alive(int(pid)):
            continue
        instance.report_run_failed(
            run,
            message=f"The process that ran this run (pid {pid}) ended without finishing it "
            "(killed or crashed). Nothing is lost: the next run picks up what is missing.",
        )
        failed.append(run.run_id)
    return failed


# How long a run of another host's process may stay unfinished before it is named: a first
# build of 50,000 notes took a quarter of an hour.
ELSEWHERE_AFTER_S = 2 * 3600


def runs_elsewhere(instance: dg.DagsterInstance, now: float | None = None) -> list[str]:
    """One line per run left unfinished for hours by a process of another host, which this
    machine cannot check: a container recreated on the same store (a new host name) leaves its
    killed runs STARTED, and with one run at a time the daemon's queue stops behind them."""
    host, now = socket.gethostname(), time.time() if now is None else now
    lines = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED)):
        started = record.start_time or record.create_timestamp.timestamp()
        _, ran_on = run_process(instance, record.dagster_run)
        if ran_on is not None and ran_on != host and now - started > ELSEWHERE_AFTER_S:
            run_id = record.dagster_run.run_id
            lines.append(
                f"run {run_id} has been running for {(now - started) / 3600:.0f} h in a process on"
                f" {ran_on}, which this machine cannot check: if that machine or container is"
                " gone, terminate the run (UI: Runs → the run → Terminate) so queued runs start"
            )
    return lines


def fail_dead_runs_in_tick(context: dg.SensorEvaluationContext) -> None:
    """:func:`fail_dead_runs` from a sensor tick, so the daemon's queue moves on without a
    ``demo`` or ``dev`` restart, and a warning per run another host left (:func:`runs_elsewhere`);
    never fails the tick."""
    try:
        for run_id in fail_dead_runs(context.instance):
            context.log.info("marked run %s failed: its process had died", run_id)
        for line in runs_elsewhere(context.instance):
            context.log.warning("%s", line)
    except Exception as exc:  # no instance (a test context), or the storage is unreachable
        context.log.debug("looking for runs of dead processes: %s", exc)
