"""Japanese + English keyword tokens for Postgres full-text search (DESIGN decision 5).

Postgres has no Japanese parser here (no pg_bigm/PGroonga), so text is split in Python with
SudachiPy in mode A (short units: the best BM25 setting measured on jsquad). Each morpheme is
reduced to its normalized form (``行い`` → ``行う``); Latin-script words are kept as written
(Sudachi would turn ``not`` into ``ノット``); everything is NFKC-folded and lowercased (``ＡＢＣ`` →
``abc``); particles, auxiliary verbs, punctuation and whitespace are dropped.

Chunks are stored as a ``tsvector`` literal built here (:func:`chunk_tsvector`), one position per
token in token order, so BM25 reads term frequencies and the document length (in tokens) from it:

- heading tokens (the note title, the parent heading when it is another, and the section
  heading) carry weight ``A``, body tokens weight ``D``; keyword search counts a heading
  occurrence ``HEADING_TF`` times;
- every pair of adjacent tokens is also indexed as one extra lexeme ``"first second"`` (weight
  ``B`` in headings, ``C`` in the body), so a query whose words stand next to each other in a
  chunk (``東京 大学``) gets phrase evidence with its own document frequency.

Every token is reduced to its letters and digits first, as the Postgres parser would keep a word.
Queries go through the very same tokenizer (:func:`query_lexemes`), so documents and queries always
agree on the lexemes.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any

# Sudachi refuses inputs longer than 49,149 bytes; stay well below it (3 bytes per kana/kanji).
_MAX_PIECE_BYTES = 12_000
_DROPPED_POS = [("助詞",), ("助動詞",), ("補助記号",), ("空白",)]
# Postgres drops words over 2,047 bytes; far shorter ones are already noise (base64, hashes).
_MAX_TOKEN_CHARS = 64
# Distinct-lexeme bytes one chunk may index: half of Postgres' 1 MB tsvector limit.
MAX_LEXEME_BYTES = 512 * 1024
_BREAKS = re.compile(r"(?<=[\n。．！？!?])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LATIN = re.compile(r"^[A-Za-z0-9\u00c0-\u024f'’._+#-]+$")
_LATIN_END = "\u0250"

_lock = threading.Lock()
_dictionary: Any = None
_matcher: Any = None
_local = threading.local()


def _tokenizer() -> tuple[Any, Any]:
    """A per-thread Sudachi tokenizer (tokenizers are not shareable) and the shared POS filter."""
    global _dictionary, _matcher
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        with _lock:
            if _dictionary is None:
                from sudachipy import Dictionary  # lazy: loading the dictionary takes ~0.3 s

                _dictionary = Dictionary(dict="core")
                _matcher = _dictionary.pos_matcher(_DROPPED_POS)
            from sudachipy import SplitMode

            tok = _dictionary.tokenizer(mode=SplitMode.A, fields={"pos", "normalized_form"})
        _local.tokenizer = tok
    return tok, _matcher


def _pieces(text: str) -> Iterator[str]:
    """Split text into pieces Sudachi accepts, at line or sentence ends where possible."""
    if len(text.encode("utf-8")) <= _MAX_PIECE_BYTES:
        yield text
        return
    buf: list[str] = []
    size = 0
    for part in _BREAKS.split(text):
        while len(part.encode("utf-8")) > _MAX_PIECE_BYTES:  # one huge sentence: cut it hard
            cut = _MAX_PIECE_BYTES // 4
            yield from _flush(buf)
            size = 0
            yield part[:cut]
            part = part[cut:]
        n = len(part.encode("utf-8"))
        if size + n > _MAX_PIECE_BYTES:
            yield from _flush(buf)
            size = 0
        buf.append(part)
        size += n
    yield from _flush(buf)


def _flush(buf: list[str]) -> Iterator[str]:
    if buf:
        yield "".join(buf)
        buf.clear()


def analysed_pieces(text: str) -> Iterator[str]:
    """What Sudachi analyses of ``text``: NFKC-folded, control characters blanked, cut into
    pieces it accepts."""
    return _pieces(_CONTROL.sub(" ", unicodedata.normalize("NFKC", text)))


def tokens(text: str) -> list[str]:
    """The keyword tokens of ``text``, in order: normalized, lowercased, function words removed."""
    if not text or not text.strip():
        return []
    tok, drop = _tokenizer()
    out: list[str] = []
    for piece in analysed_pieces(text):
        for m in tok.tokenize(piece):
            if drop(m):
                continue
            surface = m.surface()
            # Sudachi "normalizes" English words to katakana (not → ノット); keep Latin as typed.
            # Most surfaces are Japanese: the comparison skips the pattern for them (it can only
            # match a surface starting below U+0250 or with ’).
            latin = (surface < _LATIN_END or surface[:1] == "’") and _LATIN.match(surface)
            word = (surface if latin else m.normalized_form()).lower()
            if not word.isalnum():  # most words are: no call for them
                word = _clean(word)
            if word and len(word) <= _MAX_TOKEN_CHARS:
                out.append(word)
    return out


def _clean(word: str) -> str:
    """Letters and digits only: what the Postgres parser keeps as one word (``don't`` → ``dont``).

    Sudachi tags most punctuation 補助記号, but symbols inside words and OOV symbol runs remain.
    """
    return "".join(ch for ch in word if ch.isalnum())


def quote_lexeme(token: str) -> str:
    """A lexeme quoted for tsvector/tsquery input: quotes and backslashes doubled."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_input(text: str) -> str:
    """``text``'s tokens joined by spaces, for ``to_tsvector('simple', %s)``.

    Example: ``"東京の大学でdon't!"`` → ``"東京 大学 dont"``. Every token is a plain word for the
    Postgres parser, so the tsvector holds exactly these lexemes at positions 1, 2, 3, ...
    Capped by :func:`cap_lexemes`, so any text stays within what a tsvector can hold.
    """
    return " ".join(cap_lexemes(tokens(text)))


def cap_lexemes(words: list[str], max_bytes: int = MAX_LEXEME_BYTES) -> list[str]:
    """``words`` without the *new* words met after the distinct words reach ``max_bytes``.

    Postgres refuses a tsvector whose distinct lexemes take more than 1 MB ("string is too long
    for tsvector"), which a long run of unique words (a pasted log, random text) reaches. The
    cap keeps every occurrence of the words already seen, so term frequencies stay right, and
    drops only words first met past the cap: the start of such a chunk stays keyword-searchable.
    """
    seen: set[str] = set()
    size = 0
    out: list[str] = []
    for word in words:
        if word not in seen:
            n = len(word.encode("utf-8")) + 1
            if size + n > max_bytes:
                continue
            seen.add(word)
            size += n
        out.append(word)
    return out


# tsvector limits: positions above 16383 are stored as 16383 (so only a chunk's first 16383 tokens
# keep distinct positions; its token count saturates there too).
_MAX_POSITION = 16383
# Part of the chunker signature: a new keyword index format re-indexes stored chunks once.
# 3: a note's title is among its chunks' heading words when its H1 says something else.
KEYWORD_INDEX_VERSION = "3"
BIGRAM_SEP = " "  # never inside a token (tokens are letters and digits), so bigrams cannot collide


def bigrams(toks: list[str]) -> list[str]:
    """Adjacent-token pairs as single lexemes: ``["東京", "大学"]`` → ``["東京 大学"]``."""
    return [a + BIGRAM_SEP + b for a, b in pairwise(toks)]


def chunk_tsvector(heading_text: str, body: str) -> str:
    """A chunk's keyword index as a ``tsvector`` literal (for ``%s::tsvector`` or COPY).

    ``heading_text`` is the chunk's headings (parent heading, heading); ``body`` its text.
    Unigrams at positions 1..n (headings first), weight A in headings and D in the body; each
    adjacent pair at its first token's position, weight B in headings and C in the body.
    """
    return tokens_tsvector(tokens(heading_text), tokens(body))


def tokens_tsvector(head: list[str], text: list[str]) -> str:
    """:func:`chunk_tsvector` of a chunk's heading tokens and body tokens."""
    return _small_tsvector(head, text) if _fits(head, text) else _capped_tsvector(head, text)


def _fits(head: list[str], text: list[str]) -> bool:
    """Whether a chunk is below every tsvector limit."""
    chars = sum(map(len, head)) + sum(map(len, text))
    count = len(head) + len(text)
    # At most 4 bytes a character: a chunk this small can neither reach the lexeme-bytes cap
    # (unigrams <= 4 chars + n, pairs <= 8 chars + 2 n) nor the last position.
    return 12 * chars + 3 * count <= MAX_LEXEME_BYTES and count < _MAX_POSITION


# Postgres keeps at most this many positions of one lexeme in a tsvector (MAXNUMPOS).
_MAX_LEXEME_POSITIONS = 256

# A chunk's tsvector literal and its token count (None: left to Postgres).
Keywords = tuple[str, int | None]


def chunk_keywords(heading_text: str, body: str) -> Keywords:
    """A chunk's tsvector literal (:func:`chunk_tsvector`) and its length in tokens for BM25
    (:func:`token_count`)."""
    head, text = tokens(heading_text), tokens(body)
    return tokens_tsvector(head, text), token_count(head, text)


def token_count(head: list[str], text: list[str]) -> int | None:
    """What ``rag.tsvector_token_count`` reads from the chunk's stored tsvector: the unigram
    positions Postgres keeps. Counted here it costs nothing, while Postgres would unnest every
    tsvector it stores again. A chunk over a tsvector limit gets None: its clamped positions
    collapse in Postgres, which then counts them itself.
    """
    if not _fits(head, text):
        return None
    count = len(head) + len(text)
    if count > _MAX_LEXEME_POSITIONS:  # only then can one lexeme have more than Postgres keeps
        repeats = Counter(head)
        repeats.update(text)
        count -= sum(
            n - _MAX_LEXEME_POSITIONS for n in repeats.values() if n > _MAX_LEXEME_POSITIONS
        )
    return count


# Position labels ("12A") made once: a first build labels millions of positions.
_LABELS = {w: [f"{i}{w}" for i in range(_MAX_POSITION + 1)] for w in "ABCD"}


def _small_tsvector(head: list[str], text: list[str]) -> str:
    """:func:`chunk_tsvector` of a chunk below every tsvector limit (no capping, no clamping)."""
    slots: defaultdict[str, list[str]] = defaultdict(list)
    for start, toks, uni, bi in ((1, head, "A", "B"), (1 + len(head), text, "D", "C")):
        labels = _LABELS[uni]
        for i, tok in enumerate(toks, start):
            slots[tok].append(labels[i])
        labels = _LABELS[bi]
        for i, first, second in zip(range(start, start + len(toks)), toks, toks[1:], strict=False):
            slots[first + BIGRAM_SEP + second].append(labels[i])
    # Tokens are letters and digits only (and pairs one space more): nothing to escape.
    return " ".join(["'" + lex + "':" + ",".join(pos) for lex, pos in slots.items()])


def _capped_tsvector(head: list[str], text: list[str]) -> str:
    """:func:`chunk_tsvector` with positions clamped and distinct lexeme bytes capped."""
    slots: dict[str, list[str]] = {}
    size = 0  # distinct-lexeme bytes: capped as in cap_lexemes, unigrams before pairs

    def add(lexeme: str, position: str) -> None:
        nonlocal size
        slot = slots.get(lexeme)
        if slot is None:
            n = len(lexeme.encode("utf-8")) + 1
            if size + n > MAX_LEXEME_BYTES:
                return
            size += n
            slot = slots[lexeme] = []
        slot.append(position)

    for start, toks, uni, bi in ((1, head, "A", "B"), (1 + len(head), text, "D", "C")):
        for i, tok in enumerate(toks):
            add(tok, f"{min(start + i, _MAX_POSITION)}{uni}")
        for i, pair in enumerate(bigrams(toks)):
            add(pair, f"{min(start + i, _MAX_POSITION)}{bi}")
    return " ".join(f"{quote_lexeme(lex)}:{','.join(pos)}" for lex, pos in slots.items())


def query_lexemes(query: str) -> tuple[list[str], list[str]]:
    """The distinct unigram and bigram lexemes of a search query, in first-seen order."""
    toks = tokens(query)
    return list(dict.fromkeys(toks)), list(dict.fromkeys(bigrams(toks)))


def query_terms(query: str) -> list[str]:
    """The distinct tokens of a search query, in first-seen order."""
    return list(dict.fromkeys(tokens(query)))


def tsquery_input(query: str) -> str:
    """A tsquery literal OR-ing the query's tokens (recall first; BM25 ranking orders the hits).

    For ``%s::tsquery``. Returns ``""`` when the query has no searchable token.
    """
    return " | ".join("'" + t + "'" for t in query_terms(query))


def chunk_keywords_batch(sources: Sequence[tuple[str, str]]) -> list[Keywords]:
    """:func:`chunk_keywords` of each (headings, body) pair (one call per batch, for workers)."""
    return [chunk_keywords(head, body) for head, body in sources]
