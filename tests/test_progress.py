"""Progress lines of a stage, and of the stage that follows it."""

from __future__ import annotations

from knowledge_assets.core.progress import Progress


def test_a_following_stage_reports_to_the_same_log_at_the_same_pace() -> None:
    lines: list[str] = []
    chunks = Progress("chunks", "notes", log=lines.append, every=3600.0)
    index = chunks.stage_after("keyword index", "passages")
    assert (index.stage, index.unit, index.every) == ("keyword index", "passages", 3600.0)
    index.start(40)
    index.advance(10)  # within the hour: no line
    index.advance(30)  # the end always gets one
    assert len(lines) == 1
    assert lines[0].startswith("keyword index: 40/40 passages (100%)")
