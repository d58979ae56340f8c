"""An on-disk response cache for any backend: a rerun, or a crashed run resumed, sends nothing it already
paid for (:class:`CachedLLM`). Taught in notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

import threading

from .._validate import integer
from ..cache import read_entry, write_entry
from .base import LLM, holds_secret

__all__ = ["CachedLLM"]


class CachedLLM:
    """Wraps a backend with an on-disk response cache (:func:`cookbook.cache.read_entry` under
    ``$COOKBOOK_CACHE`` or ``~/.cache/graphrag-cookbook``): a prompt answered before, by the same
    ``model`` with the same ``max_tokens`` and generation :attr:`params` (temperature, seed), is read back
    and not sent. The endpoint and the API key are never part of a key or an entry; entries are written
    atomically, and one that cannot be read is recomputed. Failed calls and empty answers are not stored, nor
    is a call whose prompt or answer holds a secret (an API key a backend read, :func:`~cookbook.llm.base.add_secret`):
    it is sent every time and counted in ``uncached``, so no key is ever written to disk. (Storing it with the key
    masked instead would let two prompts that differ only there share one entry, and answer a rerun
    differently from the run.) Wrap it in a :class:`TokenLedger` to count the hits and the tokens they saved.

    >>> import os
    >>> from cookbook.llm import TokenLedger
    >>> from cookbook.llm import ExtractiveLLM
    >>> import tempfile
    >>> from cookbook.llm.prompts import prompt
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> ledger = TokenLedger(CachedLLM(ExtractiveLLM()))
    >>> p = prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."])
    >>> [ledger.complete(p, max_tokens=50) for _ in range(2)]
    ['Ada founded Acme. [d1]', 'Ada founded Acme. [d1]']
    >>> ledger.calls, ledger.hits
    (1, 1)
    >>> del os.environ["COOKBOOK_CACHE"]
    """

    def __init__(self, inner: LLM):
        self.inner = inner
        self.model = getattr(inner, "model", "unknown")
        self.concurrency = getattr(inner, "concurrency", 1)
        self._lock = threading.Lock()
        self.hits, self.misses, self.uncached = 0, 0, 0

    @property
    def params(self) -> dict:
        """The inner backend's generation parameters (``{}`` when it declares none).

        >>> from cookbook.llm import ExtractiveLLM
        >>> CachedLLM(ExtractiveLLM()).params
        {}
        """
        return dict(getattr(self.inner, "params", {}))

    def key(self, prompt: str, max_tokens: int) -> dict:
        """What an entry is keyed by: model, prompt, ``max_tokens`` and :attr:`params`.

        >>> from cookbook.llm import ExtractiveLLM
        >>> CachedLLM(ExtractiveLLM()).key("TASK: answer", 50)
        {'model': 'extractive', 'prompt': 'TASK: answer', 'max_tokens': 50, 'params': {}}
        """
        return {"model": self.model, "prompt": prompt, "max_tokens": integer(max_tokens, "max_tokens"),
                "params": self.params}

    def complete_with_hit(self, prompt: str, *, max_tokens: int) -> tuple[str, bool]:
        """``(text, from_cache)``: the cached answer, or the inner backend's (stored when not empty and free
        of secrets).

        >>> import os
        >>> from cookbook.llm import ExtractiveLLM
        >>> import tempfile
        >>> from cookbook.llm.prompts import prompt
        >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
        >>> cached = CachedLLM(ExtractiveLLM())
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> [cached.complete_with_hit(p, max_tokens=50)[1] for _ in range(2)]
        [False, True]
        >>> from cookbook.llm.base import add_secret
        >>> add_secret("sk-demo-0123456789")
        >>> secret = prompt("reduce", question="Is sk-demo-0123456789 my key?", points=["[R1] Trade grew."])
        >>> [cached.complete_with_hit(secret, max_tokens=50)[1] for _ in range(2)], cached.uncached
        ([False, False], 2)
        >>> del os.environ["COOKBOOK_CACHE"]
        """
        key = self.key(prompt, max_tokens)
        if holds_secret(prompt):  # never stored, so never looked up
            text = self.inner.complete(prompt, max_tokens=max_tokens)
            with self._lock:
                self.misses += 1
                self.uncached += 1
            return text, False
        text = read_entry("llm", key)
        if isinstance(text, str):
            with self._lock:
                self.hits += 1
            return text, True
        text = self.inner.complete(prompt, max_tokens=max_tokens)
        with self._lock:
            self.misses += 1
        if text and not holds_secret(text):  # an empty answer is malformed output: ask again next time
            write_entry("llm", key, text)
        elif text:
            with self._lock:
                self.uncached += 1
        return text, False

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The cached answer to ``prompt``, or the inner backend's (see :meth:`complete_with_hit`).

        >>> import os
        >>> from cookbook.llm import ExtractiveLLM
        >>> import tempfile
        >>> from cookbook.llm.prompts import prompt
        >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
        >>> cached = CachedLLM(ExtractiveLLM())
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> cached.complete(p, max_tokens=50) == cached.complete(p, max_tokens=50), cached.hits, cached.misses
        (True, 1, 1)
        >>> del os.environ["COOKBOOK_CACHE"]
        """
        return self.complete_with_hit(prompt, max_tokens=max_tokens)[0]
