"""Many calls at once, within an endpoint's limits: :func:`ordered_map` / :func:`complete_many` run independent
calls (map batches, one level's community reports) on a bounded thread pool, results in input order however
the calls finish, as wide as the backend's ``concurrency`` (1 for the CPU-bound stand-in, 8 by default for an
endpoint); :class:`RateLimiter` keeps requests and tokens per minute within a plan (Microsoft GraphRAG's
``concurrent_requests``, ``requests_per_minute``, ``tokens_per_minute``); :func:`call_within` bounds one call's
whole duration (a body that trickles in included), for every backend's per-call deadline.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from .._validate import integer, number
from ..progress import bar
from .base import LLM

__all__ = ["RateLimiter", "call_within", "complete_many", "concurrency_of", "ordered_map"]


def concurrency_of(llm, concurrency: int | None = None) -> int:
    """How many calls a step sends to ``llm`` at once: ``concurrency`` when given, else the backend's own
    ``concurrency`` attribute (wrappers such as :class:`TokenLedger` pass their inner backend's on), else 1.

    >>> from cookbook.llm import ExtractiveLLM
    >>> concurrency_of(ExtractiveLLM()), concurrency_of(ExtractiveLLM(), 4)
    (1, 4)
    >>> concurrency_of(ExtractiveLLM(), 0)
    Traceback (most recent call last):
    ...
    ValueError: concurrency must be a positive integer, got 0
    """
    return integer(getattr(llm, "concurrency", 1) if concurrency is None else concurrency, "concurrency")


def ordered_map(fn: Callable, items: Iterable, *, concurrency: int, desc: str | None = None) -> list:
    """``[fn(x) for x in items]``, with up to ``concurrency`` calls in flight on a thread pool (the calls
    wait on the network, so threads overlap them). Results are in input order whatever order the calls
    finish in. The first exception ``fn`` raises stops the map: calls not yet started never start, the
    running ones finish, and the exception of the earliest failed item is raised as ``fn`` raised it
    (an :class:`LLMUnavailable` stays one). With ``concurrency=1`` the calls run one by one in this thread.
    ``desc`` labels a progress bar over the items (:func:`cookbook.progress.bar`; none when None).

    >>> ordered_map(lambda x: x * x, range(6), concurrency=3)
    [0, 1, 4, 9, 16, 25]
    >>> ordered_map(lambda x: 1 / x, [1, 0, 2], concurrency=2)
    Traceback (most recent call last):
    ...
    ZeroDivisionError: division by zero
    """
    concurrency = integer(concurrency, "concurrency")
    items = list(items)
    with bar(desc=desc or "", total=len(items), disable=desc is None) as progress:
        if concurrency == 1 or len(items) <= 1:
            out = []
            for y in map(fn, items):  # not `update(1) or y`: tqdm's update returns True when it redraws the bar
                out.append(y)
                progress.update(1)
            return out
        return _threaded_map(fn, items, concurrency, progress)


def _threaded_map(fn: Callable, items: list, concurrency: int, progress) -> list:
    failed = threading.Event()
    skipped = object()

    def call(x):
        if failed.is_set():  # an earlier call failed: do not send another request
            return skipped
        try:
            return fn(x)
        except BaseException:
            failed.set()
            raise

    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix="cookbook-llm")
    futures = [pool.submit(call, x) for x in items]
    for f in futures:
        f.add_done_callback(lambda _: progress.update(1))
    try:
        wait(futures, return_when=FIRST_EXCEPTION)
    finally:  # also on Ctrl-C: cancel what has not started, let the running calls end
        pool.shutdown(wait=True, cancel_futures=True)
    errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
    if errors:
        raise errors[0]
    return [f.result() for f in futures]


def call_within(fn: Callable[[threading.Event], object], seconds: float) -> tuple[bool, object]:
    """``(True, fn(expired))`` when ``fn`` returns within ``seconds``, ``(False, None)`` when it does not: the
    caller has its answer by then whatever ``fn`` is waiting on (a server that sends a byte at a time, or
    nothing). ``fn`` runs on a daemon thread and gets the ``threading.Event`` ``expired``, set when the time
    is up, so that it stops at its next chance (the next chunk of a body it reads) instead of running on;
    what ``fn`` raises is raised here. A backend's per-call deadline (:class:`OpenAICompatibleLLM`) is this.

    >>> import time
    >>> call_within(lambda expired: 42, 1.0)
    (True, 42)
    >>> call_within(lambda expired: expired.wait(5) and "gave up", 0.05)
    (False, None)
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking the expired event, got {type(fn).__name__}")
    seconds = number(seconds, "seconds", low=0)
    expired, box = threading.Event(), {}

    def run():
        try:
            box["value"] = fn(expired)
        except BaseException as e:  # handed to the caller, who may still be waiting
            box["error"] = e

    worker = threading.Thread(target=run, name="cookbook-llm-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        expired.set()
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["value"]


def complete_many(llm: LLM, prompts: Sequence[str], *, max_tokens: int, concurrency: int | None = None
                  ) -> list[str]:
    """``llm``'s completions of ``prompts``, in their order, with :func:`concurrency_of` calls in flight
    (see :func:`ordered_map`); for any step that sends many independent prompts. A backend's exception
    stops the batch and is raised as the backend raised it.

    >>> from cookbook.llm import ExtractiveLLM
    >>> from cookbook.llm.prompts import prompt
    >>> ps = [prompt("answer", question="Who founded Acme?", sources=[f"[d{i}] Ada{i} founded Acme."])
    ...       for i in range(3)]
    >>> complete_many(ExtractiveLLM(), ps, max_tokens=50, concurrency=2)
    ['Ada0 founded Acme. [d0]', 'Ada1 founded Acme. [d1]', 'Ada2 founded Acme. [d2]']
    """
    integer(max_tokens, "max_tokens")
    n = concurrency_of(llm, concurrency)
    return ordered_map(lambda p: llm.complete(p, max_tokens=max_tokens), prompts, concurrency=n)


class RateLimiter:
    """Holds requests within ``requests_per_minute`` and ``tokens_per_minute`` (None: no limit) over a
    sliding window of the last ``window`` seconds: :meth:`acquire` returns at once while the request fits,
    else sleeps until enough earlier requests have left the window. Thread-safe. ``clock`` and ``sleep``
    are injectable so its accounting can be tested without waiting; ``sent`` and ``waited`` count what
    it let through and how long callers slept.

    >>> now = [0.0]
    >>> limiter = RateLimiter(2, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    >>> [limiter.acquire(10) for _ in range(5)]  # seconds each request waited
    [0.0, 0.0, 60.0, 0.0, 60.0]
    >>> limiter.sent, limiter.waited
    (5, 120.0)
    """

    def __init__(self, requests_per_minute: int | None = None, tokens_per_minute: int | None = None, *,
                 window: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rpm = None if requests_per_minute is None else integer(requests_per_minute, "requests_per_minute")
        self.tpm = None if tokens_per_minute is None else integer(tokens_per_minute, "tokens_per_minute")
        self.window = number(window, "window", low=0, low_open=True)
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._recent: deque[tuple[float, int]] = deque()  # (sent at, tokens) within the window
        self._tokens = 0  # tokens in _recent
        self.sent, self.waited = 0, 0.0

    def _delay(self, now: float, tokens: int) -> float:
        """Seconds until a request of ``tokens`` fits (<= 0: it fits now); called under the lock."""
        while self._recent and self._recent[0][0] + self.window <= now:
            self._tokens -= self._recent.popleft()[1]
        delay = 0.0
        if self.rpm is not None and len(self._recent) >= self.rpm:
            delay = self._recent[len(self._recent) - self.rpm][0] + self.window - now
        if self.tpm is not None and self._tokens + tokens > self.tpm:
            freed = 0
            for at, t in self._recent:  # oldest first: wait until enough of them have left
                freed += t
                if self._tokens - freed + tokens <= self.tpm:
                    delay = max(delay, at + self.window - now)
                    break
        return delay

    def acquire(self, tokens: int = 0) -> float:
        """Wait until a request of ``tokens`` tokens fits the limits, record it, return the seconds waited.
        A request larger than ``tokens_per_minute`` could never be sent: ``ValueError``.

        >>> limiter = RateLimiter(tokens_per_minute=100)
        >>> limiter.acquire(60)
        0.0
        >>> limiter.acquire(101)
        Traceback (most recent call last):
        ...
        ValueError: a request of 101 tokens exceeds tokens_per_minute=100: it could never be sent
        """
        tokens = integer(tokens, "tokens", at_least=0)
        if self.tpm is not None and tokens > self.tpm:
            raise ValueError(f"a request of {tokens} tokens exceeds tokens_per_minute={self.tpm}: "
                             "it could never be sent")
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                delay = self._delay(now, tokens)
                if delay <= 0:
                    self._recent.append((now, tokens))
                    self._tokens += tokens
                    self.sent += 1
                    self.waited += waited
                    return waited
            self._sleep(delay)  # outside the lock: other threads may take their turn meanwhile
            waited += delay
