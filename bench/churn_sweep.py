"""Notes that change while runs sync them. ``update`` runs back to back while another thread
edits, creates, deletes and renames notes of the vault: saves in place in several writes (as
most editors save), atomic saves through a temporary file, renames into new folders,
one-character fixes of the note being worked on. Then the writer stops, one quiet ``update``
runs, and the store must hold exactly the vault: the same paths, each with the content hash of
its file as it is now, chunks of that version, every passage embedded, no file left rejected; a
second quiet ``update`` changes nothing.

    .venv/bin/python bench/churn_sweep.py [--rounds 10] [--seed 1] [--coarse | --github]

``--coarse`` gives each file the writer saves a whole-second mtime, as FAT and HFS+ store
them: a one-character fix saved in the same second as the save before it then changes neither
the size nor the mtime of the file.

``--github`` keeps the notes in a GitHub repository served on loopback (``tests/fakes``) instead:
the writer pushes commits (edits, new notes, deletions, renames, one-digit fixes) and now and
then force-pushes over its last two commits; the store must then hold the branch's head.

The vault starts as a copy of the jsquad notes (59), on a fresh embedded store in a temporary
data directory with the default model. Everything is local and bounded: each run has a timeout,
the writer makes at most ``--ops`` changes per run, and the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from churn_writers import FolderWriter, RepoWriter, Writer  # noqa: E402
from common import JSQUAD  # noqa: E402

from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document  # noqa: E402
from tests.fakes.github_server import FakeGitHub  # noqa: E402

COMMAND = [str(ROOT / ".venv" / "bin" / "knowledge-assets")]
RUN_TIMEOUT_S = 600


def sections_of(vault: Path) -> list[str]:
    out = []
    for note in sorted(vault.rglob("*.md")):
        out += [s.strip() for s in note.read_text("utf-8").split("\n## ") if len(s) > 80]
    return [("## " + s) if not s.startswith("#") else s for s in out]


def update(env: dict[str, str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        [*COMMAND, "update"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def expected(notes: dict[str, bytes]) -> dict[str, str]:
    """Each note path -> the content hash of its bytes now (as the pipeline parses them)."""
    out = {}
    for path, data in notes.items():
        parsed = parse_document(path, data)
        assert isinstance(parsed, ParsedDoc), parsed
        out[path] = parsed.content_hash
    return out


def store_state(url: str, table: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        raw = dict(
            conn.execute(
                sql.SQL("SELECT file_path, content_hash FROM {}").format(
                    sql.Identifier("raw", table)
                )
            ).fetchall()
        )
        latest = dict(
            conn.execute("SELECT file_path, content_hash FROM rag.latest_docs").fetchall()
        )
        stale_chunks = conn.execute(
            "SELECT count(*) FROM rag.latest_docs l WHERE NOT EXISTS (SELECT 1 FROM rag.chunks c"
            " WHERE c.document_id = l.id AND c.chunk_index = 0 AND c.doc_hash = l.content_hash)"
        ).fetchone()
        orphan_chunks = conn.execute(
            "SELECT count(*) FROM rag.chunks c WHERE NOT EXISTS"
            " (SELECT 1 FROM rag.latest_docs l WHERE l.id = c.document_id)"
        ).fetchone()
        rejected = conn.execute("SELECT file_path, reason FROM raw.rejected_files").fetchall()
    return {
        "raw": raw, "latest": latest, "stale_chunks": stale_chunks[0] if stale_chunks else -1,
        "orphan_chunks": orphan_chunks[0] if orphan_chunks else -1, "rejected": rejected,
    }  # fmt: skip


def verdict(notes: dict[str, bytes], url: str, table: str, status: str) -> list[str]:
    """What in the store does not match the notes (empty: it converged)."""
    want, state = expected(notes), store_state(url, table)
    problems = []
    for name in ("raw", "latest"):
        have = state[name]
        assert isinstance(have, dict)
        missing, extra = set(want) - set(have), set(have) - set(want)
        stale = [p for p in set(want) & set(have) if want[p] != have[p]]
        if missing or extra or stale:
            problems.append(f"{name}: {len(missing)} missing, {len(extra)} extra, {len(stale)}"
                            f" stale, e.g. {sorted(missing | extra)[:2] + sorted(stale)[:2]}")  # fmt: skip
    for name in ("stale_chunks", "orphan_chunks"):
        if state[name]:
            problems.append(f"{name.replace('_', ' ')}: {state[name]}")
    if state["rejected"]:
        problems.append(f"rejected files left: {state['rejected'][:3]}")
    if "every passage has a vector" not in status:
        problems.append("status: " + " / ".join(status.strip().splitlines()[-3:]))
    return problems


def server_url(data: Path) -> str:
    from knowledge_assets.core.database import embedded

    return str(embedded.start(data / "pg").get_uri())


@contextlib.contextmanager
def source(args: argparse.Namespace, work: Path) -> Iterator[tuple[dict[str, str], Any]]:
    """The environment that points ``update`` at the notes, and a factory of writers."""
    vault = work / "vault"
    shutil.copytree(JSQUAD / "vault", vault)
    sections = sections_of(vault)
    if not args.github:
        yield (
            {"KA_VAULT_PATH": str(vault)},
            lambda rng: FolderWriter(vault, sections, rng, args.ops, args.coarse),
        )
        return
    with FakeGitHub("me/notes") as gh:
        gh.commit({p.relative_to(vault).as_posix(): p.read_bytes() for p in vault.rglob("*.md")})
        env = {"KA_SOURCE": "github", "KA_GITHUB_REPO": gh.repo, "KA_GITHUB_BASE_URL": gh.base_url}
        yield env, lambda rng: RepoWriter(gh, sections, rng, args.ops)


def churn(env: dict[str, str], writer: Writer, i: int) -> str:
    """One ``update`` while ``writer`` changes the notes; what it ended with."""
    writer.start()
    started = time.monotonic()
    code, _, err = update(env)
    writer.halt.set()
    writer.join(timeout=10)
    what = "traceback" if "Traceback" in err else f"exit {code}"
    print(f"  update {i + 1:2d}: {what} after {time.monotonic() - started:5.1f} s,"
          f" while the writer made {dict(writer.done)}", flush=True)  # fmt: skip
    if code != 0:
        print("    " + "\n    ".join(err.strip().splitlines()[-3:]))
    return what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--ops", type=int, default=200, help="most changes per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--coarse", action="store_true",
        help="give every file the writer saves a whole-second mtime, as FAT and HFS+ keep",
    )  # fmt: skip
    parser.add_argument("--github", action="store_true", help="a loopback GitHub repository")
    args = parser.parse_args()
    flags = " --coarse" * args.coarse + " --github" * args.github
    print(f"command: .venv/bin/python bench/churn_sweep.py --rounds {args.rounds} --ops"
          f" {args.ops} --seed {args.seed}{flags}; load {os.getloadavg()}")  # fmt: skip
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="ka-churn-"))
    data = work / "data"
    table = "docs_github" if args.github else "docs_local"
    try:
        with source(args, work) as (where, writer_for):
            env = os.environ | where | {"KA_DATA_DIR": str(data), "NO_COLOR": "1"}
            kind = "a loopback GitHub repository" if args.github else "a folder"
            count = len(list((JSQUAD / "vault").rglob("*.md")))
            print(f"data: {JSQUAD.name}/vault ({count} notes) in {kind}; default model")
            print(f"first update: exit {update(env)[0]}")
            outcomes = Counter(churn(env, writer_for(rng), i) for i in range(args.rounds))
            quiet = update(env)
            status = subprocess.run([*COMMAND, "status"], cwd=ROOT, env=env, capture_output=True,
                                    text=True, timeout=120).stdout  # fmt: skip
            notes = writer_for(rng).notes()
            problems = verdict(notes, server_url(data), table, status)
            again = update(env)
        noop = "No changes" in again[1] + again[2]
        print(f"runs under churn: {dict(outcomes)}; quiet update exit {quiet[0]}")
        print(
            f"after the quiet update, {len(notes)} notes: "
            + ("store matches the source" if not problems else "MISMATCH: " + "; ".join(problems))
        )
        print(f"second quiet update: {'nothing to do' if noop else 'it changed something'}"
              f" (exit {again[0]})")  # fmt: skip
        if not noop:
            print("    " + "\n    ".join((again[1] + again[2]).strip().splitlines()[:8]))
    finally:
        subprocess.run(["pkill", "-f", f"postgres -D {data}"], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
