"""The writers of bench/churn_sweep.py: threads that change notes at random moments while
``update`` runs, in a vault folder (:class:`FolderWriter`) or a GitHub repository served on
loopback (:class:`RepoWriter`), until stopped; each says which note paths it holds now and
their bytes, for the check against the store."""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

FOLDERS = ["", "new", "new/deeper", "inbox", "moved"]


class Writer(threading.Thread):
    """Runs one of its weighted actions every 10-400 ms, at most ``ops`` times, until halted."""

    def __init__(self, sections: list[str], rng: random.Random, ops: int) -> None:
        super().__init__(daemon=True)
        self.sections, self.rng, self.ops = sections, rng, ops
        self.halt = threading.Event()
        self.done: Counter[str] = Counter()

    def actions(self) -> list[tuple[Callable[[], Any], int]]:
        raise NotImplementedError

    def run(self) -> None:
        actions, weights = zip(*self.actions(), strict=True)
        for _ in range(self.ops):
            if self.halt.wait(self.rng.uniform(0.01, 0.4)):
                return
            action = self.rng.choices(actions, weights)[0]
            try:
                action()
                self.done[action.__name__] += 1
            except (FileNotFoundError, IndexError):
                self.done["raced with itself"] += 1

    def text(self) -> str:
        picked = self.rng.sample(self.sections, k=self.rng.randint(1, 4))
        stamp = f"{time.time_ns()}-{self.rng.randrange(10**6)}"
        return f"---\ntags: [churn]\nrev: {stamp}\n---\n" + "\n\n".join(picked) + "\n"

    def new_name(self, prefix: str) -> str:
        folder = self.rng.choice(FOLDERS)
        return f"{folder}/{prefix}{time.time_ns()}.md".lstrip("/")

    def notes(self) -> dict[str, bytes]:
        raise NotImplementedError


class FolderWriter(Writer):
    """Saves as editors and sync tools do: in place in several writes, atomically through a
    temporary file, one-character fixes; creates, deletes and renames notes. ``coarse`` gives
    each file it saves a whole-second mtime, as FAT and HFS+ keep."""

    def __init__(
        self, vault: Path, sections: list[str], rng: random.Random, ops: int, coarse: bool
    ) -> None:
        super().__init__(sections, rng, ops)
        self.vault, self.coarse = vault, coarse

    def actions(self) -> list[tuple[Callable[[], Any], int]]:
        return [
            (self.edit_in_place, 5), (self.retouch, 3), (self.save_atomic, 3), (self.create, 2),
            (self.delete, 1), (self.rename, 1),
        ]  # fmt: skip

    def paths(self) -> list[Path]:
        return sorted(p for p in self.vault.rglob("*.md") if p.is_file())

    def notes(self) -> dict[str, bytes]:
        return {p.relative_to(self.vault).as_posix(): p.read_bytes() for p in self.paths()}

    def saved(self, note: Path) -> None:
        if self.coarse and note.exists():
            whole = time.time_ns() // 10**9 * 10**9
            os.utime(note, ns=(whole, whole))

    def edit_in_place(self) -> None:
        """Truncate, then write the new text in a few pieces with pauses between them."""
        note = self.rng.choice(self.paths())
        data = self.text().encode()
        cuts = sorted(self.rng.sample(range(1, len(data)), k=min(3, len(data) - 1)))
        with note.open("wb") as f:
            for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
                f.write(data[start:end])
                f.flush()
                time.sleep(self.rng.uniform(0, 0.03))
        self.saved(note)

    def retouch(self) -> None:
        """A one-character fix of a note being worked on (one of three): the size stays, only
        the mtime can tell the save apart."""
        note = self.rng.choice(self.paths()[:3])
        with note.open("r+b") as f:
            f.write(_bumped(note.read_bytes(), self.rng))
        self.saved(note)

    def save_atomic(self) -> None:
        note = self.rng.choice(self.paths())
        tmp = note.with_name(f".{note.name}.tmp")
        tmp.write_bytes(self.text().encode())
        os.replace(tmp, note)
        self.saved(note)

    def create(self) -> None:
        note = self.vault / self.new_name("churn-")
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_bytes(self.text().encode())
        self.saved(note)

    def delete(self) -> None:
        notes = self.paths()
        if len(notes) > 40:
            self.rng.choice(notes).unlink()

    def rename(self) -> None:
        note = self.rng.choice(self.paths())
        target = self.vault / self.new_name("r")
        target.parent.mkdir(parents=True, exist_ok=True)
        note.rename(target)


class RepoWriter(Writer):
    """Pushes commits to the branch of a loopback GitHub (``tests/fakes``): edits, new notes,
    deletions, renames, and now and then a force-push that drops the last two commits before
    committing again."""

    def __init__(self, gh: Any, sections: list[str], rng: random.Random, ops: int) -> None:
        super().__init__(sections, rng, ops)
        self.gh = gh

    def actions(self) -> list[tuple[Callable[[], Any], int]]:
        return [
            (self.edit, 5), (self.retouch, 2), (self.create, 2), (self.delete, 1),
            (self.rename, 1), (self.force_push, 1),
        ]  # fmt: skip

    def head(self) -> Any:
        return self.gh.commits[self.gh.branches[self.gh.default_branch]]

    def paths(self) -> list[str]:
        return sorted(p for p in self.head().files if p.endswith(".md"))

    def notes(self) -> dict[str, bytes]:
        files = self.head().files
        return {p: self.gh.blobs[files[p]] for p in self.paths()}

    def edit(self) -> None:
        self.gh.commit({self.rng.choice(self.paths()): self.text().encode()}, message="edit")

    def retouch(self) -> None:
        path = self.rng.choice(self.paths()[:3])
        self.gh.commit({path: _bumped(self.notes()[path], self.rng)}, message="fix")

    def create(self) -> None:
        self.gh.commit({self.new_name("churn-"): self.text().encode()}, message="new")

    def delete(self) -> None:
        if len(self.paths()) > 40:
            self.gh.commit({self.rng.choice(self.paths()): None}, message="delete")

    def rename(self) -> None:
        self.gh.commit(renames={self.rng.choice(self.paths()): self.new_name("r")}, message="mv")

    def force_push(self) -> None:
        back = self.head().parent
        back = self.gh.commits[back].parent if back else None
        if back:
            self.gh.reset(back)
            self.edit()


def _bumped(data: bytes, rng: random.Random) -> bytes:
    """``data`` with one digit changed: the same size, other bytes."""
    out = bytearray(data)
    digits = [i for i, b in enumerate(out) if 0x30 <= b <= 0x39]
    if digits:
        i = rng.choice(digits)
        out[i] = 0x30 + (out[i] - 0x30 + 1) % 10
    return bytes(out)
