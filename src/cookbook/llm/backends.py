"""The backend a notebook's ``LLM`` parameter names (:func:`from_parameter`, :data:`LLM_BACKENDS`), wired the
same way in every notebook: the offline stand-in, or a real model — OpenAI-compatible, Colab's built-in one,
a local Ollama — behind the on-disk cache, or a recorded run replayed. Taught in
notebooks/05_map_reduce_answering.ipynb; tested in tests/test_backends.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .base import LLM, LLMUnavailable
from .cached import CachedLLM
from .extractive import ExtractiveLLM
from .ledger import PRICES, TokenLedger

__all__ = ["LLM_BACKENDS", "REAL_BACKENDS", "REAL_CALLS", "SECONDS_PER_CALL", "dry_run", "from_parameter",
           "spend_line"]

# What a notebook's ``LLM`` parameter may name. "openai": OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL;
# "colab": Colab's built-in model (COLAB_MODEL); "ollama": a local Ollama (OLLAMA_HOST, OLLAMA_MODEL);
# "replay": a recording made with `cookbook record export` (COOKBOOK_RECORDING).
LLM_BACKENDS = ("extractive", "openai", "colab", "ollama", "replay")
REAL_BACKENDS = LLM_BACKENDS[1:]  # every backend but the stand-in: what a notebook's real-model cells run on
# A free quota's share: with a real model a notebook runs a named subset of at most about this many calls.
REAL_CALLS = 200
# Rough seconds a call takes, for planning only: a hosted model answers a ~500-token call in a few seconds, a
# 3B model on a laptop's CPU in tens of seconds; a replay sends nothing.
SECONDS_PER_CALL = {"extractive": 0.0, "openai": 3.0, "colab": 4.0, "ollama": 20.0, "replay": 0.0}


def dry_run(step: Callable, stand_in: LLM | None = None) -> TokenLedger:
    """Run ``step(model)`` on the offline stand-in (``stand_in``, default :class:`ExtractiveLLM`) through a
    :class:`TokenLedger` and return the ledger: the calls and prompt tokens that ``step`` would send a real
    model (a real model's repairs and retries aside), counted before anything is sent.

    >>> from cookbook.llm.prompts import prompt
    >>> ledger = dry_run(lambda m: [m.complete(prompt("answer", question=q, sources=["[d1] Ada."]), max_tokens=50)
    ...                             for q in ("Who?", "Why?")])
    >>> ledger.calls
    2
    """
    ledger = TokenLedger(stand_in if stand_in is not None else ExtractiveLLM())
    step(ledger)
    return ledger


def spend_line(calls: int, prompt_tokens: int, backend: str, *, model: str | None = None, max_tokens: int = 500,
               concurrency: int = 1) -> str:
    """One line saying what a step is about to spend on ``backend`` (a name of :data:`LLM_BACKENDS`): calls,
    prompt tokens, completion tokens at most (``max_tokens`` a call), a rough time (:data:`SECONDS_PER_CALL`,
    ``concurrency`` calls at a time) and, where :data:`PRICES` knows ``model``, the most it costs.

    >>> print(spend_line(120, 90_000, "openai", model="gpt-4o-mini", concurrency=8).replace("; ", ";\\n"))
    about to send 120 calls to openai (gpt-4o-mini): 90,000 prompt tokens, at most 60,000 completion tokens;
    about 45 s at ~3 s a call, 8 at a time;
    at most $0.0495
    >>> spend_line(40, 30_000, "colab", model="google/gemini-2.5-flash", concurrency=4).split("; ")[-1]
    'free within its quota'
    """
    if backend not in LLM_BACKENDS:
        raise ValueError(f"backend must be one of {list(LLM_BACKENDS)}, got {backend!r}")
    completion = calls * max_tokens
    secs = calls * SECONDS_PER_CALL[backend] / max(1, concurrency)
    took = f"about {secs:.0f} s" if secs < 120 else f"about {secs / 60:.0f} min"
    if model in PRICES:
        p_in, p_out = PRICES[model]
        cost = f"at most ${(prompt_tokens * p_in + completion * p_out) / 1e6:.4f}"
    else:
        cost = {"colab": "free within its quota", "ollama": "free (your machine)", "replay": "free (nothing is sent)",
                "extractive": "free"}.get(backend, f"no price known for {model}")
    if backend in ("replay", "extractive"):
        return f"{calls} calls, {prompt_tokens:,} prompt tokens, answered by {backend} ({model}): nothing is sent"
    return (f"about to send {calls} calls to {backend} ({model}): {prompt_tokens:,} prompt tokens, at most "
            f"{completion:,} completion tokens; {took} at ~{SECONDS_PER_CALL[backend]:g} s a call, {concurrency} at "
            f"a time; {cost}")


def from_parameter(name: str, *, concurrency: int | None = None, model: str | None = None,
                   recording: str | None = None) -> LLM:
    """The backend a notebook's ``LLM`` parameter names:

    - ``"extractive"`` → the offline stand-in :class:`ExtractiveLLM`;
    - ``"openai"`` → an :class:`~cookbook.llm.openai_compatible.OpenAICompatibleLLM` on ``model`` (default
      ``$OPENAI_MODEL``, then ``gpt-4o-mini``) at ``$OPENAI_BASE_URL`` with the key in ``$OPENAI_API_KEY``;
    - ``"colab"`` → :class:`~cookbook.llm.colab.ColabLLM`, Colab's built-in model (``$COLAB_MODEL``);
    - ``"ollama"`` → :class:`~cookbook.llm.ollama.OllamaLLM` at ``$OLLAMA_HOST`` (``$OLLAMA_MODEL``);
    - ``"replay"`` → :class:`~cookbook.llm.recording.ReplayLLM` over ``recording`` (default
      ``$COOKBOOK_RECORDING``), which sends nothing anywhere; its model is the recording's (``$OLLAMA_MODEL`` and
      the like do not apply), and a ``model`` named that is not the recording's stops it.

    The three live backends sit inside a :class:`CachedLLM` (every answer kept on disk, so a rerun or a run
    resumed after a crash sends only what is not cached, and ``cookbook record export`` can share the run),
    with ``concurrency`` calls in flight (default: the backend's own, 8 for OpenAI). A backend that cannot be
    used raises :class:`LLMUnavailable`, one line naming backend, model and cause: here when it can tell
    (no key, not in Colab, no proxy token, Ollama not running or the model not pulled, no recording), else on
    the first call.

    >>> from_parameter("extractive").model
    'extractive'
    >>> from_parameter("gpt-4o")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: LLM='gpt-4o': the notebooks know ['extractive', 'openai', 'colab', 'ollama', 'replay'] (the model ...
    >>> os.environ.pop("COOKBOOK_RECORDING", None) and None
    >>> from_parameter("replay")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cookbook.llm.base.LLMUnavailable: LLM backend replay: no recording named: set COOKBOOK_RECORDING to a file ...
    """
    if name not in LLM_BACKENDS:
        raise ValueError(f"LLM={name!r}: the notebooks know {list(LLM_BACKENDS)} (the model itself is OPENAI_MODEL, "
                         "COLAB_MODEL or OLLAMA_MODEL)")
    if name == "extractive":
        return ExtractiveLLM()
    extra = {} if concurrency is None else {"concurrency": concurrency}
    if name == "replay":
        recording = recording or os.environ.get("COOKBOOK_RECORDING")
        if not recording:
            raise LLMUnavailable("LLM backend replay: no recording named: set COOKBOOK_RECORDING to a file made by "
                                 "`cookbook record export FILE`")
        from .recording import ReplayLLM

        try:
            replay = ReplayLLM(recording, **extra)
        except (OSError, ValueError) as e:
            raise LLMUnavailable(f"LLM backend replay of {recording}: {e}") from None
        if model is not None and model != replay.model:  # its answers are another model's: not the run asked for
            raise LLMUnavailable(f"{replay.endpoint()}: asked for model {model!r}, but the recording holds the "
                                 f"answers of {replay.model!r}; record a run of {model!r}, or leave the model unnamed")
        return replay
    if name == "colab":
        from .colab import ColabLLM

        return CachedLLM(ColabLLM(model, **extra))
    if name == "ollama":
        from .ollama import OllamaLLM

        return CachedLLM(OllamaLLM(model, **extra))
    from .openai_compatible import OpenAICompatibleLLM

    return CachedLLM(OpenAICompatibleLLM(model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini",
                                         base_url=os.environ.get("OPENAI_BASE_URL") or None,
                                         concurrency=8 if concurrency is None else concurrency))
