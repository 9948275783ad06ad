"""Ingest benchmark: full sync, no-op re-sync and one-file-changed re-sync of raw_docs + latest_docs.

Vaults of 1,000 and 10,000 notes are built by replicating the 59 real notes of
shared/eval/jsquad/vault with varied names and a few varied words.

    .venv/bin/python bench/ingest_sync.py [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from common import JSQUAD, fresh_database

from knowledge_assets.core import db
from knowledge_assets.core.ingest import sync_source
from knowledge_assets.core.latest import refresh_latest
from knowledge_assets.core.sources.local import LocalSource


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


def timed(url: str, source: LocalSource) -> tuple[float, int, int]:
    started = time.perf_counter()
    with db.connect(url) as conn:
        report = sync_source(conn, source)
        refresh_latest(conn, source.table)
    return time.perf_counter() - started, report.fetched, len(report.new) + len(report.changed)


def run(size: int) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"vault{size}_"))
    files = build_vault(root, size)
    url = fresh_database()
    source = LocalSource(root)
    full, read, _ = timed(url, source)
    noop, noop_read, _ = timed(url, source)
    target = files[size // 2]
    target.write_text(target.read_text(encoding="utf-8") + "\n追記。\n", encoding="utf-8")
    os.utime(target, ns=(time.time_ns(), time.time_ns()))
    one, one_read, one_changed = timed(url, source)
    print(f"{size:>6} notes | full sync {full:7.2f} s ({read} read) | no-op re-sync "
          f"{noop:6.3f} s ({noop_read} read) | one file changed {one:6.3f} s "
          f"({one_read} read, {one_changed} changed)")  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    print(
        "command: .venv/bin/python bench/ingest_sync.py --sizes " + " ".join(map(str, args.sizes))
    )
    print(f"data: replicas of {JSQUAD / 'vault'} (59 notes); store: "
          f"{'DATABASE_URL' if os.environ.get('DATABASE_URL') else 'embedded pgserver'}")  # fmt: skip
    print("timing: raw_docs sync + latest_docs refresh, local folder source, 2-core machine")
    for size in args.sizes:
        run(size)


if __name__ == "__main__":
    main()
