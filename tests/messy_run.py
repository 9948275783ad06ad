"""Run the asset graph over the adversarial vault in a bounded, unprivileged child; judge the result.

The child drops every capability before it reads a file (see :mod:`tests.unprivileged`), so
mode-000 files are unreadable to it although tests run as root. It reaches the embedded
Postgres through a hard link of the server's socket in a folder it may enter (the server's data
folder is private to the server's user); a TCP ``DATABASE_URL`` is used as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from knowledge_assets.core.database import db
from knowledge_assets.core.search import search
from tests.messy_vault import Case, Vault
from tests.unprivileged import DROP_CAPABILITIES

_GRAPH = (
    DROP_CAPABILITIES
    + """
import json, sys, time
started = time.perf_counter()
import dagster as dg
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
url, vault, embed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
drop_capabilities()
assets = [raw_docs, latest_docs, chunks] + ([embeddings] if embed else [])
result = dg.materialize(
    assets,
    resources={"postgres": PostgresResource(database_url=url), "vault": VaultResource(path=vault),
               "embedder": EmbedderResource(provider="usem3")},
    partition_key="usem3" if embed else None,
    raise_on_error=False,
)
metadata = {}
for event in result.get_asset_materialization_events():
    mat = event.materialization
    metadata[mat.asset_key.to_user_string()] = {
        k: " | ".join(str(r.data) for r in v.records) if isinstance(v, dg.TableMetadataValue)
        else v.value
        for k, v in mat.metadata.items()
        if isinstance(v, dg.TableMetadataValue) or isinstance(v.value, (int, float, str))
    }
def _root(error):
    while error is not None and error.cause is not None:
        error = error.cause
    return error.message.strip() if error is not None else ""


failures = [f"{e.message} {_root(e.step_failure_data.error)}"[:600]
            for e in result.get_step_failure_events()]
print(json.dumps({"success": result.success, "seconds": time.perf_counter() - started,
                  "metadata": metadata, "failures": failures}))
"""
)


@dataclass
class RunResult:
    """What one run of the graph did: finished in time, succeeded, how long, its metadata."""

    success: bool = False
    hung: bool = False
    seconds: float = 0.0
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def child_url(url: str, folder: Path) -> str:
    """``url`` made reachable for the unprivileged child (see the module docstring)."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    host = str(info.get("host") or "")
    if not host.startswith("/"):
        return url
    port = info.get("port") or 5432
    socket = Path(host) / f".s.PGSQL.{port}"
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    link = folder / socket.name
    link.unlink(missing_ok=True)
    os.link(socket, link)
    info["host"] = str(folder)
    return psycopg.conninfo.make_conninfo(**info)


def run_graph(url: str, vault: Path, *, embed: bool, timeout_s: float) -> RunResult:
    """Materialize the graph over ``vault`` in a child process; a run over time counts as hung."""
    with tempfile.TemporaryDirectory(prefix="ka-socket-") as tmp:
        reachable = child_url(url, Path(tmp))
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-c", _GRAPH, reachable, str(vault), "1" if embed else "0"],
                capture_output=True, text=True, timeout=timeout_s, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return RunResult(hung=True, seconds=time.perf_counter() - started)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return RunResult(failures=[done.stderr[-1500:]], seconds=time.perf_counter() - started)
    return RunResult(**json.loads(lines[-1]))


@dataclass
class Verdict:
    """How the store treated each input, and which did not become what they should."""

    outcomes: dict[str, str] = field(default_factory=dict)  # case name -> what happened
    wrong: list[str] = field(default_factory=list)  # "case: expected X, got Y"
    good_lost: list[str] = field(default_factory=list)


def judge(url: str, vault: Vault, cases: list[Case]) -> Verdict:
    """Compare the store with what every case and good note must have become."""
    verdict = Verdict()
    with db.connect(url) as conn:
        stored = {r[0] for r in conn.execute("SELECT file_path FROM raw.docs_local")}
        rejected = dict(conn.execute("SELECT file_path, reason FROM raw.rejected_files"))

        def found(word: str, path: str) -> bool:
            hits = search(conn, word, mode="keyword", limit=20).hits
            return any(h.file_path == path for h in hits)

        for path, word in sorted(vault.good.items()):
            if not found(word, path):
                verdict.good_lost.append(path)
        for case in cases:
            got = _outcome(case, stored, rejected, found)
            verdict.outcomes[case.name] = got
            if not _meets(case, got, rejected.get(case.path, "")):
                verdict.wrong.append(
                    f"{case.name} ({case.path!r}): expected {case.expect}, got {got}"
                )
    return verdict


def _outcome(case: Case, stored: set[str], rejected: dict[str, str], found: Any) -> str:
    if case.path in rejected:
        return "rejected: " + rejected[case.path]
    if case.path in stored:
        return "searchable" if case.marker and found(case.marker, case.path) else "stored"
    if any(p.startswith(case.path) for p in stored) and case.path.endswith("/"):
        return "stored"
    return "ignored"


def _meets(case: Case, got: str, reason: str) -> bool:
    if case.expect == "either":
        return got != "ignored" and (not got.startswith("rejected") or bool(reason))
    if case.expect == "rejected":
        return got.startswith("rejected") and case.reason in reason
    if case.expect == "stored":
        return got in ("stored", "searchable")
    return got == case.expect
