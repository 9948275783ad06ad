"""Any sentence-transformers model or local model directory (the optional extra).

``sentence-transformers`` (and torch) are imported on first use only, so the rest of the
project works without them; a missing install surfaces as a clear EmbeddingError naming the
extra. Pass a local directory (or ``local_files_only=True``) to keep a machine offline.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import (
    EmbeddingError,
    InputType,
    Prefixes,
    check_input_type,
    normalize,
)

BATCH_SIZE = 32
INSTALL_HINT = "pip install 'knowledge-assets[sentence-transformers]'"


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded lazily; e5 models get their prefixes.

    ``model`` is ``st:<name or path>``. ``dims`` and ``max_tokens`` come from the loaded model
    unless given, so reading them loads it.
    """

    provider = "sentence-transformers"

    def __init__(
        self,
        model_name: str,
        *,
        dims: int | None = None,
        max_tokens: int | None = None,
        batch_size: int = BATCH_SIZE,
        prefixes: bool | None = None,
        device: str | None = None,
        local_files_only: bool = False,
    ) -> None:
        if not model_name:
            raise ValueError("the sentence-transformers provider needs a model name or path")
        self.model_name = model_name
        self.model = f"st:{model_name}"
        self.batch_size = batch_size
        self.prefixes = Prefixes.for_model(model_name, prefixes)
        self._dims = dims
        self._max_tokens = max_tokens
        self._device = device
        self._local_files_only = local_files_only
        self._st: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model={self.model_name!r})"

    @property
    def options(self) -> dict[str, Any]:
        """Settings recorded with the model: the prefixes change the vectors."""
        return self.prefixes.as_options()

    @property
    def dims(self) -> int:
        """The model's output dimension."""
        if self._dims is None:
            self._dims = int(self._load().get_sentence_embedding_dimension())
        return self._dims

    @property
    def max_tokens(self) -> int:
        """The model's ``max_seq_length``, less the tokens its prefix takes up."""
        if self._max_tokens is None:
            longest = max(len(self.prefixes.query), len(self.prefixes.document))
            # a prefix costs about one token per 3 characters; keep that much headroom
            self._max_tokens = max(1, int(self._load().max_seq_length) - longest // 3 - 1)
        return self._max_tokens

    def load(self) -> None:
        """Read the weights now rather than on the first ``embed``."""
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._st is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise EmbeddingError(
                        f"the sentence-transformers provider needs the optional extra: "
                        f"{INSTALL_HINT}"
                    ) from exc
                self._st = SentenceTransformer(
                    self.model_name, device=self._device, local_files_only=self._local_files_only
                )
            return self._st

    def prepare(self, texts: Sequence[str], input_type: InputType) -> list[str]:
        """The texts as the model will see them (with e5 prefixes where they apply)."""
        return self.prefixes.apply(texts, check_input_type(input_type))

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """Unit vectors from ``SentenceTransformer.encode``."""
        prepared = self.prepare(texts, input_type)
        if not prepared:
            return []
        vectors = self._load().encode(
            prepared, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return normalize(vectors)
