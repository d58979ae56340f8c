"""An on-disk cache, per user: expensive arrays (e.g. WordNet's 117k-synset LSA embedding) and small JSON
entries (e.g. LLM responses, :class:`cookbook.llm.cached.CachedLLM`).

The directory is ``$COOKBOOK_CACHE`` if set, else ``$XDG_CACHE_HOME/graphrag-cookbook``, else
``~/.cache/graphrag-cookbook``. An entry's file name is a digest of its name, its inputs and the package
version (unless the entry does not depend on our code, as a model's response), so changed inputs or a new
release never read a stale entry. Files are written to a temporary
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

__all__ = ["cache_dir", "cache_path", "cached_array", "read_entry", "write_entry"]


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


def cache_path(name: str, inputs: dict, *, suffix: str = ".npy", versioned: bool = True) -> Path:
    """Where the entry for ``name`` and ``inputs`` (JSON-serialisable) lives; ``versioned=False`` leaves the
    package version out of the key (for entries our code does not shape).

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
        blob = json.dumps({"name": name, "version": _version() if versioned else None, "inputs": inputs},
                          sort_keys=True)
    except TypeError as e:
        raise TypeError(f"cache inputs for {name!r} must be JSON-serialisable: {e}") from None
    return cache_dir() / f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:20]}{suffix}"


def _write_atomic(path: Path, write: Callable) -> None:
    """``write(f)`` into a temporary file beside ``path``, then renamed onto ``path``: a crashed process
    leaves either the old entry or the new one, never half of one. (No fsync: what a power cut might leave
    fails the readers' checks and is recomputed.) A read-only cache is skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:  # a read-only home still gets the answer, just not cached
        pass


def cached_array(name: str, inputs: dict, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """``compute()``'s array, read from the cache when an entry for (``name``, ``inputs``, version) exists.
    Taught in notebooks/07_overlap_aware_seeds.ipynb (WordNet's embedding, through
    :func:`cookbook.harness.experiments.wordnet_embedding`).

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
    _write_atomic(path, lambda f: np.save(f, arr, allow_pickle=False))
    return arr


def read_entry(name: str, inputs: dict):
    """The JSON value stored for (``name``, ``inputs``) by :func:`write_entry`, or None when there is none
    or it is unreadable (truncated, not JSON, nested too deep to read, or written for other inputs): the
    caller recomputes it. Package-version independent: for values our code does not shape, such as a
    model's response.

    >>> import tempfile
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> read_entry("llm", {"prompt": "hi"}) is None
    True
    >>> write_entry("llm", {"prompt": "hi"}, "hello")
    >>> read_entry("llm", {"prompt": "hi"})
    'hello'
    >>> _ = cache_path("llm", {"prompt": "hi"}, suffix=".json", versioned=False).write_text('{"inputs": {"pro')
    >>> read_entry("llm", {"prompt": "hi"}) is None  # a corrupt entry reads as missing
    True
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    path = cache_path(name, inputs, suffix=".json", versioned=False)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entry, dict) or entry.get("inputs") != inputs or "value" not in entry:
            return None  # written for other inputs (a digest collision) or by something else
    except (OSError, ValueError, RecursionError):  # missing, not JSON (cut by a crash outside this writer), or
        return None  # nested deeper than json.loads and the comparison can recurse: none of ours
    return entry["value"]


def write_entry(name: str, inputs: dict, value) -> None:
    """Store the JSON-serialisable ``value`` for (``name``, ``inputs``), atomically; the entry repeats its
    inputs so :func:`read_entry` can check it was written for them.

    >>> import tempfile
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> write_entry("demo", {"n": 1}, {"answer": [1, 2]})
    >>> read_entry("demo", {"n": 1}), read_entry("demo", {"n": 2})
    ({'answer': [1, 2]}, None)
    >>> write_entry("demo", {"n": 1}, object())
    Traceback (most recent call last):
    ...
    TypeError: cache value for 'demo' must be JSON-serialisable: Object of type object is not JSON serializable
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    path = cache_path(name, inputs, suffix=".json", versioned=False)
    try:
        blob = json.dumps({"inputs": inputs, "value": value}, sort_keys=True).encode()
    except TypeError as e:
        raise TypeError(f"cache value for {name!r} must be JSON-serialisable: {e}") from None
    _write_atomic(path, lambda f: f.write(blob))
