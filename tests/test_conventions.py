"""Frontmatter conventions (drafts, dates) and `get` saying why a note is not searchable."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from knowledge_assets.cli import main
from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.conventions import Conventions, parse_date
from knowledge_assets.core.ingest.latest import DocInfo, plan_latest, refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search.explain import why_not_searchable
from knowledge_assets.core.sources.local import LocalSource

NOTES = {
    "draft.md": "---\ndraft: true\n---\n# d\n\nbody\n",
    "unpublished.md": "---\npublished: false\n---\n# u\n\nbody\n",
    "published.md": "---\npublished: true\ncreatedAt: 2024-05-01\nupdatedAt: 2024-06-02\n---\nbody\n",
    "dated.md": "---\ndate: 2023-01-09\n---\nbody\n",
    "both.md": "---\ncreated: 2022-02-02\ndate: 2021-01-01\n---\nbody\n",
    "bad-date.md": "---\ncreated: 2024-13-01\nupdated: 0000-00-00\n---\nbody\n",
    "old.md": "# old\n\nold body\n",
    "new.md": "---\nprevious: old.md\n---\nnew body\n",
    "empty.md": "---\ntitle: t\n---\n# only a heading\n",
    "broken.md": "---\ntitle: [x\n---\nbody\n",
}


@pytest.fixture
def store(db_url: str, tmp_path: Path) -> str:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text)
    with db.connect(db_url) as conn:
        sync_source(conn, LocalSource(vault))
        refresh_latest(conn, "docs_local")
        refresh_chunks(conn, max_tokens=512)
    return db_url


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", dt.date(2024, 5, 1)),
        ("2024-05-01T10:00:00", dt.date(2024, 5, 1)),
        ("2024-13-01", None),
        ("0000-00-00", None),
        ("2024-02-30", None),
        ("yesterday", None),
        (20240501, None),
    ],
)
def test_parse_date(value: object, expected: dt.date | None) -> None:
    assert parse_date(value) == expected


def test_draft_markers_are_configurable() -> None:
    docs = [DocInfo("a.md", {"published": False}, True), DocInfo("b.md", {"hidden": "yes"}, True)]
    assert plan_latest(docs).drafts == ["a.md"]
    custom = Conventions(draft_markers=("hidden=true",))
    assert plan_latest(docs, custom).drafts == ["b.md"]
    with pytest.raises(ValueError, match="must look like"):
        Conventions(draft_markers=("published",))


def test_dates_first_key_found_wins_and_bad_dates_are_reported(store: str) -> None:
    with db.connect(store) as conn:
        rows = dict(
            (p, (c, u))
            for p, c, u in conn.execute("SELECT file_path, created, updated FROM rag.latest_docs")
        )
        report = refresh_latest(conn, "docs_local")
    assert rows["published.md"] == (dt.date(2024, 5, 1), dt.date(2024, 6, 2))
    assert rows["dated.md"] == (dt.date(2023, 1, 9), dt.date(2023, 1, 9))
    assert rows["both.md"] == (dt.date(2022, 2, 2), dt.date(2021, 1, 1))
    assert rows["bad-date.md"] == (None, None)
    assert report.plan.bad_dates == [
        ("bad-date.md", "created", "2024-13-01"),
        ("bad-date.md", "updated", "0000-00-00"),
    ]
    assert "draft.md" not in rows and "unpublished.md" not in rows


def test_dates_are_filled_in_for_notes_stored_before_the_convention(store: str) -> None:
    with db.connect(store) as conn:
        conn.execute("UPDATE rag.latest_docs SET created = NULL, updated = NULL")
        conn.commit()
        report = refresh_latest(conn, "docs_local")
        row = conn.execute(
            "SELECT created FROM rag.latest_docs WHERE file_path = 'published.md'"
        ).fetchone()
    assert report.upserted == 3 and row == (dt.date(2024, 5, 1),)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("draft.md", "draft (draft: true)"),
        ("unpublished.md", "draft (published: false)"),
        ("old.md", "superseded by new.md"),
        ("empty.md", "empty: no text besides headings"),
        ("broken.md", "rejected because malformed YAML frontmatter"),
        ("new.md", None),
        ("no-such.md", None),
    ],
)
def test_why_a_note_is_not_searchable(store: str, path: str, why: str | None) -> None:
    with db.connect(store) as conn:
        found = why_not_searchable(conn, path)
    assert found == why if why is None else (found or "").startswith(why)


def test_get_says_why_not_searchable(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["get", "unpublished.md"]) == 0
    out = capsys.readouterr().out
    assert "not searchable: draft (published: false)" in out and "None" not in out
    assert main(["get", "draft.md"]) == 0
    assert "not searchable: draft (draft: true)" in capsys.readouterr().out
    assert main(["get", "broken.md"]) == 2
    assert "rejected because malformed YAML frontmatter" in capsys.readouterr().err
    assert main(["get", "new.md"]) == 0
    assert "· latest" in capsys.readouterr().out


def test_get_says_which_date_was_left_empty_and_why(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A date that is not a date was named only in the run's log; `get` (and the note view,
    and MCP's get_doc, which show the same warnings) said nothing of the empty date."""
    from knowledge_assets.core.search.notes import get_doc

    monkeypatch.setenv("DATABASE_URL", store)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["get", "bad-date.md"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2:4] == [
        "warning: `created: 2024-13-01` is not a date (YYYY-MM-DD); left empty",
        "warning: `updated: 0000-00-00` is not a date (YYYY-MM-DD); left empty",
    ]
    with db.connect(store) as conn:
        doc = get_doc(conn, "published.md")
    assert doc is not None and doc["warnings"] == []
