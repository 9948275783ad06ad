"""An adversarial vault: 50 good notes beside about 100 odd or hostile inputs.

``build(root)`` writes the vault and returns what each input is expected to become:

- ``searchable``: ingested, and found by keyword search for its marker word;
- ``stored``: ingested, but not searched on purpose (a draft, no body, a superseded version);
- ``rejected``: listed in ``raw.rejected_files`` with a reason;
- ``either``: stored or rejected with a reason, both are fine.

Files that cannot be read are only unreadable to a process without root's power to bypass file
permissions: run the sync through :mod:`tests.unprivileged` (or as a normal user).
Used by ``tests/test_messy_vault.py`` and ``bench/messy_vault.py``.
"""

from __future__ import annotations

import os
import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GOOD_NOTES = 50
LOCKED_NOTES = 5


@dataclass(frozen=True)
class Case:
    """One input: where it is, what kind of trouble it is, and what it must become."""

    name: str
    path: str
    kind: str
    expect: str
    marker: str = ""
    reason: str = ""  # a fragment the rejection reason must contain


@dataclass
class Vault:
    root: Path
    cases: list[Case]
    good: dict[str, str]  # path -> marker word of each good note


def marker(name: str) -> str:
    """A Latin word no other note contains, for keyword search (kept as typed by the tokenizer)."""
    return "zq" + "".join(ch for ch in name if ch.isalnum()).lower()[:40]


def _note(word: str, frontmatter: str | None = None, extra: str = "") -> str:
    head = f"---\n{frontmatter}\n---\n" if frontmatter is not None else ""
    return f"{head}# {word}\n\n本文に {word} という語がある。{extra}\n"


def _fm(name: str, yaml_text: str, expect: str = "either", reason: str = "") -> Case:
    return Case(name, f"yaml/{name}.md", "yaml", expect, marker(name), reason)


def _laughs(levels: int, width: int, leaf: str) -> str:
    lines = [f'l0: &l0 "{leaf}"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines)


# (case, bytes or text of the file); text is written as UTF-8 unless given as bytes.
def _content_cases() -> list[tuple[Case, str | bytes]]:
    random.seed(8)
    words = " ".join(
        "".join(random.choices("abcdefghijklmnopqrstuvwxyz", k=random.randint(6, 12)))
        for _ in range(200_000)
    )
    ja = "吾輩は猫である。名前はまだ無い。"
    out: list[tuple[Case, str | bytes]] = []

    def add(case: Case, data: str | bytes | None = None) -> None:
        out.append((case, data if data is not None else _note(case.marker)))

    def enc(name: str, expect: str, data: Callable[[str], bytes], reason: str = "") -> None:
        add(
            Case(name, f"enc/{name}.md", "encoding", expect, marker(name), reason),
            data(marker(name)),
        )

    # encodings and line endings
    enc("bom", "searchable", lambda m: b"\xef\xbb\xbf" + _note(m, "title: bom").encode())
    enc("crlf", "searchable", lambda m: _note(m, "title: crlf").replace("\n", "\r\n").encode())
    enc("cr-only", "searchable", lambda m: _note(m, "title: cr").replace("\n", "\r").encode())
    enc("mixed-eol", "searchable", lambda m: f"# {m}\r\nline\rline\n{m} end\r\n".encode())
    enc("bom-crlf-nofm", "searchable", lambda m: b"\xef\xbb\xbf" + f"# {m}\r\n{ja}\r\n".encode())
    enc("utf16le", "rejected", lambda m: _note(m).encode("utf-16"), "UTF-16 text")
    enc("utf16be", "rejected", lambda m: _note(m).encode("utf-16-be"), "UTF-16 text (no byte")
    enc("utf32", "rejected", lambda m: _note(m).encode("utf-32"), "UTF-32 text")
    enc("shift-jis", "rejected", lambda m: (ja + m).encode("shift_jis"), "reads as Shift_JIS")
    enc("euc-jp", "rejected", lambda m: (ja + m).encode("euc_jp"), "reads as EUC-JP")
    enc("latin1", "rejected", lambda m: f"café {m}".encode("latin-1"), "not valid UTF-8")
    enc("truncated-utf8", "rejected", lambda m: f"# {m}\n".encode() + "猫".encode()[:2], "UTF-8")
    enc("overlong-utf8", "rejected", lambda m: f"# {m}\n".encode() + b"\xc0\xaf", "UTF-8")
    enc("utf8-surrogate", "rejected", lambda m: f"# {m}\n".encode() + b"\xed\xa0\x80", "UTF-8")
    enc("nul-start", "rejected", lambda m: b"\x00" + m.encode(), "binary")
    enc("nul-after-8k", "rejected", lambda m: f"# {m}\n".encode() + b"a\n" * 5000 + b"\x00",
        "NUL byte at offset")  # fmt: skip
    enc(
        "controls",
        "searchable",
        lambda m: f"# {m}\n\x01\x02\x07\x08\x0b\x0c\x1b[31m{m}\x7f\n".encode(),
    )
    enc("c1-controls", "searchable", lambda m: f"# {m}\n\u0085\u009b text\n".encode())
    enc(
        "bidi-zero-width", "searchable", lambda m: f"# {m}\n\u202e\u200b\u200d\ufeff{ja}\n".encode()
    )
    enc("emoji", "searchable", lambda m: f"# {m} 🐈‍⬛\n👩‍👩‍👧 {ja}\n".encode())
    enc("nfd-japanese", "searchable", lambda m: ("# " + m + "\nガギグ" + "\u3099" * 50).encode())
    enc("png-as-md", "rejected", lambda m: b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + m.encode(),
        "binary")  # fmt: skip

    # bodies
    def body(name: str, expect: str, text: str | bytes, reason: str = "") -> None:
        add(Case(name, f"body/{name}.md", "body", expect, marker(name), reason), text)

    body("empty", "stored", b"")
    body("blank", "stored", " \n\t\n")
    body("bom-only", "stored", b"\xef\xbb\xbf")
    body("frontmatter-only", "stored", "---\ntitle: only frontmatter\n---\n")
    body("headings-only", "stored", "# a\n## b\n### c\n")
    body("huge-one-line", "searchable", f"{marker('huge-one-line')} {words}\n")
    body("over-size-limit", "rejected", "x" * (3 * 1024 * 1024), "over the")
    m = marker("many-sections")
    body(
        "many-sections", "searchable", f"# {m}\n" + "".join(f"## s{i}\n{ja}\n" for i in range(3000))
    )
    m = marker("deep-lists")
    body("deep-lists", "searchable", f"# {m}\n" + "".join("  " * i + "- x\n" for i in range(1000)))
    m = marker("deep-quotes")
    body("deep-quotes", "searchable", f"# {m}\n" + ">" * 5000 + " deep\n")
    m = marker("unclosed-fence")
    body("unclosed-fence", "searchable", f"# {m}\n```python\nprint('never closed')\n")
    m = marker("huge-table")
    body("huge-table", "searchable", f"# {m}\n" + "|a|b|\n|-|-|\n" + "|1|2|\n" * 5000)
    m = marker("long-word")
    body("long-word", "searchable", f"# {m}\n{'x' * 100_000}\n")
    m = marker("base64-blob")
    body("base64-blob", "searchable", f"# {m}\n![](data:image/png;base64,{'QUJD' * 100_000})\n")
    m = marker("unclosed-comments")
    body("unclosed-comments", "searchable", f"# {m}\n" + "<!-- 下書き\n" * 5000 + "<!--" * 5000)
    m = marker("obsidian-comments")
    body(
        "obsidian-comments",
        "searchable",
        f"# {m}\n" + "%% 下書き\n" * 5000 + "%%" * 5001 + "\n50%%\n",
    )
    m = marker("html-script")
    body("html-script", "searchable", f"# {m}\n<script>alert(1)</script><!-- {ja}\n")
    m = marker("unterminated-fm")
    body("unterminated-fm", "searchable", f"---\ntitle: x\n# {m}\nno closing line\n")
    m = marker("dashes-no-newline")
    body("dashes-no-newline", "searchable", f"---\n# {m}\n")
    m = marker("setext-and-hr")
    body("setext-and-hr", "searchable", f"{m}\n===\n\n---\n\n***\nbody\n")
    m = marker("sql-ish")
    body("sql-ish", "searchable", f"# {m}\n'; DROP TABLE rag.chunks; -- $$ \\x00 %s %(x)s\n")
    m = marker("tsquery-chars")
    body("tsquery-chars", "searchable", f"# {m}\na & b | !c <-> d:* 'e' \\\\ f\n")
    # frontmatter (YAML)
    out.extend((c, _note(c.marker, y)) for c, y in _yaml_cases())
    return out


def _yaml_cases() -> list[tuple[Case, str]]:
    cases = [
        ("date-month-13", "created: 2024-13-01", "searchable"),
        ("date-zeros", "updated: 0000-00-00", "searchable"),
        ("date-feb-30", "date: 2024-02-30", "searchable"),
        ("date-year-99999", "created: 99999-01-01", "searchable"),
        ("date-garbage", "created: next tuesday", "searchable"),
        ("datetime-tz", "created: 2024-05-01T10:00:00+09:00", "searchable"),
        ("created-at", "createdAt: 2024-05-01\nupdatedAt: 2024-05-02", "searchable"),
        ("nested-5000-flow", "x: " + "[" * 5000 + "]" * 5000, "rejected"),
        ("nested-5000-map", "x: " + "{a: " * 5000 + "1" + "}" * 5000, "rejected"),
        (
            "nested-200-block",
            "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v",
            "rejected",
        ),
        ("self-alias", "x: &a [*a]", "rejected"),
        ("self-alias-map", "x: &a {y: *a}", "rejected"),
        ("billion-laughs", _laughs(9, 9, "lol"), "rejected"),
        ("six-level-laughs", _laughs(6, 10, "x" * 80), "rejected"),
        ("many-aliases", "a: &a 1\nb: [" + ", ".join(["*a"] * 150) + "]", "rejected"),
        ("python-object", 'x: !!python/object/apply:os.system ["echo pwned"]', "rejected"),
        ("python-name", "x: !!python/name:os.system", "rejected"),
        ("python-module", "x: !!python/module:os", "rejected"),
        ("custom-tag", "x: !shout hello", "rejected"),
        ("unhashable-key", "? [a, b]\n: c", "rejected"),
        ("huge-frontmatter", "x: " + "y" * 70_000, "rejected"),
        ("tabs-indent", "a:\n\tb: 1", "rejected"),
        ("unclosed-quote", 'title: "never closed', "rejected"),
        ("unclosed-flow", "tags: [a, b", "rejected"),
        ("list-frontmatter", "- a\n- b", "rejected"),
        ("scalar-frontmatter", "just a string", "rejected"),
        ("nul-in-title", 'title: "a\\0b"', "searchable"),
        ("lone-surrogate", 'title: "\\ud800"', "searchable"),
        ("surrogate-pair", 'title: "\\ud83d\\ude00"', "searchable"),
        ("nul-in-key", '"k\\0": 1', "searchable"),
        ("control-in-title", 'title: "\\x1b[31mred\\x07"', "searchable"),
        ("duplicate-keys", "title: one\ntitle: two", "searchable"),
        ("non-string-keys", "10: a\ntrue: b\nnull: c\n2.5: d", "searchable"),
        ("binary-tag", "b: !!binary aGVsbG8=", "searchable"),
        ("binary-garbage", "b: !!binary //79/A==", "searchable"),
        ("set-tag", "s: !!set {a, b}", "searchable"),
        ("omap-tag", "o: !!omap [{a: 1}, {b: 2}]", "searchable"),
        ("merge-key", "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2", "searchable"),
        ("inf-nan", "a: .inf\nb: -.inf\nc: .nan", "searchable"),
        ("huge-int", "n: " + "9" * 5000, "searchable"),
        ("float-overflow", "x: 1.0e+999", "searchable"),
        ("huge-list", "l: [" + ",".join(["1"] * 20_000) + "]", "searchable"),
        ("huge-string", "s: " + "あ" * 20_000, "searchable"),
        ("huge-tags", "tags: [" + ",".join(f"t{i}" for i in range(5000)) + "]", "searchable"),
        ("tags-string", "tags: 'a, b, #c'", "searchable"),
        ("tags-number", "tags: 123", "searchable"),
        ("tags-mapping", "tags: {a: b}", "searchable"),
        ("tags-nested", "tags: [[a, b], {c: d}, null]", "searchable"),
        ("aliases-mapping", "aliases: {x: 1}", "searchable"),
        ("title-number", "title: 12345", "searchable"),
        ("title-list", "title: [a, b]", "searchable"),
        ("title-huge", "title: " + "t" * 50_000, "searchable"),
        ("empty-frontmatter", "", "searchable"),
        ("null-frontmatter", "~", "searchable"),
        ("yaml-directive", "%YAML 1.1\n---\ntitle: directive", "either"),
        ("anchors-ok", "a: &a [1, 2]\nb: [*a, *a]", "searchable"),
        ("previous-self", "previous: previous-self.md", "searchable"),
        ("previous-missing", "previous: no-such-note.md", "searchable"),
        ("previous-list-junk", "previous: [null, 3, {a: b}, '[[x]]']", "searchable"),
        ("version-junk", "version: [1]\nprevious: []", "searchable"),
        ("draft-true", "draft: true", "stored"),
        ("draft-yes-string", "draft: 'yes'", "stored"),
        ("published-false", "published: false", "stored"),
        ("published-true", "published: true", "searchable"),
        ("content-type-list", "content_type: [a]\ntype: {b: c}", "searchable"),
    ]
    return [(_fm(name, text, expect), text) for name, text, expect in cases]


def _write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))


def build(root: Path, outside: Path) -> Vault:
    """Write the adversarial vault at ``root``; ``outside`` is a folder beside it for link targets."""
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    good = {}
    for i in range(GOOD_NOTES):
        word = marker(f"good{i:02d}")
        fm = f"title: 良いノート{i}\ntags: [good, 日本語]\ncreated: 2025-01-{i % 28 + 1:02d}"
        _write(root, f"good/note-{i:02d}.md", _note(word, fm, "梅雨の季節に検索できること。"))
        good[f"good/note-{i:02d}.md"] = word
    for i in range(LOCKED_NOTES):
        word = marker(f"locked{i}")
        _write(root, f"locked-folder/note-{i}.md", _note(word))
        good[f"locked-folder/note-{i}.md"] = word
    word = marker("lockedfile")
    _write(root, "locked-file.md", _note(word))
    good["locked-file.md"] = word
    cases = []
    for case, data in _content_cases():
        _write(root, case.path, data)
        cases.append(case)
    cases += _path_cases(root, outside)
    return Vault(root, cases, good)


def _path_cases(root: Path, outside: Path) -> list[Case]:
    cases: list[Case] = []

    def note(name: str, rel: str, expect: str = "searchable", reason: str = "") -> None:
        _write(root, rel, _note(marker(name)))
        cases.append(Case(name, rel, "path", expect, marker(name), reason))

    note("space-and-japanese", "paths/日本語 の ノート.md")
    note("nfd-name", "paths/" + unicodedata.normalize("NFD", "ガギグ") + ".md")
    note("newline-name", "paths/new\nline.md")
    note("upper-ext", "paths/UPPER.MD")
    note("markdown-ext", "paths/long.markdown")
    note("deep-path", "paths/" + "/".join(f"d{i}" for i in range(60)) + "/deep.md")
    note("long-name", "paths/" + "n" * 240 + ".md")
    note("case-a", "paths/Case.md", "either")
    note("case-b", "paths/case.md", "either", "differ only in case")
    bad = os.path.join(os.fsencode(root), b"paths", b"caf\xe9.md")
    with open(bad, "wb") as f:
        f.write(_note(marker("latin1-name")).encode())
    cases.append(Case("latin1-name", "paths/caf\ufffd.md", "path", "rejected", reason="UTF-8"))
    _write(outside, "secret.md", "# outside\n\nzqoutsidesecret\n")
    links = {
        "symlink-loop": ("links/loop.md", "loop.md", "symlink loop"),
        "symlink-dangling": ("links/dangling.md", "nowhere.md", "target nowhere.md does not"),
        "symlink-outside": ("links/escape.md", str(outside / "secret.md"), "outside the vault"),
        "symlink-dev-zero": ("links/zero.md", "/dev/zero", "outside the vault"),
        "symlink-dev-random": ("links/random.md", "/dev/urandom", "outside the vault"),
        "symlink-etc": ("links/passwd.md", "/etc/passwd", "outside the vault"),
        "symlink-fifo": ("links/pipe.md", "pipe.fifo", "not a regular file"),
        "symlink-to-parent": ("links/dir.md", "..", "not a regular file"),
        "symlink-to-folder": ("links/folder.md", "../good", "not a regular file"),
    }
    (root / "links").mkdir(exist_ok=True)
    os.mkfifo(root / "links" / "pipe.fifo")
    for name, (rel, target, reason) in links.items():
        (root / rel).symlink_to(target)
        cases.append(Case(name, rel, "symlink", "rejected", reason=reason))
    (root / "links" / "inside.md").symlink_to("../good/note-00.md")
    cases.append(
        Case("symlink-inside", "links/inside.md", "symlink", "searchable", marker("good00"))
    )
    (root / "links" / "folder-loop").symlink_to("..")
    cases.append(
        Case(
            "symlink-folder-loop",
            "links/folder-loop/",
            "symlink",
            "rejected",
            reason="not followed",
        )
    )
    (root / "notes-dir.md").mkdir()
    cases.append(Case("folder-named-md", "notes-dir.md", "path", "ignored"))
    _write(root, ".obsidian/workspace.md", "# hidden\n")
    cases.append(Case("hidden-folder", ".obsidian/workspace.md", "path", "ignored"))
    _write(root, "private.md", _note(marker("private")))
    os.chmod(root / "private.md", 0)
    cases.append(
        Case("mode-000-file", "private.md", "permission", "rejected", reason="Permission denied")
    )
    return cases


def lock(root: Path) -> list[Case]:
    """Make a stored folder and a stored note unreadable (the second run's trouble)."""
    os.chmod(root / "locked-folder", 0)
    os.chmod(root / "locked-file.md", 0)
    return [
        Case(
            "locked-folder",
            "locked-folder/",
            "permission",
            "rejected",
            reason="folder cannot be read",
        ),
        Case(
            "locked-stored-file",
            "locked-file.md",
            "permission",
            "rejected",
            reason="Permission denied",
        ),
    ]


def unlock(root: Path) -> None:
    """Undo every permission change, so the vault can be removed."""
    for path in (root / "locked-folder", root / "locked-file.md", root / "private.md"):
        if path.exists():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
