"""Set-up shared by ``knowledge-assets dev`` and ``knowledge-assets demo``: one Postgres for both
the knowledge store and Dagster's storage, with ``DAGSTER_HOME`` pointing at this project."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from knowledge_assets.cli_errors import EXIT_INTERRUPTED, is_interrupt
from knowledge_assets.core.database import db
from knowledge_assets.core.database.server_output import DISK_FULL

if TYPE_CHECKING:
    import dagster as dg


def prepare_environment() -> str:
    """Start or attach to the store, apply migrations, and export ``DATABASE_URL``.

    Child processes (the webserver, the daemon, run workers) inherit ``DATABASE_URL`` and connect
    to the already running server instead of each attaching to the embedded one; the project's
    ``dagster.yaml`` (see :mod:`knowledge_assets.dagster_instance`) resolves Dagster's storage
    from it.
    """
    url = db.store_url()
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DAGSTER_HOME", str(db.PROJECT_ROOT))
    return url


def run_dev(host: str = "127.0.0.1", port: int = 3000) -> int:
    """Run ``dagster dev`` (webserver + daemon) on this code location and the same Postgres."""
    from knowledge_assets.core.preflight import environment_problems
    from knowledge_assets.ports import listening, report_unusable

    for problem in environment_problems():  # runs would fail on it: say so now
        print(f"warning: {problem}", file=sys.stderr)
    try:  # the webserver's own bind error came amid the daemon's log, which ran on without a UI
        listening(host, port).close()
    except OSError as exc:
        report_unusable(host, port, exc)
        return 1
    prepare_environment()
    fail_dead_runs_now()
    return supervise(dev_command(host, port))


# `dagster dev` warns on every start that `dg dev` supersedes it: noise in the first lines a
# user reads, about a command this one runs for them.
QUIET_SUPERSESSION = "ignore:Function `dev_command` is superseded"


def dev_command(host: str, port: int) -> list[str]:
    """The ``dagster dev`` command line for this code location."""
    return [
        sys.executable, "-W", QUIET_SUPERSESSION, "-m", "dagster", "dev",
        "-w", str(db.PROJECT_ROOT / "workspace.yaml"),
        "-h", host, "-p", str(port),
    ]  # fmt: skip


# How long ``dagster dev`` gets to shut its webserver, daemon and code servers down.
SHUTDOWN_GRACE_S = 60


def supervise(command: list[str]) -> int:
    """Run ``command`` (``dagster dev``) until it ends, passing a stop on to it.

    A service manager (systemd, ``docker stop``) sends SIGTERM to this process only; ended by
    it, the webserver and the daemon would keep running. It is passed on, and ``dagster dev``
    shuts its services down. Ctrl-C in a terminal reaches both processes: this one waits for
    that shutdown instead of killing it halfway (``subprocess.call`` kills its child).
    """
    # A script's `knowledge-assets dev &` starts it with SIGINT ignored; `dagster dev` would
    # inherit that and, taking SIGTERM as SIGINT, ignore the stop passed on to it.
    child = subprocess.Popen(command, cwd=db.PROJECT_ROOT, preexec_fn=_default_sigint)
    previous = signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    try:
        return child.wait()
    except KeyboardInterrupt:
        _wait_for_shutdown(child)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_shutdown(child: subprocess.Popen[bytes]) -> None:
    """Wait for ``child`` to stop after Ctrl-C, which a terminal sends it too; one still
    running after the grace period (a Ctrl-C sent to this process alone) gets SIGTERM, then is
    killed. Not signalled at once: a second interrupt would cut its own shutdown short."""
    for stop in (None, child.terminate, child.kill):
        if stop is not None:
            stop()
        try:
            child.wait(timeout=SHUTDOWN_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def run_demo(full: bool = False) -> int:
    """Materialize the whole graph once for the default model and print what landed. Ctrl-C,
    before, during or after the run, ends with one line and exit code 130."""
    return ended_by_ctrl_c("demo", lambda: _demo(full))


def _demo(full: bool) -> int:
    import dagster as dg

    from knowledge_assets.core.database.locks import waits_told
    from knowledge_assets.core.preflight import check_environment
    from knowledge_assets.core.settings import SourceSettings
    from knowledge_assets.definitions import defs
    from knowledge_assets.defs.index.partitions import model_keys
    from knowledge_assets.demo_hints import command_name, next_steps, shown_warnings
    from knowledge_assets.progress_bar import terminal_progress

    check_environment()  # one line about a bad setting, before the store is even started
    url = prepare_environment()
    settings = SourceSettings.from_env()
    where = settings.github_repo if settings.kind == "github" else settings.vault_path
    print(f"source: {settings.kind} {where}")
    print(f"store:  {_redact(url)}")
    job = defs().resolve_job_def("embeddings_job")
    config = {
        "ops": {"raw_docs": {"config": {"full": full}}},
        # The per-step stream belongs in the UI; the terminal gets the summary and one line per
        # failed step (Dagster's console logger would print each failure's whole traceback).
        "loggers": {
            "console": {"config": {"log_level": "DEBUG" if debug_output() else "CRITICAL"}}
        },
    }
    fail_dead_runs_now()
    with dg.DagsterInstance.get() as instance, waits_told(), terminal_progress():
        result = job.execute_in_process(
            instance=instance,
            partition_key=model_keys()[0],
            run_config=config,
            raise_on_error=False,
        )
        materialized = {
            mat.asset_key.to_user_string(): mat
            for event in result.get_asset_materialization_events()
            if (mat := event.materialization) is not None
        }
        for key, mat in materialized.items():
            summary = mat.metadata.get("summary")
            text = getattr(summary, "value", None) or _counts(mat.metadata)
            print(labelled_summary(key, text))
        if result.success:
            hand_over_to_sensor(instance, result)
        # With --debug the run's whole log was printed already.
        warnings = [] if debug_output() else shown_warnings(instance, result.run_id)
    for line in warnings:  # after the progress bars have closed
        print(f"  {line}", file=sys.stderr)
    if was_interrupted(result.all_events):  # Ctrl-C: not a failure to report step by step
        return interrupted("demo")
    print("run " + ("succeeded" if result.success else "FAILED") + f": {result.run_id}")
    if not result.success:
        report_failures(result)
        return 1
    print(next_steps(command_name()))
    return 0


def interrupted_line(command: str) -> str:
    """What Ctrl-C during ``command``'s run prints: every step writes in transactions, and the
    next run resumes from what they stored."""
    return f"interrupted: nothing is lost; run {command} again to finish"


def interrupted(command: str) -> int:
    """Say that ``command`` was interrupted (:func:`interrupted_line`); its exit code."""
    print(interrupted_line(command), file=sys.stderr)
    return EXIT_INTERRUPTED


def ended_by_ctrl_c(command: str, run: Callable[[], int]) -> int:
    """``run()``'s exit code, or :func:`interrupted`'s for a Ctrl-C wherever it lands: Dagster
    raises its own error for one in a run and while it loads the code location."""
    try:
        return run()
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        return interrupted(command)


def debug_output() -> bool:
    """Whether ``--debug`` (``KA_DEBUG``) asked for Dagster's own log stream and tracebacks."""
    from knowledge_assets.core.settings import env_flag

    return env_flag("KA_DEBUG")


def report_failures(result: dg.ExecuteInProcessResult) -> None:
    """On stderr: one line per failed step of a run, what to do about a full disk, and where
    to find the details."""
    lines = failure_lines(result.all_events)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    if any(DISK_FULL in line for line in lines):  # the store's, the data directory's
        print("  a disk is full: free space on it, then run again; what the run stored is kept",
              file=sys.stderr)  # fmt: skip
    print("  details: the run's page in `knowledge-assets dev`, or rerun with --debug",
          file=sys.stderr)  # fmt: skip


def failure_lines(events: Sequence[dg.DagsterEvent]) -> list[str]:
    """One redacted line per failed step or resource: where, and the message of the error
    :func:`_telling_error` picks from its chain; control characters escaped, as a path in
    the message may hold them."""
    from knowledge_assets.core import secrets
    from knowledge_assets.search_cli import shown
    from knowledge_assets.setup_checks import SetupError

    lines = []
    for event in events:
        if event.event_type_value not in ("STEP_FAILURE", "RESOURCE_INIT_FAILURE"):
            continue
        error = _telling_error(getattr(event.event_specific_data, "error", None))
        text = (error.message if error is not None else event.message or "").strip()
        first = text.splitlines()[0] if text else "failed"
        # "package.module.SomeError: what happened" (or "SetupError: …") -> "what happened"
        head, sep, rest = first.partition(": ")
        named = "." in head or head == SetupError.__name__
        message = rest if sep and named and " " not in head else first
        where = event.step_key or "set-up"
        lines.append(f"{where}: {shown(secrets.redact(message))}")
    return lines


# What Dagster records as the error of a step or run stopped by Ctrl-C.
_INTERRUPTS = ("KeyboardInterrupt", "DagsterExecutionInterruptedError")


def was_interrupted(events: Sequence[dg.DagsterEvent]) -> bool:
    """Whether a run stopped because it was interrupted (Ctrl-C), not because a step failed:
    the interrupt is a failure's error, or what that error was raised from or during (a
    clean-up the interrupt cut short)."""
    for event in events:
        if event.event_type_value in ("STEP_FAILURE", "RUN_FAILURE"):
            if _interrupt_in(getattr(event.event_specific_data, "error", None)):
                return True
    return False


def _interrupt_in(error: Any, depth: int = 0) -> bool:
    if error is None or depth > 20:  # a chain is short; the bound guards against a cycle
        return False
    if error.cls_name in _INTERRUPTS:
        return True
    return _interrupt_in(error.cause, depth + 1) or _interrupt_in(error.context, depth + 1)


def _telling_error(error: Any) -> Any:
    """The outermost error of a chain that the project raised, else the innermost one.

    The project's errors say what failed and what to do (``openai embeddings ... failed after 6
    attempts (Connection refused)``); what they wrap, and a library's own error, do not
    (``[Errno 111] Connection refused`` names neither the service nor the setting).
    """
    chain = []
    while error is not None:
        chain.append(error)
        error = error.cause
    ours = [e for e in chain if e.message.startswith(_OUR_ERRORS)]
    return ours[0] if ours else (chain[-1] if chain else None)


# How a serialized error of the project starts: its module path, its set-up failure, or
# dagster's Failure (which resources and assets raise with a message written for the user).
_OUR_ERRORS = ("knowledge_assets.", "SetupError: ", "dagster._core.definitions.events.Failure")


def fail_dead_runs_now() -> None:
    """Mark the runs of killed processes failed, saying so (``demo``, ``dev``, ``update``)."""
    import dagster as dg

    from knowledge_assets.stale_runs import fail_dead_runs, runs_elsewhere

    with dg.DagsterInstance.get() as instance:
        for run_id in fail_dead_runs(instance):
            print(f"marked run {run_id} failed: its process had died")
        for line in runs_elsewhere(instance):
            print(f"warning: {line}", file=sys.stderr)


def hand_over_to_sensor(
    instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult, *, announce: bool = True
) -> None:
    """Store the head a run of ``demo`` or ``update`` synced as the sensor's cursor: the daemon's
    next tick then finds the source unchanged instead of running the whole graph again (and
    the asset pages keep showing what this run changed). Nothing when the run synced no vault."""
    from knowledge_assets.automation_state import set_sensor_cursor
    from knowledge_assets.defs.ingest.sensors import source_changed_sensor

    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None and mat.asset_key.to_user_string() == "raw_docs":
            head = str(mat.metadata["head_sha"].value)
            set_sensor_cursor(instance, source_changed_sensor.name, head)
            if announce:
                # Said so that a newcomer knows dev's sensor will not run the whole graph again.
                print(handover_lines(source_changed_sensor.name, head))


# The width of the asset names in ``demo``'s summary: its lines' text starts in one column.
LABEL_WIDTH = 12


def labelled_summary(key: str, text: str) -> str:
    """One asset's summary in ``demo``, in lines of at most 80 columns."""
    from knowledge_assets.terminal_lines import labelled

    return labelled(key, text, LABEL_WIDTH)


def handover_lines(sensor: str, head: str) -> str:
    """``demo``'s line about the sensor, in two lines that fit 80 columns: one did not, at
    105 characters, whatever the head."""
    return (
        f"  {'sensor':<{LABEL_WIDTH}} {sensor} (in `knowledge-assets dev`)\n"
        f"  {'':<{LABEL_WIDTH}} carries on from this sync ({head[:12]})"
    )


def _counts(metadata: Mapping[str, dg.MetadataValue]) -> str:
    return ", ".join(
        f"{k}={v.value}"
        for k, v in metadata.items()
        if isinstance(v.value, int) and not k.startswith("dagster/")
    )


def _redact(url: str) -> str:
    """The URL without a password, for printing."""
    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(url)
    if info.get("password"):
        info["password"] = "***"
    return " ".join(f"{k}={v}" for k, v in info.items())
