"""The model layer: one protocol, ``complete(prompt, *, max_tokens) -> str`` (:class:`LLM`), its backends and
wrappers, the prompts and the reading of what a model wrote.

- :mod:`~cookbook.llm.base`: :class:`LLM`, :class:`LLMUnavailable` (the endpoint cannot be used: stop),
  :class:`LLMCallFailed` (one call failed: go on), :func:`redact` (secrets out of carried text).
- :mod:`~cookbook.llm.extractive` and :mod:`~cookbook.llm.extractive_graph`: :class:`ExtractiveLLM`, the offline,
  deterministic stand-in (the default) — it answers by extraction and is not a model.
- :mod:`~cookbook.llm.openai_compatible`: :class:`OpenAICompatibleLLM` (OpenAI, Ollama, vLLM, LM Studio);
  :mod:`~cookbook.llm.colab` (Colab's built-in model), :mod:`~cookbook.llm.ollama` (a local Ollama),
  :mod:`~cookbook.llm.recording` (:class:`ReplayLLM`, a run of the series recorded from the cache and replayed;
  :func:`export_recording`), and :mod:`~cookbook.llm.backends`: :func:`from_parameter`, the backend a notebook's
  ``LLM`` parameter names.
- :mod:`~cookbook.llm.replay`: :class:`RecordedLLM`, a recorded real model (GPT-4o on A Christmas Carol)
  replaying its extraction answers, offline.
- :mod:`~cookbook.llm.faults`: :class:`FaultInjectingLLM`; :mod:`~cookbook.llm.cached`: :class:`CachedLLM`;
  :mod:`~cookbook.llm.ledger`: :class:`TokenLedger`, :data:`PRICES`; :mod:`~cookbook.llm.concurrency`:
  :func:`ordered_map`, :func:`complete_many`, :class:`RateLimiter`.
- :mod:`~cookbook.llm.prompts` (the prompt format and the named prompts), :mod:`~cookbook.llm.parse` (model
  answers: JSON objects, extraction records), :mod:`~cookbook.llm.tokens` (counting, packing).

The names below are the notebooks' public API (``from cookbook import llm; llm.ExtractiveLLM()``).

>>> from cookbook.llm.prompts import prompt
>>> ExtractiveLLM().complete(prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."]),
...                         max_tokens=50)
'Ada founded Acme. [d1]'
"""

from .backends import LLM_BACKENDS, REAL_BACKENDS, REAL_CALLS, dry_run, from_parameter, spend_line
from .base import LLM, LLMCallFailed, LLMUnavailable, redact
from .cached import CachedLLM
from .concurrency import RateLimiter, complete_many, concurrency_of, ordered_map
from .extractive import ExtractiveLLM
from .faults import FAULTS, FaultInjectingLLM
from .ledger import PRICES, TokenLedger
from .openai_compatible import OpenAICompatibleLLM
from .recording import ReplayLLM, export_recording
from .replay import RecordedLLM

__all__ = ["FAULTS", "LLM", "LLM_BACKENDS", "PRICES", "REAL_BACKENDS", "REAL_CALLS", "CachedLLM", "ExtractiveLLM",
           "FaultInjectingLLM", "LLMCallFailed", "LLMUnavailable", "OpenAICompatibleLLM", "RateLimiter",
           "RecordedLLM", "ReplayLLM", "TokenLedger", "complete_many", "concurrency_of", "dry_run", "export_recording",
           "from_parameter", "ordered_map", "redact", "spend_line"]
