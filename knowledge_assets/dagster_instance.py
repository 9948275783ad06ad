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

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any, Self

import dagster as dg
from dagster._core.storage.compute_log_manager import CapturedLogContext
from dagster._core.storage.local_compute_log_manager import LocalComputeLogManager
from dagster._core.storage.root import LocalArtifactStorage
from dagster_postgres.storage import DagsterPostgresStorage
from dagster_postgres.utils import DagsterPostgresException

from knowledge_assets.core.database import db
from knowledge_assets.core.failures import first_line
from knowledge_assets.core.workers import interrupts_held


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

    def __init__(self, postgres_url: str, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(postgres_url, *args, **kwargs)
        except DagsterPostgresException as exc:
            # Dagster's own words are "too many retries for DB connection", under a traceback
            # of its storage classes; say which server could not be reached and what to do.
            raise StoreUnreachable(_unreachable(exc)) from None

    @classmethod
    def default(cls) -> str:
        return db.dagster_storage_url(db.resolve_url())


class StoreUnreachable(DagsterPostgresException):
    """The Postgres holding Dagster's runs cannot be reached; the message says how to fix it."""


_DRIVER_PREFIX = re.compile(r"^\([\w.]+\) ")


def _unreachable(exc: DagsterPostgresException) -> str:
    cause = exc.__cause__
    # SQLAlchemy prefixes the driver's error with its class: "(psycopg2.OperationalError) ..."
    reason = _DRIVER_PREFIX.sub("", first_line(cause if cause is not None else exc))
    where = db.store_label()
    return (
        f"cannot reach the Postgres that holds Dagster's runs ({where}): {reason};"
        " start that Postgres or fix DATABASE_URL (unset it to use the embedded store)"
    )


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

    @contextlib.contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Iterator[CapturedLogContext]:
        """Dagster's capture, whose helper processes (``tail`` and its watcher, per stream) do not
        take Ctrl-C: the terminal sends it to every process of the command, and the watchers, in
        Python, would each print a ``KeyboardInterrupt`` traceback. The step itself still gets
        it, so the run stops as interrupted."""
        with contextlib.ExitStack() as stack:
            with interrupts_held():
                context = stack.enter_context(super().capture_logs(log_key))
            yield context
