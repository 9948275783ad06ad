"""Commands print what they did, not warnings the user can do nothing about."""

from __future__ import annotations

import os
import subprocess
import sys


def _stderr_of(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_embedded_postgres_import_prints_no_runtime_dir_warning() -> None:
    # Without a login session XDG_RUNTIME_DIR is unset: importing pgserver as such warns ...
    assert "XDG_RUNTIME_DIR" in _stderr_of("import pgserver")
    # ... and the store's own import of it does not.
    assert _stderr_of("from knowledge_assets.core import db; db._import_pgserver()") == ""
