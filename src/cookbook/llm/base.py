"""The model layer's protocol: what every backend implements (:class:`LLM`), and the one error that stops a
run (:class:`LLMUnavailable`). Backends: :mod:`cookbook.llm.extractive` (offline stand-in),
:mod:`cookbook.llm.openai_compatible` (any OpenAI-compatible endpoint), :mod:`cookbook.llm.faults` (fault
injection); wrappers: :mod:`cookbook.llm.cached`, :mod:`cookbook.llm.ledger`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["LLM", "LLMUnavailable"]


@runtime_checkable
class LLM(Protocol):
    """What every backend implements, and what students implement to plug in their own model:
    ``complete(prompt, *, max_tokens) -> str``, the model's text for a prompt built by
    :func:`cookbook.llm.prompts.prompt`, at most about ``max_tokens`` tokens long. Raise
    :class:`LLMUnavailable` when the model cannot be used at all; any other exception is a transient
    fault the pipeline survives. A backend may carry a ``model`` name (the ledger prices by it).

    >>> class Echo:
    ...     model = "echo"
    ...     def complete(self, prompt, *, max_tokens):
    ...         return prompt[:max_tokens]
    >>> isinstance(Echo(), LLM), isinstance(object(), LLM)
    (True, False)
    """

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The model's text for ``prompt``, at most about ``max_tokens`` tokens (see the class doc)."""
        ...


class LLMUnavailable(RuntimeError):
    """A requested real LLM cannot be reached or refuses (no key, connection refused, HTTP 401/403/404).

    Unlike a transient fault (timeout, 429, 5xx), retrying or scoring the batch 0 cannot help, so the
    pipeline re-raises it and the notebook stops. The message names the endpoint and model, never the key.

    A backend of your own raises it the same way (:class:`OpenAICompatibleLLM` shows the real one):

    >>> class NoServer:
    ...     model = "llama3"
    ...     def complete(self, prompt, *, max_tokens):
    ...         raise LLMUnavailable(f"LLM endpoint http://localhost:11434/v1, model {self.model!r}: cannot connect")
    >>> NoServer().complete("TASK: answer", max_tokens=10)
    Traceback (most recent call last):
    ...
    cookbook.llm.base.LLMUnavailable: LLM endpoint http://localhost:11434/v1, model 'llama3': cannot connect
    """
