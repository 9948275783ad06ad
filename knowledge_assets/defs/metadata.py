"""Markdown helpers for materialization metadata shown in the Dagster UI."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

MAX_ROWS = 50


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table, cut at ``MAX_ROWS`` rows with a note of how many were left out."""
    rows = list(rows)
    if not rows:
        return "_none_"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n…and {len(rows) - MAX_ROWS} more")
    return "\n".join(lines)


def path_list(groups: Mapping[str, Sequence[str]]) -> str:
    """Bulleted paths per group, skipping empty groups."""
    parts = []
    for name, paths in groups.items():
        if paths:
            shown = "\n".join(f"- `{_cell(p)}`" for p in list(paths)[:MAX_ROWS])
            more = f"\n- …and {len(paths) - MAX_ROWS} more" if len(paths) > MAX_ROWS else ""
            parts.append(f"**{name}** ({len(paths)})\n\n{shown}{more}")
    return "\n\n".join(parts) or "_none_"
