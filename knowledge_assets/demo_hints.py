"""What ``knowledge-assets demo`` prints after its run: the run's warnings (a first sync of a
vault names the files it rejected, and why) and what to try next."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from rich.cells import cell_len

if TYPE_CHECKING:
    import dagster as dg


# Warnings shown after a demo run: a first sync of a messy vault rejects each file once.
SHOWN_WARNINGS = 10


def shown_warnings(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The run's warnings (a rejected file with its reason, a date left empty) to print: the
    first few, and where to read the rest."""
    from knowledge_assets.update import run_warnings

    lines = run_warnings(instance, run_id)
    more = len(lines) - SHOWN_WARNINGS
    tail = [f"… and {more:,} more: `knowledge-assets status` lists every file to fix"]
    return lines[:SHOWN_WARNINGS] + (tail if more > 0 else [])


def command_name() -> str:
    """How to type this command again: its path relative to the current folder when it lies
    inside it (``.venv/bin/knowledge-assets``, which ``scripts/demo`` ran), else its name."""
    program = os.path.abspath(sys.argv[0])
    here = os.getcwd()
    if os.path.basename(program) == "knowledge-assets" and program.startswith(here + os.sep):
        return os.path.relpath(program, here)
    return "knowledge-assets"


# What to try once the notes are in: each command after the program's name, and what it does.
NEXT_STEPS = (
    ('search "…"', 'search the notes (ask "…" answers from them)'),
    ("status", "what was stored and which files need fixing"),
    ("serve", "the search page on http://127.0.0.1:8000/"),
    ("dev", "the Dagster UI on http://127.0.0.1:3000/"),
)


def next_steps(command: str) -> str:
    """What to try once the notes are in: search, the problems, the search page, the UI. Each
    command with what it does on its line; under it when that does not fit 80 columns (typed
    as ``.venv/bin/knowledge-assets``, the lines ran to 89)."""
    from knowledge_assets.terminal_lines import WIDTH

    lines = [f"  {command} {step:<15} {what}" for step, what in NEXT_STEPS]
    if max(cell_len(line) for line in lines) > WIDTH:
        lines = [
            row for step, what in NEXT_STEPS for row in (f"  {command} {step}", f"      {what}")
        ]
    return "\n".join(["next:", *lines])
