"""The code location: every definition under ``knowledge_assets/defs`` plus cross-cutting policy."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path

import dagster as dg

from knowledge_assets import partition_hint
from knowledge_assets.defs.ingest.assets import build_latest_docs
from knowledge_assets.defs.ingest.source_defs import SOURCE_TAG

partition_hint.install()


def wire_sources(defs: dg.Definitions) -> dg.Definitions:
    """Make every declared source (a ``raw_docs_<name>`` asset) an upstream of ``latest_docs``,
    so the lineage shows it, runs order it and ``latest_docs`` knows which sources exist.

    ``latest_docs`` is rebuilt with the extra dependencies rather than mapped with
    ``map_asset_specs``: in Dagster 1.13 that adds the op inputs but not their asset keys, so a
    run would not wait for the sources."""
    assets = list(defs.assets or ())
    sources = sorted(
        spec.key.to_user_string()
        for assets_def in assets
        if isinstance(assets_def, dg.AssetsDefinition)
        for spec in assets_def.specs
        if SOURCE_TAG in spec.tags
    )
    if not sources:
        return defs
    latest = dg.AssetKey("latest_docs")
    rebuilt = [
        build_latest_docs(sources) if isinstance(a, dg.AssetsDefinition) and latest in a.keys else a
        for a in assets
    ]
    return dg.Definitions(
        assets=rebuilt,
        schedules=defs.schedules,
        sensors=defs.sensors,
        jobs=defs.jobs,
        resources=defs.resources,
        executor=defs.executor,
        loggers=defs.loggers,
        asset_checks=_check_definitions(defs.asset_checks or ()),
        metadata=defs.metadata,
        component_tree=defs.component_tree,
    )


def _check_definitions(checks: Iterable[dg.AssetsDefinition]) -> list[dg.AssetsDefinition]:
    """The checks, each as an ``AssetChecksDefinition``.

    Loaded from a component (a declared source), checks come back as plain
    ``AssetsDefinition``; Dagster converts them when it builds the asset graph, through a beta
    parameter (``execution_type``), and so printed a BetaWarning at every ``update``. Converted
    here once, with that one warning silenced: the conversion is Dagster's own, not a beta
    feature the project uses."""
    out: list[dg.AssetsDefinition] = []
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Parameter `execution_type`", category=dg.BetaWarning
        )
        for check in checks:
            if not isinstance(check, dg.AssetChecksDefinition):
                check = dg.AssetChecksDefinition(**check.get_attributes_dict())
            out.append(check)
    return out


# Every run executes its steps one after the other in its own process. Dagster's default starts
# a process per step, which imports Dagster and the project again each time: at 1,000 notes a run
# where nothing changed (4 assets, 7 checks) took 41-43 CPU-s that way and 4-5 in one process
# (bench/job_runs.py). Nothing is lost: the assets form a chain, and the heavy steps spread their
# own work over the cores (tokenizing and embedding workers, parallel index builds).
RUN_EXECUTOR = dg.in_process_executor


@dg.definitions
def defs() -> dg.Definitions:
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
    return wire_sources(dg.Definitions.merge(loaded, dg.Definitions(executor=RUN_EXECUTOR)))
