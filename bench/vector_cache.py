"""A disk cache of embedding vectors for benchmarks, so re-runs skip the model.

Vectors are keyed by model, input type (query or document) and the SHA-256 of the exact text the
model saw. The template is part of that text (``embedding_text.parts`` renders it), so a vector is
reused only for the same model, template and text. The cache lives in ``bench/.cache/vectors``
(git ignores it); delete the folder to measure embedding from scratch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from knowledge_assets.core.embedders import Embedder, InputType

CACHE = Path(__file__).resolve().parent / ".cache" / "vectors"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    """An Embedder that serves vectors from disk and asks ``inner`` only for texts it lacks.

    Everything else (``model``, ``dims``, ``count_tokens``, ...) is the inner embedder's, so the
    pipeline splits and stores exactly what it would without the cache.
    """

    def __init__(self, inner: Embedder, folder: Path = CACHE) -> None:
        self.inner = inner
        self.folder = folder
        self.hits = 0
        self.misses = 0
        self._vectors: dict[str, dict[str, list[float]]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def load(self) -> None:
        """Nothing: the model loads on the first text the cache lacks."""

    def _path(self, input_type: InputType) -> Path:
        return self.folder / f"{self.inner.model}-{input_type}.npz"

    def _table(self, input_type: InputType) -> dict[str, list[float]]:
        if input_type not in self._vectors:
            path = self._path(input_type)
            table: dict[str, list[float]] = {}
            if path.exists():
                with np.load(path) as data:
                    table = dict(zip(data["keys"].tolist(), data["vectors"].tolist(), strict=True))
            self._vectors[input_type] = table
        return self._vectors[input_type]

    def _save(self, input_type: InputType) -> None:
        table = self._vectors[input_type]
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._path(input_type).with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(list(table)), vectors=np.array(list(table.values()), "f4"))
        tmp.replace(self._path(input_type))

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """Cached vectors, the missing ones embedded by the inner model (and saved)."""
        table = self._table(input_type)
        keys = [_digest(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in table}
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.inner.embed(list(missing.values()), input_type)
            table.update(zip(missing, vectors, strict=True))
            self._save(input_type)
        return [table[k] for k in keys]
