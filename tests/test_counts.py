"""English counts say "1 note", never "1 notes", wherever a count is printed."""

from __future__ import annotations

import dagster as dg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import ChunkReport
from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.defs.index.assets import _chunk_metadata


@pytest.mark.parametrize(
    ("count", "said"),
    [(0, "0 notes"), (1, "1 note"), (2, "2 notes"), (1204, "1,204 notes")],
)
def test_a_count_takes_the_singular_only_for_one(count: int, said: str) -> None:
    assert counted(count, "note") == said


def test_an_irregular_plural_is_given() -> None:
    assert counted(1, "process", "processes") == "1 process"
    assert counted(3, "process", "processes") == "3 processes"
    assert noun_for(1, "is", "are") == "is" and noun_for(2, "is", "are") == "are"


def test_the_chunks_summary_of_one_note_says_note() -> None:
    report = ChunkReport(documents=["a.md"], chunks_written=1, failed=[("b.md", "bad")])
    table = {"dagster/row_count": dg.MetadataValue.int(1)}
    summary = _chunk_metadata(report, table, None, [])["summary"].value
    assert summary == "1 note re-chunked: 1 chunk written, 0 unchanged, 0 removed, 1 note failed"
    kept = _chunk_metadata(ChunkReport(), table, None, [])["summary"].value
    assert kept == "No note changed: 1 chunk kept"
