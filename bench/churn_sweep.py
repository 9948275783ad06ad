"""Notes that change while runs sync them. ``update`` runs back to back while another thread
edits, creates, deletes and renames notes of the vault: saves in place in several writes (as
most editors save), atomic saves through a temporary file, renames into new folders,
one-character fixes of the note being worked on. Then the writer stops, one quiet ``update``
runs, and the store must hold exactly the vault: the same paths, each with the content hash of
its file as it is now, chunks of that version, every passage embedded, no file left rejected; a
second quiet ``update`` changes nothing.

    .venv/bin/python bench/churn_sweep.py [--rounds 10] [--seed 1] [--coarse]

``--coarse`` gives each file the writer saves a whole-second mtime, as FAT and HFS+ store
them: a one-character fix saved in the same second as the save before it then changes neither
the size nor the mtime of the file.

The vault starts as a copy of the jsquad notes (59), on a fresh embedded store in a temporary
data directory with the default model. Everything is local and bounded: each run has a timeout,
the writer makes at most ``--ops`` changes per run, and the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import JSQUAD  # noqa: E402

from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document  # noqa: E402

COMMAND = [str(ROOT / ".venv" / "bin" / "knowledge-assets")]
RUN_TIMEOUT_S = 600


class Writer(threading.Thread):
    """Changes the vault at random moments until stopped, as a person and a sync tool would."""

    def __init__(
        self, vault: Path, sections: list[str], rng: random.Random, ops: int, coarse: bool
    ) -> None:
        super().__init__(daemon=True)
        self.vault, self.sections, self.rng, self.ops = vault, sections, rng, ops
        self.coarse = coarse
        self.halt = threading.Event()
        self.done: Counter[str] = Counter()

    def run(self) -> None:
        actions = [
            self.edit_in_place, self.retouch, self.save_atomic, self.create, self.delete,
            self.rename,
        ]  # fmt: skip
        weights = [5, 3, 3, 2, 1, 1]
        for _ in range(self.ops):
            if self.halt.wait(self.rng.uniform(0.01, 0.4)):
                return
            action = self.rng.choices(actions, weights)[0]
            try:
                touched = action()
                if self.coarse and touched is not None and touched.exists():
                    whole = time.time_ns() // 10**9 * 10**9  # as FAT or HFS+ would store it
                    os.utime(touched, ns=(whole, whole))
                self.done[action.__name__] += 1
            except (FileNotFoundError, IndexError):
                self.done["raced with itself"] += 1

    def notes(self) -> list[Path]:
        return sorted(p for p in self.vault.rglob("*.md") if p.is_file())

    def text(self) -> str:
        picked = self.rng.sample(self.sections, k=self.rng.randint(1, 4))
        stamp = f"{time.time_ns()}-{self.rng.randrange(10**6)}"
        return f"---\ntags: [churn]\nrev: {stamp}\n---\n" + "\n\n".join(picked) + "\n"

    def edit_in_place(self) -> Path:
        """Truncate, then write the new text in a few pieces with pauses between them."""
        note = self.rng.choice(self.notes())
        data = self.text().encode()
        cuts = sorted(self.rng.sample(range(1, len(data)), k=min(3, len(data) - 1)))
        with note.open("wb") as f:
            for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
                f.write(data[start:end])
                f.flush()
                time.sleep(self.rng.uniform(0, 0.03))
        return note

    def retouch(self) -> Path:
        """A one-character fix of a note being worked on (one of three): the size stays, only
        the mtime can tell the save apart."""
        note = self.rng.choice(self.notes()[:3])
        data = bytearray(note.read_bytes())
        digits = [i for i, b in enumerate(data) if 0x30 <= b <= 0x39]
        if digits:
            i = self.rng.choice(digits)
            data[i] = 0x30 + (data[i] - 0x30 + 1) % 10
        with note.open("r+b") as f:
            f.write(data)
        return note

    def save_atomic(self) -> Path:
        note = self.rng.choice(self.notes())
        tmp = note.with_name(f".{note.name}.tmp")
        tmp.write_bytes(self.text().encode())
        os.replace(tmp, note)
        return note

    def create(self) -> Path:
        folder = self.vault / self.rng.choice(["", "new", "new/deeper", "inbox"])
        folder.mkdir(parents=True, exist_ok=True)
        note = folder / f"churn-{time.time_ns()}.md"
        note.write_bytes(self.text().encode())
        return note

    def delete(self) -> None:
        notes = self.notes()
        if len(notes) > 40:
            self.rng.choice(notes).unlink()

    def rename(self) -> None:
        note = self.rng.choice(self.notes())
        target = self.vault / self.rng.choice(["moved", "inbox", ""]) / f"r{time.time_ns()}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        note.rename(target)


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


def expected(vault: Path) -> dict[str, str]:
    """Each note path -> the content hash its file has now (as the pipeline parses it)."""
    out = {}
    for note in vault.rglob("*.md"):
        rel = note.relative_to(vault).as_posix()
        parsed = parse_document(rel, note.read_bytes())
        assert isinstance(parsed, ParsedDoc), parsed
        out[rel] = parsed.content_hash
    return out


def store_state(url: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        raw = dict(conn.execute("SELECT file_path, content_hash FROM raw.docs_local").fetchall())
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


def verdict(vault: Path, url: str, status: str) -> list[str]:
    """What in the store does not match the vault (empty: it converged)."""
    want, state = expected(vault), store_state(url)
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
    sys.path.insert(0, str(ROOT))
    from knowledge_assets.core.database import embedded

    return str(embedded.start(data / "pg").get_uri())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--ops", type=int, default=200, help="most changes per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--coarse", action="store_true",
        help="give every file the writer saves a whole-second mtime, as FAT and HFS+ keep",
    )  # fmt: skip
    args = parser.parse_args()
    coarse = " --coarse" if args.coarse else ""
    print(f"command: .venv/bin/python bench/churn_sweep.py --rounds {args.rounds} --ops"
          f" {args.ops} --seed {args.seed}{coarse}; load {os.getloadavg()}")  # fmt: skip
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="ka-churn-"))
    vault, data = work / "vault", work / "data"
    shutil.copytree(JSQUAD / "vault", vault)
    env = os.environ | {"KA_VAULT_PATH": str(vault), "KA_DATA_DIR": str(data), "NO_COLOR": "1"}
    sections = sections_of(vault)
    print(
        f"data: {JSQUAD.name}/vault copied ({len(list(vault.rglob('*.md')))} notes); default model"
    )
    try:
        first = update(env)
        print(f"first update: exit {first[0]}")
        outcomes: Counter[str] = Counter()
        for i in range(args.rounds):
            writer = Writer(vault, sections, rng, args.ops, args.coarse)
            writer.start()
            started = time.monotonic()
            code, _, err = update(env)
            writer.halt.set()
            writer.join(timeout=10)
            what = "traceback" if "Traceback" in err else f"exit {code}"
            outcomes[what] += 1
            print(f"  update {i + 1:2d}: {what} after {time.monotonic() - started:5.1f} s,"
                  f" while the writer made {dict(writer.done)}", flush=True)  # fmt: skip
            if code != 0:
                print("    " + "\n    ".join(err.strip().splitlines()[-3:]))
        quiet = update(env)
        status = subprocess.run([*COMMAND, "status"], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=120).stdout  # fmt: skip
        url = server_url(data)
        problems = verdict(vault, url, status)
        again = update(env)
        noop = "No changes" in again[1] + again[2]
        notes = len(list(vault.rglob("*.md")))
        print(f"runs under churn: {dict(outcomes)}; quiet update exit {quiet[0]}")
        print(
            f"after the quiet update, {notes} notes in the vault: "
            + ("store matches the vault" if not problems else "MISMATCH: " + "; ".join(problems))
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
