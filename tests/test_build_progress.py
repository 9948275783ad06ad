"""Progress of long index builds, read from Postgres on another connection while they run: an
HNSW build in rows inserted, a GIN build in the share of the table scanned. A build that cannot
be watched still runs, its own failure surfaces, and an interrupted watch cancels it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from knowledge_assets.core import progress as core_progress
from knowledge_assets.core.database import db
from knowledge_assets.core.index import index_store, indexing
from knowledge_assets.core.index.build_progress import finish, follow, run_watched
from knowledge_assets.core.index.index_build import model_index_name
from knowledge_assets.core.progress import Progress, Update
from tests.test_embed_checks import _Embedder, _sync, _texts

ROWS = 120
# Each row's index expression sleeps this long, so the build lasts ROWS * SLEEP seconds
# whatever the machine's speed, and a poll every POLL seconds sees it part-way.
SLEEP = 0.008
POLL = 0.05


def _slow_function(conn: psycopg.Connection, head: str, result: str) -> None:
    """The function ``head``: ``result`` after a pause of SLEEP seconds, for index expressions."""
    conn.execute(
        sql.SQL(
            "CREATE FUNCTION {head} LANGUAGE plpgsql IMMUTABLE"
            " AS $$ BEGIN PERFORM pg_sleep({sleep}); RETURN {result}; END $$"
        ).format(head=sql.SQL(head), sleep=sql.Literal(SLEEP), result=sql.SQL(result))
    )


def _slow_vectors(conn: psycopg.Connection) -> None:
    _slow_function(conn, "slow_vector(v vector) RETURNS vector(3)", "v")
    conn.execute("CREATE TABLE vecs (v vector(3))")
    conn.execute(
        "INSERT INTO vecs SELECT ARRAY[random() + 0.1, random(), random()]::vector"
        " FROM generate_series(1, %s)",
        (ROWS,),
    )
    conn.commit()


def _build(conn: psycopg.Connection) -> None:
    with conn.transaction():
        conn.execute(
            "CREATE INDEX vecs_hnsw ON vecs USING hnsw ((slow_vector(v)::vector(3)) vector_cosine_ops)"
        )


def _index_exists(conn: psycopg.Connection, model: str) -> bool:
    return index_store.has_index(conn, model_index_name(model))


def _recorded(stage: str) -> tuple[list[Update], AbstractContextManager[None]]:
    seen: list[Update] = []

    @contextmanager
    def listening() -> Iterator[None]:
        stop = core_progress.subscribe(lambda u: seen.append(u) if u.stage == stage else None)
        try:
            yield
        finally:
            stop()

    return seen, listening()


def test_a_running_build_reports_the_rows_it_has_indexed(db_url: str) -> None:
    lines: list[str] = []
    watched = Progress("vector index", "vectors", log=lines.append, every=0.2)
    seen, listening = _recorded("vector index")
    with db.connect(db_url) as conn, listening:
        _slow_vectors(conn)
        watched.start(ROWS)
        run_watched(conn, _build, watched, lambda: db.connect(db_url), every=POLL)
        built = conn.execute("SELECT to_regclass('vecs_hnsw') IS NOT NULL").fetchone()
    done = [u.done for u in seen]
    assert built == (True,)
    assert done[0] == 0 and done[-1] == ROWS
    assert done == sorted(done)
    assert any(0 < d < ROWS for d in done), done  # seen part-way, not only at the ends
    assert any("%)" in line and "(100%)" not in line for line in lines), lines
    finished = [line for line in lines if "(100%)" in line]
    assert len(finished) == 1 and finished[0].startswith(f"vector index: {ROWS}/{ROWS} vectors")


def test_a_keyword_index_build_reports_the_share_of_the_table_it_has_scanned(db_url: str) -> None:
    """A GIN build reports table pages, not rows: progress counts that share of its total."""
    with db.connect(db_url) as conn:
        _slow_function(conn, "slow_words(t text) RETURNS tsvector", "to_tsvector('simple', t)")
        # Wide rows (a few to a page), so the scan moves through many pages.
        # (STORAGE inside CREATE TABLE needs PostgreSQL 16; the store supports 15.)
        conn.execute("CREATE TABLE notes (body text)")
        conn.execute("ALTER TABLE notes ALTER COLUMN body SET STORAGE PLAIN")
        conn.execute(
            "INSERT INTO notes SELECT repeat('word' || i || ' ', 300) FROM generate_series(1, %s) i",
            (ROWS,),
        )
        conn.commit()
        watched = Progress("keyword index", "passages")
        seen, listening = _recorded("keyword index")
        pids: list[int] = []

        def build() -> None:
            with db.connect(db_url) as builder:
                pids.append(builder.info.backend_pid)
                builder.execute("CREATE INDEX notes_words ON notes USING gin (slow_words(body))")

        with listening, ThreadPoolExecutor(max_workers=1) as pool:
            watched.start(ROWS)
            built = pool.submit(build)
            follow(built, lambda: pids[0] if pids else None, watched, conn, POLL, pages=True)
            built.result()
            finish(watched)
        pages = conn.execute("SELECT relpages FROM pg_class WHERE relname = 'notes'").fetchone()
    done = [u.done for u in seen]
    assert pages is not None and pages[0] >= 10
    assert done[0] == 0 and done[-1] == ROWS and done == sorted(done)
    assert any(0 < d < ROWS for d in done), done


def _unreachable() -> AbstractContextManager[psycopg.Connection]:
    return db.connect("postgresql://ka@127.0.0.1:1/none?connect_timeout=2")


def test_a_build_that_cannot_be_watched_still_runs_to_the_end(db_url: str) -> None:
    watched = Progress("vector index", "vectors")
    with db.connect(db_url) as conn:
        _slow_vectors(conn)
        watched.start(ROWS)
        run_watched(conn, _build, watched, _unreachable, every=POLL)
        built = conn.execute("SELECT to_regclass('vecs_hnsw') IS NOT NULL").fetchone()
    assert built == (True,)
    assert watched.done == ROWS


def test_an_interrupted_watch_cancels_the_build(db_url: str) -> None:
    """Ctrl-C (or a terminated run) reaches the watching thread, not the build's: the build
    must be cancelled, not left running to its end."""

    def interrupt(update: Update) -> None:
        if 0 < update.done < update.total:
            raise KeyboardInterrupt

    watched = Progress("vector index", "vectors")
    stop = core_progress.subscribe(interrupt)
    try:
        with db.connect(db_url) as conn:
            _slow_vectors(conn)
            watched.start(ROWS)
            with pytest.raises(KeyboardInterrupt):
                run_watched(conn, _build, watched, lambda: db.connect(db_url), every=POLL)
            conn.rollback()
            built = conn.execute("SELECT to_regclass('vecs_hnsw') IS NOT NULL").fetchone()
    finally:
        stop()
    assert built == (False,)  # left to run, the build would have committed its index


def test_a_failed_build_raises_its_own_error_and_frees_its_watcher(db_url: str) -> None:
    opened: list[psycopg.Connection] = []

    @contextmanager
    def watch() -> Iterator[psycopg.Connection]:
        with db.connect(db_url) as other:
            opened.append(other)
            yield other

    def broken(conn: psycopg.Connection) -> None:
        conn.execute("SELECT pg_sleep(0.2)")  # long enough to be watched once
        conn.execute("CREATE INDEX missing_hnsw ON no_such_table USING hnsw (v vector_l2_ops)")

    with db.connect(db_url) as conn:
        with pytest.raises(psycopg.errors.UndefinedTable):
            run_watched(conn, broken, Progress("vector index", "vectors"), watch, every=POLL)
        conn.rollback()
    assert len(opened) == 1 and opened[0].closed


def test_a_first_embedding_pass_reports_its_index_build(db_url: str, vault: Path) -> None:
    embedder = _Embedder()  # a first pass: the model's index is built at its end
    watched: list[int] = []

    @contextmanager
    def watch() -> Iterator[psycopg.Connection]:
        with db.connect(db_url) as other:
            watched.append(other.info.backend_pid)
            yield other

    seen, listening = _recorded("vector index")
    lines: list[str] = []
    with db.connect(db_url) as conn, listening:
        _sync(conn, vault)
        texts = _texts(conn)
        passages = Progress("embeddings", "passages", log=lines.append)
        report = indexing.embed_missing(conn, embedder, progress=passages, watch=watch)
        built = _index_exists(conn, embedder.model)
    assert report.embedded == texts > 0 and report.seconds_index > 0
    assert built
    assert len(watched) == 1
    assert (seen[0].done, seen[0].total) == (0, texts)
    assert (seen[-1].done, seen[-1].total) == (texts, texts)
    assert "\n".join(lines).count(f"vector index: {texts:,}/{texts:,} vectors (100%)") == 1


def test_a_run_stopped_before_its_index_build_leaves_the_build_to_the_next_run(
    db_url: str, vault: Path
) -> None:
    """Stopped at its index build (Ctrl-C, a run terminated from the UI), a first pass leaves
    the model without its index. The next pass builds it at its end, sized and with progress,
    though it has nothing left to embed."""

    def stop_at_the_build(update: Update) -> None:
        if update.stage == "vector index":
            raise KeyboardInterrupt

    embedder = _Embedder()
    stop = core_progress.subscribe(stop_at_the_build)
    try:
        with db.connect(db_url) as conn:
            _sync(conn, vault)
            texts = _texts(conn)
            with pytest.raises(KeyboardInterrupt):
                indexing.embed_missing(conn, embedder)
            conn.rollback()
            assert not _index_exists(conn, embedder.model)
    finally:
        stop()
    seen, listening = _recorded("vector index")
    with db.connect(db_url) as conn, listening:
        report = indexing.embed_missing(conn, embedder)
        assert _index_exists(conn, embedder.model)
    assert (report.embedded, report.reused, report.complete) == (0, texts, True)
    assert (seen[-1].done, seen[-1].total) == (texts, texts)  # built by the sized path


def test_a_complete_model_that_lost_its_index_gets_it_back(db_url: str, vault: Path) -> None:
    """A model whose last pass was complete and whose texts did not change skips its pass, but
    not when its index is gone (e.g. a forced pass of a model search does not use, stopped
    during its build): the pass then rebuilds the index, sized and with progress, and embeds
    nothing."""
    embedder = _Embedder()
    seen, listening = _recorded("vector index")
    with db.connect(db_url) as conn:
        _sync(conn, vault)
        first = indexing.embed_missing(conn, embedder)
        assert first.complete and first.embedded > 0
        index_store.drop_index(conn, model_index_name(embedder.model))
        conn.commit()
        sent, texts = len(embedder.sent), _texts(conn)
        with listening:
            again = indexing.embed_missing(conn, embedder)
        assert _index_exists(conn, embedder.model)
    assert (again.embedded, again.complete, len(embedder.sent)) == (0, True, sent)
    assert (seen[-1].done, seen[-1].total) == (texts, texts)
