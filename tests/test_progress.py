"""Progress lines of a stage, and of the stage that follows it."""

from __future__ import annotations

import time

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


def test_a_stage_started_after_its_work_began_counts_its_rate_from_then() -> None:
    # The keyword index is built while the statistics are recounted: by the time its stage
    # starts, the build may be over, and a clock started then would report an absurd rate.
    began = time.perf_counter() - 2.0
    late = Progress("keyword index", "passages")
    late.start(1000, since=began)
    late.advance(1000)
    assert late.update().elapsed >= 2.0
    assert late.update().rate <= 500


def test_a_start_time_after_the_call_is_not_taken() -> None:
    stage = Progress("vector index", "vectors")
    stage.start(10, since=time.perf_counter() + 60)
    assert 0 <= stage.update().elapsed < 60
