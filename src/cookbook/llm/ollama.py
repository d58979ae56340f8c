"""A local Ollama server through its OpenAI-compatible endpoint (:class:`OllamaLLM`): a real model for free on
your own machine. ``$OLLAMA_HOST`` (Ollama's own variable, default ``http://localhost:11434``) is the server,
``$OLLAMA_MODEL`` the model (default :data:`OLLAMA_MODEL`); the API key Ollama requires but ignores is the
placeholder ``"ollama"``. Source read: Ollama's docs/openai.md. Tested against tests/fake_openai.py.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

from .._validate import string
from .base import LLMUnavailable, public_url
from .concurrency import call_within
from .openai_compatible import OpenAICompatibleLLM, _snippet

__all__ = ["OLLAMA_HOST", "OLLAMA_MODEL", "OllamaLLM", "ollama_base_url"]

OLLAMA_MODEL = "llama3.2"  # 3B parameters, about 2 GB: runs on a laptop's CPU
OLLAMA_HOST = "http://localhost:11434"
# A thinking model (qwen3, deepseek-r1) may write its reasoning into the answer: it is not the answer.
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


def ollama_base_url(host: str | None = None) -> str:
    """The OpenAI-compatible base URL of the Ollama server at ``host`` (default ``$OLLAMA_HOST``, then
    :data:`OLLAMA_HOST`); a host without a scheme gets ``http://``, as Ollama itself reads ``OLLAMA_HOST``.

    >>> ollama_base_url("127.0.0.1:11434"), ollama_base_url("http://gpu-box:11434/")
    ('http://127.0.0.1:11434/v1', 'http://gpu-box:11434/v1')
    >>> ollama_base_url("https://proxy.example/ollama?token=abc")  # a proxy's token stays a query
    'https://proxy.example/ollama/v1?token=abc'

    """
    host = string(host or os.environ.get("OLLAMA_HOST") or OLLAMA_HOST, "host").strip()
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)  # /v1 goes on the path, before a query (?token=…) and without a fragment
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/v1", fragment=""))


class OllamaLLM(OpenAICompatibleLLM):
    """An :class:`OpenAICompatibleLLM` on a local Ollama server: the same retries, deadline, rate limits and
    stop rules, with what a local server needs besides — a placeholder key, a longer ``timeout`` and
    ``deadline`` (a CPU generates slowly), ``<think>`` blocks of thinking models removed from answers (they
    would be parsed as the answer: LightRAG #3597), and a check at construction, so that a server that is not
    running or a model that is not pulled stops with one :class:`LLMUnavailable` line saying what to do.

    >>> try:
    ...     OllamaLLM("llama3.2", host="http://127.0.0.1:9", timeout=2)  # nothing listens on port 9
    ... except LLMUnavailable as e:
    ...     print(str(e)[:97])
    LLM backend ollama at http://127.0.0.1:9/v1, model 'llama3.2': Ollama is not running there (start
    """

    def __init__(self, model: str | None = None, *, host: str | None = None, timeout: float = 300.0,
                 deadline: float = 600.0, concurrency: int = 2, check: bool = True, **kwargs):
        model = model or os.environ.get("OLLAMA_MODEL") or OLLAMA_MODEL
        os.environ.setdefault("OLLAMA_API_KEY", "ollama")  # required by the SDK, ignored by Ollama
        super().__init__(model, base_url=ollama_base_url(host), api_key_env="OLLAMA_API_KEY", timeout=timeout,
                         deadline=deadline, concurrency=concurrency, **kwargs)
        if check:
            self._check_server()

    def __repr__(self) -> str:
        return f"OllamaLLM(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def endpoint(self) -> str:
        """``"LLM backend ollama at <base URL>, model '<model>'"``: how every message names it.

        >>> OllamaLLM("llama3.2", host="127.0.0.1:9", check=False).endpoint()
        "LLM backend ollama at http://127.0.0.1:9/v1, model 'llama3.2'"
        """
        return f"LLM backend ollama at {public_url(self.base_url)}, model {self.model!r}"  # no credentials

    def _check_server(self) -> None:
        """Ask the server which models it has (``GET /v1/models``, twice ``min(timeout, 5)`` seconds at most, a
        body trickling in included)."""
        import openai

        wait = min(self.timeout, 5.0)
        try:
            done, have = call_within(lambda expired: sorted(m.id for m in self._client.with_options(
                timeout=wait, max_retries=0).models.list().data), 2 * wait)
            if not done:  # a body trickling in: each read is quick, the whole list is not
                raise LLMUnavailable(f"{self.endpoint()}: GET /v1/models did not finish within {2 * wait:g} s: is "
                                     "this an Ollama server, and is it overloaded?")
        except LLMUnavailable:
            raise
        except openai.APIConnectionError as e:
            raise LLMUnavailable(f"{self.endpoint()}: Ollama is not running there (start it with `ollama serve`, "
                                 f"or set OLLAMA_HOST): {_snippet(e.__cause__ or e, 100)}") from None
        except openai.APIStatusError as e:
            raise LLMUnavailable(f"{self.endpoint()}: GET /v1/models answered HTTP {e.status_code}: is this an "
                                 "Ollama server?") from None
        except Exception as e:  # a body that is not a model list
            raise LLMUnavailable(f"{self.endpoint()}: GET /v1/models gave no model list ({type(e).__name__}: "
                                 f"{_snippet(e, 80)}): is this an Ollama server?") from None
        if self.model not in have and f"{self.model}:latest" not in have:
            raise LLMUnavailable(f"{self.endpoint()}: the model is not pulled (run `ollama pull {self.model}`, or "
                                 f"set OLLAMA_MODEL to one of {have[:8]})")

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The server's answer as :meth:`OpenAICompatibleLLM.complete` returns it, ``<think>`` blocks removed
        (tests/test_backends.py runs it against a fake server).

        >>> _THINK.sub("", "<think>The user wants a list.</think> [1, 2]")
        '[1, 2]'
        """
        return _THINK.sub("", super().complete(prompt, max_tokens=max_tokens))
