"""The model layer's protocol: what every backend implements (:class:`LLM`), the one error that stops a
run (:class:`LLMUnavailable`), the error of one call that failed (:class:`LLMCallFailed`), and the keeping
of secrets out of text (:func:`redact`). Backends: :mod:`cookbook.llm.extractive` (offline stand-in),
:mod:`cookbook.llm.openai_compatible` (any OpenAI-compatible endpoint), :mod:`cookbook.llm.faults` (fault
injection); wrappers: :mod:`cookbook.llm.cached`, :mod:`cookbook.llm.ledger`.
"""

from __future__ import annotations

import re
import threading
from typing import Protocol, runtime_checkable

from .._validate import string

__all__ = ["LLM", "MIN_SECRET_CHARS", "LLMCallFailed", "LLMUnavailable", "add_secret", "holds_secret", "redact"]


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
    """A requested real LLM cannot be used: no key, connection refused, HTTP 401/403/404, an exhausted quota,
    a response that is not an OpenAI chat completion, no answer within the call's deadline, a prompt larger
    than the rate limit allows, or calls failing one after another (see :class:`OpenAICompatibleLLM`).

    Unlike a transient fault (:class:`LLMCallFailed`), retrying or scoring the batch 0 cannot help, so the
    pipeline re-raises it and the notebook stops. The message is one line naming the endpoint, the model and
    the cause, never the key.

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


class LLMCallFailed(RuntimeError):
    """One call failed after its retries (a timeout, HTTP 408/409/429 or 5xx, a bad request): a transient
    fault, which the pipeline survives (a map batch scores 0, a report is left empty, a text unit is reported
    in the extraction's problems). ``status`` is the HTTP status, None when there was no response. The
    message names the endpoint, the model and the cause, with any secret redacted.

    >>> e = LLMCallFailed("LLM endpoint http://localhost:11434/v1, model 'llama3': HTTP 503 after 4 attempts", 503)
    >>> e.status, isinstance(e, LLMUnavailable)
    (503, False)
    """

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


# A key shorter than this is a local server's placeholder ("ollama", "x"): masking it would mask words.
MIN_SECRET_CHARS = 8
_SECRETS: set[str] = set()
_LOCK = threading.Lock()
# What servers echo of an OpenAI key, masked or not: "sk-" then key characters, not inside a word.
_KEY_SHAPED = re.compile(r"(?<![\w-])sk-[\w*.\-]{6,}")


def add_secret(value: str) -> None:
    """Remember ``value`` (an API key this process read) so that :func:`redact` masks it and
    :func:`holds_secret` finds it; values shorter than :data:`MIN_SECRET_CHARS` are not secrets.

    >>> add_secret("tok-0123456789abcdef"); add_secret("ollama")
    >>> holds_secret("the key tok-0123456789abcdef"), holds_secret("ollama is running")
    (True, False)
    """
    if len(string(value, "secret")) >= MIN_SECRET_CHARS:
        with _LOCK:
            _SECRETS.add(value)


def holds_secret(text: str) -> bool:
    """Whether ``text`` contains a secret given to :func:`add_secret` (exactly, not by shape).

    >>> holds_secret("no key here")
    False
    """
    string(text, "text")
    with _LOCK:
        secrets = list(_SECRETS)
    return any(s in text for s in secrets)


def redact(text: str) -> str:
    """``text`` with every secret given to :func:`add_secret`, and anything shaped like an OpenAI key (servers
    echo a masked key), replaced by ``***``. For every text a server or a model wrote that we carry on.

    >>> add_secret("tok-0123456789abcdef")
    >>> redact("Incorrect API key provided: tok-0123456789abcdef (sk-proj-****cdef); risk-free")
    'Incorrect API key provided: *** (***); risk-free'
    """
    string(text, "text")
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)  # a longer secret first: it may hold a shorter one
    for s in secrets:
        text = text.replace(s, "***")
    return _KEY_SHAPED.sub("***", text)
