"""CPU seconds of keyword tokenization over every jsquad chunk: Sudachi's tokens alone (and, of
those, Sudachi's own analysis without the per-morpheme filtering), the tsvector literal as built
for any chunk (byte-capped, clamped: ``_capped_tsvector``) and as built for a chunk below every
tsvector limit (``chunk_tsvector``'s fast path), checking both give the same literal for every
chunk. Process CPU time, best of ``--repeat`` runs, so other load on the machine shifts the
figures less than wall time would.

    .venv/bin/python bench/tokenize_speed.py [--copies 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

from common import JSQUAD

from knowledge_assets.core.chunks.chunk_writer import token_source
from knowledge_assets.core.chunks.strategies import chunk_for
from knowledge_assets.core.chunks.tokenize import (
    _capped_tsvector,
    _tokenizer,
    analysed_pieces,
    chunk_tsvector,
    tokens,
    tokens_tsvector,
)
from knowledge_assets.core.ingest.parsing import ParsedDoc, parse_document


def sources(copies: int) -> list[tuple[str, str]]:
    """(headings, body) of every jsquad chunk, ``copies`` times, each copy tagged as in
    bench/scale.py's replica vaults so no text repeats."""
    vault = JSQUAD / "vault"
    out = []
    for path in sorted(vault.rglob("*.md")):
        doc = parse_document(str(path.relative_to(vault)), path.read_bytes())
        assert isinstance(doc, ParsedDoc)
        out += [token_source(c) for c in chunk_for(doc.path, doc.frontmatter, doc.body)]
    return [(h, f"copy {n}. {b}") for n in range(copies) for h, b in out]


def analysis_only(pairs: list[tuple[str, str]]) -> int:
    """Sudachi's analysis of the texts as :func:`tokens` prepares them, morphemes left unread;
    returns how many morphemes it made."""
    tok, _ = _tokenizer()
    count = 0
    for text in (t for pair in pairs for t in pair if t.strip()):  # tokens() skips blank ones
        for piece in analysed_pieces(text):
            count += len(tok.tokenize(piece))
    return count


def best(repeat: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/tokenize_speed.py --copies {args.copies}"
          f" --repeat {args.repeat}; load {os.getloadavg()}")  # fmt: skip
    pairs = sources(args.copies)
    toks = [(tokens(h), tokens(b)) for h, b in pairs]
    same = sum(
        chunk_tsvector(h, b) == _capped_tsvector(*t) for (h, b), t in zip(pairs, toks, strict=True)
    )
    print(f"data: {len(pairs):,} jsquad chunks ({args.copies} tagged copies of each);"
          f" identical literals: {same:,} of {len(pairs):,}")  # fmt: skip
    tok = best(args.repeat, lambda: [(tokens(h), tokens(b)) for h, b in pairs])
    analysis = best(args.repeat, lambda: analysis_only(pairs))
    general = best(args.repeat, lambda: [_capped_tsvector(*t) for t in toks])
    fast = best(args.repeat, lambda: [tokens_tsvector(*t) for t in toks])
    print(f"tokens (Sudachi + filtering) {tok:.3f} CPU-s, of which Sudachi's analysis alone"
          f" {analysis:.3f} CPU-s")  # fmt: skip
    print(f"literal assembly from the tokens: general build {general:.3f} CPU-s, as built now"
          f" {fast:.3f} CPU-s; load {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
