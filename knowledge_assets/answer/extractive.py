"""The offline answer: the sentences of the retrieved sections that answer the question, quoted
with the note each comes from, and a confidence read from them. Needs no LLM and no network, so
it works on a fresh install.

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
headings never name the topic. The best sentence leads; up to two more follow when they cover
``KEEP_RATIO`` of what it covers and score ``SCORE_RATIO`` of its score. The lead's note is cited
first.

Confidence: high when the lead sentence itself holds ``HIGH`` of the question's weight (with its
title and headings when its section is named by the topic), its title and headings hold
``ABOUT_HIGH`` of it (of the topic, for a typed question) and, for a definition question, it
defines the topic or its section is named by it; medium when the lead with its title and
headings covers ``MEDIUM``; else low. When no section is relevant the answer is
「情報が見つかりませんでした」.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from knowledge_assets.answer.prompt import NOT_FOUND
from knowledge_assets.answer.question import Question, answer_weights, read_question, share
from knowledge_assets.answer.retrieve import (
    HIGH,
    MEDIUM,
    RELEVANT,
    Passage,
    Retrieval,
    RetrievedNote,
)
from knowledge_assets.answer.sentences import Sentence, section_sentences
from knowledge_assets.core.chunks.tokenize import tokens
from knowledge_assets.core.search.note_sources import vault_source

MAX_QUOTES = 3
MAX_QUOTE_CHARS = 400
# A further sentence is quoted when it covers at least KEEP_RATIO of what the best one covers
# and scores at least SCORE_RATIO of its score.
KEEP_RATIO = 0.6
SCORE_RATIO = 0.5
ABOUT = 0.3  # weight of how much the note title and headings are about the question
NAMED = 0.2  # the sentence's section is named by the topic itself
OWN_TOPIC = 0.2  # share of the topic the sentence names itself (typed questions)
DEFINES = 0.5  # the topic is the sentence's subject (definition questions)
RANK_STEP = 0.03  # per step down search's note ranking
ABOUT_HIGH = 0.5  # the lead's section must be about the question this much for high confidence
# Multipliers for what seldom answers.
ASKING, FRAGMENT, LINK_LIST, CODE_LIKE, OFF_TOPIC = 0.6, 0.6, 0.6, 0.5, 0.3
FRAGMENT_CHARS = 12
INTRO = "ノートの該当箇所です（LLM が設定されていないため、ノートからそのまま引用しています）。"

_PAREN = re.compile(r"\s*[(（][^)）]*[)）]\s*")
_ASKING = re.compile(r"(か|かな|かね)[。．]?$|[?？]$")  # 「…ませんか。」「…でしょうか？」
_CODE_CHARS = re.compile(r"[{}()\[\];=<>|&$\\]")
# What may stand before a topic that is a sentence's subject (「TypeScriptのユニオン型は」), and
# before one that something is called (「…を型エイリアスと呼びます」「…にはXという…」).
_SUBJECT_BOUNDARY = frozenset("の、,「『(（;； \t\"'`*:：")
_CALLED_BOUNDARY = _SUBJECT_BOUNDARY | frozenset("はがをにでともへや")
_COMPOUND = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff々]")
_INSIDE_BRACKETS = re.compile(r"^[^()（）]{0,60}[)）]")
# How a definition ends: a copula, 「…のこと」「…を指す」, or a noun (「…言語機能。」); "X is …".
_DEFINITION_END = re.compile(
    r"(です|である|だ|のこと|を指す|を指します|を表す|を表します|をいう|をいいます|を言います"
    r"|[\u4e00-\u9fff\u30a0-\u30ffa-z0-9)）」`])[。．.]?[」』)）]*$|^\S.*\b(is|are)\b"
)
_DEFINITION_AFTER = re.compile(
    r"\s*(?:[(（][^)）]{0,60}[)）])?\s*(?:とは|は|というのは|って|is\b|are\b|refers\b|means\b)"
)
_CALLED_AFTER = re.compile(r"\s*(?:[(（][^)）]{0,60}[)）])?\s*(?:と|って)(?:呼|いい|言い|いう|言う|称)")  # fmt: skip
_SUBJECT_WITHIN = 30  # characters from the sentence's start where a subject may begin


@dataclass(frozen=True)
class Quote:
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


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def defines(sentence: str, topics: tuple[str, ...]) -> float:
    """How plainly ``sentence`` defines one of ``topics``: 1 when the topic (maybe with a reading
    or translation in brackets) is its subject near its start and it ends as a definition does
    (「…です」「…である」「…のこと」, a noun; "X is …"), or when it says what something is called
    (「…をXと呼びます」「Xという…」); 0.5 for the subject alone; else 0."""
    text = _norm(sentence)
    best = 0.0
    for topic in (_norm(t) for t in topics if t.strip()):
        for match in re.finditer(re.escape(topic), text):
            start, rest = match.start(), text[match.end() :]
            if _continued(topic, rest):
                continue  # 列挙型名 is not 列挙型; "types" is not "type"
            rest = _INSIDE_BRACKETS.sub("", rest, count=1) if _opened(text, start) else rest
            if _bounded(text, start, topic, _CALLED_BOUNDARY) and _CALLED_AFTER.match(rest):
                return 1.0
            near = start <= _SUBJECT_WITHIN or rest.lstrip().startswith("とは")
            if near and _bounded(text, start, topic, _SUBJECT_BOUNDARY) and _DEFINITION_AFTER.match(rest):  # fmt: skip
                best = max(best, 1.0 if _DEFINITION_END.search(text) else 0.5)
    return best


def _bounded(text: str, start: int, topic: str, boundary: frozenset[str]) -> bool:
    """Whether ``topic`` found at ``start`` begins a word (not the tail of a longer compound:
    文字列列挙型 is not 列挙型) after one of ``boundary`` or at the start."""
    if start == 0:
        return True
    before = text[start - 1]
    if topic[0].isascii() and topic[0].isalnum() and not before.isalnum():
        return True
    return before in boundary


def _continued(topic: str, rest: str) -> bool:
    """Whether the word goes on after ``topic``: 列挙型名, ユニオン型エイリアス, "types"."""
    nxt = rest[:1]
    if not nxt:
        return False
    if topic[-1].isascii():
        return topic[-1].isalnum() and nxt.isascii() and nxt.isalnum()
    return bool(_COMPOUND.match(nxt)) and bool(_COMPOUND.match(topic[-1]))


def _opened(text: str, start: int) -> bool:
    """Whether ``text[start]`` stands inside an open bracket: 「IIFE (…; 即時実行関数式) とは」."""
    head = text[:start]
    return head.count("(") + head.count("（") > head.count(")") + head.count("）")


def _named(question: Question, name: str) -> bool:
    """Whether a title or heading is one of the question's topics (brackets and case aside)."""
    topics = {_norm(t).strip() for t in question.topics}
    return _norm(_PAREN.sub("", name)).strip() in topics or _norm(name).strip() in topics


class _Scorer:
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
                named = _named(self.question, sentence.heading or heading.rsplit(" > ", 1)[-1] or note.title)  # fmt: skip
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


def _clip(text: str) -> str:
    return text if len(text) <= MAX_QUOTE_CHARS else text[: MAX_QUOTE_CHARS - 1] + "…"


def best_quotes(retrieval: Retrieval) -> list[Quote]:
    """Up to ``MAX_QUOTES`` sentences of the relevant sections, best first; none when no
    section covers ``RELEVANT`` of the question."""
    scorer = _Scorer(retrieval)
    candidates: list[Quote] = []
    for note in retrieval.notes:
        for index, passage in enumerate(note.passages):
            if scorer.relevant(passage):
                candidates += scorer.quotes(note, index, passage.heading, passage.content)
    candidates.sort(key=lambda q: -q.score)  # stable: ties keep retrieval order
    if not candidates or candidates[0].score <= 0:
        return []
    lead = candidates[0]
    chosen = [lead]
    seen = {lead.text}
    for quote in candidates[1:]:
        if len(chosen) >= MAX_QUOTES or quote.score < lead.score * SCORE_RATIO:
            break
        if quote.text not in seen and quote.coverage >= lead.coverage * KEEP_RATIO:
            chosen.append(quote)
            seen.add(quote.text)
    return chosen


def confidence(retrieval: Retrieval, quotes: list[Quote]) -> str:
    """high / medium / low, from what the quotes themselves show (see the module doc)."""
    if not quotes:
        return "low"
    scorer = _Scorer(retrieval)
    lead = quotes[0]
    # A section named by the topic is about it in every sentence: its heading counts as said.
    said = lead.terms | lead.context if lead.named else lead.terms
    answers = scorer.question.kind != "definition" or lead.defines > 0 or lead.named
    if scorer.share(scorer.weights, said) >= HIGH and lead.about >= ABOUT_HIGH and answers:
        return "high"
    return "medium" if lead.coverage >= MEDIUM else "low"


def _path(note: RetrievedNote) -> str:
    """The quoted note's path, with its source when it is not the vault's note: several sources
    may hold one path."""
    path = f"`{note.note_id}`"
    return path if note.source == vault_source() else f"{note.source} の {path}"


def extractive_answer(
    retrieval: Retrieval,
) -> tuple[str, list[tuple[RetrievedNote, str]], str]:
    """The answer text (Markdown), the quoted notes (the lead's first) each with the confidence
    its own quotes give, and the answer's confidence (the lead note's); NOT_FOUND, no notes and
    low when nothing answers."""
    quotes = best_quotes(retrieval)
    if not quotes:
        return NOT_FOUND, [], "low"
    notes = list({(q.note.source, q.note.note_id): q.note for q in quotes}.values())
    blocks = [INTRO]
    cited = []
    for note in notes:
        mine = [q for q in quotes if q.note is note]  # best first: the lead's section leads
        cited.append((note, confidence(retrieval, mine)))
        for heading in dict.fromkeys(q.heading for q in mine):
            lines = sorted((q for q in mine if q.heading == heading), key=lambda q: q.order)
            quoted = "\n".join(f"> {_clip(q.text)}" for q in lines)
            title = note.title or note.note_id
            where = " › ".join(p for p in (title, heading if heading != title else "") if p)
            blocks.append(f"{quoted}\n\n— {where}（{_path(note)}）")
    return "\n\n".join(blocks), cited, cited[0][1]
