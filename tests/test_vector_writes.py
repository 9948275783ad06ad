"""Vectors and their input rows are written set-based (a binary COPY, one statement for the
inputs) with the same outcome as row by row: a vector already stored is kept unless replaced,
inputs are upserted, and a text whose vector another run stored first does not fail the batch."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge_assets.core.chunks.chunk_text import estimate_tokens
from knowledge_assets.core.database import db
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.embedding_text import ChunkFields, parts

MODEL = "writes-fake"


def _vectors(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return list(rng.standard_normal((n, 4)).astype(np.float32))


def _stored(conn: db.psycopg.Connection) -> dict[str, np.ndarray]:
    rows = conn.execute(
        "SELECT text_hash, embedding FROM rag.embeddings WHERE model = %s", (MODEL,)
    ).fetchall()
    return {h: v.to_numpy() for h, v in rows}


@pytest.fixture
def conn(db_url: str):  # type: ignore[no-untyped-def]
    with db.connect(db_url) as c:
        index_store.register_model(c, MODEL, "usem3", 4, 512, {}, "seed000")
        c.commit()
        yield c


def test_new_vectors_are_stored_exactly(conn: db.psycopg.Connection) -> None:
    vecs = _vectors(3, 1)
    with conn.transaction():
        index_store.insert_embeddings(conn, MODEL, ["a", "b", "c"], vecs)
    stored = _stored(conn)
    assert sorted(stored) == ["a", "b", "c"]
    for h, v in zip("abc", vecs, strict=True):
        np.testing.assert_array_equal(stored[h], v)  # float32 round trip, bit for bit
    dims = conn.execute("SELECT DISTINCT dims FROM rag.embeddings").fetchall()
    assert dims == [(4,)]


def test_a_batch_with_an_already_stored_text_keeps_that_vector_and_adds_the_rest(
    conn: db.psycopg.Connection,
) -> None:
    first, second = _vectors(1, 2), _vectors(2, 3)
    with conn.transaction():
        index_store.insert_embeddings(conn, MODEL, ["a"], first)
    with conn.transaction():  # "a" was stored meanwhile (by another run): the first one wins
        index_store.insert_embeddings(conn, MODEL, ["a", "b"], second)
    stored = _stored(conn)
    assert sorted(stored) == ["a", "b"]
    np.testing.assert_array_equal(stored["a"], first[0])
    np.testing.assert_array_equal(stored["b"], second[1])


def test_replace_overwrites_stored_vectors(conn: db.psycopg.Connection) -> None:
    with conn.transaction():
        index_store.insert_embeddings(conn, MODEL, ["a"], _vectors(1, 4))
    new = _vectors(2, 5)
    with conn.transaction():
        index_store.insert_embeddings(conn, MODEL, ["a", "b"], new, replace=True)
    stored = _stored(conn)
    np.testing.assert_array_equal(stored["a"], new[0])
    np.testing.assert_array_equal(stored["b"], new[1])


def test_inputs_are_upserted_in_one_statement(conn: db.psycopg.Connection) -> None:
    with conn.transaction():
        index_store.insert_embeddings(conn, MODEL, ["t1", "t2", "t3"], _vectors(3, 6))
        index_store.insert_inputs(conn, MODEL, "seed000", [("c1", 0, "t1"), ("c1", 1, "t2")])
    with conn.transaction():  # a chunk's part now stands for another text; empty is a no-op
        index_store.insert_inputs(conn, MODEL, "seed000", [("c1", 1, "t3"), ("c2", 0, "t1")])
        index_store.insert_inputs(conn, MODEL, "seed000", [])
    rows = conn.execute(
        "SELECT chunk_hash, part, text_hash FROM rag.embedding_inputs ORDER BY 1, 2"
    ).fetchall()
    assert rows == [("c1", 0, "t1"), ("c1", 1, "t3"), ("c2", 0, "t1")]


def test_inputs_without_their_vector_are_refused(conn: db.psycopg.Connection) -> None:
    with pytest.raises(db.psycopg.errors.ForeignKeyViolation), conn.transaction():
        index_store.insert_inputs(conn, MODEL, "seed000", [("c1", 0, "missing")])


@pytest.mark.parametrize(
    ("content", "limit"),
    [("短い本文。", 50), ("x" * 40, 50), ("本文" * 30, 50), ("word " * 60, 50), ("あ" * 49, 49)],
)
def test_parts_skip_counting_only_where_the_estimate_cannot_exceed_the_limit(
    content: str, limit: int
) -> None:
    fields = ChunkFields("", "", "", "見出し", content)

    def counting(text: str) -> int:  # the same count, but not the estimate itself: never skipped
        return estimate_tokens(text)

    assert parts("seed000", fields, limit, estimate_tokens) == parts(
        "seed000", fields, limit, counting
    )
