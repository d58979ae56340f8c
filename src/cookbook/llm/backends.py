"""The backend a notebook's ``LLM`` parameter names (:func:`from_parameter`, :data:`LLM_BACKENDS`), wired the
same way in every notebook: the offline stand-in, or a real model — OpenAI-compatible, Colab's built-in one,
a local Ollama — behind the on-disk cache, or a recorded run replayed. Taught in
notebooks/05_map_reduce_answering.ipynb; tested in tests/test_backends.py.
"""

from __future__ import annotations

import os

from .base import LLM, LLMUnavailable
from .cached import CachedLLM
from .extractive import ExtractiveLLM

__all__ = ["LLM_BACKENDS", "REAL_BACKENDS", "from_parameter"]

# What a notebook's ``LLM`` parameter may name. "openai": OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL;
# "colab": Colab's built-in model (COLAB_MODEL); "ollama": a local Ollama (OLLAMA_HOST, OLLAMA_MODEL);
# "replay": a recording made with `cookbook record export` (COOKBOOK_RECORDING).
LLM_BACKENDS = ("extractive", "openai", "colab", "ollama", "replay")
REAL_BACKENDS = LLM_BACKENDS[1:]  # every backend but the stand-in: what a notebook's real-model cells run on


def from_parameter(name: str, *, concurrency: int | None = None, model: str | None = None,
                   recording: str | None = None) -> LLM:
    """The backend a notebook's ``LLM`` parameter names:

    - ``"extractive"`` → the offline stand-in :class:`ExtractiveLLM`;
    - ``"openai"`` → an :class:`~cookbook.llm.openai_compatible.OpenAICompatibleLLM` on ``model`` (default
      ``$OPENAI_MODEL``, then ``gpt-4o-mini``) at ``$OPENAI_BASE_URL`` with the key in ``$OPENAI_API_KEY``;
    - ``"colab"`` → :class:`~cookbook.llm.colab.ColabLLM`, Colab's built-in model (``$COLAB_MODEL``);
    - ``"ollama"`` → :class:`~cookbook.llm.ollama.OllamaLLM` at ``$OLLAMA_HOST`` (``$OLLAMA_MODEL``);
    - ``"replay"`` → :class:`~cookbook.llm.replay.ReplayLLM` over ``recording`` (default
      ``$COOKBOOK_RECORDING``), which sends nothing anywhere.

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
        from .replay import ReplayLLM

        try:
            return ReplayLLM(recording, **extra)
        except (OSError, ValueError) as e:
            raise LLMUnavailable(f"LLM backend replay of {recording}: {e}") from None
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
