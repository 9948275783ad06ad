"""Note views of huge notes, several at once, and the searches answered meanwhile, against the
API served by uvicorn in a process of its own on loopback::

    .venv/bin/python bench/note_render.py [--views 1,4,10] [--rounds 2] [--label before]

The store (a fresh database on the embedded server, or ``DATABASE_URL``) holds the survival-ts
notes (264, so links resolve against a real listing), a short note the searches find, and
``HUGE`` huge notes: half tables of 30 x 1,000 cells (as tests/test_api_busy.py's), half the
survival-ts notes concatenated to about 1.2 MB (prose, code, lists, links, as a real long note
reads). Each note differs by its first line, so no two render alike.

For each N of ``--views``: ``--rounds`` rounds of N views fired at once (view i of a round opens
huge note i, the round's notes differing from the previous round's where there are enough), with
one client searching (keyword, a new query after each answer) the whole time. Printed: the note
views' and the searches' p50 / p95 (wall time, the client's), the searches made, and the server
process's CPU over the window (user + system seconds / wall seconds: 100% is one core).

The server runs with ``KA_NOTE_CACHE_MB`` as given (``--cache-mb``; 0: every view renders), and
``--repeat`` views the same note each round instead (what the render cache is for). Bounded:
every request has a timeout, every loop a count, the search stream stops with its round.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, ROOT + "/bench"]

import httpx  # noqa: E402
import psutil  # noqa: E402
from common import fresh_database, sync_and_chunk  # noqa: E402

# Beside this checkout, whichever tree ROOT= runs.
SURVIVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "survival-ts" / "docs"

HUGE = 10
COLUMNS, ROWS = 30, 1000
PROSE_BYTES = 1_200_000
QUERIES = ("洗濯", "型", "関数", "配列", "インターフェース", "ジェネリクス", "梅雨")
TIMEOUT_S = 300.0


def _table(i: int) -> str:
    head = "| " + " | ".join(f"列{j}" for j in range(COLUMNS)) + " |\n|" + "---|" * COLUMNS + "\n"
    rows = "\n".join(
        "| " + " | ".join(f"c{r}-{j}" for j in range(COLUMNS)) + " |" for r in range(ROWS)
    )
    return f"# 大きな表 {i}\n\n梅雨の記録 {i}。\n\n{head}{rows}\n"


def _prose(i: int) -> str:
    notes = [p.read_text(encoding="utf-8") for p in sorted(SURVIVAL.rglob("*.md"))]
    parts, size = [f"# 長いノート {i}\n\n"], 0
    for _ in range(100):  # bounded: the notes repeated until the size is reached
        for text in notes:
            parts.append(text.replace("\n---\n", "\n\n", 1) + "\n\n")
            size += len(text.encode())
            if size >= PROSE_BYTES:
                return "".join(parts)
    return "".join(parts)


def build_vault(folder: Path) -> list[str]:
    """The vault; returns the huge notes' paths."""
    if not SURVIVAL.is_dir():
        raise SystemExit(f"no survival-ts notes at {SURVIVAL}")
    for path in sorted(SURVIVAL.rglob("*.md")):
        target = folder / "ts" / path.relative_to(SURVIVAL)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "rain.md").write_text("# 雨\n\n梅雨の晴れ間に洗濯をした。\n", encoding="utf-8")
    huge = []
    for i in range(HUGE):
        name = f"huge/table-{i}.md" if i % 2 == 0 else f"huge/prose-{i}.md"
        (folder / "huge").mkdir(exist_ok=True)
        (folder / name).write_text(_table(i) if i % 2 == 0 else _prose(i), encoding="utf-8")
        huge.append(name)
    return huge


def serve(url: str, port: int) -> None:
    """The server side: ``knowledge-assets serve`` for ``url`` on 127.0.0.1:``port`` until
    killed (before it tuned the collector, the same app under uvicorn)."""
    os.environ["DATABASE_URL"] = url
    from knowledge_assets.api import server

    if hasattr(server, "tune_gc"):
        server.serve("127.0.0.1", port)
        return
    import uvicorn

    from knowledge_assets.answer import Asker, LLMSettings
    from knowledge_assets.api import ApiSettings, create_app
    from knowledge_assets.api.settings import writer_url
    from knowledge_assets.mcp.reader import reader_url

    settings = ApiSettings("127.0.0.1", port, "", reader_url(url), writer_url(url), (), None)
    app = create_app(settings, Asker(LLMSettings()))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _start(url: str, cache_mb: str) -> tuple[subprocess.Popen[bytes], str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = os.environ | {"KA_NOTE_CACHE_MB": cache_mb, "PYTHONPATH": ROOT}
    proc = subprocess.Popen([sys.executable, __file__, "--serve", url, str(port)], env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):  # 60 s at most
        try:
            httpx.get(base + "/api/status", timeout=2)
            return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the API server did not start")


def _searches(base: str, stop: threading.Event, out: list[float], failed: list[int]) -> None:
    with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
        for k in range(100_000):
            if stop.is_set():
                return
            start = time.perf_counter()
            r = client.post("/api/search/keyword", json={"query": QUERIES[k % len(QUERIES)]})
            out.append((time.perf_counter() - start) * 1000)
            if r.status_code != 200:
                failed.append(r.status_code)
            time.sleep(0.05)


def _view(base: str, path: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    r = httpx.get(f"{base}/api/notes/{path}", timeout=TIMEOUT_S)
    return (time.perf_counter() - start) * 1000, r.status_code, r.headers.get("x-render-cache", "")


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def _p(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def measure(base: str, pid: int, huge: list[str], n: int, rounds: int, repeat: bool) -> str:
    proc = psutil.Process(pid)
    views: list[float] = []
    statuses: dict[str, int] = {}
    searches: list[float] = []
    failed: list[int] = []
    stop = threading.Event()
    searcher = threading.Thread(target=_searches, args=(base, stop, searches, failed))
    cpu0, wall0 = _cpu(proc), time.perf_counter()
    searcher.start()
    time.sleep(0.5)
    with ThreadPoolExecutor(n) as pool:
        for r in range(rounds):
            paths = [huge[0] if repeat else huge[(r * n + i) % len(huge)] for i in range(n)]
            for ms, status, cache in pool.map(lambda p: _view(base, p), paths):
                views.append(ms)
                key = f"{status}{'/' + cache if cache else ''}"
                statuses[key] = statuses.get(key, 0) + 1
    stop.set()
    searcher.join(TIMEOUT_S)
    used = _cpu(proc) - cpu0
    cpu = used / (time.perf_counter() - wall0) * 100
    return (
        f"N={n:<2} views {len(views):>3}: p50 {_p(views, 50):8.0f} ms  p95 {_p(views, 95):8.0f} ms"
        f"  ({', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))})\n"
        f"      searches {len(searches):>3}: p50 {_p(searches, 50):8.0f} ms  p95 "
        f"{_p(searches, 95):8.0f} ms  max {max(searches, default=0):6.0f} ms  failed {len(failed)}"
        f"\n      server CPU {cpu:.0f}% of one core, {used:.1f} s: {used / len(views):.2f} s a view"
    )


def idle_searches(base: str) -> str:
    searches: list[float] = []
    with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
        for k in range(30):
            start = time.perf_counter()
            client.post("/api/search/keyword", json={"query": QUERIES[k % len(QUERIES)]})
            searches.append((time.perf_counter() - start) * 1000)
    return f"searches alone {len(searches)}: p50 {_p(searches, 50):.0f} ms  p95 {_p(searches, 95):.0f} ms"  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--views", default="1,4,10")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache-mb", default="0")
    parser.add_argument("--repeat", action="store_true")
    parser.add_argument("--label", default="")
    parser.add_argument("--serve", nargs=2, metavar=("URL", "PORT"))
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    print("command: .venv/bin/python bench/note_render.py " + shlex.join(sys.argv[1:]), flush=True)
    url = fresh_database()
    vault = Path(tempfile.mkdtemp()) / "vault"
    huge = build_vault(vault)
    sizes = [(vault / p).stat().st_size for p in huge]
    sync_and_chunk(url, vault, 8000)
    print(
        f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {os.getloadavg()} on "
        f"{os.cpu_count()} cores; {args.label}\ndata: 264 survival-ts notes + {HUGE} huge notes "
        f"({min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f} MB); KA_NOTE_CACHE_MB={args.cache_mb}"
        f"{'; the same note every view' if args.repeat else ''}",
        flush=True,
    )
    proc, base = _start(url, args.cache_mb)
    try:
        print(idle_searches(base), flush=True)
        for n in (int(v) for v in args.views.split(",")):
            print(measure(base, proc.pid, huge, n, args.rounds, args.repeat), flush=True)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
