"""Dagster's instance storage, found the way the knowledge store is found.

``dagster.yaml`` names these classes, so Dagster's own commands work from the project folder with
nothing set up: ``dg dev``, ``dg launch``, ``dagster asset materialize`` and ``knowledge-assets
dev`` all record runs, events, sensor cursors and schedules in the same Postgres as the knowledge
store (``DATABASE_URL``, else the embedded server under ``KA_DATA_DIR``), and keep Dagster's local
files under the data directory. Values given in ``dagster.yaml`` still take precedence.

Every Dagster process (webserver, daemon, code server, run worker) resolves the URL itself, so no
connection string is written into the instance reference Dagster passes on command lines.
"""

from __future__ import annotations

from typing import Any, Self

import dagster as dg
from dagster._core.storage.local_compute_log_manager import LocalComputeLogManager
from dagster._core.storage.root import LocalArtifactStorage
from dagster_postgres.storage import DagsterPostgresStorage

from knowledge_assets.core.database import db


def dagster_dir() -> str:
    """Where Dagster's local files (artifacts, captured step logs) live: ``<data dir>/dagster``."""
    return str(db.data_dir() / "dagster")


class _DefaultedSetting:
    """The config hooks of a Dagster storage class whose one setting is optional.

    The three classes below differ only in the name of that setting and where its value comes
    from when ``dagster.yaml`` leaves it out; this mixin (listed before the Dagster base class,
    so its hooks win) reads the value or falls back to ``default()``.
    """

    setting: str

    @classmethod
    def default(cls) -> str:
        raise NotImplementedError

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {cls.setting: dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> Self:
        # ``Any``: each Dagster base declares its own config type for these two arguments.
        value = config_value.get(cls.setting) or cls.default()
        return cls(**{cls.setting: value, "inst_data": inst_data})


class ProjectPostgresStorage(_DefaultedSetting, DagsterPostgresStorage):
    """Runs, event logs and schedules in the knowledge store's Postgres (or ``postgres_url``)."""

    setting = "postgres_url"

    @classmethod
    def default(cls) -> str:
        return db.dagster_storage_url(db.resolve_url())


class ProjectArtifactStorage(_DefaultedSetting, LocalArtifactStorage):
    """Dagster's local artifacts under the data directory (or ``base_dir``)."""

    setting = "base_dir"

    @classmethod
    def default(cls) -> str:
        return f"{dagster_dir()}/artifacts"


class ProjectComputeLogManager(_DefaultedSetting, LocalComputeLogManager):
    """Captured step output (stdout/stderr per step) under the data directory (or ``base_dir``)."""

    setting = "base_dir"

    @classmethod
    def default(cls) -> str:
        return f"{dagster_dir()}/compute_logs"
