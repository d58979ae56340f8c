"""Fault injection: :class:`FaultInjectingLLM` wraps any backend and injects timeouts, server errors and
malformed output. It lives beside the backends, not in tests: notebook readers use it to see what the
pipeline survives, and it is a backend like the others. Taught in notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from .._validate import number
from .base import LLM

__all__ = ["FAULTS", "FaultInjectingLLM"]


FAULTS = ("timeout", "server_error", "malformed", "empty", "overlong")


class FaultInjectingLLM:
    """Wraps a backend and injects faults, for testing what the pipeline survives.

    ``schedule`` lists one fault (or None) per call, in order; after it runs out, each call fails with
    probability ``rate`` (seeded) with a fault drawn from ``kinds``. ``timeout`` and ``server_error``
    raise (``TimeoutError``, ``ConnectionError``); ``malformed`` cuts the real output in half;
    ``empty`` returns ""; ``overlong`` appends prose well past ``max_tokens``. ``injected`` counts them.
    It has no ``concurrency`` of its own, so steps call it one call at a time and the faults land on the
    same calls on every run. Taught in notebooks/05_map_reduce_answering.ipynb.

    >>> from cookbook.llm import ExtractiveLLM
    >>> from cookbook.llm.prompts import prompt
    >>> flaky = FaultInjectingLLM(ExtractiveLLM(), rate=0.5, kinds=["empty"], seed=0)
    >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
    >>> [len(flaky.complete(p, max_tokens=50)) > 0 for _ in range(6)], flaky.injected
    ([True, False, False, False, True, True], {'empty': 3})
    """

    def __init__(self, inner: LLM, schedule: Sequence[str | None] = (), *, rate: float = 0.0,
                 kinds: Sequence[str] = FAULTS, seed: int = 0):
        bad = [f for f in [*schedule, *kinds] if f is not None and f not in FAULTS]
        if bad:
            raise ValueError(f"unknown fault {bad[0]!r}; expected one of {FAULTS}")
        number(rate, "rate", low=0, high=1)
        self.inner, self.schedule, self.rate, self.kinds = inner, list(schedule), rate, list(kinds)
        self.model = getattr(inner, "model", "unknown")
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()  # one draw at a time when a caller asks for concurrency
        self.injected: dict[str, int] = {}

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The inner backend's answer, or the next scheduled (else random) fault instead.

        >>> from cookbook.llm import ExtractiveLLM
        >>> from cookbook.llm.prompts import prompt
        >>> llm = FaultInjectingLLM(ExtractiveLLM(), schedule=["timeout", "malformed", None])
        >>> p = prompt("map", question="Which trade?", reports=["[C1] The mining trade is central."])
        >>> llm.complete(p, max_tokens=200)
        Traceback (most recent call last):
        ...
        TimeoutError: injected fault: request timed out
        >>> llm.complete(p, max_tokens=200)  # half of the real JSON
        '{"points": [{"description": "The mining trade i'
        >>> llm.complete(p, max_tokens=200) == ExtractiveLLM().complete(p, max_tokens=200), llm.injected
        (True, {'timeout': 1, 'malformed': 1})
        """
        with self._lock:
            if self.schedule:
                fault = self.schedule.pop(0)
            else:
                fault = self.kinds[self._rng.integers(len(self.kinds))] if self._rng.random() < self.rate else None
            if fault:
                self.injected[fault] = self.injected.get(fault, 0) + 1
        if fault == "timeout":
            raise TimeoutError("injected fault: request timed out")
        if fault == "server_error":
            raise ConnectionError("injected fault: HTTP 503 from the server")
        if fault == "empty":
            return ""
        out = self.inner.complete(prompt, max_tokens=max_tokens)
        if fault == "malformed":
            return out[: len(out) // 2]
        if fault == "overlong":
            return out + "\n\nIn conclusion, " + "the evidence is extensive. " * (max_tokens + 10)
        return out
