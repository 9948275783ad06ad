"""Sensor state written from outside the daemon: ``demo`` records the head it synced as the
sensor's cursor, so the daemon's first tick afterwards finds nothing new instead of running the
whole graph again for no change."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from knowledge_assets.core.database.db import PROJECT_ROOT

if TYPE_CHECKING:
    import dagster as dg
    from dagster._core.scheduler.instigation import InstigatorState


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

    if _update_stored(instance, sensor_name, cursor):
        return
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
            _store_cursor(instance, stored, cursor)  # a storage without the selector index
            return
        state = sensor.get_current_instigator_state(stored)
        data = state.instigator_data._replace(cursor=cursor)  # type: ignore[union-attr]
        # "As declared in code": later processes follow their own KA_AUTOMATION, not this one's.
        declared = state.with_data(data).with_status(InstigatorStatus.DECLARED_IN_CODE)
        if stored is None:
            instance.add_instigator_state(declared)
        else:
            instance.update_instigator_state(declared)


def _update_stored(instance: dg.DagsterInstance, sensor_name: str, cursor: str) -> bool:
    """Store ``cursor`` in the sensor's stored state, found by its selector (location,
    repository and sensor names); False when there is none yet (or the storage predates
    look-ups by selector). Loading the code location to find the state cost about 0.7 s of
    each ``update``, which only the first one needs, to create the state."""
    from dagster._core.definitions.repository_definition import SINGLETON_REPOSITORY_NAME
    from dagster._core.definitions.selector import InstigatorSelector
    from dagster._serdes import create_snapshot_id

    selector = InstigatorSelector(
        location_name=location_name(), repository_name=SINGLETON_REPOSITORY_NAME, name=sensor_name
    )
    # The origin id is read only by a storage without the selector index; "" finds nothing.
    stored = instance.get_instigator_state("", create_snapshot_id(selector))
    if stored is None or stored.instigator_data is None:
        return False
    _store_cursor(instance, stored, cursor)
    return True


def _store_cursor(instance: dg.DagsterInstance, stored: InstigatorState, cursor: str) -> None:
    """Replace the cursor of a stored sensor state, keeping its status as stored: a computed
    one would turn "as declared in code" into whatever KA_AUTOMATION says in this process."""
    data = stored.instigator_data._replace(cursor=cursor)  # type: ignore[union-attr, call-arg]
    instance.update_instigator_state(stored.with_data(data))
