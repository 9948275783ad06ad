"""``knowledge-assets update``: bring the index up to date once, as a recorded Dagster run.

Every source (the environment's and each declared one) is synced, then ``latest_docs`` and
``chunks`` are refreshed and, unless ``--no-embeddings``, the model search uses (the active one;
before any is active, the configured one) embeds what is missing. Without embeddings the chunks still carry their keyword tokens, so keyword search (and
hybrid search, which falls back to it) works at once; the next update without the flag, the
sensor or the nightly schedule adds the vectors. ``--force`` compares every file of every source
instead of the diff since the last sync and re-chunks every note; vectors are still reused for
every text that did not change (they are keyed by the text's hash).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

import dagster as dg

INDEX_KEYS = ("latest_docs", "chunks")


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


def run_update(*, force: bool = False, no_embeddings: bool = False, quiet: bool = False) -> int:
    """Materialize the sources, latest_docs, chunks (and embeddings); print what changed."""
    from knowledge_assets.core.preflight import check_environment
    from knowledge_assets.definitions import defs
    from knowledge_assets.defs.index.partitions import search_partition
    from knowledge_assets.launcher import debug_output, prepare_environment, report_failures
    from knowledge_assets.resources import PostgresResource

    check_environment()  # one line about a bad setting, before the store is even started
    prepare_environment()
    loaded = defs()
    raw_keys = _raw_keys(loaded)
    selection = [*raw_keys, *INDEX_KEYS] + ([] if no_embeddings else ["embeddings"])
    assets = [a for a in loaded.assets or () if isinstance(a, dg.AssetsDefinition)]
    resources = dict(loaded.resources or {})
    with dg.DagsterInstance.get() as instance:
        result = dg.materialize(
            assets,
            selection=selection,
            instance=instance,
            resources=resources,
            # The model search uses, as the sensor's runs do: after `models activate`, the
            # configured model's vectors would leave new notes out of vector search.
            partition_key=None if no_embeddings else search_partition(PostgresResource()),
            run_config=update_run_config(raw_keys, force=force, debug=debug_output()),
            tags={"knowledge-assets/trigger": "update"},
            raise_on_error=False,
        )
        warnings = [] if quiet or debug_output() else run_warnings(instance, result.run_id)
    for line in warnings:
        print(f"  {line}", file=sys.stderr)
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None:
            print(f"  {mat.asset_key.to_user_string():16s} {_summary(mat.metadata)}")
    if no_embeddings and result.success:
        print("keyword index current; vectors are added by the next `update` without the flag")
    print("update " + ("succeeded" if result.success else "FAILED") + f": run {result.run_id}")
    if not result.success:
        report_failures(result)
    return 0 if result.success else 1


def run_warnings(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The warnings the run's steps logged (a rejected file, a date left empty), one line each
    as ``step: message``, redacted."""
    from knowledge_assets.core import secrets

    return [
        f"{entry.step_key or 'run'}: {secrets.redact(entry.user_message)}"
        for entry in instance.all_logs(run_id)
        if entry.level == logging.WARNING and not entry.is_dagster_event
    ]


def _summary(metadata: Mapping[str, dg.MetadataValue]) -> str:
    summary = metadata.get("summary")
    if summary is not None and summary.value:
        return str(summary.value)
    return ", ".join(f"{k}={v.value}" for k, v in metadata.items() if isinstance(v.value, int))
