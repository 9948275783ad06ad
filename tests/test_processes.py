"""Telling a live local process from one that has exited (the embedded server's user list and
the runs of ``demo`` both rely on it)."""

from __future__ import annotations

import os
import subprocess
import sys

from knowledge_assets.core.database.processes import alive


def test_a_running_process_is_alive() -> None:
    assert alive(os.getpid())


def test_an_exited_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)  # reaped: its id names no process any more
    assert not alive(child.pid)


def test_init_is_alive_whoever_runs_the_check() -> None:
    assert alive(1)  # as another user, signalling it is refused, yet it exists
