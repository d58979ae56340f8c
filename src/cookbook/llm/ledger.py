"""What a backend's calls cost: :class:`TokenLedger` wraps any backend and counts calls, prompt and completion
tokens and US$ per prompt task (``TASK:`` line), with a dry-run :meth:`~TokenLedger.estimate` before a costly
step; :data:`PRICES` is the price table. Taught in notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from .._validate import integer
from .base import LLM
from .tokens import count_tokens

__all__ = ["PRICES", "TokenLedger"]


# Prices in US$ per million tokens (input, output), as published by the provider when written; check yours.
PRICES = {"extractive": (0.0, 0.0), "gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00),
          "gpt-4.1-mini": (0.40, 1.60)}


@dataclass
class TokenLedger:
    """Wraps a backend and counts what it costs. ``by_task[task]`` holds calls and tokens per prompt
    task (``TASK:`` line); repair calls are the retries. Only answered calls are charged: a call whose
    backend raised counts in ``failures`` and costs nothing. ``cost`` is None when ``prices`` has no
    entry for the model (the table says so in words). Behind a :class:`cookbook.llm.cached.CachedLLM`, answers
    read from the cache are not charged either: ``cache_hits[task]`` counts them and the tokens they
    saved. Thread-safe, and it passes its backend's ``concurrency`` on, so steps may call it concurrently.

    >>> from cookbook.llm import ExtractiveLLM
    >>> from cookbook.llm.prompts import prompt
    >>> ledger = TokenLedger(ExtractiveLLM())
    >>> _ = ledger.complete(prompt("answer", question="Who?", sources=["[d1] Ada."]), max_tokens=50)
    >>> ledger.calls, ledger.cost
    (1, 0.0)
    """

    backend: LLM
    model: str | None = None
    prices: dict = field(default_factory=lambda: dict(PRICES))
    by_task: dict = field(default_factory=dict)
    failures: int = 0
    cache_hits: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.model is None:
            self.model = getattr(self.backend, "model", "unknown")

    @property
    def concurrency(self) -> int:
        """The backend's ``concurrency`` (1 when it has none): how many calls a step sends at once.

        >>> from cookbook.llm import ExtractiveLLM
        >>> TokenLedger(ExtractiveLLM()).concurrency
        1
        """
        return getattr(self.backend, "concurrency", 1)

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The backend's completion (a str) of ``prompt``, charged to the prompt's task when it answers; a
        backend's exception is counted in ``failures`` and re-raised.

        >>> from cookbook.llm import ExtractiveLLM
        >>> from cookbook.llm.prompts import prompt
        >>> ledger = TokenLedger(ExtractiveLLM())
        >>> ledger.complete(prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."]),
        ...                 max_tokens=50)
        'Ada founded Acme. [d1]'
        >>> list(ledger.by_task)
        ['answer']
        """
        task = prompt.partition("\n")[0].removeprefix("TASK: ").strip() or "other"
        with_hit = getattr(self.backend, "complete_with_hit", None)  # a cache says whether it answered
        try:
            out, hit = with_hit(prompt, max_tokens=max_tokens) if with_hit else (
                self.backend.complete(prompt, max_tokens=max_tokens), False)
        except Exception:
            with self._lock:
                self.failures += 1
            raise
        p_tok, c_tok = count_tokens(prompt), count_tokens(out or "")
        with self._lock:
            row = (self.cache_hits if hit else self.by_task).setdefault(
                task, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            row["calls"] += 1
            row["prompt_tokens"] += p_tok
            row["completion_tokens"] += c_tok
        return out

    def _usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.model not in self.prices:
            return None
        pin, pout = self.prices[self.model]
        return (prompt_tokens * pin + completion_tokens * pout) / 1e6

    @property
    def calls(self) -> int:
        """Answered calls, all tasks.

        >>> TokenLedger(None, model="m", by_task={"map": {"calls": 2}, "reduce": {"calls": 1}}).calls
        3
        """
        return sum(r["calls"] for r in self.by_task.values())

    @property
    def hits(self) -> int:
        """Answers read from a response cache: not sent, not charged.

        >>> TokenLedger(None, model="m", cache_hits={"map": {"calls": 4}}).hits
        4
        """
        return sum(r["calls"] for r in self.cache_hits.values())

    @property
    def tokens_saved(self) -> int:
        """Prompt plus completion tokens the cache hits did not send or receive.

        >>> hit = {"calls": 1, "prompt_tokens": 90, "completion_tokens": 10}
        >>> TokenLedger(None, model="m", cache_hits={"map": hit}).tokens_saved
        100
        """
        return sum(r["prompt_tokens"] + r["completion_tokens"] for r in self.cache_hits.values())

    @property
    def retries(self) -> int:
        """Repair calls: the retries of malformed output.

        >>> TokenLedger(None, model="m", by_task={"repair": {"calls": 2}}).retries
        2
        """
        return self.by_task.get("repair", {}).get("calls", 0)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of answered calls.

        >>> TokenLedger(None, model="m", by_task={"map": {"prompt_tokens": 40}}).prompt_tokens
        40
        """
        return sum(r["prompt_tokens"] for r in self.by_task.values())

    @property
    def completion_tokens(self) -> int:
        """Completion tokens of answered calls.

        >>> TokenLedger(None, model="m", by_task={"map": {"completion_tokens": 7}}).completion_tokens
        7
        """
        return sum(r["completion_tokens"] for r in self.by_task.values())

    @property
    def cost(self) -> float | None:
        """US$ spent on answered calls; None when the model's price is unknown.

        >>> row = {"calls": 1, "prompt_tokens": 1_000_000, "completion_tokens": 0}
        >>> TokenLedger(None, model="gpt-4o-mini", by_task={"map": row}).cost
        0.15
        >>> TokenLedger(None, model="my-model", by_task={"map": row}).cost is None
        True
        """
        return self._usd(self.prompt_tokens, self.completion_tokens)

    def estimate(self, prompts: Sequence[str], *, max_tokens: int) -> dict:
        """Dry run: what sending ``prompts`` would cost at most (completions at ``max_tokens``);
        ``max_cost_usd`` is None when the model's price is unknown. Taught in
        notebooks/05_map_reduce_answering.ipynb.

        >>> est = TokenLedger(None, model="gpt-4o").estimate(["x" * 40, "y" * 40], max_tokens=100)
        >>> est["calls"], est["max_completion_tokens"]
        (2, 200)
        """
        integer(max_tokens, "max_tokens")
        p_tok = sum(count_tokens(p) for p in prompts)
        c_tok = max_tokens * len(prompts)
        return {"model": self.model, "calls": len(prompts), "prompt_tokens": p_tok,
                "max_completion_tokens": c_tok, "max_cost_usd": self._usd(p_tok, c_tok)}

    def table(self) -> str:
        """Calls and tokens per task, the total and its cost, as fixed-width text.

        >>> row = {"calls": 2, "prompt_tokens": 90, "completion_tokens": 30}
        >>> print(TokenLedger(None, model="extractive", by_task={"map": row}).table())
        task                calls  prompt tok  completion tok
        map                     2          90              30
        total                   2          90              30   cost $0.0000 (extractive)
        >>> hit = {"calls": 1, "prompt_tokens": 600_000, "completion_tokens": 0}
        >>> print(TokenLedger(None, model="gpt-4o-mini", by_task={"map": row}, cache_hits={"map": hit}).table())
        task                calls  prompt tok  completion tok
        map                     2          90              30
        total                   2          90              30   cost $0.0000 (gpt-4o-mini)
        1 answer(s) from the response cache, not charged: 600000 tokens saved ($0.0900)
        """
        lines = [f"{'task':18} {'calls':>6} {'prompt tok':>11} {'completion tok':>15}"]
        for task, r in sorted(self.by_task.items()):
            lines.append(f"{task:18} {r['calls']:6d} {r['prompt_tokens']:11d} {r['completion_tokens']:15d}")
        cost = self.cost
        priced = f"cost ${cost:.4f}" if cost is not None else "cost unknown: no price for this model in prices"
        lines.append(f"{'total':18} {self.calls:6d} {self.prompt_tokens:11d} {self.completion_tokens:15d}"
                     f"   {priced} ({self.model})")
        if self.failures:
            lines.append(f"{self.failures} failed call(s), not charged")
        if self.hits:
            saved = self._usd(sum(r["prompt_tokens"] for r in self.cache_hits.values()),
                              sum(r["completion_tokens"] for r in self.cache_hits.values()))
            lines.append(f"{self.hits} answer(s) from the response cache, not charged: {self.tokens_saved} tokens "
                         f"saved" + (f" (${saved:.4f})" if saved is not None else ""))
        return "\n".join(lines)
