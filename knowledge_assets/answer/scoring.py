"""How well each sentence of a retrieved section answers the question, for the offline answer
(:mod:`~knowledge_assets.answer.extractive`).

A section is read when its indexed terms and note title cover ``RELEVANT`` of the question's
weight (IDF; question words left out; see :mod:`~knowledge_assets.answer.question` for the kinds
of question and their topic). Each of its sentences (:mod:`~knowledge_assets.answer.sentences`:
prose only, links as their text) scores

- its *coverage*: the share of the question's weight that it, its note title and its headings
  contain;
- ``ABOUT`` times *about*: the share its note title and headings contain (of the topic, for a
  definition, usage or difference question);
- for a typed question, ``OWN_TOPIC`` times the share of the topic the sentence names itself,
  and ``NAMED`` when its section is named by the topic (its heading, or the note's title for
  the text before the first heading);
- for a definition question, ``DEFINES`` when the topic is its subject and it ends as a
  definition does (「ユニオン型(union type)は…ものです」「…を型エイリアスと呼びます」"A union type
  is …"; half for the subject alone);
- less ``RANK_STEP`` for each step down search's note ranking;

multiplied down for what seldom answers: a question (「…ませんか。」), a fragment, a sentence of
a section that is mostly links, code-like text, and (typed questions) one whose sentence and
headings never name the topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge_assets.answer.definitions import defines, named_by_topic
from knowledge_assets.answer.question import answer_weights, read_question, share
from knowledge_assets.answer.retrieve import RELEVANT, Passage, Retrieval, RetrievedNote
from knowledge_assets.answer.sentences import Sentence, section_sentences
from knowledge_assets.core.chunks.tokenize import tokens

ABOUT = 0.3  # weight of how much the note title and headings are about the question
NAMED = 0.2  # the sentence's section is named by the topic itself
OWN_TOPIC = 0.2  # share of the topic the sentence names itself (typed questions)
DEFINES = 0.5  # the topic is the sentence's subject (definition questions)
RANK_STEP = 0.03  # per step down search's note ranking
# Multipliers for what seldom answers.
ASKING, FRAGMENT, LINK_LIST, CODE_LIKE, OFF_TOPIC = 0.6, 0.6, 0.6, 0.5, 0.3
FRAGMENT_CHARS = 12

_ASKING = re.compile(r"(か|かな|かね)[。．]?$|[?？]$")  # 「…ませんか。」「…でしょうか？」
_CODE_CHARS = re.compile(r"[{}()\[\];=<>|&$\\]")


@dataclass(frozen=True)
class Quote:
    """A sentence of a retrieved section, scored as an answer to the question."""

    note: RetrievedNote
    heading: str
    text: str
    score: float
    coverage: float  # of the question's weight, by the sentence with its title and headings
    about: float  # of the question's (topic's) weight, by its title and headings
    terms: frozenset[str]  # the sentence's own tokens
    order: tuple[int, int]  # (passage, sentence) position, to quote a section's lines in order
    defines: float = 0.0  # how plainly it defines the topic (definition questions)
    named: bool = False  # its section is named by the topic (typed questions)
    context: frozenset[str] = frozenset()  # the tokens of its note title and headings


class Scorer:
    """Scores sentences against one question."""

    def __init__(self, retrieval: Retrieval) -> None:
        self.question = read_question(retrieval.question)
        self.weights = answer_weights(self.question, retrieval.weights)
        self.families = self.question.typed
        topic = {t: w for t, w in self.weights.items() if t in self.question.topic_terms}
        self.topic = topic or self.weights
        self._tokens: dict[str, frozenset[str]] = {}

    def tokens(self, text: str) -> frozenset[str]:
        cached = self._tokens.get(text)
        if cached is None:
            cached = self._tokens[text] = frozenset(tokens(text))
        return cached

    def share(self, weights: dict[str, float], text_tokens: frozenset[str]) -> float:
        return share(weights, text_tokens, self.families)

    def relevant(self, passage: Passage) -> bool:
        """Whether the section (its indexed terms and note title) covers ``RELEVANT`` of the
        question: the cheap test before its sentences are read."""
        terms = passage.terms or frozenset(tokens(f"{passage.heading}\n{passage.content}"))
        return self.share(self.weights, terms) >= RELEVANT

    def quotes(self, note: RetrievedNote, index: int, heading: str, content: str) -> list[Quote]:
        """The sentences of the note's ``index``-th section (``content`` under ``heading``),
        scored."""
        section = section_sentences(content)
        outer = self.tokens(note.title) | self.tokens(heading)
        out = []
        for position, sentence in enumerate(section.sentences):
            context = outer | self.tokens(sentence.heading)
            own = self.tokens(sentence.text)
            coverage = self.share(self.weights, own | context)
            about = self.share(self.topic, context)
            score = coverage + ABOUT * about
            score -= RANK_STEP * (note.rank - 1)
            named, strength = False, 0.0
            if self.question.typed:
                score += OWN_TOPIC * self.share(self.topic, own)
                # The section itself is named by the topic: its own heading, or the note's
                # title for the text before its first heading.
                named = named_by_topic(self.question, sentence.heading or heading.rsplit(" > ", 1)[-1] or note.title)  # fmt: skip
                score += NAMED * named
            if self.question.kind == "definition":
                strength = defines(sentence.text, self.question.topics)
                score += DEFINES * strength
            score *= self._quality(sentence, own | context, section.link_share)
            out.append(Quote(note, heading, sentence.text, score, coverage, about, own, (index, position), strength, named, context))  # fmt: skip
        return out

    def _quality(self, sentence: Sentence, terms: frozenset[str], link_share: float) -> float:
        factor = 1.0
        text = sentence.text
        if _ASKING.search(text):
            factor *= ASKING
        if len(text) < FRAGMENT_CHARS:
            factor *= FRAGMENT
        if link_share >= 0.5:
            factor *= LINK_LIST
        if len(_CODE_CHARS.findall(text)) > 0.15 * len(text):
            factor *= CODE_LIKE
        if self.question.typed and self.question.topic_terms.isdisjoint(terms):
            factor *= OFF_TOPIC
        return factor
