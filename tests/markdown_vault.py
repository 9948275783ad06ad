"""A vault for the note view: the sample vault plus a note written the way Obsidian notes are
(tables, lists, task lists, quotes, wikilinks) and one whose raw HTML tries to run script."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import EXAMPLE_VAULT

RAMEN = "projects/ラーメン屋めぐり.md"
HOSTILE = "raw-html.md"

RAMEN_NOTE = """\
---
title: ラーメン屋めぐり
tags: [料理, 記録]
created: 2026-01-12
---

# ラーメン屋めぐり

[[2026-01-10|1月10日の日記]]で作った**味噌ラーメン**と比べるために、近所の店を回った。
メモの書き方は [[inbox]] と同じ、店の地図は https://example.com/ramen にある。

## 食べた店

| 店 | 味 | 評価 |
|---|---|---:|
| 札幌軒 | 味噌 | ★★★ |
| 博多屋 | 豚骨 | ★★ |
| 中華そば 青葉 | 醤油 | ★★★ |

## 次に行く店

- [x] 札幌軒
- [ ] 博多屋で*替え玉*を頼む
- [ ] [[旭川ラーメンのメモ]]を書く

1. 麺の硬さを選ぶ
2. スープは最後まで飲まない
   - 塩分に気をつける

> バターとコーンは `味噌` にいちばん合う。

## 営業時間

| 店 | 月 | 火 | 水 | 木 | 金 | 土 | 日 |
|---|---|---|---|---|---|---|---|
| 札幌軒 | 11:00-21:00 | 11:00-21:00 | 休み | 11:00-21:00 | 11:00-22:00 | 10:00-22:00 | 10:00-20:00 |
"""

HOSTILE_NOTE = """\
# 危ない HTML

<script>window.hacked = "script"</script>
<img src="missing.png" onerror="window.hacked = 'onerror'">
<a href="javascript:window.hacked='a'">a タグ</a>

[リンク](javascript:window.hacked='link') と [[x" onmouseover="window.hacked='wikilink']]
"""


def markdown_vault(root: Path, *, hostile: bool = False) -> Path:
    """The sample vault plus the Obsidian-style note (and, with ``hostile``, the note whose raw
    HTML tries to run script), written under ``root``."""
    vault = root / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / RAMEN).write_text(RAMEN_NOTE, encoding="utf-8")
    if hostile:
        (vault / HOSTILE).write_text(HOSTILE_NOTE, encoding="utf-8")
    return vault


def hostile_vault(root: Path) -> Path:
    """A vault of just the note whose raw HTML tries to run script, written under ``root``."""
    vault = root / "hostile"
    vault.mkdir()
    (vault / HOSTILE).write_text(HOSTILE_NOTE, encoding="utf-8")
    return vault


# A documentation folder kept as a vault: words too long for a phone's line, footnotes, HTML
# comments, a list of plain and task items, links beside the note and to a heading.
LONG = "noPropertyAccessFromIndexSignatureAndExactOptionalPropertyTypes"
GUIDE = "qa/sub/guide.md"
BESIDE = "qa/sub/README.md"
LONG_NOTE = f"tsconfig/{LONG}WithAVeryLongFileName.md"
REJECTED = "broken.md"
PERCENT = "100%.md"
CALLOUTS = "qa/callouts.md"
EMBEDS = "qa/embeds.md"
DOCS_NOTES = {
    "README.md": "# ドキュメント\n\nルートの README。\n",
    BESIDE: "# サブフォルダの README\n\n"
    + "前置きの段落。\n\n" * 60
    + "## 使い方\n\nここから使い方。\n",
    GUIDE: f"""\
# {LONG}の設定ガイド

[隣の README](README.md) と [[README]] と [使い方へ](README.md#使い方)。

## {LONG}の見出し

設定は https://example.com/reference/tsconfig/{LONG}/{LONG} にある[^1]。

<!--prettier-ignore-->
- {LONG}
- [ ] 設定を見直す

[^1]: tsconfig のリファレンス。
""",
    LONG_NOTE: f"# {LONG}WithAVeryLongTitle\n\n{LONG} を有効にする。\n",
    REJECTED: "# 壊れる前\n\n最後に読めた本文。\n",
    PERCENT: "# 百パーセント\n\n名前に % がある。\n",
    CALLOUTS: "---\ntags: [書式]\nstatus: 下書き\nreviewed:\n---\n# 囲み\n\n> [!tip] 使い方のコツ\n> 短く書く。\n\n"
    ":::warning\n古い設定です。%%後で消す%%\n:::\n\n"
    "> [!faq]- 閉じた問い\n> 開くと見える答え。\n\n#囲みの例\n",
    EMBEDS: "# 埋め込み\n\n前の段落。\n\n![[callouts]]\n\n後の段落。\n",
}


def docs_vault(root: Path) -> Path:
    """The documentation folder above, written under ``root``."""
    vault = root / "docs"
    for path, text in DOCS_NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    return vault


def png(width: int = 40, height: int = 20) -> bytes:
    """A PNG of one colour, ``width`` × ``height``."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x2f\x6f\xdb" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")  # fmt: skip


# A note with images: one beside it, one found by name (an Obsidian attachment), one a docs
# site keeps outside the folder, and raw HTML of the allowlist.
IMAGES = "qa/images.md"
IMAGES_NOTE = """\
# 画像

![構成図](img/diagram.png)

![[pixel.png|30]]

![外の図](/img/outside.png)

<figure><img src="img/diagram.png" alt="図"><figcaption>図の説明</figcaption></figure>

<ruby>漢字<rt>かんじ</rt></ruby>を<kbd>Ctrl</kbd>+<kbd>C</kbd>で写す。H<sub>2</sub>O

型は [any型](../values/any.md) と `unknown` を <b>比べる</b>。
"""


def add_images(vault: Path) -> Path:
    """The note with images and the image files it names, written into ``vault``."""
    (vault / IMAGES).parent.mkdir(parents=True, exist_ok=True)
    (vault / IMAGES).write_text(IMAGES_NOTE, encoding="utf-8")
    (vault / "qa/img").mkdir(parents=True, exist_ok=True)
    (vault / "qa/img/diagram.png").write_bytes(png())
    (vault / "attachments").mkdir(exist_ok=True)
    (vault / "attachments/pixel.png").write_bytes(png(2, 2))
    return vault
