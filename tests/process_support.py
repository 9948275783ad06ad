"""Processes seen from outside: which are alive, which are not yet reaped, whose children they
are, a process pool's workers, and which processes a Dagster run started its steps in (from the
run's events in the store); and waiting, bounded, for a condition."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

import psycopg

T = TypeVar("T")


def wait_for(what: Callable[[], T], seconds: float, every: float = 0.2) -> T | None:
    """``what()`` once it is truthy, polling for at most ``seconds``; None if it never was."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := what():
            return value
        time.sleep(every)
    return None


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (the state first), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def alive(pids: Iterable[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie waiting to be reaped is not)."""
    return {p for p in pids if (fields := _stat(p)) and fields[0] != "Z"}


def unreaped(pids: Iterable[int]) -> set[int]:
    """Those of ``pids`` that still have a process entry: running, or a zombie whose parent has
    not reaped it yet."""
    return {p for p in pids if _stat(p) is not None}


def worker_pids(executor: ProcessPoolExecutor) -> list[int]:
    """The worker processes of ``executor`` (private: the executor names them nowhere else)."""
    return [p.pid for p in executor._processes.values() if p.pid is not None]


def children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid``."""
    every = alive(int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit())
    return {p for p in every if (fields := _stat(p)) and int(fields[1]) == pid}


def step_processes(db_url: str) -> dict[str, set[int]]:
    """The process ids each recorded run started its steps in, by run id."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT run_id, event FROM event_logs WHERE dagster_event_type = 'STEP_START'"
        ).fetchall()
    pids: dict[str, set[int]] = {}
    for run_id, event in rows:
        pids.setdefault(run_id, set()).add(json.loads(event)["dagster_event"]["pid"])
    return pids
