"""``source_changed_sensor`` evaluated directly: GitHub on a loopback server, local folders."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.defs.index.partitions import default_model_key
from knowledge_assets.defs.ingest.sensors import (
    HEAD_TAG,
    MIN_INTERVAL_S,
    PREVIOUS_HEAD_TAG,
    source_changed_sensor,
)
from knowledge_assets.resources import PostgresResource, VaultResource
from tests.fakes.github_server import FakeGitHub

from .conftest import EXAMPLE_VAULT

TOKEN = "ghp_sensor_token"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


def github_vault(base_url: str, repo: str = "owner/notes") -> VaultResource:
    # No backoff: a failing head probe gives up after its few retries at once.
    return VaultResource(kind="github", repo=repo, token=TOKEN, base_url=base_url, max_backoff_s=0)


def evaluate(
    vault: VaultResource, db_url: str, cursor: str | None
) -> dg.SensorResult | dg.SkipReason:
    resources: dict[str, Any] = {"vault": vault, "postgres": PostgresResource(database_url=db_url)}
    context = dg.build_sensor_context(cursor=cursor, resources=resources)
    result = source_changed_sensor(context)
    assert isinstance(result, dg.SensorResult | dg.SkipReason)
    return result


def only_request(result: dg.SensorResult | dg.SkipReason) -> dg.RunRequest:
    assert isinstance(result, dg.SensorResult), result
    assert result.run_requests is not None and len(result.run_requests) == 1
    request = result.run_requests[0]
    assert isinstance(request, dg.RunRequest)
    return request


def raw_config(request: dg.RunRequest) -> dict[str, Any]:
    return dict(request.run_config["ops"]["raw_docs"]["config"])


def test_sensor_ticks_at_most_every_30_seconds() -> None:
    assert source_changed_sensor.minimum_interval_seconds == MIN_INTERVAL_S == 30
    assert source_changed_sensor.job_name == "embeddings_job"


def test_github_head_moved_requests_a_diff_sync_of_the_whole_graph(
    gh: FakeGitHub, db_url: str
) -> None:
    old = gh.commit({"notes/a.md": b"# A\n"})
    with db.connect(db_url) as conn:  # the store last synced ``old``
        conn.execute(
            "INSERT INTO meta.sync_state (source_key, last_sha) VALUES (%s, %s)",
            ("github:owner/notes@main/", old),
        )
    new = gh.commit({"notes/b.md": b"# B\n"})
    result = evaluate(github_vault(gh.base_url), db_url, cursor=old)
    request = only_request(result)
    assert isinstance(result, dg.SensorResult) and result.cursor == new
    assert raw_config(request) == {"full": False, "since_sha": old}
    assert request.tags[HEAD_TAG] == new and request.tags[PREVIOUS_HEAD_TAG] == old
    assert request.run_key == f"{new}@0"  # the head, and the previous tick's end (none yet)
    assert request.partition_key == default_model_key()  # no model active yet
    assert request.job_name in (None, "embeddings_job")


def test_github_head_unchanged_skips_without_a_run(gh: FakeGitHub, db_url: str) -> None:
    head = gh.commit({"notes/a.md": b"# A\n"})
    result = evaluate(github_vault(gh.base_url), db_url, cursor=head)
    assert isinstance(result, dg.SkipReason)
    assert result.skip_message is not None and "unchanged" in result.skip_message


def test_first_tick_without_cursor_requests_a_sync_from_the_stored_head(
    gh: FakeGitHub, db_url: str
) -> None:
    head = gh.commit({"notes/a.md": b"# A\n"})
    request = only_request(evaluate(github_vault(gh.base_url), db_url, cursor=None))
    assert raw_config(request) == {"full": False, "since_sha": None}
    assert request.tags[HEAD_TAG] == head and request.tags[PREVIOUS_HEAD_TAG] == ""


def test_github_server_errors_skip_and_keep_the_cursor(gh: FakeGitHub, db_url: str) -> None:
    gh.commit({"notes/a.md": b"# A\n"})
    gh.fail_next(500, times=3)  # as many as one probe tries
    started = time.monotonic()
    result = evaluate(github_vault(gh.base_url), db_url, cursor="c0ffee")
    assert time.monotonic() - started < 10
    assert isinstance(result, dg.SkipReason)
    message = result.skip_message or ""
    assert "unreachable" in message and "c0ffee" in message and "500" in message
    assert len(gh.paths("/branches/main")) == 3  # one try and two retries, then give up
    # The next tick retries from the same cursor and sees the head move.
    assert only_request(evaluate(github_vault(gh.base_url), db_url, cursor="c0ffee"))


def test_github_connection_refused_skips(db_url: str) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = evaluate(github_vault(f"http://127.0.0.1:{port}"), db_url, cursor="c0ffee")
    assert isinstance(result, dg.SkipReason)
    assert "unreachable" in (result.skip_message or "")


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd)}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_a_save_in_a_git_vault_is_synced_before_it_is_committed(
    tmp_path: Path, db_url: str
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", ".")
    git(vault, "commit", "-q", "-m", "first")
    resource = VaultResource(path=str(vault))
    first = evaluate(resource, db_url, cursor=None)
    assert isinstance(first, dg.SensorResult) and first.cursor is not None
    (vault / "inbox.md").write_text("# Inbox\n\nnew thought\n")  # saved, not committed
    saved = evaluate(resource, db_url, cursor=first.cursor)
    assert isinstance(saved, dg.SensorResult) and saved.cursor not in (None, first.cursor)
    assert only_request(saved).tags[PREVIOUS_HEAD_TAG] == first.cursor
    # Committing what was saved changes no note: nothing to sync again.
    git(vault, "commit", "-q", "-am", "second")
    assert isinstance(evaluate(resource, db_url, cursor=saved.cursor), dg.SkipReason)


def test_local_folder_fingerprint_moves_when_a_note_changes(tmp_path: Path, db_url: str) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    resource = VaultResource(path=str(vault))
    first = evaluate(resource, db_url, cursor=None)
    assert isinstance(first, dg.SensorResult) and first.cursor is not None
    assert first.cursor.startswith("tree:")
    assert isinstance(evaluate(resource, db_url, cursor=first.cursor), dg.SkipReason)
    (vault / "projects" / "new-idea.md").write_text("# New idea\n")
    moved = evaluate(resource, db_url, cursor=first.cursor)
    assert isinstance(moved, dg.SensorResult)
    assert moved.cursor not in (None, first.cursor)
    assert only_request(moved).tags[PREVIOUS_HEAD_TAG] == first.cursor


def test_missing_local_folder_skips_and_keeps_the_cursor(tmp_path: Path, db_url: str) -> None:
    result = evaluate(VaultResource(path=str(tmp_path / "gone")), db_url, cursor="tree:abc")
    assert isinstance(result, dg.SkipReason)
    assert "unreachable" in (result.skip_message or "") and "tree:abc" in (
        result.skip_message or ""
    )


def test_unreachable_store_still_requests_the_sync(gh: FakeGitHub) -> None:
    # The run reports the store's error; the tick itself must neither fail nor be lost.
    head = gh.commit({"notes/a.md": b"# A\n"})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=2"
    result = evaluate(github_vault(gh.base_url), down, cursor="c0ffee")
    request = only_request(result)
    assert raw_config(request) == {"full": False, "since_sha": None}
    assert request.partition_key == default_model_key() and request.tags[HEAD_TAG] == head


def test_requested_run_syncs_and_embeds_the_whole_graph(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_assets.definitions import defs

    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_VAULT_PATH", str(vault))
    request = only_request(evaluate(VaultResource(path=str(vault)), db_url, cursor=None))
    job = defs().resolve_job_def("embeddings_job")
    result = job.execute_in_process(
        run_config=request.run_config, partition_key=request.partition_key, tags=request.tags
    )
    materialized = {
        event.asset_key.to_user_string()
        for event in result.get_asset_materialization_events()
        if event.asset_key is not None
    }
    assert materialized == {"raw_docs", "latest_docs", "chunks", "embeddings"}
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
    assert row is not None and row[0] > 10


def test_a_head_seen_again_after_another_is_requested_again() -> None:
    """A rename undone (or a reset) brings back an earlier head: the key of its new tick must
    differ from the first one's, or Dagster drops the request as already done."""
    from knowledge_assets.defs.ingest.sensors import tick_run_key

    def context(last_tick: float | None) -> dg.SensorEvaluationContext:
        return dg.SensorEvaluationContext(instance_ref=None, last_tick_completion_time=last_tick)

    first, again = (
        tick_run_key(context(None), "tree:a"),
        tick_run_key(context(1764150000.4), "tree:a"),
    )
    assert first != again and again == "tree:a@1764150000"
    assert tick_run_key(context(1764150000.4), "tree:a") == again  # a retried tick: same key


def test_a_tick_marks_runs_of_dead_processes_failed(tmp_path: Path, db_url: str) -> None:
    """With one run at a time, a run left STARTED by a killed process held the daemon's queue
    until a ``demo`` or ``dev`` restart; each tick now clears such runs."""
    from knowledge_assets.definitions import defs
    from knowledge_assets.stale_runs import record_run_process, this_process

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        orphan = instance.create_run_for_job(defs().resolve_job_def("embeddings_job"))
        record_run_process(instance, orphan, (str(dead.pid), this_process()[1]))
        instance.handle_run_event(
            orphan.run_id,
            dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name=orphan.job_name),
        )
        resources: dict[str, Any] = {
            "vault": VaultResource(path=str(vault)), "postgres": PostgresResource(database_url=db_url)
        }  # fmt: skip
        context = dg.build_sensor_context(instance=instance, cursor=None, resources=resources)
        source_changed_sensor(context)
        status = instance.get_run_by_id(orphan.run_id).status  # type: ignore[union-attr]
    assert status == dg.DagsterRunStatus.FAILURE


def test_the_tick_log_names_heads_as_short_as_its_skip_reasons(
    tmp_path: Path, db_url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """A tick's log line is read in the UI beside skip reasons that say `tree:5c946f4`; the
    run's tags keep the whole head."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    capfd.readouterr()
    result = evaluate(VaultResource(path=str(vault)), db_url, cursor="tree:" + "0" * 64)
    logged = capfd.readouterr().err  # a context built outside the daemon logs to the console
    head = only_request(result).tags[HEAD_TAG]
    lines = [line for line in logged.splitlines() if "source moved" in line]
    assert len(head) > 12 and len(lines) == 1
    assert f"source moved tree:0000000 -> {head[:12]}: syncing for" in lines[0]
    assert head not in lines[0]


def test_a_run_another_host_left_unfinished_for_hours_is_named_with_the_fix(
    tmp_path: Path,
) -> None:
    """A container recreated on the same store has a new host name: its killed runs stayed
    STARTED, which this machine cannot check, and the daemon's queue waited behind them unsaid."""
    import time

    from knowledge_assets.definitions import defs
    from knowledge_assets.stale_runs import ELSEWHERE_AFTER_S, record_run_process, runs_elsewhere

    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        run = instance.create_run_for_job(defs().resolve_job_def("embeddings_job"))
        record_run_process(instance, run, ("4242", "oldbox"))
        instance.handle_run_event(
            run.run_id, dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name=run.job_name)
        )
        soon, later = time.time() + 60, time.time() + ELSEWHERE_AFTER_S + 3600
        assert runs_elsewhere(instance, now=soon) == []  # it may well be running there
        [line] = runs_elsewhere(instance, now=later)
        status = instance.get_run_by_id(run.run_id).status  # type: ignore[union-attr]
    assert line.startswith(f"run {run.run_id} has been running for 3 h in a process on oldbox")
    assert "terminate the run" in line and status == dg.DagsterRunStatus.STARTED
