"""The Unicode lists in the SQL title key are what scripts/title_key_sql.py makes of Python's
unicodedata, so they can be made again and never drift from it silently."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
# sql/057 was written from Python 3.11's unicodedata; another Unicode gives other lists.
MADE_WITH = "14.0.0"
OTHER_UNICODE = pytest.mark.skipif(
    unicodedata.unidata_version != MADE_WITH,
    reason=f"the lists were made from Unicode {MADE_WITH}, this Python has "
    f"{unicodedata.unidata_version}",
)


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "title_key_sql", ROOT / "scripts/title_key_sql.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def migration(prefix: str) -> str:
    (path,) = (ROOT / "sql").glob(f"{prefix}_*.sql")
    return path.read_text(encoding="utf-8")


@OTHER_UNICODE
def test_the_title_key_in_sql_057_is_the_generated_function() -> None:
    text = migration("057")
    start = text.index("CREATE OR REPLACE FUNCTION rag.title_key")
    assert text[start : text.index("$fn$;", start) + len("$fn$;")] == (
        generator().title_key_function()
    )


@OTHER_UNICODE
def test_the_white_space_list_in_sql_058_is_the_generated_one() -> None:
    (spaces,) = re.findall(r"E'([^']*)'", migration("058"))
    assert spaces == generator().escaped(generator().strip_spaces())


@pytest.mark.parametrize(
    ("code_points", "expression"),
    [
        ([0x41, 0x42, 0x43, 0x45], r"\u0041-\u0043\u0045"),
        ([0x178, 0x179], r"\u0178-\u0179"),  # a run of two is a range too
        ([0x3041], r"\u3041"),
        ([0x10401, 0x10400], r"\U00010400-\U00010401"),  # sorted; beyond the BMP 8 digits
        ([], ""),
    ],
)
def test_code_points_are_written_as_ranges(code_points: list[int], expression: str) -> None:
    assert generator().ranges(code_points) == expression
