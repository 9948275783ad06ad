"""Write out the Unicode lists in the SQL of ``rag.title_key`` from Python's ``unicodedata``.

The store compares titles, aliases and queries by the key ``core/search/title_match.title_key``
computes (NFKC, lowercase, hiragana as katakana, letters and digits only). The SQL function
cannot use ``lower()`` or ``[[:alnum:]]``: both follow the database's locale, and under the C
locale ``[[:alnum:]]`` knows no kana or kanji. So the function lists, as this Python's
``unicodedata`` reads them, the non-ASCII capitals with their lowercase letters (``str.lower``;
the one capital lowering to two characters, ``İ``, keeps its first: the second is a combining
mark the key drops), and every letter and digit (``str.isalnum``). sql/057 holds the lists made
by Python 3.11 (Unicode 14.0.0); tests/test_title_key_sql.py checks that they are what this
script prints. ``rag.short_name_keys`` (sql/058) also lists the white space ``str.strip`` removes
from an NFKC-folded title.

A migration that moves the key to a newer Unicode pastes the function this prints, run by the
Python the search runs on::

    .venv/bin/python scripts/title_key_sql.py            # CREATE OR REPLACE FUNCTION rag.title_key
    .venv/bin/python scripts/title_key_sql.py --spaces   # the white space list of sql/058
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Iterable

_CODE_POINTS = range(0x110000)
_HIRAGANA = range(0x3041, 0x3097)  # ぁ..ゖ; katakana is 0x60 code points further


def escape(code_point: int) -> str:
    """A code point as PostgreSQL's ``E''`` strings and regular expressions write it."""
    return f"\\u{code_point:04X}" if code_point <= 0xFFFF else f"\\U{code_point:08X}"


def escaped(code_points: Iterable[int]) -> str:
    return "".join(map(escape, code_points))


def ranges(code_points: Iterable[int]) -> str:
    """Sorted code points as a bracket expression's body: runs of two or more as ``a-b``."""
    points = sorted(code_points)
    out: list[str] = []
    start = 0
    for i in range(len(points)):  # bounded by the list
        if i + 1 < len(points) and points[i + 1] == points[i] + 1:
            continue
        first, last = points[start], points[i]
        out.append(escape(first) if first == last else f"{escape(first)}-{escape(last)}")
        start = i + 1
    return "".join(out)


def capitals() -> list[int]:
    """The non-ASCII letters and digits that ``str.lower`` changes."""
    return [c for c in _CODE_POINTS[0x80:] if chr(c).isalnum() and chr(c).lower() != chr(c)]


def letters_and_digits() -> list[int]:
    return [c for c in _CODE_POINTS if chr(c).isalnum()]


def strip_spaces() -> list[int]:
    """What ``str.strip()`` removes from an NFKC-folded text: the white space NFKC keeps."""
    return [
        c
        for c in _CODE_POINTS
        if chr(c).isspace() and unicodedata.normalize("NFKC", chr(c)) == chr(c)
    ]


def title_key_function() -> str:
    """``CREATE OR REPLACE FUNCTION rag.title_key``, as sql/057 holds it."""
    caps = capitals()
    lowered = [ord(chr(c).lower()[0]) for c in caps]
    ascii_caps = list(range(ord("A"), ord("Z") + 1))
    # Only the ASCII capitals, the final sigma and hiragana are translated for every text; the long
    # list of other capitals only for a text holding one (translate() reads its whole list).
    plain_from = [*ascii_caps, ord("ς"), *_HIRAGANA]
    plain_to = [c + 0x20 for c in ascii_caps] + [ord("σ")] + [c + 0x60 for c in _HIRAGANA]
    return (
        "CREATE OR REPLACE FUNCTION rag.title_key(t text) RETURNS text\n"
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $fn$\n"
        "SELECT regexp_replace(\n"
        "    translate(\n"
        f"        CASE WHEN n ~ E'[{ranges(caps)}]'\n"
        "            THEN translate(n,\n"
        f"                E'{escaped(caps)}',\n"
        f"                E'{escaped(lowered)}')\n"
        "            ELSE n END,\n"
        f"        E'{escaped(plain_from)}',\n"
        f"        E'{escaped(plain_to)}'),\n"
        f"    E'[^{ranges(letters_and_digits())}]', '', 'g')\n"
        "FROM normalize(t, NFKC) n\n"
        "$fn$;"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spaces", action="store_true", help="print the white space list only")
    args = parser.parse_args()
    print(f"-- made by scripts/title_key_sql.py, Python {sys.version.split()[0]}, "
          f"Unicode {unicodedata.unidata_version}")  # fmt: skip
    print(f"E'{escaped(strip_spaces())}'" if args.spaces else title_key_function())


if __name__ == "__main__":
    main()
