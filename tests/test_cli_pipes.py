"""A reader that stops early (``knowledge-assets get x | head -1``) ends the command quietly, as
it ends git or cat: no error, exit code 141 (128 + SIGPIPE)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from knowledge_assets.cli_errors import EXIT_CLOSED_PIPE
from tests.test_search import LATEST, ingest

ROOT = Path(__file__).resolve().parents[1]


def _closed_early(argv: list[str]) -> tuple[int, str]:
    """Run the command with its standard output a pipe whose reader closed before it wrote."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "knowledge_assets.cli", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=120), err


@pytest.mark.parametrize(
    "argv",
    [
        ["get", LATEST],
        ["search", "検索", "--mode", "keyword", "--limit", "100", "--json"],
        ["tags"],
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    ingest(db_url, None)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    code, err = _closed_early(argv)
    assert (code, err) == (EXIT_CLOSED_PIPE, "")


def test_help_to_a_closed_pipe_says_nothing() -> None:
    code, err = _closed_early(["--help"])
    assert err == "" and code in (0, EXIT_CLOSED_PIPE)  # argparse may drop the failed write


def test_a_reader_that_takes_one_line_gets_it(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(db_url, None)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    command = f"{sys.executable} -m knowledge_assets.cli get {LATEST} | head -1"
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.stdout.startswith("# ") and done.stdout.count("\n") == 1
    assert "error" not in done.stderr


def test_a_broken_pipe_of_the_commands_own_is_reported_not_hidden() -> None:
    """Only a closed standard output ends quietly: a subprocess's or a socket's broken pipe,
    with the reader still there, is an error the user hears about."""
    code = (
        "import sys\n"
        "from knowledge_assets.cli_errors import run_reporting\n"
        "def command():\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "sys.exit(run_reporting(command, debug=False))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 1 and "Broken pipe" in done.stderr
