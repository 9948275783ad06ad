"""Wall and CPU time of ``knowledge-assets update`` when nothing changed, as a person (or a git
hook) runs it: the whole command, from process start to exit, on a store already up to date.

    .venv/bin/python bench/update_command.py [--runs 5] [--vault FOLDER]
    ROOT=/path/to/other/checkout .venv/bin/python bench/update_command.py

``ROOT`` (default: this checkout) names the project tree whose code runs, so two versions can
be timed back to back. The vault defaults to ../shared/eval/survival-ts/docs (264 notes); the
store is a fresh embedded one in a temporary data directory, built by one untimed ``update``
with the default model. Each run is bounded by a timeout; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import SHARED, SURVIVAL

ROOT = Path(os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))).resolve()
_MAIN = "import sys; sys.path.insert(0, sys.argv.pop(1)); from knowledge_assets.cli import main; sys.exit(main())"
TIMEOUT_S = 600


def update(env: dict[str, str]) -> tuple[float, float, int]:
    """One ``update``: (wall s, CPU s of the command and its children, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, str(ROOT), "update"], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        print("  " + "\n  ".join(done.stderr.strip().splitlines()[-3:]))
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--vault", type=Path, default=SURVIVAL)
    args = parser.parse_args()
    tree = "ROOT=<tree> " if "ROOT" in os.environ else ""
    vault = (
        "../shared/" + args.vault.relative_to(SHARED).as_posix()
        if args.vault.is_relative_to(SHARED)
        else "<folder>"
    )
    print(f"command: {tree}.venv/bin/python bench/update_command.py --runs {args.runs}"
          f" --vault {vault}; load {os.getloadavg()}")  # fmt: skip
    data = Path(tempfile.mkdtemp(prefix="ka-update-"))
    env = os.environ | {"KA_VAULT_PATH": str(args.vault), "KA_DATA_DIR": str(data)}
    try:
        wall, _, code = update(env)
        print(f"first build: {wall:.1f} s, exit {code}")
        runs = [update(env) for _ in range(args.runs)]
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(f"no-op update x{args.runs}: wall median {statistics.median(walls):.2f} s"
              f" (min {min(walls):.2f}, max {max(walls):.2f}), CPU median"
              f" {statistics.median(cpus):.2f} s; exits {sorted({r[2] for r in runs})};"
              f" load {os.getloadavg()}")  # fmt: skip
    finally:
        subprocess.run(["pkill", "-f", f"postgres -D {data}"], check=False)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
