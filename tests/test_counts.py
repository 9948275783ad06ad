"""English counts say "1 note", never "1 notes", wherever a count is printed."""

from __future__ import annotations

from collections.abc import Callable

import dagster as dg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import ChunkReport
from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.core.index.checks_sql import SourceDrift
from knowledge_assets.core.index.embed_batches import EmbedReport
from knowledge_assets.core.index.reembed import DocumentFilter, SubsetReport
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.defs.index.assets import _chunk_metadata, _embed_metadata, embed_log_line
from knowledge_assets.defs.ingest.assets import raw_metadata
from knowledge_assets.defs.ingest.checks import _describe
from knowledge_assets.defs.metadata import MAX_ROWS, rows_table


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


MANY = 1122  # a vault's worth: printed "1,122", as every other count is
FILES = [f"n{i}.md" for i in range(MANY)]


def _embed_line() -> str:
    report = EmbedReport(model="usem3", embedded=MANY, texts_embedded=MANY, reused=MANY)
    return embed_log_line(SubsetReport("every note", [], MANY, report))


def _sync_summary() -> str:
    report = SyncReport("local", "tree:1", None, new=FILES, changed=FILES, unchanged=MANY,
                        deleted=FILES, renamed=[(p, p) for p in FILES])  # fmt: skip
    return str(raw_metadata(report, "docs_local")["summary"].value)


def _chunk_summary() -> str:
    table = {"dagster/row_count": dg.MetadataValue.int(MANY)}
    return str(_chunk_metadata(ChunkReport(), table, MANY, [])["summary"].value)


def _embed_summary() -> str:
    report = EmbedReport(model="usem3", embedded=1, texts_embedded=1, failed_texts=MANY)
    return str(_embed_metadata(report)["summary"].value)


def _drift() -> str:
    drift = SourceDrift("a", "b", MANY, MANY, missing=FILES, stale=FILES, extra=FILES,
                        unreadable=FILES)  # fmt: skip
    return _describe(drift, "materialize raw_docs")


def _cut_table() -> str:
    table = rows_table(("file",), [(p,) for p in FILES + FILES[:MAX_ROWS]])
    return str(table.value.records[-1].data["file"])  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (_embed_line, "usem3 (every note): 1,122 vectors replaced, 1,122 embedded,"
                      " 1,122 reused, 1,122 vectors written"),
        (_sync_summary, "1,122 new, 1,122 changed, 1,122 unchanged, 1,122 deleted,"
                        " 1,122 renamed, 0 rejected"),
        (_chunk_summary, "No note changed: 1,122 chunks kept, 1,122 removed with their notes"),
        (_embed_summary, "1 embedded, 0 reused, 1,122 failed"),
        (_drift, "source at a, last synced b: 1,122 missing, 1,122 stale, 1,122 extra,"
                 " 1,122 unreadable; fix: materialize raw_docs"),
        (_cut_table, "…and 1,122 more"),
    ],
)  # fmt: skip
def test_run_log_lines_and_summaries_separate_thousands(line: Callable[[], str], said: str) -> None:
    assert line() == said


def test_an_ordinary_pass_logs_what_it_embedded_and_no_replaced_vectors() -> None:
    report = EmbedReport(model="usem3", embedded=1, texts_embedded=1)
    said = embed_log_line(SubsetReport(DocumentFilter().describe(), [], 0, report))
    assert said == "usem3 (every note): 1 embedded, 0 reused, 1 vector written"


@pytest.mark.parametrize(
    ("selection", "said"),
    [
        (DocumentFilter(), "every note"),
        (DocumentFilter(paths=("a.md", "日記/b.md")), "paths: a.md, 日記/b.md"),
        (DocumentFilter(path_prefix="projects/", tag="#旅"), "path_prefix: projects/; tag: 旅"),
    ],
)
def test_a_selection_is_named_by_its_run_config_without_python_reprs(
    selection: DocumentFilter, said: str
) -> None:
    assert selection.describe() == said


@pytest.mark.parametrize(
    ("unreadable", "said"),
    [
        ([("locked/", "cannot be read (Permission denied): its 5 stored notes are kept")],
         ", 1 unreadable folder kept"),
        ([("linked/", "symlink to a folder (/elsewhere): not followed")],
         ", 1 symlinked folder not followed"),
        ([("locked/", "cannot be read (Permission denied)"),
          ("linked/", "symlink to a folder (/elsewhere): not followed")],
         ", 1 unreadable folder kept, 1 symlinked folder not followed"),
    ],
    ids=["unreadable", "symlinked", "both"],
)  # fmt: skip
def test_a_symlinked_folder_is_not_called_an_unreadable_one_kept(
    unreadable: list[tuple[str, str]], said: str
) -> None:
    """A symlinked folder is never read, so nothing of it was stored to keep; the summary said
    "1 unreadable folder kept" for one."""
    report = SyncReport("local", "tree:1", None, new=["a.md"], unreadable=unreadable)
    summary = str(raw_metadata(report, "docs_local")["summary"].value)
    assert summary == "1 new, 0 changed, 0 unchanged, 0 deleted, 0 renamed, 0 rejected" + said
