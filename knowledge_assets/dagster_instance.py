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

from typing import Any

import dagster as dg
from dagster._core.storage.local_compute_log_manager import LocalComputeLogManager
from dagster._core.storage.root import LocalArtifactStorage
from dagster._serdes import ConfigurableClassData
from dagster_postgres.storage import DagsterPostgresStorage

from knowledge_assets.core import db


def dagster_dir() -> str:
    """Where Dagster's local files (artifacts, captured step logs) live: ``<data dir>/dagster``."""
    return str(db.data_dir() / "dagster")


class ProjectPostgresStorage(DagsterPostgresStorage):
    """Runs, event logs and schedules in the knowledge store's Postgres (or ``postgres_url``)."""

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"postgres_url": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]
    ) -> ProjectPostgresStorage:
        url = config_value.get("postgres_url") or db.dagster_storage_url(db.resolve_url())
        return cls(postgres_url=url, inst_data=inst_data)


class ProjectArtifactStorage(LocalArtifactStorage):
    """Dagster's local artifacts under the data directory (or ``base_dir``)."""

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"base_dir": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]
    ) -> ProjectArtifactStorage:
        base_dir = config_value.get("base_dir") or f"{dagster_dir()}/artifacts"
        return cls(base_dir=base_dir, inst_data=inst_data)


class ProjectComputeLogManager(LocalComputeLogManager):
    """Captured step output (stdout/stderr per step) under the data directory (or ``base_dir``)."""

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"base_dir": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]
    ) -> ProjectComputeLogManager:
        base_dir = config_value.get("base_dir") or f"{dagster_dir()}/compute_logs"
        return cls(base_dir=base_dir, inst_data=inst_data)
