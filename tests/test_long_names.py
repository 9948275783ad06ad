"""Titles, aliases, tags, link targets and headings far longer than any real name: the note is
stored and searched, and no index refuses it, so one such file never stops a run for every
other note of every source."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from knowledge_assets.core.chunks import chunk_refresh
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import search
from knowledge_assets.core.sources.local import LocalSource

# Letters in no order: text that repeats compresses into a short index entry.
_RNG = random.Random(7)
LONG = "".join(chr(0x4E00 + _RNG.randrange(20_000)) for _ in range(3_000))


@pytest.mark.parametrize(
    "note",
    [
        f"# {LONG}\n\nカワウソの本文。\n",
        f"---\ntitle: {LONG}\n---\nカワウソの本文。\n",
        f"---\naliases: [{LONG}]\n---\n# 短い\n\nカワウソの本文。\n",
        f"---\ntags: [{LONG}]\n---\n# 短い\n\nカワウソの本文。\n",
        f"---\nheading: {LONG}\n---\n# 短い\n\nカワウソの本文。\n",
        f"# 短い\n\n[[{LONG}]] を見てカワウソの本文。\n",
    ],
    ids=["h1", "title", "alias", "tag", "heading", "wikilink"],
)
def test_a_name_longer_than_an_index_entry_stops_nothing(
    db_url: str, tmp_path: Path, note: str
) -> None:
    (tmp_path / "long.md").write_text(note, encoding="utf-8")
    (tmp_path / "other.md").write_text("# 別のノート\n\nラッコの話。\n", encoding="utf-8")
    with db.connect(db_url) as conn:
        source = LocalSource(tmp_path)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        report = chunk_refresh.refresh_chunks(conn)
        assert report.failed == []
        found = {h.file_path for h in search(conn, "カワウソ", mode="keyword").hits}
        others = {h.file_path for h in search(conn, "ラッコ", mode="keyword").hits}
    assert found == {"long.md"} and others == {"other.md"}
