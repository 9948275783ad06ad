"""Keyword search quality on English text: NumPy's own API documentation as a judged set.

No English judged set ships with the project, so one is built from text nobody here wrote: the
docstrings of the public functions of the installed ``numpy`` wheel (numpy, linalg, fft, random,
ma, polynomial, char, strings). Each module becomes a note, each function a ``## name`` section
holding its docstring *without* the first paragraph; that one-line summary ("Return the
cumulative sum of the elements along a given axis.") is the question, and the judged answer is
the function's section. Summaries or bodies that occur twice (aliases, wrappers) are left out, so
every question has exactly one right section. It is a known-item set: the summary paraphrases
the section, and the section often repeats some of its words (parameters, notes, examples).

Runs the same BM25 ablation as ``search_quality.py`` through ``keyword_sql.keyword_bm25``.

    .venv/bin/python bench/english_docstrings.py > bench/results/english_docstrings.txt
"""

from __future__ import annotations

import inspect
import os
import re
import tempfile
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy
import numpy.polynomial.polynomial
from common import fresh_database
from search_quality import Eval, keyword_rows

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.sources.local import LocalSource

MODULES: list[ModuleType] = [
    numpy, numpy.linalg, numpy.fft, numpy.random, numpy.ma, numpy.polynomial.polynomial,
    numpy.char, numpy.strings,
]  # fmt: skip
# Lines a Markdown reader would take for structure: underlines of numpydoc section titles
# (setext headings) and lines starting with '#'.
_STRUCTURE = re.compile(r"^\s*(-{3,}|={3,}|#.*)\s*$")


def _sections(module: ModuleType) -> list[tuple[str, str, str]]:
    """(function name, summary, body) of the module's public callables with a docstring."""
    out = []
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or not callable(obj):
            continue
        parts = (inspect.getdoc(obj) or "").strip().split("\n\n", 1)
        if len(parts) < 2:
            continue
        summary = " ".join(parts[0].split())
        body = "\n".join(ln for ln in parts[1].splitlines() if not _STRUCTURE.match(ln)).strip()
        if len(summary.split()) >= 5 and len(body.split()) >= 30:
            out.append((name, summary, body))
    return out


def build(root: Path) -> list[dict[str, Any]]:
    """Write the vault under ``root``; return the questions."""
    seen_summary: set[str] = set()
    seen_body: set[str] = set()
    queries = []
    for module in MODULES:
        path = f"{module.__name__}.md"
        lines = [f"# {module.__name__}", ""]
        for name, summary, body in _sections(module):
            if summary in seen_summary or body in seen_body:
                continue
            seen_summary.add(summary)
            seen_body.add(body)
            lines += [f"## {name}", "", body, ""]
            queries.append({"question": summary, "file_path": path, "heading": name})
        (root / path).write_text("\n".join(lines), encoding="utf-8")
    return queries


def main() -> None:
    root = Path(tempfile.mkdtemp())
    queries = build(root)
    held = [zlib.crc32(q["question"].encode()) % 2 == 1 for q in queries]
    ev = Eval(queries, [(q["file_path"], q["heading"]) for q in queries], held)
    print("command: .venv/bin/python bench/english_docstrings.py")
    print(f"data: numpy {numpy.__version__} docstrings, {len(MODULES)} notes, "
          f"{len(queries)} functions = sections = questions")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("columns: R@1 R@5 R@10 MRR@10 over all questions | the same over half of them "
          "(crc32 of the question odd) | over the other half")  # fmt: skip
    url = fresh_database()
    with db.connect(url) as conn:
        source = LocalSource(root)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        report = refresh_chunks(conn, max_tokens=8000)
    print(f"chunks: {report.chunks_written}")
    keyword_rows(url, ev)


if __name__ == "__main__":
    main()
