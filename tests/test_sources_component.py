"""Declared sources as Dagster components: two sources of different kinds in one store, their
asset keys, checks, sensors and lineage, and the clean removal of one."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster.components.testing import create_defs_folder_sandbox

from knowledge_assets.core.database import db
from knowledge_assets.definitions import defs as project_defs
from knowledge_assets.definitions import wire_sources
from knowledge_assets.resources import EmbedderResource, PostgresResource, VaultResource

BOOK = "# 建築の四書\n\n序文: ウィトルウィウスの建築論。\n\n## 第一書\n\n円柱の比例。\n"
MARKS = {"heading": "ai", "body": [{"title": "形態素解析", "url": "https://example.com/a"}]}
SOURCE_TYPE = "knowledge_assets.components.KnowledgeSource"


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    out = {name: tmp_path / name for name in ("vault", "books", "marks")}
    for folder in out.values():
        folder.mkdir()
    (out["books"] / "9784003362211.md").write_text(BOOK)
    (out["marks"] / "ai.json").write_text(json.dumps(MARKS, ensure_ascii=False))
    return out


@contextmanager
def declared(sources: dict[str, dict[str, object]]) -> Iterator[dg.Definitions]:
    """The project's definitions plus one ``defs.yaml`` per source, loaded by Dagster."""
    with create_defs_folder_sandbox() as sandbox:
        for name, attributes in sources.items():
            folder = sandbox.defs_folder_path / "sources" / name
            folder.mkdir(parents=True)
            body = {"type": SOURCE_TYPE, "attributes": {"name": name, **attributes}}
            (folder / "defs.yaml").write_text(yaml.safe_dump(body, allow_unicode=True))
        with sandbox.build_all_defs() as loaded:
            # only one side of a merge may carry a component tree: take the sandbox's parts
            parts = dg.Definitions(
                assets=loaded.assets,
                asset_checks=loaded.asset_checks,
                jobs=loaded.jobs,
                sensors=loaded.sensors,
            )
            yield wire_sources(dg.Definitions.merge(project_defs(), parts))


def _resources(url: str, vault: Path) -> dict[str, object]:
    return {
        "postgres": PostgresResource(database_url=url),
        "vault": VaultResource(path=str(vault)),
        "embedder": EmbedderResource(),
    }


def _materialize(
    defs: dg.Definitions, keys: list[str], url: str, vault: Path
) -> dg.ExecuteInProcessResult:
    assets = [a for a in defs.assets or () if isinstance(a, dg.AssetsDefinition)]
    return dg.materialize(assets, selection=keys, resources=_resources(url, vault))


def _notes(url: str) -> list[tuple[str, str, str, str]]:
    with db.connect(url) as conn:
        return conn.execute(
            "SELECT source_table, file_path, content_type, doc_type FROM rag.latest_docs"
            " ORDER BY source_table"
        ).fetchall()


def test_two_sources_have_their_own_assets_checks_sensors_and_feed_latest_docs(
    folders: dict[str, Path],
) -> None:
    sources = {
        "books": {"kind": "books", "path": str(folders["books"])},
        "marks": {"kind": "bookmarks", "path": str(folders["marks"])},
    }
    with declared(sources) as defs:
        graph = defs.resolve_asset_graph()
        keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
        assert {"raw_docs", "raw_docs_books", "raw_docs_marks", "latest_docs"} <= keys
        parents = {p.to_user_string() for p in graph.get(dg.AssetKey("latest_docs")).parent_keys}
        assert parents == {"raw_docs", "raw_docs_books", "raw_docs_marks"}
        checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
        assert {
            ("raw_docs_books", "matches_source"),
            ("raw_docs_marks", "no_rejected_files"),
        } <= checks
        resync = graph.get_check_spec(
            dg.AssetCheckKey(dg.AssetKey("raw_docs_books"), "matches_source")
        )
        assert (resync.description or "").endswith(
            " Fix: materialize books_sync_job with raw_docs_books config `full: true`."
        )
        sensor = defs.resolve_sensor_def("marks_source_changed_sensor")
        assert sensor.job_name == "marks_sync_job"
        job = defs.resolve_job_def("books_sync_job")
        assert job.partitions_def is not None  # it embeds with the model partition too
        spec = graph.get(dg.AssetKey("raw_docs_marks"))
        assert spec.metadata["dagster/table_name"] == "raw.docs_marks"
        assert (
            spec.metadata["content_type"] == "articles" and spec.metadata["type"] == "bookmark_json"
        )


def test_a_declared_source_loads_without_a_beta_warning(folders: dict[str, Path]) -> None:
    """Its checks come back from the component as plain assets definitions; Dagster's own
    conversion of them went through a beta parameter, warned at every `update`."""
    books = {"books": {"kind": "books", "path": str(folders["books"])}}
    with declared(books) as defs, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        defs.resolve_asset_graph()
        defs.resolve_job_def("embeddings_job")
    beta = [str(w.message) for w in caught if issubclass(w.category, dg.BetaWarning)]
    assert not [m for m in beta if "execution_type" in m], beta


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Books!", "source 'Books!': source name 'Books!': use lower-case letters"),
        ("local", "source 'local': source name 'local' is taken by the vault of KA_SOURCE"),
        ("github", "source name 'github' is taken by the vault of KA_SOURCE"),
    ],
)
def test_a_bad_declaration_is_refused_with_the_reason(
    folders: dict[str, Path], name: str, says: str
) -> None:
    bad = {"books": {"kind": "books", "path": str(folders["books"]), "name": name}}
    with pytest.raises(Exception) as raised, declared(bad):
        pass
    assert says in str(raised.value.__cause__)


@pytest.mark.parametrize(
    ("kind", "doc_type", "says"),
    [
        ("books", "bookmark_json", "type 'bookmark_json' does not fit kind 'books', whose files"),
        ("bookmarks", "markdown_note", "type 'markdown_note' does not fit kind 'bookmarks'"),
    ],
)
def test_a_type_that_does_not_fit_the_kind_is_refused(
    folders: dict[str, Path], kind: str, doc_type: str, says: str
) -> None:
    """A books source read as bookmarks rejected every note and the run succeeded; a bookmarks
    source read as Markdown stored each file as one chunk of raw JSON."""
    bad = {"books": {"kind": kind, "path": str(folders["books"]), "type": doc_type}}
    with pytest.raises(Exception) as raised, declared(bad):
        pass
    assert says in str(raised.value.__cause__)


def test_a_type_no_document_has_is_refused_naming_the_two(folders: dict[str, Path]) -> None:
    bad = {"books": {"kind": "books", "path": str(folders["books"]), "type": "weird"}}
    with pytest.raises(Exception) as raised, declared(bad):
        pass
    from knowledge_assets.cli_errors import explain

    what, hint = explain(raised.value) or ("", "")
    assert "markdown_note" in what and "bookmark_json" in what and "\n" not in what
    assert hint.startswith("fix the declared source")


HEAD = f"type: {SOURCE_TYPE}\nattributes:\n"


@pytest.mark.parametrize(
    ("text", "says", "fix"),
    [
        (
            HEAD + "  name: books\n  kind: [books\n",
            "defs.yaml is not valid YAML: expected ',' or ']', but got '<stream end>' (line 5,",
            "fix the declared source",
        ),
        (
            HEAD.replace("KnowledgeSource", "KnowledgeSorce") + "  name: books\n",
            "a defs.yaml names an unknown type: Module `knowledge_assets.components` has no"
            " attribute `KnowledgeSorce`",
            f"a declared source's defs.yaml starts with `type: {SOURCE_TYPE}`",
        ),
        (
            HEAD + "  kind: books\n  path: /tmp\n",
            "attributes.name at ",
            "fix the declared source",
        ),
        (
            HEAD + '  name: books\n  kind: books\n  path: "{{ env.KA_BOOKS_PATH"\n',
            "defs.yaml:5 - attributes.path: unexpected end of template",
            "fix the declared source",
        ),
        ("", "a defs.yaml of the project declares nothing", "fix the declared source"),
    ],
    ids=["not-yaml", "unknown-type", "no-name", "unclosed-template", "empty"],
)
def test_a_broken_defs_file_is_one_line_naming_the_problem_and_the_fix(
    text: str, says: str, fix: str
) -> None:
    """Each was an "unexpected failure" to report (or had no fix) on the command line."""
    from knowledge_assets.cli_errors import explain

    with create_defs_folder_sandbox() as sandbox:
        folder = sandbox.defs_folder_path / "sources" / "books"
        folder.mkdir(parents=True)
        (folder / "defs.yaml").write_text(text)
        with pytest.raises(Exception) as raised, sandbox.build_all_defs():
            pass
    what, hint = explain(raised.value) or ("", "")
    assert says in what and "\n" not in what
    assert hint.startswith(fix)


def test_removing_a_declaration_removes_its_notes_in_a_run_that_says_so(
    db_url: str, folders: dict[str, Path]
) -> None:
    both = {
        "books": {"kind": "books", "path": str(folders["books"])},
        "marks": {"kind": "bookmarks", "path": str(folders["marks"])},
    }
    with declared(both) as defs:
        result = _materialize(
            defs,
            ["raw_docs_books", "raw_docs_marks", "latest_docs", "chunks"],
            db_url,
            folders["vault"],
        )
        assert result.success
    assert _notes(db_url) == [
        ("docs_books", "9784003362211.md", "books", "markdown_note"),
        ("docs_marks", "ai.json", "articles", "bookmark_json"),
    ]
    with declared({"books": both["books"]}) as defs:
        result = _materialize(defs, ["latest_docs"], db_url, folders["vault"])
    assert result.success
    assert _notes(db_url) == [("docs_books", "9784003362211.md", "books", "markdown_note")]
    event = result.get_asset_materialization_events()[0].materialization
    removed = event.metadata["removed_sources"].value
    assert [dict(r.data) for r in removed.records] == [
        {"source": "marks", "notes removed": 1, "files removed": 1}
    ]
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM raw.docs_marks").fetchone() == (0,)
        assert conn.execute("SELECT name FROM meta.sources").fetchall() == [("books",)]
        orphans = conn.execute(
            "SELECT count(*) FROM rag.chunks c WHERE NOT EXISTS"
            " (SELECT 1 FROM rag.latest_docs d WHERE d.id = c.document_id)"
        ).fetchone()
        assert orphans == (0,)
        books_chunks = conn.execute("SELECT count(*) FROM rag.chunks").fetchone()
        assert books_chunks is not None and books_chunks[0] >= 2


def test_a_source_that_cannot_be_read_keeps_its_notes_and_holds_back_no_other(
    db_url: str, folders: dict[str, Path], tmp_path: Path
) -> None:
    both = {
        "books": {"kind": "books", "path": str(folders["books"])},
        "marks": {"kind": "bookmarks", "path": str(folders["marks"])},
    }
    keys = ["raw_docs_books", "raw_docs_marks", "latest_docs", "chunks"]
    with declared(both) as defs:
        assert _materialize(defs, keys, db_url, folders["vault"]).success
        folders["books"].rename(tmp_path / "unmounted")  # the books folder is gone
        (folders["marks"] / "more.json").write_text(json.dumps(MARKS, ensure_ascii=False))
        result = _materialize(defs, keys, db_url, folders["vault"])
    assert result.success  # the bookmarks went on
    assert [n[1] for n in _notes(db_url)] == ["9784003362211.md", "ai.json", "more.json"]
    books = next(
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.materialization is not None
        and e.materialization.asset_key == dg.AssetKey("raw_docs_books")
    )
    assert str(books.metadata["summary"].value).startswith("Not synced, its stored notes kept: ")


def test_a_source_sensor_requests_a_sync_when_its_folder_changes(
    db_url: str, folders: dict[str, Path]
) -> None:
    with declared({"marks": {"kind": "bookmarks", "path": str(folders["marks"])}}) as defs:
        sensor = defs.resolve_sensor_def("marks_source_changed_sensor")
        resources = {"postgres": PostgresResource(database_url=db_url)}
        with dg.build_sensor_context(resources=resources) as context:
            first = sensor(context)
        assert isinstance(first, dg.SensorResult) and first.run_requests
        request = first.run_requests[0]
        assert request.run_config == {"ops": {"raw_docs_marks": {"config": {"full": False}}}}
        assert first.cursor and request.run_key == f"marks:{first.cursor}@0"
        with dg.build_sensor_context(cursor=first.cursor, resources=resources) as context:
            assert isinstance(sensor(context), dg.SkipReason)
        (folders["marks"] / "more.json").write_text(json.dumps(MARKS))
        with dg.build_sensor_context(cursor=first.cursor, resources=resources) as context:
            moved = sensor(context)
        assert isinstance(moved, dg.SensorResult) and moved.cursor != first.cursor


def test_scaffolding_writes_a_declaration_that_loads(folders: dict[str, Path]) -> None:
    from knowledge_assets.components import KnowledgeSource

    with create_defs_folder_sandbox() as sandbox:
        path = sandbox.scaffold_component(
            component_cls=KnowledgeSource,
            defs_path="sources/my-marks",
            scaffold_params={"kind": "bookmarks", "path": str(folders["marks"])},
        )
        written = yaml.safe_load((path / "defs.yaml").read_text())
        assert written["attributes"] == {
            "name": "my_marks", "kind": "bookmarks", "path": str(folders["marks"]),
        }  # fmt: skip
        with sandbox.load_component_and_build_defs(defs_path=path) as (component, defs):
            assert isinstance(component, KnowledgeSource)
            keys = {k.to_user_string() for a in defs.assets or () for k in getattr(a, "keys", ())}
            assert keys == {"raw_docs_my_marks"}


def test_a_declared_sources_run_stops_before_it_writes_on_a_setting_a_later_step_needs(
    db_url: str, folders: dict[str, Path], tmp_path: Path
) -> None:
    """The books sync needs no vault, but the run's ``latest_docs`` does: a vault folder that
    does not exist stops the run at its first step, before the books are stored."""
    keys = ["raw_docs_books", "latest_docs"]
    with declared({"books": {"kind": "books", "path": str(folders["books"])}}) as defs:
        assets = [a for a in defs.assets or () if isinstance(a, dg.AssetsDefinition)]
        result = dg.materialize(
            assets, selection=keys, resources=_resources(db_url, tmp_path / "gone"),
            raise_on_error=False,
        )  # fmt: skip
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["raw_docs_books"]
    message = failures[0].step_failure_data.error.message  # type: ignore[union-attr]
    assert message.startswith(f"SetupError: vault folder {tmp_path / 'gone'} does not exist")
    assert result.get_asset_materialization_events() == [] and _notes(db_url) == []
    with db.connect(db_url) as conn:  # the books were not synced either
        table = conn.execute("SELECT to_regclass('raw.docs_books')::text").fetchone()
        if table and table[0]:
            assert conn.execute("SELECT count(*) FROM raw.docs_books").fetchone() == (0,)
