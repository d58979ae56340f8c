"""An on-disk cache for expensive arrays (e.g. WordNet's 117k-synset LSA embedding), per user.

The directory is ``$COOKBOOK_CACHE`` if set, else ``$XDG_CACHE_HOME/graphrag-cookbook``, else
``~/.cache/graphrag-cookbook``. An entry's file name is a digest of its name, its inputs and the package
version, so changed inputs or a new release never read a stale entry. Files are written to a temporary
name and renamed into place, so a crashed or concurrent run never leaves a half-written entry behind; an
unreadable entry is recomputed.

>>> import tempfile, numpy as np
>>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
>>> cached_array("demo", {"n": 3}, lambda: np.arange(3)).tolist()
[0, 1, 2]
>>> cached_array("demo", {"n": 3}, lambda: 1 / 0).tolist()  # a hit: compute is not called
[0, 1, 2]
>>> del os.environ["COOKBOOK_CACHE"]
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["cache_dir", "cache_path", "cached_array"]


def _version() -> str:
    """The installed package's version (a source checkout that was never installed keys as "source")."""
    try:
        return importlib.metadata.version("graphrag-cookbook")
    except importlib.metadata.PackageNotFoundError:
        return "source"


def cache_dir() -> Path:
    """The per-user cache directory (not created here).

    >>> os.environ["COOKBOOK_CACHE"] = "/srv/cookbook-cache"
    >>> cache_dir().as_posix()
    '/srv/cookbook-cache'
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    if os.environ.get("COOKBOOK_CACHE"):
        return Path(os.environ["COOKBOOK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "graphrag-cookbook"


def cache_path(name: str, inputs: dict) -> Path:
    """Where the entry for ``name`` and ``inputs`` (JSON-serialisable) lives.

    >>> p = cache_path("lsa-wordnet", {"dim": 64})
    >>> p.name.startswith("lsa-wordnet-"), p == cache_path("lsa-wordnet", {"dim": 64}) != cache_path("lsa-wordnet", {})
    (True, True)
    >>> cache_path("../escape", {})
    Traceback (most recent call last):
    ValueError: cache name must be letters, digits, '-' or '_', got '../escape'
    """
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"cache name must be letters, digits, '-' or '_', got {name!r}")
    try:
        blob = json.dumps({"name": name, "version": _version(), "inputs": inputs}, sort_keys=True)
    except TypeError as e:
        raise TypeError(f"cache inputs for {name!r} must be JSON-serialisable: {e}") from None
    return cache_dir() / f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:20]}.npy"


def cached_array(name: str, inputs: dict, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """``compute()``'s array, read from the cache when an entry for (``name``, ``inputs``, version) exists.
    Taught in notebooks/07_overlap_aware_seeds.ipynb (WordNet's embedding, through
    :func:`cookbook.experiments.wordnet_embedding`).

    >>> import tempfile
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> calls = []
    >>> for _ in range(2):
    ...     a = cached_array("squares", {"n": 4}, lambda: calls.append(1) or np.arange(4) ** 2)
    >>> a.tolist(), len(calls)  # computed once, read back the second time
    ([0, 1, 4, 9], 1)
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    path = cache_path(name, inputs)
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):  # missing or unreadable: recompute
        pass
    arr = np.asarray(compute())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".npy")
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, arr, allow_pickle=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:  # a read-only home still gets the answer, just not cached
        pass
    return arr
