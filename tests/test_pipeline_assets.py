"""The asset graph end to end through ``dg.materialize`` on real Postgres."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from knowledge_assets.core.database import db
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from tests.pipeline_support import ALL, metadata_values, pipeline_resources


def test_ingest_assets_report_counts_and_a_noop_rerun(db_url: str, vault: Path) -> None:
    (vault / "broken.md").write_bytes(b"---\ntitle: [x\n---\nbody")
    first = dg.materialize([raw_docs, latest_docs], resources=pipeline_resources(db_url, vault))
    meta = metadata_values(first, "raw_docs")
    assert meta["new"] == 8 and meta["rejected"] == 1
    rejected = str(meta["rejected_files"])
    assert "broken.md" in rejected and "malformed YAML" in rejected
    latest = metadata_values(first, "latest_docs")
    assert latest["superseded"] == 1 and latest["drafts"] == 1
    second = dg.materialize([raw_docs, latest_docs], resources=pipeline_resources(db_url, vault))
    again = metadata_values(second, "raw_docs")
    # the broken file was not read again, and is still counted: nobody takes it for fixed
    assert again["summary"] == "No changes: nothing written; 1 file still rejected."
    assert again["new"] == again["changed"] == again["deleted"] == 0
    assert again["rejected"] == again["rejected_unchanged"] == 1
    assert metadata_values(second, "latest_docs")["rows_written"] == 0


def test_editing_one_section_embeds_exactly_one_chunk(db_url: str, vault: Path) -> None:
    resources = pipeline_resources(db_url, vault)
    first = dg.materialize(ALL, resources=resources, partition_key="usem3")
    emb = metadata_values(first, "embeddings")
    assert emb["embedded"] > 10 and emb["reused"] == 0 and emb["complete"]
    note = vault / "projects" / "garden.md"
    text = note.read_text().replace(
        "Cherry tomatoes need at least six hours of sun.",
        "Cherry tomatoes need at least eight hours of sun.",
    )
    note.write_text(text)
    second = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert metadata_values(second, "chunks")["chunks_written"] == 1
    emb2 = metadata_values(second, "embeddings")
    assert emb2["embedded"] == 1
    assert emb2["reused"] == emb["embedded"] - 1
    assert emb2["summary"] == f"1 embedded, {emb2['reused']} reused"
    third = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert metadata_values(third, "embeddings")["embedded"] == 0


def test_editing_a_sections_last_sentence_also_refreshes_the_next_chunks_context(
    db_url: str, vault: Path
) -> None:
    # Seed 000's context_previous copies the last sentences of a section into the next chunk's
    # embedding text, so that chunk's text changes too, and only those two are embedded again.
    resources = pipeline_resources(db_url, vault)
    dg.materialize(ALL, resources=resources, partition_key="usem3")
    note = vault / "projects" / "garden.md"
    note.write_text(note.read_text().replace("water in the morning.", "water at dawn."))
    second = dg.materialize(ALL, resources=resources, partition_key="usem3")
    assert metadata_values(second, "chunks")["chunks_written"] == 2
    assert metadata_values(second, "embeddings")["embedded"] == 2


def test_deleting_a_note_removes_its_chunks_and_unused_vectors(db_url: str, vault: Path) -> None:
    resources = pipeline_resources(db_url, vault)
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
