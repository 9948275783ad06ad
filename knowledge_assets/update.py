"""``knowledge-assets update``: bring the index up to date once, as a recorded Dagster run.

Every source (the environment's and each declared one) is synced, then ``latest_docs`` and
``chunks`` are refreshed and, unless ``--no-embeddings``, the model search uses (the active one;
before any is active, the configured one) embeds what is missing, then the configured model if
it is another one (its backfill). Without embeddings the chunks still carry their keyword
tokens, so keyword search (and hybrid search, which falls back to it) works at once; the next
update without the flag, the sensor or the nightly schedule adds the vectors. ``--force`` compares every file of every source
instead of the diff since the last sync and re-chunks every note; vectors are still reused for
every text that did not change (they are keyed by the text's hash).

The runs are recorded under the project's jobs, so the UI's runs list names them: a run of
``embeddings_job`` (``chunks_job`` with ``--no-embeddings``), and for the backfill a run of
``embeddings_job`` that selects ``embeddings`` alone.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from knowledge_assets import update_log
from knowledge_assets.core.counts import noun_for
from knowledge_assets.core.database.locks import waits_told
from knowledge_assets.launcher import (
    debug_output,
    ended_by_ctrl_c,
    fail_dead_runs_now,
    hand_over_to_sensor,
    interrupted,
    prepare_environment,
    report_failures,
    was_interrupted,
)
from knowledge_assets.terminal_lines import labelled, wrapped

INDEX_KEYS = ("latest_docs", "chunks")
# The width of the asset names in the summary: its lines' text starts in one column.
LABEL_WIDTH = 16
WHOLE_JOB = "embeddings_job"  # the sources to the vectors: what the sensor and schedule run
KEYWORD_JOB = "chunks_job"  # the sources to the chunks, for --no-embeddings


def _raw_keys(defs: dg.Definitions) -> list[str]:
    graph = defs.resolve_asset_graph()
    latest = graph.get(dg.AssetKey("latest_docs"))
    return sorted(k.to_user_string() for k in latest.parent_keys)


def update_run_config(raw_keys: list[str], *, force: bool, debug: bool) -> dict[str, Any]:
    """Run config: every source compares its whole tree when forced; chunks re-chunk all.

    Dagster's console logger prints each failure's whole traceback, so it stays silent unless
    ``debug``: the terminal gets the run's warnings and one line per failure after the run.
    """
    ops: dict[str, Any] = {key: {"config": {"full": force}} for key in raw_keys}
    ops["chunks"] = {"config": {"force": force}}
    level = "DEBUG" if debug else "CRITICAL"
    return {"ops": ops, "loggers": {"console": {"config": {"log_level": level}}}}


def run_update(
    *, force: bool = False, no_embeddings: bool = False, quiet: bool = False, verbose: bool = False
) -> int:
    """Materialize the sources, latest_docs, chunks (and embeddings); print what changed.

    The embeddings are those of the model search uses (as the sensor's runs do: after `models
    activate`, new notes would otherwise be missing from vector search) and, in a second run,
    those of the configured model when it is another one (its backfill, before it is activated).
    Ctrl-C, before or during a run, ends with one line and exit code 130. ``verbose``: each
    line the steps log as they log it, and the files each asset lists (:mod:`.update_log`).
    """
    return ended_by_ctrl_c(
        "update",
        lambda: _outcome(
            _update(force=force, no_embeddings=no_embeddings, quiet=quiet, verbose=verbose)
        ),
    )


def _outcome(results: list[dg.ExecuteInProcessResult] | None) -> int:
    """Print how the update's runs ended (``None``: one was interrupted); the exit code."""
    if results is None:
        return interrupted("update")
    ok = all(r.success for r in results)
    print(outcome_line(ok, [r.run_id for r in results]))
    for result in results:
        if not result.success:
            report_failures(result)
    return 0 if ok else 1


def outcome_line(ok: bool, run_ids: list[str]) -> str:
    """``update succeeded: run …``; with a backfill's run the second id goes on a line of its
    own, as two ids do not fit 80 columns beside the rest."""
    runs = ", ".join(run_ids)
    said = "update " + ("succeeded" if ok else "FAILED") + f": {noun_for(len(run_ids), 'run')} "
    return "\n".join(wrapped(runs, said, "  "))


def _update(
    *, force: bool, no_embeddings: bool, quiet: bool, verbose: bool
) -> list[dg.ExecuteInProcessResult] | None:
    """The update's runs, or None when one was interrupted (Dagster ends such a run as failed
    instead of raising)."""
    from knowledge_assets.core.preflight import check_environment
    from knowledge_assets.definitions import defs

    check_environment()  # one line about a bad setting, before the store is even started
    prepare_environment()
    loaded = defs()
    raw_keys = _raw_keys(loaded)
    selection = [*raw_keys, *INDEX_KEYS] + ([] if no_embeddings else ["embeddings"])
    config = update_run_config(raw_keys, force=force, debug=debug_output())
    fail_dead_runs_now()  # a killed earlier run would otherwise hold the run queue
    keys = [None] if no_embeddings else _model_keys()
    job = KEYWORD_JOB if no_embeddings else WHOLE_JOB
    told = Told(quiet=quiet, verbose=verbose)
    with waits_told():  # a step waiting for another run's writes says so in one line
        results = [_run(loaded, job, selection, keys[0], config, told)]
        backfill = {"loggers": config["loggers"]}  # no op config: the run holds embeddings only
        for key in keys[1:] if results[0].success else ():
            results.append(_run(loaded, WHOLE_JOB, ["embeddings"], key, backfill, told, label=key))
    if any(was_interrupted(r.all_events) for r in results):
        return None
    if no_embeddings and results[0].success:
        print("keyword index current; vectors are added by the next `update` without the flag")
    return results


def _model_keys() -> list[str]:
    """The partition of the model search uses, then the configured model's if it differs; one
    line when search uses a model no longer configured: the runs embed the configured models
    only, and search would fall behind for good without saying why."""
    from knowledge_assets.core.index.models import unconfigured_hint
    from knowledge_assets.defs.index.partitions import default_model_key, model_keys, search_model
    from knowledge_assets.resources import PostgresResource

    partition, unconfigured = search_model(PostgresResource())
    if unconfigured:
        print(f"warning: {unconfigured_hint(unconfigured, model_keys())}", file=sys.stderr)
    return list(dict.fromkeys([partition, default_model_key()]))


@dataclass(frozen=True)
class Told:
    """How much an update prints: ``quiet`` errors and the summary, ``verbose`` also each
    line the steps log, as they log it, and the files each asset lists."""

    quiet: bool = False
    verbose: bool = False


def _run(
    loaded: dg.Definitions, job_name: str, selection: list[str], partition: str | None,
    config: dict[str, Any], told: Told, *, label: str | None = None,
) -> dg.ExecuteInProcessResult:  # fmt: skip
    """One recorded run of ``selection`` as a run of ``job_name``; prints its warnings and each
    asset's summary.

    The assets run without their checks: an update reports what changed, and the checks run
    with the runs the sensor and the schedule start."""
    job = loaded.resolve_job_def(job_name).get_subset(
        asset_selection={dg.AssetKey(key) for key in selection}, asset_check_selection=set()
    )
    if told.verbose and not debug_output():  # --debug prints Dagster's own stream instead
        job, config = update_log.verbose(job, config)
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance, partition_key=partition, run_config=config,
            tags={"knowledge-assets/trigger": "update"}, raise_on_error=False,
        )  # fmt: skip
        # Verbose: the warnings reached the terminal as they were logged.
        said = told.quiet or told.verbose or debug_output()
        warnings = [] if said else run_warnings(instance, result.run_id)
        if result.success:
            hand_over_to_sensor(instance, result, announce=False)
    for line in warnings:
        print(f"  {line}", file=sys.stderr)
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None:
            name = mat.asset_key.to_user_string() + (f" ({label})" if label else "")
            print(labelled(name, _summary(mat.metadata), LABEL_WIDTH))
            for line in update_log.listed_files(mat.metadata) if told.verbose else ():
                print(labelled("", line, LABEL_WIDTH))
    return result


def run_warnings(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The warnings the run's steps logged (a rejected file, a date left empty), one line each
    as ``step: message``, redacted, with control characters escaped: a file's name may hold an
    escape sequence that would retitle or clear the terminal."""
    from knowledge_assets.core import secrets
    from knowledge_assets.search_cli import shown_path

    return [  # shown_path: a tab or newline in a file's name would break the line too
        f"{entry.step_key or 'run'}: {shown_path(secrets.redact(entry.user_message))}"
        for entry in instance.all_logs(run_id)
        if entry.level == logging.WARNING and not entry.is_dagster_event
    ]


def _summary(metadata: Mapping[str, dg.MetadataValue]) -> str:
    summary = metadata.get("summary")
    if summary is not None and summary.value:
        return str(summary.value)
    return ", ".join(f"{k}={v.value}" for k, v in metadata.items() if isinstance(v.value, int))
