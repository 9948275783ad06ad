"""The ``status`` command: what the store holds and what needs fixing, without the run logs.

sources   local  ~/Obsidian/Notes  synced 2026-11-27 08:00 UTC  1,204 stored, 3 rejected
search    1,190 notes (12 drafts or empty left out, 2 superseded), 18,402 passages
model     usem3 (active): every passage has a vector
rejected  3 files
  local  inbox/broken.md  malformed YAML frontmatter: … (line 3, column 1)
…
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from knowledge_assets.core.counts import counted
from knowledge_assets.core.store_status import Problem, SourceStatus, StoreStatus, read_status
from knowledge_assets.search_cli import _add, _connect, _print_json, say, shown_path

SHOWN = 20  # problems listed per kind unless --all


def _status(args: argparse.Namespace) -> int:
    limit = None if args.all or args.json else SHOWN
    with _connect() as conn:
        status = read_status(conn, limit)
    if args.json:
        _print_json(asdict(status) | {"problems": status.problems})
        return 0
    for line in _summary(status):
        say(line)
    for overlap in status.overlaps:
        say(f"overlap   {overlap}")
    for kind, noun in (("rejected", "file"), ("warnings", "note"), ("failed", "note")):
        _list(kind, noun, getattr(status, kind), status.counts[kind])
    if status.problems:
        say("-- fix a file and run `knowledge-assets update`; `get PATH` shows one note's state")
    return 0


def _summary(status: StoreStatus) -> list[str]:
    """The lines about the sources, search and the model."""
    lines = [_source_line(s, first=i == 0) for i, s in enumerate(status.sources)]
    if not status.sources:
        lines.append("sources   none synced yet: run `knowledge-assets update`")
    left = [
        f"{counted(status.left_out, 'draft or empty note', 'drafts or empty notes')} left out"
        if status.left_out else "",
        f"{status.superseded:,} superseded" if status.superseded else "",
    ]  # fmt: skip
    aside = f" ({', '.join(x for x in left if x)})" if any(left) else ""
    lines.append(
        f"search    {counted(status.searchable, 'note')}{aside}, "
        f"{counted(status.passages, 'passage')}"
    )
    if status.model is None:
        lines.append("model     none active: keyword search only (`knowledge-assets update`)")
    elif status.missing_vectors:
        lines.append(
            f"model     {status.model} (active): {counted(status.missing_vectors, 'passage')}"
            " without a vector: run `knowledge-assets update`"
        )
    else:
        lines.append(f"model     {status.model} (active): every passage has a vector")
    if status.unconfigured_model_hint:
        lines.append(f"          {status.unconfigured_model_hint}")
    return lines


def _source_line(source: SourceStatus, *, first: bool) -> str:
    when = f"synced {source.synced_at:%Y-%m-%d %H:%M %Z}".rstrip() if source.synced_at else "never synced"  # fmt: skip
    where = f"  {source.location}" if source.location else ""
    rejected = f", {source.rejected:,} rejected" if source.rejected else ""
    label = "sources" if first else ""
    return f"{label:<9} {source.name}{where}  {when}  {source.stored:,} stored{rejected}"


def _list(title: str, noun: str, problems: list[Problem], total: int) -> None:
    """The first problems of one kind, and how many more there are."""
    if not total:
        return
    say(f"{title:<9} {counted(total, noun)}")
    for p in problems:
        say(f"  {p.source}  {shown_path(p.path)}  {p.reason}")
    if total > len(problems):
        say(f"  … and {total - len(problems):,} more (--all lists them)")


def add_command(sub: Any) -> None:
    """Register ``status`` on the CLI's sub-parsers."""
    status = _add(sub, "status", "what the store holds and which files need fixing", _status)
    status.add_argument("--all", action="store_true", help=f"list every problem, not {SHOWN}")
