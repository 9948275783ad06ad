"""A section's Markdown as the sentences a reader would quote.

What is not prose is dropped: fenced code and math, headings (they are kept as the context of
what follows), tables, rules, HTML comments and tag-only lines, MDX ``import``/``export`` lines,
admonition and callout markers, link reference definitions, and lines that are only links (a
「関連情報」 list). In what remains, links become their text (``[ユニオン型](union.md)`` and
``[[union|ユニオン型]]`` → ユニオン型), images, footnote marks and inline tags go, and a
paragraph's soft-wrapped lines are joined. Inline code and emphasis stay: a quote is Markdown.

Sentences end at 。！？ (with the closing brackets after them, never inside 「…」) and, in
Latin-script text, at . ! ? followed by a space and a new sentence (not after "e.g." or
"Node.js").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge_assets.core.chunks.markdown import code_spans, parse_heading

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_MATH = re.compile(r"^\s*\$\$")
_RULE = re.compile(r"^[ \t]{0,3}([-*_=])(?:[ \t]*+\1){2,}+[ \t]*+$")
_TABLE = re.compile(r"^\s*\|")
_ADMONITION = re.compile(r"^\s*:{3,}")
_MDX = re.compile(
    r"^\s*+(?:import\s++(?:[^'\"\n]*?\sfrom\s++)?['\"]|export\s++(?:default|const|let|function|class)\b)"
)
_TAG_LINE = re.compile(r"^\s*(?:</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>\s*)+$|^\s*[{}]\s*$")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s")
_QUOTE = re.compile(r"^(?:[ \t]*+>[ \t]?)++")
_CALLOUT = re.compile(r"^\[!\w+\][-+]?\s*")
_ITEM = re.compile(r"^(\s*)(?:(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?|[・●■◆•▪]\s*)")

_IMAGE = re.compile(r"!\[\[[^\[\]]*\]\]|!\[[^\[\]]*\](?:\((?:[^()\s]|\([^()]*\))*+(?:\s++\"[^\"]*\")?\)|\[[^\[\]]*\])?")  # fmt: skip
_LINK = re.compile(r"\[([^\[\]]*)\]\((?:[^()\s]|\([^()]*\))*+(?:\s++\"[^\"]*\")?\)|\[([^\[\]]+)\]\[[^\[\]]*\]")  # fmt: skip
# [text] alone is a shortcut reference link; in Japanese prose brackets are nothing else.
# The bracketed text is taken whole (possessive) and checked for Japanese after: a pattern
# asking for a kana or kanji inside backtracked over a long unclosed bracket.
_SHORTCUT = re.compile(r"(?<![A-Za-z0-9_\]!])\[([^\[\]]*+)\](?![(\[:])")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_WIKI = re.compile(r"\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^<>\s]++)>")
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
_HELD = re.compile(r"\x00(\d+)\x00")
_SPACES = re.compile(r"[ \t\u3000]+")
# What may stand between links on a line that is only links: separators and list punctuation.
_FILLER = re.compile(r"[\s、,，・|/:：;；\-–—>→()（）\[\]「」*_`.。]+")

_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
_CLOSERS = "」』）)】〕〉》\"'”’"
_OPENERS = {"「": "」", "『": "』"}
_LAST_WORD = re.compile(r"([A-Za-z.]+)$")
_ABBREVIATIONS = frozenset("e.g i.e etc vs cf mr mrs ms dr st no fig eq approx ca al".split())
_MAX_QUOTED = 300  # characters inside 「…」 after which an unclosed bracket stops holding


@dataclass(frozen=True)
class Sentence:
    """One sentence of a section, cleaned, with where it stands."""

    text: str
    heading: str = ""  # the heading inside the section it falls under ("" before any)


@dataclass(frozen=True)
class Section:
    """A section's sentences, and the share of its text lines that were only links."""

    sentences: list[Sentence]
    link_share: float


def inline(text: str) -> tuple[str, bool]:
    """``text`` with links as their text and images, footnote marks and tags removed; and whether
    it held links and nothing else (no words outside them). Inline code is kept as written."""
    spans: list[str] = []
    pieces, at = [], 0
    for start, end, _code in code_spans(text):  # held aside, put back as written at the end
        pieces += [text[at:start], f"\x00{len(spans)}\x00"]
        spans.append(text[start:end])
        at = end
    text = "".join(pieces) + text[at:]
    text = _AUTOLINK.sub(r"\1", text)
    text = _IMAGE.sub("", text)
    text = _FOOTNOTE.sub("", text)
    outside = _WIKI.sub("", _LINK.sub("", text))
    had_links = outside != text
    text = _WIKI.sub(_wiki_text, text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _SHORTCUT.sub(lambda m: m[1] if _JAPANESE.search(m[1]) else m[0], text)
    text = _TAG.sub("", text)
    text = _SPACES.sub(" ", text).strip()
    only_links = had_links and len(_FILLER.sub("", _TAG.sub("", outside))) <= 1
    return _HELD.sub(lambda m: spans[int(m.group(1))], text), only_links


def _wiki_text(match: re.Match[str]) -> str:
    target, heading, alias = match.group(1), match.group(2), match.group(3)
    if alias:
        return alias
    name = re.sub(r"\.md$", "", target.rsplit("/", 1)[-1]) if target else ""
    return " › ".join(p for p in (name, heading) if p)


def _join(a: str, b: str) -> str:
    """Two soft-wrapped lines as one: no space between Japanese text."""
    if not a:
        return b
    if _CJK.match(a[-1]) or _CJK.match(b[0]):
        return a + b
    return f"{a} {b}"


@dataclass
class _Block:
    text: str
    heading: str


def _blocks(content: str) -> tuple[list[_Block], float]:
    """The prose blocks (paragraphs and list items, soft wraps joined) of ``content``, and the
    share of text lines that were only links."""
    blocks: list[_Block] = []
    current: _Block | None = None
    heading = outer = callout = ""
    fence = ""
    in_math = False
    text_lines = link_lines = 0

    def close() -> None:
        nonlocal current
        if current is not None and current.text:
            blocks.append(current)
        current = None

    for raw in _COMMENT.sub("", content).splitlines():
        if fence:
            if raw.strip().startswith(fence):
                fence = ""
            continue
        fence_match = _FENCE.match(raw)
        if fence_match:
            close()
            fence = fence_match.group(1)
            continue
        if _MATH.match(raw):
            close()
            line = raw.strip()
            if not (len(line) > 4 and line.endswith("$$")):  # $$ x $$ on one line opens nothing
                in_math = not in_math
            continue
        if in_math:
            continue
        line = _QUOTE.sub("", raw, count=1)
        if callout and line == raw:  # the callout ended: its title no longer heads the text
            close()
            heading, callout = outer, ""
        if _CALLOUT.match(line):  # > [!note] Title: the title heads the callout's text
            close()
            callout = inline(_CALLOUT.sub("", line))[0] or heading
            outer, heading = heading, callout
            continue
        if not line.strip():
            close()
            continue
        level, title = parse_heading(line)  # as the chunker reads headings
        if level:
            close()
            heading = inline(title)[0]
            continue
        if (_RULE.match(line) or _TABLE.match(line) or _ADMONITION.match(line) or _MDX.match(line)
                or _TAG_LINE.match(line) or _REF_DEF.match(line)):  # fmt: skip
            close()
            continue
        item = _ITEM.match(line)
        text, only_links = inline(_ITEM.sub("", line, count=1) if item else line)
        text_lines += 1
        if only_links:
            link_lines += 1
            close()
            continue
        if not text:
            continue
        if item or current is None:
            close()
            current = _Block(text, heading)
        else:
            current.text = _join(current.text, text)
    close()
    return blocks, link_lines / text_lines if text_lines else 0.0


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences (Japanese and Latin-script punctuation)."""
    out: list[str] = []
    start = 0
    closing: list[str] = []
    opened_at = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _OPENERS:
            if not closing:
                opened_at = i
            closing.append(_OPENERS[ch])
        elif closing and ch == closing[-1]:
            closing.pop()
        elif closing and i - opened_at > _MAX_QUOTED:
            closing.clear()
        if not closing and _ends(text, i):
            j = i + 1
            while j < n and (text[j] in "。！？!?．" or text[j] in _CLOSERS):
                j += 1
            out.append(text[start:j])
            start = i = j
            continue
        i += 1
    out.append(text[start:])
    return [s.strip() for s in out if len(s.strip()) > 1]


def _ends(text: str, i: int) -> bool:
    """Whether a sentence ends at ``text[i]``."""
    ch = text[i]
    if ch in "。！？．":
        return True
    if ch not in ".!?":
        return False
    after = text[i + 1 : i + 2]
    if ch in "!?" and (not after or after.isspace() or _CJK.match(after)):
        return True
    if not after or not after.isspace():
        return False  # 1.5, Node.js, union.md
    rest = text[i + 1 : i + 40].lstrip()  # a window: the rest of a long paragraph is not read
    if rest and not (rest[0].isupper() or rest[0].isdigit() or _CJK.match(rest[0]) or rest[0] in "\"'“‘(「`*"):  # fmt: skip
        return False
    word = _LAST_WORD.search(text, max(0, i - 16), i)
    return not (word and word.group(1).lower().strip(".") in _ABBREVIATIONS)


def section_sentences(content: str) -> Section:
    """The quotable sentences of one section's Markdown, in order."""
    blocks, link_share = _blocks(content)
    out: list[Sentence] = []
    for block in blocks:
        for text in split_sentences(block.text):
            out.append(Sentence(text, block.heading))
    return Section(out, link_share)
