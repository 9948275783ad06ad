"""Seed 001's answer checks (``validateAnswer``), run on every answer a model writes: one that
cites no note, and one whose words are mostly not in the notes it was given, get a warning and
a lower confidence. The retrieved passages already carry their keyword tokens (``Passage.terms``),
so the check tokenizes the answer alone."""

from __future__ import annotations

from knowledge_assets.answer.question import content_terms
from knowledge_assets.answer.retrieve import Retrieval

__all__ = ["MIN_SHARED", "NO_CITATION", "grounding_warnings", "shared_words"]

# Seed 001: "commonWords.length < answerWords.size * 0.3" flags an answer drifting from its sources.
MIN_SHARED = 0.3
NO_CITATION = "the answer cites no note: check it against the notes search found"


def shared_words(answer: str, retrieval: Retrieval) -> float | None:
    """The share of the answer's distinct content words (keyword tokens, no function words) that
    the retrieved passages or their notes' titles hold; None for an answer without any."""
    words = set(content_terms(answer))
    if not words:
        return None
    held = frozenset[str]().union(*(p.terms for n in retrieval.notes for p in n.passages))
    return len(words & held) / len(words)


def grounding_warnings(answer: str, retrieval: Retrieval, cited: int) -> list[str]:
    """The warnings seed 001's checks give ``answer``, which cites ``cited`` notes."""
    warnings = [] if cited else [NO_CITATION]
    share = shared_words(answer, retrieval)
    if share is not None and share < MIN_SHARED:
        warnings.append(
            f"the answer may stray from its notes: {share:.0%} of its words are in them"
            f" (under {MIN_SHARED:.0%}); check it against the sources"
        )
    return warnings
