"""Dagster's own commands work from the project folder with nothing set up: no DAGSTER_HOME, no
storage variables. Each runs in a subprocess, as a user would type it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from rich.cells import cell_len

from knowledge_assets.core.database.db import PROJECT_ROOT
from knowledge_assets.demo_hints import command_name, next_steps
from knowledge_assets.launcher import handover_lines, labelled_summary
from tests.browser_support import DagsterDev
from tests.conftest import EXAMPLE_VAULT
from tests.process_support import step_processes

BIN = Path(sys.executable).parent
SAMPLE_FILES = 8  # Markdown files in examples/vault


@pytest.fixture
def user_env(db_url: str, tmp_path: Path) -> dict[str, str]:
    """A shell as a user has it: the project's virtualenv active, a store, a vault, and none of
    Dagster's variables."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "KA_"))}
    env.update(
        VIRTUAL_ENV=str(BIN.parent),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        DATABASE_URL=db_url,
        KA_DATA_DIR=str(tmp_path / "data"),
        KA_VAULT_PATH=str(vault),
        KA_AUTOMATION="off",
    )
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _runs(db_url: str) -> list[tuple[str, str]]:
    """(job, status) of every run Dagster recorded in the store's database."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT pipeline_name, status FROM runs ORDER BY id").fetchall()
    return [(str(job), str(status)) for job, status in rows]


@pytest.mark.slow
def test_dg_list_defs_and_launch_record_runs_in_the_store(
    user_env: dict[str, str], db_url: str
) -> None:
    listed = _run(["dg", "list", "defs"], user_env)
    assert listed.returncode == 0, listed.stderr
    for name in ("raw_docs", "embeddings", "source_changed_sensor", "embeddings_schedule"):
        assert name in listed.stdout

    launched = _run(["dg", "launch", "--assets", "raw_docs"], user_env)
    assert launched.returncode == 0, launched.stderr[-3000:]
    with psycopg.connect(db_url) as conn:
        stored = conn.execute("SELECT count(*) FROM raw.docs_local").fetchone()
    assert stored == (SAMPLE_FILES,)
    assert _runs(db_url) == [("__ASSET_JOB", "SUCCESS")]
    # raw_docs and its check, both in the run's one process (not a process per step)
    [pids] = step_processes(db_url).values()
    assert len(pids) == 1

    materialized = _run(
        ["dagster", "asset", "materialize", "-m", "knowledge_assets.definitions",
         "--select", "raw_docs"],
        user_env,
    )  # fmt: skip
    assert materialized.returncode == 0, materialized.stderr[-3000:]
    assert _runs(db_url) == [("__ASSET_JOB", "SUCCESS")] * 2
    assert [len(p) for p in step_processes(db_url).values()] == [1, 1]
    assert "Traceback" not in listed.stderr + launched.stderr + materialized.stderr
    assert "XDG_RUNTIME_DIR" not in listed.stderr + launched.stderr + materialized.stderr


def test_launching_embeddings_without_a_partition_says_which_to_pick(
    user_env: dict[str, str], db_url: str
) -> None:
    done = _run(["dg", "launch", "--assets", "embeddings"], user_env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "add --partition usem3" in done.stderr.strip().splitlines()[-1]
    assert _runs(db_url) == []  # refused before a run was created


@pytest.mark.slow
def test_dg_dev_serves_the_code_location(user_env: dict[str, str], tmp_path: Path) -> None:
    server = DagsterDev(tmp_path, user_env["DATABASE_URL"], Path(user_env["KA_VAULT_PATH"]))
    server.env = {**user_env}
    server.command = [str(BIN / "dg"), "dev", "--host", "127.0.0.1", "--port", str(server.port)]
    with server:
        data = server.graphql(
            "{ repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name } } } } }"
        )
    names = {s["name"] for repo in data["repositoriesOrError"]["nodes"] for s in repo["sensors"]}
    assert "source_changed_sensor" in names


@pytest.mark.slow
@pytest.mark.parametrize("command", ["demo", "update"])
def test_demo_and_update_hand_their_synced_head_to_the_sensor(
    command: str, user_env: dict[str, str], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Otherwise the sensor's next tick runs the whole graph again, and the asset pages show
    that run's "no changes" instead of what the update changed."""
    import dagster as dg
    from dagster._core.definitions.selector import InstigatorSelector

    from knowledge_assets.automation_state import location_name
    from knowledge_assets.defs.ingest.sensors import source_changed_sensor
    from knowledge_assets.resources import PostgresResource, VaultResource

    done = _run(["knowledge-assets", command], user_env)
    assert done.returncode == 0, done.stderr[-3000:]
    monkeypatch.setenv("DATABASE_URL", db_url)
    selector = InstigatorSelector(
        location_name=location_name(),
        repository_name="__repository__",
        name="source_changed_sensor",
    )
    with dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
        state = instance.get_instigator_state("", selector.get_id())
    assert state is not None and state.instigator_data is not None
    cursor = state.instigator_data.cursor  # type: ignore[union-attr]
    assert cursor and cursor.startswith("tree:")
    # The first tick after demo: the vault is unchanged, so nothing is requested.
    context = dg.build_sensor_context(
        cursor=cursor,
        resources={
            "vault": VaultResource(path=user_env["KA_VAULT_PATH"]),
            "postgres": PostgresResource(database_url=db_url),
        },
    )
    result = source_changed_sensor(context)
    assert isinstance(result, dg.SkipReason), result
    assert "unchanged" in (result.skip_message or "")


@pytest.mark.slow
def test_dg_with_an_unreachable_database_url_names_it_and_the_fix(
    user_env: dict[str, str],
) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    user_env["DATABASE_URL"] = f"postgresql://ka:s3cret-pw@127.0.0.1:{port}/ka"
    done = _run(["dg", "list", "defs"], user_env)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "cannot reach the Postgres that holds Dagster's runs (DATABASE_URL)" in last
    assert f"port {port} failed" in last and "fix DATABASE_URL" in last
    assert "s3cret-pw" not in done.stdout + done.stderr


@pytest.mark.slow
def test_dev_stopped_with_sigterm_stops_its_webserver_daemon_and_code_servers(
    user_env: dict[str, str], tmp_path: Path
) -> None:
    """What a service manager does (systemd, ``docker stop``): SIGTERM to the process it
    started, and to it alone. Before, that process ended and left the services running."""
    import psutil

    with DagsterDev(tmp_path, user_env["DATABASE_URL"], Path(user_env["KA_VAULT_PATH"])) as dev:
        assert dev.process is not None
        services = psutil.Process(dev.process.pid).children(recursive=True)
        assert len(services) >= 3, services  # dagster dev, the webserver, the daemon
        os.kill(dev.process.pid, signal.SIGTERM)
        assert dev.process.wait(timeout=120) is not None
        _, alive = psutil.wait_procs(services, timeout=60)
        assert alive == [], [p.cmdline()[:4] for p in alive]


@pytest.mark.slow
def test_demo_names_the_files_it_rejected_and_what_to_try_next(
    user_env: dict[str, str],
) -> None:
    """Pointed at a vault (``KA_VAULT_PATH=… ./scripts/demo``, as the README has it), demo said
    ``1 rejected`` without which file or why, and ended at the run's id."""
    (Path(user_env["KA_VAULT_PATH"]) / "broken.md").write_text("---\ntitle: [oops\n---\nbody\n")
    done = _run(["knowledge-assets", "demo"], user_env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "  raw_docs: rejected broken.md: malformed YAML frontmatter" in done.stderr
    # Typed as the user can type it again from the project folder: the project's own
    # .venv/bin/knowledge-assets (what ./scripts/demo runs), or the name of one found elsewhere.
    program = BIN / "knowledge-assets"
    again = (
        os.path.relpath(program, PROJECT_ROOT)
        if program.is_relative_to(PROJECT_ROOT)
        else "knowledge-assets"
    )
    hints = next_steps(again).splitlines()
    assert done.stdout.splitlines()[-len(hints) :] == hints
    assert 'knowledge-assets search "…"' in done.stdout
    assert (
        "  sensor       source_changed_sensor (in `knowledge-assets dev`)\n"
        "               carries on from this sync (tree:"
    ) in done.stdout
    # Every line but the two naming the vault's folder and the store, whatever their length.
    summary = [line for line in done.stdout.splitlines() if line.startswith(" ")]
    assert all(cell_len(line) <= 80 for line in summary), done.stdout


def test_the_next_steps_name_the_command_as_it_was_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / ".venv" / "bin" / "knowledge-assets"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(program), "demo"])
    assert command_name() == ".venv/bin/knowledge-assets"  # what scripts/demo ran
    monkeypatch.chdir(tmp_path.parent)
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/knowledge-assets", "demo"])
    assert command_name() == "knowledge-assets"  # on the PATH


@pytest.mark.parametrize("command", ["knowledge-assets", ".venv/bin/knowledge-assets"])
def test_the_next_steps_fit_an_80_column_terminal(command: str) -> None:
    lines = next_steps(command).splitlines()
    assert max(cell_len(line) for line in lines) <= 80, lines
    for step in ('search "…"', "status", "serve", "dev"):  # each command, and what it does
        assert any(line.startswith(f"  {command} {step}") for line in lines)
    assert any("search the notes (ask" in line for line in lines)
    one_each = 1 + 4
    assert len(lines) == (one_each if command == "knowledge-assets" else 1 + 2 * 4)


@pytest.mark.parametrize(
    ("key", "summary", "lines"),
    [
        (
            "latest_docs",
            "59 notes to search; left out: 1 superseded, 1 draft, 0 without a body",
            [
                "  latest_docs  59 notes to search;",
                "               left out: 1 superseded, 1 draft, 0 without a body",
            ],
        ),
        (
            "raw_docs",
            "12,345 new, 1 changed, 58 unchanged, 0 deleted, 0 renamed, 1 rejected, "
            "3 notes with warnings",
            [
                "  raw_docs     12,345 new, 1 changed, 58 unchanged, 0 deleted, 0 renamed,",
                "               1 rejected, 3 notes with warnings",
            ],
        ),
        (
            "raw_docs",  # 72 characters, 85 columns: a Japanese character takes two
            "未分類/とても長い名前のノート.md unreadable, 12,345 notes with warnings",
            [
                "  raw_docs     未分類/とても長い名前のノート.md unreadable,",
                "               12,345 notes with warnings",
            ],
        ),
        (
            "chunks",
            "12,345 notes re-chunked: 123,456 chunks written, 1,092 unchanged, 53 removed",
            [
                "  chunks       12,345 notes re-chunked:",
                "               123,456 chunks written, 1,092 unchanged, 53 removed",
            ],
        ),
        (
            "embeddings",
            "Nothing to embed: usem3 already has a vector for 1,094 texts",
            ["  embeddings   Nothing to embed: usem3 already has a vector for 1,094 texts"],
        ),
    ],
)
def test_demo_summaries_go_on_in_a_second_line_rather_than_past_80_columns(
    key: str, summary: str, lines: list[str]
) -> None:
    assert labelled_summary(key, summary).splitlines() == lines


def test_the_sensor_handover_fits_80_columns() -> None:
    lines = handover_lines("source_changed_sensor", "tree:5472185abcdef").splitlines()
    assert lines == [
        "  sensor       source_changed_sensor (in `knowledge-assets dev`)",
        "               carries on from this sync (tree:5472185)",
    ]
