"""The file lists ``update --verbose`` prints after an asset's summary."""

from __future__ import annotations

import dagster as dg
import pytest

from knowledge_assets.defs.metadata import MAX_ROWS, rows_left_out, rows_table
from knowledge_assets.update_log import SHOWN_PER_LIST, listed_files


def _table(*rows: dict[str, str]) -> dg.TableMetadataValue:
    columns = [dg.TableColumn(name, "string") for name in rows[0]] if rows else []
    return dg.MetadataValue.table(
        [dg.TableRecord(row) for row in rows], schema=dg.TableSchema(columns)
    )


@pytest.mark.parametrize(
    ("metadata", "lines"),
    [
        ({"rechunked": _table({"file": "a.md"}, {"file": "b.md"})}, ["rechunked: a.md, b.md"]),
        (
            {"what_changed": _table({"change": "new", "file": "日記/今日.md"})},
            ["what changed: 日記/今日.md (new)"],
        ),
        (
            {"bad_dates": _table({"file": "d.md", "key": "date", "value": "2026-13-45"})},
            ["bad dates: d.md (key date, value 2026-13-45)"],
        ),
        (
            {"superseded_versions": _table({"old version": "v1.md", "superseded by": "v2.md"})},
            ["superseded versions: old version v1.md, superseded by v2.md"],
        ),
        # empty lists, counts and texts print nothing
        ({"rechunked": _table(), "chunks_written": dg.MetadataValue.int(3)}, []),
        # a file name cannot retitle or clear the terminal
        (
            {"rechunked": _table({"file": "evil\x1b]0;x\x07.md"})},
            ["rechunked: evil\\x1b]0;x\\x07.md"],
        ),
    ],
)
def test_listed_files(metadata: dict[str, dg.MetadataValue], lines: list[str]) -> None:
    assert list(listed_files(metadata)) == lines


def test_a_long_list_is_cut_and_counted() -> None:
    rows = [{"file": f"n{i:02}.md"} for i in range(SHOWN_PER_LIST + 5)]
    (line,) = listed_files({"rechunked": _table(*rows)})
    assert line.startswith("rechunked: n00.md, n01.md")
    assert f"n{SHOWN_PER_LIST - 1:02}.md, … and 5 more" in line
    assert f"n{SHOWN_PER_LIST:02}.md" not in line


def test_a_list_the_materialization_cut_counts_every_file_left_out() -> None:
    """The asset's table holds MAX_ROWS files and a last row counting the rest: the line counts
    all of them, and the counting row is no file."""
    table = rows_table(("change", "file"), [("new", f"n{i:03}.md") for i in range(264)])
    assert isinstance(table, dg.TableMetadataValue)
    assert rows_left_out(table.records[-1]) == 264 - MAX_ROWS
    assert rows_left_out(table.records[0]) is None
    (line,) = listed_files({"what_changed": table})
    assert line.endswith(f"n{SHOWN_PER_LIST - 1:03}.md (new), … and {264 - SHOWN_PER_LIST} more")
