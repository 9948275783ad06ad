"""A terminal progress bar (rich) for long first builds: one line per stage (files read, notes
chunked, passages embedded, and the keyword and vector index builds) with count, rate and time
left, fed by ``core.progress``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from knowledge_assets.core import progress

_LABELS = {
    "raw_docs": "files read",
    "chunks": "notes chunked",
    "embeddings": "passages embedded",
}


@contextmanager
def terminal_progress(console: Console | None = None) -> Iterator[None]:
    """Show every stage that reports progress in this process until the block ends."""
    bar = Progress(
        TextColumn("{task.description:18s}"),
        BarColumn(),
        # Counts with thousands separators, as in the run log's lines (rich's MofN has none).
        TextColumn("{task.completed:,.0f}/{task.total:,.0f}"),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def show(update: progress.Update) -> None:
        if not update.total:
            return  # nothing to do at this stage: no line
        label = _LABELS.get(update.stage, update.stage)
        if update.stage not in tasks:
            tasks[update.stage] = bar.add_task(label, total=update.total, rate="")
        bar.update(
            tasks[update.stage], completed=update.done, total=update.total,
            rate=f"{update.rate:,.0f} {update.unit}/s" if update.done else "",
        )  # fmt: skip

    with bar:
        stop = progress.subscribe(show)
        try:
            yield
        finally:
            stop()
