"""Version superseding through `previous`, drafts, empty bodies and cycles."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge_assets.core.ingest.latest import DocInfo, plan_latest


def _doc(path: str, has_body: bool = True, **fm: Any) -> DocInfo:
    return DocInfo(path, fm, has_body)


@pytest.mark.parametrize(
    "ref",
    ["old.md", "notes/old.md", "old", "[[old]]", "[[old|alias]]", "./notes/old.md"],
)
def test_previous_matches_path_name_and_wikilink(ref: str) -> None:
    plan = plan_latest([_doc("notes/old.md"), _doc("notes/new.md", previous=ref)])
    assert plan.kept == ["notes/new.md"]
    assert plan.superseded == {"notes/old.md": "notes/new.md"}


@pytest.mark.parametrize(
    ("ref", "superseded"),
    [
        ("[[index]]", "projC/index.md"),  # the one beside the naming note
        ("index.md", "projC/index.md"),
        ("projA/index", "projA/index.md"),  # a path names that note alone
        ("[[projB/index|older plan]]", "projB/index.md"),
        ("[[INDEX]]", "projC/index.md"),  # case does not matter, as in Obsidian
    ],
)
def test_previous_names_one_note_of_several_with_its_name(ref: str, superseded: str) -> None:
    """An ambiguous name supersedes one note, found as a wikilink is, not every note with it."""
    docs = [_doc(p) for p in ("projA/index.md", "projB/index.md", "projC/index.md", "index.md")]
    plan = plan_latest([*docs, _doc("projC/index-v2.md", previous=ref)])
    assert plan.superseded == {superseded: "projC/index-v2.md"}
    assert len(plan.kept) == 4


def test_previous_by_name_from_another_folder_prefers_the_shortest_path() -> None:
    docs = [_doc("a/b/plan.md"), _doc("c/plan.md"), _doc("d/new.md", previous="[[plan]]")]
    plan = plan_latest(docs)
    assert plan.superseded == {"c/plan.md": "d/new.md"}
    assert plan.kept == ["a/b/plan.md", "d/new.md"]


def test_previous_written_composed_names_a_decomposed_file_name() -> None:
    """macOS stores Japanese names decomposed; a ``previous`` is typed composed."""
    old = "議事録/がいよう.md".replace("が", "か\u3099")
    plan = plan_latest([_doc(old), _doc("議事録/新.md", previous="[[がいよう]]")])
    assert plan.superseded == {old: "議事録/新.md"}


def test_chain_keeps_only_the_newest() -> None:
    plan = plan_latest(
        [_doc("v1.md"), _doc("v2.md", previous="v1.md"), _doc("v3.md", previous=["v2.md"])]
    )
    assert plan.kept == ["v3.md"]
    assert plan.superseded == {"v1.md": "v2.md", "v2.md": "v3.md"}


def test_cycle_keeps_one_member_deterministically_and_reports_it() -> None:
    docs = [
        _doc("a.md", previous="b.md"),
        _doc("b.md", previous="c.md"),
        _doc("c.md", previous="a.md"),
    ]
    plan = plan_latest(docs)
    again = plan_latest(list(reversed(docs)))
    assert plan.cycles == [["a.md", "b.md", "c.md"]]
    assert plan.kept == ["c.md"] == again.kept
    assert set(plan.superseded) == {"a.md", "b.md"}


def test_cycle_winner_is_the_highest_version() -> None:
    plan = plan_latest(
        [_doc("a.md", previous="b.md", version=3), _doc("b.md", previous="a.md", version=2)]
    )
    assert plan.kept == ["a.md"]
    assert plan.superseded == {"b.md": "a.md"}


def test_self_reference_and_unknown_previous_are_reported_not_fatal() -> None:
    plan = plan_latest([_doc("a.md", previous="a.md"), _doc("b.md", previous="missing.md")])
    assert plan.kept == ["a.md", "b.md"]
    assert ("b.md", "missing.md") in plan.unresolved


@pytest.mark.parametrize("value", [True, "true", "yes"])
def test_drafts_are_excluded(value: object) -> None:
    plan = plan_latest([_doc("d.md", draft=value), _doc("ok.md", draft=False)])
    assert plan.drafts == ["d.md"]
    assert plan.kept == ["ok.md"]


def test_empty_body_is_excluded() -> None:
    plan = plan_latest([_doc("e.md", has_body=False), _doc("ok.md")])
    assert plan.empty == ["e.md"]
    assert plan.kept == ["ok.md"]


def test_a_previous_not_found_is_listed_apart_from_the_excluded_notes() -> None:
    """The note naming it is kept and searched: it was listed among the excluded ones."""
    from knowledge_assets.core.ingest.latest import LatestReport
    from knowledge_assets.defs.ingest.assets import _latest_metadata

    plan = plan_latest([_doc("a.md", previous="[[missing]]"), _doc("d.md", draft=True)])
    metadata = _latest_metadata(LatestReport(plan=plan, upserted=1, removed=0))
    excluded = [r.data for r in metadata["excluded"].value.records]  # type: ignore[union-attr]
    missing = [r.data for r in metadata["previous_not_found"].value.records]  # type: ignore[union-attr]
    assert plan.kept == ["a.md"] and excluded == [{"reason": "draft", "file": "d.md"}]
    assert missing == [{"file": "a.md", "previous": "[[missing]]"}]
