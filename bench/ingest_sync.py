"""Ingest benchmark: full sync, no-op re-sync and one-file-changed re-sync of raw_docs + latest_docs.

Vaults of 1,000 and 10,000 notes are built by replicating the 59 real notes of
shared/eval/jsquad/vault with varied names and a few varied words. Two sources: a local folder
(a re-sync must stat the tree: the folder offers no change feed) and a GitHub repository served
by the loopback GitHub fake of the tests (a re-sync compares commit SHAs: its cost follows the
number of changed files, not the size of the vault). HTTP requests are counted for GitHub.

    .venv/bin/python bench/ingest_sync.py [--sizes 1000 10000] [--sources local github]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import JSQUAD, fresh_database

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.base import Source
from knowledge_assets.core.sources.github import GitHubSource
from knowledge_assets.core.sources.local import LocalSource
from tests.fakes.github_server import FakeGitHub


def build_vault(root: Path, size: int) -> list[Path]:
    notes = sorted((JSQUAD / "vault").glob("*.md"))
    texts = [n.read_text(encoding="utf-8") for n in notes]
    written = []
    for i in range(size):
        j = i % len(notes)
        folder = root / f"folder{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{i:05d}_{notes[j].stem}.md"
        body = (
            texts[j].replace("。", f"。（版{i}）", 1).replace("段落", f"段落{i // len(notes)}", 1)
        )
        path.write_text(body, encoding="utf-8")
        written.append(path)
    return written


def timed(url: str, source: Source) -> tuple[float, int, int]:
    started = time.perf_counter()
    with db.connect(url) as conn:
        report = sync_source(conn, source)
        refresh_latest(conn, source.table)
    return time.perf_counter() - started, report.fetched, len(report.new) + len(report.changed)


def _line(kind: str, size: int, step: str, result: tuple[float, int, int], requests: str) -> None:
    seconds, read, changed = result
    print(f"{kind:6s} {size:>6} notes | {step:17s} {seconds:8.3f} s | {read:>6} files read | "
          f"{changed:>6} new/changed{requests}")  # fmt: skip


def run_local(size: int) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"vault{size}_"))
    files = build_vault(root, size)
    url, source = fresh_database(), LocalSource(root)
    _line("local", size, "full sync", timed(url, source), "")
    _line("local", size, "no-op re-sync", timed(url, source), "")
    target = files[size // 2]
    target.write_text(target.read_text(encoding="utf-8") + "\n追記。\n", encoding="utf-8")
    os.utime(target, ns=(time.time_ns(), time.time_ns()))
    _line("local", size, "one file changed", timed(url, source), "")
    shutil.rmtree(root, ignore_errors=True)


def run_github(size: int) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"repo{size}_"))
    files = build_vault(root, size)
    tree = {p.relative_to(root).as_posix(): p.read_bytes() for p in files}
    with FakeGitHub(token="bench-token") as gh:
        gh.commit(tree)
        url = fresh_database()
        source = GitHubSource(gh.repo, token="bench-token", base_url=gh.base_url)
        for step in ("full sync", "no-op re-sync", "one file changed"):
            if step == "one file changed":
                path = files[size // 2].relative_to(root).as_posix()
                gh.commit({path: tree[path] + "\n追記。\n".encode()})
            before = len(gh.requests)
            result = timed(url, source)
            _line("github", size, step, result, f" | {len(gh.requests) - before} HTTP requests")
    shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--sources", nargs="+", default=["local", "github"])
    args = parser.parse_args()
    print(
        "command: .venv/bin/python bench/ingest_sync.py --sizes "
        + " ".join(map(str, args.sizes))
        + " --sources "
        + " ".join(args.sources)
    )
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded PostgreSQL 18"
    print(f"data: replicas of ../shared/eval/jsquad/vault (59 notes); store: {store}")
    print(f"timing: raw_docs sync + latest_docs refresh; {os.cpu_count()} CPU cores")
    for size in args.sizes:
        for kind in args.sources:
            (run_local if kind == "local" else run_github)(size)


if __name__ == "__main__":
    main()
