"""Fault matrix: what a run does when it is killed, when its database dies, when two runs start at
once, and when servers echo the credentials they were sent.

    python bench/faults.py [--notes 240] [--out bench/results/faults.txt]

Everything is loopback and bounded: each fault runs ``knowledge-assets demo`` as a subprocess
against a generated vault, an embedded Postgres in a temporary data directory (never the
project's own) and loopback Voyage/GitHub servers (``tests/fakes``), with every wait capped.
Each row says what happened, whether the next run converged (every chunk embedded, the dead
run no longer STARTED, the embedded server not left running) and whether the secret showed up
in any output: stdout, stderr, compute logs, or Dagster's event-log and run tables.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.fakes.voyage_server import FakeEmbeddingServer  # noqa: E402

KEY = "pa-FaultBenchSecretKey-7f3a9c21"
TOKEN = "ghp_FaultBenchSecretToken7f3a9c21xyz"
RUN_TIMEOUT_S = 300.0
POLL_S = 0.2


@dataclass
class Row:
    fault: str
    outcome: str
    converged: str
    secrets: str


@dataclass
class Proc:
    code: int | None
    out: str
    err: str


def write_vault(root: Path, notes: int) -> None:
    """``notes`` notes of three sections each (Japanese and English), enough to take a while."""
    for i in range(notes):
        folder = root / f"area{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(
            f"## 節{j}\n\nノート{i}の第{j}節。検索と埋め込みの試験用の文章です。"
            f" Section {j} of note {i} talks about topic {i * 7 + j}."
            for j in range(3)
        )
        (folder / f"note-{i:04d}.md").write_text(
            f"---\ntitle: ノート {i}\ntags: [t{i % 5}]\n---\n# ノート {i}\n\n{body}\n",
            encoding="utf-8",
        )


class Lab:
    """One temporary store, vault and set of loopback servers for a fault."""

    def __init__(self, base: Path, notes: int, *, delay_s: float = 0.0, echo: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="fault-", dir=base))
        self.vault = self.dir / "vault"
        write_vault(self.vault, notes)
        self.voyage = FakeEmbeddingServer(api_key=KEY, delay_s=delay_s, echo_auth=echo).start()
        self.env = {
            **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
            "KA_DATA_DIR": str(self.dir / "data"),
            "KA_VAULT_PATH": str(self.vault),
            "KA_EMBED_PROVIDER": "voyage",
            "KA_EMBED_MODEL": "voyage-3-lite",
            "KA_EMBED_BASE_URL": self.voyage.voyage_base_url,
            "VOYAGE_API_KEY": KEY,
            "KA_AUTOMATION": "off",
            "PYTHONPATH": str(ROOT),
        }

    @property
    def pgdata(self) -> Path:
        return self.dir / "data" / "pg"

    def start_demo(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "knowledge_assets.cli", "demo", *args]
        return subprocess.Popen(
            command, cwd=ROOT, env=env or self.env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip

    def demo(self, env: dict[str, str] | None = None) -> Proc:
        proc = self.start_demo(env=env)
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        return Proc(proc.returncode, out, err)

    def wait_for_embedding(self, requests: int) -> bool:
        """Wait (bounded) until the provider answered ``requests`` embedding requests."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            if len(self.voyage.ok_requests()) >= requests:
                return True
            time.sleep(POLL_S)
        return False

    def postmaster_pid(self) -> int | None:
        pid_file = self.pgdata / "postmaster.pid"
        if not pid_file.exists():
            return None
        first = pid_file.read_text().splitlines()[:1]
        return int(first[0]) if first and first[0].isdigit() else None

    def server_running(self) -> bool:
        pid = self.postmaster_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def query(self, sql: str) -> list[tuple[object, ...]]:
        """Run ``sql`` on the store through psql-free psycopg, attaching like the CLI does."""
        from knowledge_assets.core.database import db

        url = db.embedded_url(self.pgdata)
        with psycopg.connect(url) as conn:
            return conn.execute(sql).fetchall()  # type: ignore[arg-type]

    def close(self) -> None:
        self.voyage.stop()


def state(lab: Lab) -> dict[str, object]:
    """Chunks, embedded chunk texts and Dagster run statuses of the lab's store."""
    chunks = lab.query("SELECT count(DISTINCT text_hash) FROM rag.chunks")[0][0]
    embedded = lab.query("SELECT count(*) FROM rag.embeddings")[0][0]
    runs = lab.query("SELECT status, count(*) FROM runs GROUP BY status ORDER BY status")
    return {"chunk_texts": chunks, "embedded": embedded, "runs": dict(runs)}  # type: ignore[arg-type]


def converged(lab: Lab) -> str:
    facts = state(lab)
    ok = facts["chunk_texts"] == facts["embedded"] and "STARTED" not in facts["runs"]  # type: ignore[operator]
    runs = ", ".join(f"{k} {v}" for k, v in facts["runs"].items())  # type: ignore[attr-defined]
    return (
        f"{'yes' if ok else 'NO'}: {facts['embedded']}/{facts['chunk_texts']} embedded; runs {runs}"
    )


def last_line(text: str) -> str:
    """The line that says what went wrong: the first ``error:`` line, else the first one."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or ["(no output)"])[0][:140]


def kill_mid_embed(base: Path, notes: int) -> Row:
    lab = Lab(base, notes, delay_s=0.4)
    try:
        proc = lab.start_demo()
        reached = lab.wait_for_embedding(2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        outcome = f"demo killed after {len(lab.voyage.ok_requests())} embedding requests" + (
            "" if reached else " (embedding never started)"
        )
        lingering = lab.server_running()
        again = lab.demo()
        # The second demo was the last live user: it must have stopped the server on exit.
        stopped = not lab.server_running()
        note = f"; server left running after kill: {lingering}, stopped after next run: {stopped}"
        text = converged(lab) + f"; next run exit {again.code}" + note
        return Row("kill -9 mid-embed", outcome, text, "-")
    finally:
        lab.close()


def postgres_killed(base: Path, notes: int) -> Row:
    lab = Lab(base, notes, delay_s=0.4)
    try:
        proc = lab.start_demo()
        lab.wait_for_embedding(2)
        pid = lab.postmaster_pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        traceback = "Traceback" in err
        outcome = f"exit {proc.returncode}, traceback {traceback}: {last_line(err or out)}"
        again = lab.demo()
        return Row("Postgres killed mid-run", outcome,
                   converged(lab) + f"; next run exit {again.code}", "-")  # fmt: skip
    finally:
        lab.close()


def concurrent_runs(base: Path, notes: int) -> Row:
    lab = Lab(base, notes, delay_s=0.05)
    try:
        lab.demo()  # create the store first: this fault is about runs, not first start-up
        for path in list(lab.vault.rglob("*.md"))[: notes // 2]:
            path.write_text(path.read_text(encoding="utf-8") + "\n追記。\n", encoding="utf-8")
        procs = [lab.start_demo() for _ in range(2)]
        results = [p.communicate(timeout=RUN_TIMEOUT_S) for p in procs]
        codes = [p.returncode for p in procs]
        changed = [_count(out, "changed") for out, _ in results]
        deadlock = any("Deadlock" in out + err for out, err in results)
        outcome = (
            f"exits {codes}; raw_docs 'changed' per run {changed} (expected one run "
            f"{notes // 2}, the other 0); deadlock: {deadlock}"
        )
        third = lab.demo()
        return Row("two concurrent runs", outcome,
                   converged(lab) + f"; third run: {_raw_summary(third.out)}", "-")  # fmt: skip
    finally:
        lab.close()


def _raw_summary(out: str) -> str:
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("raw_docs")]
    return lines[0][:80] if lines else "(no raw_docs line)"


def _count(out: str, word: str) -> int | None:
    summary = _raw_summary(out)
    for part in summary.replace("raw_docs", "").split(","):
        bits = part.strip().split(" ")
        figure = bits[0].replace(",", "")  # the summary separates thousands: 1,204
        if len(bits) == 2 and bits[1] == word and figure.isdigit():
            return int(figure)
    return 0 if "No changes" in summary else None


def _secret_hits(lab: Lab, texts: list[str], secret: str) -> list[str]:
    """Where ``secret`` shows: the given outputs, files under the data dir, Dagster's tables."""
    found = [f"output {i}" for i, text in enumerate(texts) if secret in text]
    for path in (lab.dir / "data").rglob("*"):
        if path.is_file() and "pg" not in path.relative_to(lab.dir / "data").parts[:1]:
            if secret in path.read_text(errors="replace"):
                found.append(str(path.relative_to(lab.dir)))
    for table, column in (("event_logs", "event"), ("runs", "run_body")):
        query = f"SELECT count(*) FROM {table} WHERE strpos({column}, '{secret}') > 0"  # noqa: S608
        rows = lab.query(query)
        if rows[0][0]:
            found.append(f"{table} ({rows[0][0]} rows)")
    return found


def echoing_provider(base: Path, notes: int) -> Row:
    lab = Lab(base, notes, echo=True)
    try:
        lab.voyage.api_key = "the-server-wants-another-key"  # so every request is a 401 + echo
        run = lab.demo()
        lab.voyage.api_key = KEY
        lab.demo()  # index for the search below
        lab.voyage.api_key = "the-server-wants-another-key"
        search_env = lab.env | {"DATABASE_URL": ""}
        cli = [sys.executable, "-m", "knowledge_assets.cli", "search", "検索", "--mode"]
        outputs = [run.out, run.err]
        for mode in ("hybrid", "vector"):
            done = subprocess.run([*cli, mode], cwd=ROOT, env=search_env, capture_output=True,
                                  text=True, timeout=RUN_TIMEOUT_S)  # fmt: skip
            outputs += [done.stdout, done.stderr]
        outputs.append(_mcp_stderr(lab))
        echoed = sum(1 for r in lab.voyage.log if r.status == 401)
        hits = _secret_hits(lab, outputs, KEY)
        outcome = f"demo exit {run.code}: {last_line(run.err or run.out)}; {echoed} echoing 401s"
        return Row("provider echoes the API key", outcome, "-", ", ".join(hits) or "none")
    finally:
        lab.close()


def _mcp_stderr(lab: Lab) -> str:
    """Run the MCP server over stdio, call search_docs in vector mode, return its stderr."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "faults", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search_docs", "arguments": {"query": "検索", "mode": "vector"}}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "knowledge_assets.mcp_server"], cwd=ROOT, env=lab.env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    guard = threading.Timer(90, proc.kill)  # a server that never answers must not hang the bench
    guard.start()
    for message in requests[:2]:
        proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()  # the initialize answer
    proc.stdin.write(json.dumps(requests[2]) + "\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    guard.cancel()
    assert proc.stderr is not None
    return answer + proc.stderr.read()


def echoing_github(base: Path, notes: int) -> Row:
    lab = Lab(base, notes)
    with FakeGitHub("me/notes", token="a-different-token-123", echo_auth=True) as gh:
        gh.commit({"a.md": b"# A\n\nbody\n"})
        env = lab.env | {
            "KA_SOURCE": "github", "KA_GITHUB_REPO": gh.repo, "KA_GITHUB_BASE_URL": gh.base_url,
            "GITHUB_TOKEN": TOKEN,
        }  # fmt: skip
        try:
            run = lab.demo(env=env)
            hits = _secret_hits(lab, [run.out, run.err], TOKEN)
            outcome = f"demo exit {run.code}: {last_line(run.err or run.out)}"
            return Row("GitHub echoes the token", outcome, "-", ", ".join(hits) or "none")
        finally:
            lab.close()


FAULTS: dict[str, Callable[[Path, int], Row]] = {
    "kill": kill_mid_embed,
    "postgres": postgres_killed,
    "concurrent": concurrent_runs,
    "echo-provider": echoing_provider,
    "echo-github": echoing_github,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=240, help="notes in the generated vault")
    parser.add_argument("--only", choices=sorted(FAULTS), action="append")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "faults.txt")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="ka-faults-"))
    rows = []
    for name in args.only or list(FAULTS):
        started = time.monotonic()
        try:
            row = FAULTS[name](base, args.notes)
        except Exception as exc:  # a fault that broke the harness is a row, not a crash
            row = Row(name, f"HARNESS ERROR {type(exc).__name__}: {exc}"[:200], "?", "?")
        row.outcome += f" [{time.monotonic() - started:.0f} s]"
        rows.append(row)
        print(f"{row.fault}: {row.outcome} | {row.converged} | secrets: {row.secrets}", flush=True)
    report = render(rows, args.notes)
    print(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report, encoding="utf-8")
    return 0


def render(rows: list[Row], notes: int) -> str:
    load = os.getloadavg()
    lines = [
        f"# python bench/faults.py --notes {notes}",
        f"# generated vault of {notes} notes x 3 sections; loopback Voyage/GitHub servers; "
        f"embedded Postgres in a temp dir; load average at the end {load[0]:.1f} (2 cores)",
        "",
    ]
    for row in rows:
        lines += [
            f"## {row.fault}",
            f"outcome:   {row.outcome}",
            f"converged: {row.converged}",
            f"secrets found in any output / event log: {row.secrets}",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
