"""Japanese + English keyword tokens for Postgres full-text search (DESIGN decision 5).

Postgres has no Japanese parser here (no pg_bigm/PGroonga), so text is split in Python with
SudachiPy in mode A (short units: the best BM25 setting measured on jsquad), each morpheme is
reduced to its normalized form (``行い`` → ``行う``), Latin-script words are kept as written, all
is lowercased after NFKC (``ＡＢＣ`` → ``abc``), and particles, auxiliary verbs, punctuation and whitespace are dropped.

The tokens are stored as a ``tsvector`` built from a **tsvector literal** (``%s::tsvector``), not
with ``to_tsvector('simple', …)``: the default text-search parser would split tokens such as
``c++``, ``a:b`` or ``don't`` again and discard the positions. The literal keeps every token
exactly and records its positions, which the BM25 scoring uses as term frequencies.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterator
from typing import Any

# Sudachi refuses inputs longer than 49,149 bytes; stay well below it (3 bytes per kana/kanji).
_MAX_PIECE_BYTES = 12_000
_DROPPED_POS = [("助詞",), ("助動詞",), ("補助記号",), ("空白",)]
# Postgres limits: a lexeme is at most 2,046 bytes, positions run 1..16,383, at most 256 per
# lexeme. Tokens longer than this are noise (base64, hashes), not words anyone types.
_MAX_TOKEN_CHARS = 64
_MAX_POSITION = 16_383
_MAX_POSITIONS_PER_TOKEN = 256
_BREAKS = re.compile(r"(?<=[\n。．！？!?])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LATIN = re.compile(r"^[A-Za-z0-9\u00c0-\u024f'’._+#-]+$")

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


def tokens(text: str) -> list[str]:
    """The keyword tokens of ``text``, in order: normalized, lowercased, function words removed."""
    if not text or not text.strip():
        return []
    text = _CONTROL.sub(" ", unicodedata.normalize("NFKC", text))
    tok, drop = _tokenizer()
    out: list[str] = []
    for piece in _pieces(text):
        for m in tok.tokenize(piece):
            if drop(m):
                continue
            surface = m.surface()
            # Sudachi "normalizes" English words to katakana (not → ノット); keep Latin as typed.
            word = (surface if _LATIN.match(surface) else m.normalized_form()).lower().strip()
            if word and len(word) <= _MAX_TOKEN_CHARS and not _is_punct(word):
                out.append(word)
    return out


def _is_punct(word: str) -> bool:
    # Sudachi tags most punctuation 補助記号, but OOV symbol runs can come back as nouns.
    return all(unicodedata.category(ch)[0] in "PZ" for ch in word)


def _quote(token: str) -> str:
    """A lexeme quoted for tsvector/tsquery input: quotes and backslashes doubled."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_input(text: str) -> str:
    """A tsvector literal of ``text``'s tokens with positions, for ``%s::tsvector``.

    Example: ``"東京の大学"`` → ``"'東京':1 '大学':2"``. Do not pass it to ``to_tsvector``.
    """
    positions: dict[str, list[int]] = {}
    for i, token in enumerate(tokens(text), start=1):
        plist = positions.setdefault(token, [])
        if len(plist) < _MAX_POSITIONS_PER_TOKEN and (not plist or plist[-1] < _MAX_POSITION):
            plist.append(min(i, _MAX_POSITION))
    return " ".join(
        f"{_quote(tok)}:{','.join(map(str, plist))}" for tok, plist in positions.items()
    )


def query_terms(query: str) -> list[str]:
    """The distinct tokens of a search query, in first-seen order."""
    return list(dict.fromkeys(tokens(query)))


def tsquery_input(query: str) -> str:
    """A tsquery literal OR-ing the query's tokens (recall first; ranking orders them).

    Returns ``""`` when the query has no searchable token; callers skip keyword search then.
    """
    return " | ".join(_quote(t) for t in query_terms(query))
