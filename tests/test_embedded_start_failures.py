"""An embedded store that cannot be created or started: one line with the server's own reason and
its fix, instead of the wheel's logged command output and "unexpected failure:
CalledProcessError ... report it"; and whatever was in the folder stays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets.core.database.server_output import reason, start_failure
from knowledge_assets.launcher import report_failures
from knowledge_assets.mcp.failures import describe_failure

ROOT = Path(__file__).resolve().parents[1]
PGDATA = Path("/data/pg")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [
                "running bootstrap script ... ",
                "stderr:",
                "2026-11-28 07:32:01.185 UTC [7806] FATAL:  could not write to file"
                ' "pg_wal/xlogtemp.7806": No space left on device',
                "child process exited with exit code 1",
            ],
            'could not write to file "pg_wal/xlogtemp.7806": No space left on device',
        ),
        (
            ['initdb: error: directory "/data/pg" exists but is not empty', "initdb: hint: x"],
            'directory "/data/pg" exists but is not empty',
        ),
        (["pg_ctl: could not start server", "Examine the log output."], "could not start server"),
        (["stdout:", "nothing telling"], "its set-up command failed without an error line"),
        (  # the log file every start appends to: an earlier session's error comes first
            [
                "2026-11-27 09:00:00.000 UTC [81] FATAL:  connection to client lost",
                '2026-11-27 09:10:00.000 UTC [90] ERROR:  relation "no_such_table" does not exist',
                "2026-11-28 07:32:01.185 UTC [7806] FATAL:  could not open file"
                ' "global/pg_control": Permission denied',
                "pg_ctl: could not start server",
            ],
            'could not open file "global/pg_control": Permission denied',
        ),
    ],
    ids=["server FATAL", "initdb error", "pg_ctl", "no error line", "appended log"],
)
def test_the_reason_is_the_servers_own_error_line(lines: list[str], expected: str) -> None:
    assert reason(lines) == expected


@pytest.mark.parametrize(
    ("why", "fix"),
    [
        ("FATAL:  could not write to file: No space left on device", "free space on the disk"),
        ("FATAL:  could not create directory: Permission denied", "make /data/pg writable"),
        ('initdb: error: directory "/data/pg" exists but is not empty', "move the files in"),
        ("FATAL:  something else entirely", "set DATABASE_URL"),
    ],
    ids=["disk full", "permissions", "not empty", "other"],
)
def test_the_fix_follows_the_reason(why: str, fix: str) -> None:
    error = start_failure(PGDATA, [why], subprocess.CalledProcessError(1, "initdb"))
    assert str(error).startswith("the embedded Postgres in /data/pg could not start: ")
    assert error.fix.startswith(fix)


def test_a_file_operation_that_failed_names_its_file() -> None:
    failed = OSError(30, "Read-only file system", "/data")
    error = start_failure(PGDATA, [], failed)
    assert str(error).endswith("could not start: /data: Read-only file system")
    assert "KA_DATA_DIR" in error.fix


def _search(data_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env.pop("DATABASE_URL", None)
    env["KA_DATA_DIR"] = str(data_dir)
    command = [sys.executable, "-m", "knowledge_assets.cli", "search", "梅雨", *flags]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_store_folder_holding_other_files_is_refused_in_one_line_and_kept(
    tmp_path: Path,
) -> None:
    """initdb refuses a folder with files but no store in it (real initdb, real wheel)."""
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    (pgdata / "notes.txt").write_text("mine", encoding="utf-8")
    done = _search(tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f'error: the embedded Postgres in {pgdata} could not start: directory "{pgdata}" exists'
        " but is not empty",
        f"  move the files in {pgdata} elsewhere, or set KA_DATA_DIR to another folder",
    ]
    assert sorted(p.name for p in pgdata.iterdir()) == ["notes.txt"]
    assert (pgdata / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_debug_shows_the_servers_whole_output_too(tmp_path: Path) -> None:
    (tmp_path / "pg").mkdir()
    (tmp_path / "pg" / "notes.txt").write_text("mine", encoding="utf-8")
    done = _search(tmp_path, "--debug")
    assert done.returncode == 1
    assert "initdb" in done.stderr and "exists but is not empty" in done.stderr
    assert "error: the embedded Postgres in" in done.stderr


def test_a_file_where_the_store_folder_goes_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "pg").write_text("not a folder", encoding="utf-8")
    done = _search(tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: the embedded Postgres in {tmp_path / 'pg'} could not start:"
        f" {tmp_path / 'pg'}: File exists",
        f"  {tmp_path / 'pg'} is a file: move it elsewhere, or set KA_DATA_DIR to another folder",
    ]


@dg.asset
def fills_the_disk() -> None:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("full", [True, False], ids=["disk full", "other failure"])
def test_a_run_that_filled_the_disk_says_what_to_do(
    full: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    asset = fills_the_disk if full else failing
    result = dg.materialize([asset], raise_on_error=False)
    report_failures(result)
    err = capsys.readouterr().err.splitlines()
    hint = "  a disk is full: free space on it, then run again; what the run stored is kept"
    assert (hint in err) is full
    assert err[-1].startswith("  details: ")


@dg.asset
def failing() -> None:
    raise ValueError("a note could not be read")


def test_an_mcp_tool_call_that_could_not_start_the_store_says_why_and_what_to_do() -> None:
    error = start_failure(PGDATA, ["FATAL:  could not extend file: No space left on device"],
                          subprocess.CalledProcessError(1, "pg_ctl"))  # fmt: skip
    assert describe_failure(error) == (
        "the embedded Postgres in /data/pg could not start: could not extend file: No space left"
        " on device; free space on the disk holding /data/pg, or set KA_DATA_DIR to a folder on"
        " one with room, then run again"
    )
