"""Set-up shared by ``knowledge-assets dev`` and ``knowledge-assets demo``: one Postgres for both
the knowledge store and Dagster's storage, with ``DAGSTER_HOME`` pointing at this project."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from knowledge_assets.core import db

if TYPE_CHECKING:
    import dagster as dg


def prepare_environment() -> str:
    """Start or attach to the store, apply migrations, and export what Dagster processes need.

    Child processes (the webserver, the daemon, run workers) inherit ``DATABASE_URL`` and connect
    to the already running server instead of starting their own.
    """
    url = db.store_url()
    home = db.data_dir() / "dagster"
    (home / "artifacts").mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = url
    os.environ["KA_DAGSTER_PG_URL"] = db.dagster_storage_url(url)
    os.environ["KA_DAGSTER_ARTIFACTS"] = str(home / "artifacts")
    os.environ["KA_DAGSTER_COMPUTE_LOGS"] = str(home / "compute_logs")
    os.environ.setdefault("DAGSTER_HOME", str(db.PROJECT_ROOT))
    return url


def run_dev(host: str = "127.0.0.1", port: int = 3000) -> int:
    """Run ``dagster dev`` (webserver + daemon) on this code location and the same Postgres."""
    prepare_environment()
    _fail_dead_runs()
    command = [
        sys.executable, "-m", "dagster", "dev",
        "-w", str(db.PROJECT_ROOT / "workspace.yaml"),
        "-h", host, "-p", str(port),
    ]  # fmt: skip
    try:
        return subprocess.call(command, cwd=db.PROJECT_ROOT)
    except KeyboardInterrupt:
        return 130


def run_demo(full: bool = False) -> int:
    """Materialize the whole graph once for the default model and print what landed."""
    import dagster as dg

    from knowledge_assets.core.settings import SourceSettings
    from knowledge_assets.definitions import defs
    from knowledge_assets.defs.index.partitions import model_keys
    from knowledge_assets.stale_runs import process_tags

    url = prepare_environment()
    settings = SourceSettings.from_env()
    where = settings.github_repo if settings.kind == "github" else settings.vault_path
    print(f"source: {settings.kind} {where}")
    print(f"store:  {_redact(url)}")
    job = defs().resolve_job_def("embeddings_job")
    config = {
        "ops": {"raw_docs": {"config": {"full": full}}},
        # The per-step DEBUG stream belongs in the UI; the terminal gets warnings and the summary.
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }
    _fail_dead_runs()
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance,
            partition_key=model_keys()[0],
            run_config=config,
            raise_on_error=False,
            tags=process_tags(),
        )
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is None:
            continue
        summary = mat.metadata.get("summary")
        text = getattr(summary, "value", None) or _counts(mat.metadata)
        print(f"  {mat.asset_key.to_user_string():12s} {text}")
    print("run " + ("succeeded" if result.success else "FAILED") + f": {result.run_id}")
    return 0 if result.success else 1


def _fail_dead_runs() -> None:
    import dagster as dg

    from knowledge_assets.stale_runs import fail_dead_runs

    with dg.DagsterInstance.get() as instance:
        for run_id in fail_dead_runs(instance):
            print(f"marked run {run_id} failed: its process had died")


def _counts(metadata: Mapping[str, dg.MetadataValue]) -> str:
    return ", ".join(f"{k}={v.value}" for k, v in metadata.items() if isinstance(v.value, int))


def _redact(url: str) -> str:
    """The URL without a password, for printing."""
    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(url)
    if info.get("password"):
        info["password"] = "***"
    return " ".join(f"{k}={v}" for k, v in info.items())
