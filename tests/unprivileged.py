"""Run a local sync as a process that file permissions apply to.

Tests run as root, and root reads every file whatever its mode. The child below connects to the
store first, then drops every capability (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, ...) with
``capset(2)``: though still uid 0, it is then refused a file or folder with mode 000, exactly as a
normal user is, while its open database connection keeps working.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

DROP_CAPABILITIES = """
import ctypes, os
def drop_capabilities():
    if os.geteuid() != 0:
        return
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()) != 0:
        raise SystemExit(f"capset failed: errno {ctypes.get_errno()}")
"""
_SYNC = (
    DROP_CAPABILITIES
    + """
import json, sys
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource
with db.connect(sys.argv[1]) as conn:
    drop_capabilities()
    try:
        r = sync_source(conn, LocalSource(sys.argv[2]))
    except Exception as exc:
        print(json.dumps({"error": str(exc)}))
        raise SystemExit(0)
print(json.dumps({"new": r.new, "deleted": r.deleted, "rejected": r.rejected,
                  "unreadable": r.unreadable}))
"""
)
_PROBE = (
    DROP_CAPABILITIES
    + """
import sys
drop_capabilities()
try:
    os.listdir(sys.argv[1]) if os.path.isdir(sys.argv[1]) else open(sys.argv[1]).close()
except PermissionError:
    sys.exit(3)
"""
)


def sync_unprivileged(db_url: str, vault: Path, timeout_s: float = 120) -> dict[str, Any]:
    """Sync ``vault`` into ``db_url`` without the power to bypass file permissions."""
    done = subprocess.run(
        [sys.executable, "-c", _SYNC, db_url, str(vault)],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def require_unreadable(path: Path) -> None:
    """Skip unless the unprivileged child is really refused ``path`` (a check of the set-up)."""
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path)], check=False, timeout=60)
    if done.returncode != 3:
        pytest.skip(f"cannot drop the privilege to read mode-000 files here (uid {os.geteuid()})")
