"""Sensor state written from outside the daemon: ``demo`` records the head it synced as the
sensor's cursor, so the daemon's first tick afterwards finds nothing new instead of running the
whole graph again for no change."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from knowledge_assets.core.database.db import PROJECT_ROOT

if TYPE_CHECKING:
    import dagster as dg


def location_name() -> str:
    """The code location's name in ``workspace.yaml``: sensor state is stored under it."""
    workspace = yaml.safe_load((PROJECT_ROOT / "workspace.yaml").read_text(encoding="utf-8"))
    name: str = workspace["load_from"][0]["python_module"]["location_name"]
    return name


def set_sensor_cursor(instance: dg.DagsterInstance, sensor_name: str, cursor: str) -> None:
    """Store ``cursor`` for the sensor as the daemon would after a tick, keeping its status
    (running by default, stopped, or as declared in code) and its tick history."""
    from dagster._core.definitions.repository_definition import SINGLETON_REPOSITORY_NAME
    from dagster._core.remote_origin import InProcessCodeLocationOrigin
    from dagster._core.scheduler.instigation import InstigatorStatus
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            module_name="knowledge_assets.definitions", working_directory=str(PROJECT_ROOT)
        ),
        location_name=location_name(),
    )
    with origin.create_location(instance) as location:
        sensor = location.get_repository(SINGLETON_REPOSITORY_NAME).get_sensor(sensor_name)
        stored = instance.get_instigator_state(sensor.get_remote_origin_id(), sensor.selector_id)
        if stored is not None and stored.instigator_data is not None:
            # Its status as stored: a computed one would turn "as declared in code" into
            # whatever KA_AUTOMATION says in this process, and keep it.
            data = stored.instigator_data._replace(cursor=cursor)  # type: ignore[union-attr, call-arg]
            instance.update_instigator_state(stored.with_data(data))
            return
        state = sensor.get_current_instigator_state(stored)
        data = state.instigator_data._replace(cursor=cursor)  # type: ignore[union-attr]
        # "As declared in code": later processes follow their own KA_AUTOMATION, not this one's.
        declared = state.with_data(data).with_status(InstigatorStatus.DECLARED_IN_CODE)
        if stored is None:
            instance.add_instigator_state(declared)
        else:
            instance.update_instigator_state(declared)
