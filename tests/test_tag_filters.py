"""Tag filters read tags as frontmatter does (``#旅`` is ``旅``), and a tag matches the tags
nested under it (``project`` finds ``project/alpha``, as Obsidian's tag search does), through
the tag index."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.operators import UnsearchableQuery
from knowledge_assets.core.search.search_sql import filter_clause
from tests.test_search import notes_store

NOTES = {
    "京都.md": "---\ntags: ['#旅']\n---\n# 京都\n\n京都の寺を歩いた。\n",
    "alpha.md": "---\ntags: [project/alpha]\n---\n# alpha\n\n京都の寺の案内を作る。\n",
    "deep.md": "---\ntags: [project/alpha/docs]\n---\n# docs\n\n京都の寺の資料。\n",
    "top.md": "---\ntags: [project]\n---\n# top\n\n京都の寺の計画。\n",
    "other.md": "---\ntags: [projects]\n---\n# other\n\n京都の寺の別件。\n",
}


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (("#旅",), ("旅",)),
        ((" 旅 ", "#旅", "\u3000京都"), ("旅", "京都")),
        (("# project/alpha",), ("project/alpha",)),
        ((), ()),
    ],
)
def test_filter_tags_are_normalised_as_frontmatter_tags(
    given: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    assert SearchFilters(tags=given).tags == kept


@pytest.mark.parametrize(
    "fields",
    [
        {"tags": ("#",)}, {"tags": ("",)}, {"tags": ("##", " ")}, {"tags": ("旅", "# ")},
        {"all_tags": ("#",)}, {"exclude_tags": ("\u3000",)}, {"tag_groups": (("旅", "#"),)},
    ],
)  # fmt: skip
def test_a_tag_that_names_nothing_is_refused_as_tag_colon_hash_is(
    fields: dict[str, tuple[str, ...]],
) -> None:
    # Kept, it matched no note; dropped, it would widen the filter: either way, silently.
    with pytest.raises(UnsearchableQuery, match=r"names nothing: give it a name, e\.g\. 日記"):
        SearchFilters(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with notes_store(server_url, tmp_path_factory.mktemp("vault"), NOTES) as url:
        yield url


@pytest.mark.parametrize(
    ("tag", "found"),
    [
        ("#旅", {"京都.md"}),
        ("旅", {"京都.md"}),
        ("project", {"alpha.md", "deep.md", "top.md"}),
        ("#project/alpha", {"alpha.md", "deep.md"}),
        ("project/alpha/docs", {"deep.md"}),
        ("proj", set()),
        ("alpha", set()),
    ],
)
def test_a_tag_filter_finds_its_notes_and_those_nested_under_it(
    store: str, tag: str, found: set[str]
) -> None:
    with db.connect(store) as conn:
        hits = search(conn, "京都の寺", mode="keyword", filters=SearchFilters(tags=(tag,))).hits
    assert {h.file_path for h in hits} == found


def test_the_tag_filter_reads_the_tag_index(store: str) -> None:
    where, params = filter_clause(SearchFilters(tags=("project",)))
    with db.connect(store) as conn:
        conn.execute("SET enable_seqscan = off")  # a store this small is otherwise scanned
        plan = conn.execute(
            b"EXPLAIN SELECT d.file_path FROM rag.latest_docs d WHERE " + where.as_bytes(conn),
            params,
        ).fetchall()
    assert "latest_docs_tag_paths_idx" in "\n".join(row[0] for row in plan)


def test_tag_paths_hold_each_tag_and_its_parents_once(store: str) -> None:
    with db.connect(store) as conn:
        row = conn.execute(
            "SELECT rag.tag_paths(ARRAY['a/b/c', 'a', 'x//y', '/z', 'w/', '', '旅'])"
        ).fetchone()
    assert row == (["a/b/c", "a/b", "a", "x//y", "x/", "x", "/z", "w/", "w", "旅"],)
