"""The terminal progress bar of ``demo`` shows each stage that reports progress."""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console

from knowledge_assets.core.progress import Progress
from knowledge_assets.progress_bar import terminal_progress


def _shown(report: Callable[[], None]) -> str:
    """What the bar prints while ``report`` reports progress."""
    out = io.StringIO()
    with terminal_progress(Console(file=out, width=100, force_terminal=False)):
        report()
    return out.getvalue()


def _stages() -> None:
    files = Progress("raw_docs", "files")
    files.start(3)
    files.advance(3)
    notes = Progress("chunks", "notes")
    notes.start(40)
    notes.advance(25)
    Progress("embeddings", "passages").start(0)  # nothing to embed: no line
    vectors = Progress("vector index", "vectors")
    vectors.start(500)
    vectors.advance(120)


def test_the_bar_shows_each_stage_with_its_count() -> None:
    text = _shown(_stages)
    assert "files read" in text and "3/3" in text
    assert "notes chunked" in text and "25/40" in text
    assert "passages embedded" not in text
    assert "vector index" in text and "120/500" in text


def _many_passages() -> None:
    passages = Progress("embeddings", "passages")
    passages.start(194_330)
    passages.advance(12_345)


def test_counts_have_thousands_separators_as_in_the_run_log() -> None:
    assert "12,345/194,330" in _shown(_many_passages)
