"""Declarative automation: a change to an upstream asset flows on to the ones below it.

``latest_docs`` and ``chunks`` are ``eager``: they run once their parent was updated (by a run
that did not already include them), when none of their parents is missing or in progress.
``embeddings`` is eager for one partition only, the search model's: other models are embedded
when someone materializes their partition, never on every edit (a paid API bills each one).

This complements ``source_changed_sensor`` and ``embeddings_schedule`` rather than competing
with them: those request the whole graph in one run, and a parent updated by a run that also
targeted the child does not count as an update for the child (``any_deps_updated`` ignores it).
Only a run of part of the graph, such as ``dg launch --assets raw_docs`` or ``raw_docs_job``,
leaves work for ``automation_condition_sensor``.
"""

from __future__ import annotations

import warnings

import dagster as dg

from knowledge_assets.defs.automation_status import sensor_status
from knowledge_assets.defs.index.partitions import search_partition
from knowledge_assets.resources import PostgresResource


class IsSearchModelPartition(dg.AutomationCondition):
    """True for the partition of the model search uses (the configured model before any is
    active). Read from the store at each evaluation, so activating a model moves it."""

    @property
    def description(self) -> str:
        return "Partition of the model search uses"

    @property
    def name(self) -> str:
        return "is_search_model_partition"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        partition = search_partition(PostgresResource())
        subset = context.candidate_subset.compute_intersection_with_partition_keys({partition})
        return dg.AutomationResult(context=context, true_subset=subset)


UPSTREAM_CHANGED = dg.AutomationCondition.eager()
SEARCH_MODEL_CHANGED = (IsSearchModelPartition() & dg.AutomationCondition.eager()).with_label(
    "eager, search model only"
)

# use_user_code_server is a beta parameter: without the filter every command that loads the
# definitions would print a BetaWarning.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    automation_condition_sensor = dg.AutomationConditionSensorDefinition(
        "automation_condition_sensor",
        target=dg.AssetSelection.all(),
        # Evaluated in the code server, where IsSearchModelPartition's code lives.
        use_user_code_server=True,
        minimum_interval_seconds=30,
        default_status=sensor_status(),
        description="Every 30 seconds, runs what a change upstream left out of date: latest_docs "
        "after raw_docs, chunks after latest_docs, and the search model's embeddings after chunks. "
        "Runs of the whole graph (the source sensor, the nightly schedule) leave nothing to do; a "
        "run of raw_docs alone flows on from here.",
    )
