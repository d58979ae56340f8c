"""Chat completions from any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio) through the
``openai`` SDK (the ``llm`` extra). The key is read from an environment variable and never printed; an
endpoint that cannot be used raises :class:`~cookbook.llm.base.LLMUnavailable`, which the pipeline never
swallows. Taught in notebooks/05_map_reduce_answering.ipynb; tested against tests/fake_openai.py.
"""

from __future__ import annotations

import os
import re

from .._validate import integer, number
from .base import LLMUnavailable
from .concurrency import RateLimiter
from .tokens import count_tokens

__all__ = ["OpenAICompatibleLLM"]


# Statuses that mean the endpoint refuses this key or model: permanent, so not worth a retry.
_REFUSALS = {401: "HTTP 401, the API key was rejected", 403: "HTTP 403, access is forbidden",
             404: "HTTP 404, not found (check the base URL and the model name)"}


def _redact(text: str, key: str) -> str:
    """``text`` without the key, nor anything shaped like an OpenAI key (servers echo a masked key)."""
    return re.sub(r"sk-[\w*.\-]+", "sk-***", text.replace(key, "***") if key else text)


def _unavailable_cause(exc: Exception, key: str) -> str | None:
    """Why ``exc`` (raised by the ``openai`` SDK after its retries) means the endpoint is unusable, or
    None for a transient fault the caller handles (timeouts, 429, 5xx, a bad request)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError, but transient
        return None
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return f"cannot connect ({_redact(str(cause or exc), key)})"
    if isinstance(exc, openai.APIStatusError) and exc.status_code in _REFUSALS:
        body = exc.body.get("message", "") if isinstance(exc.body, dict) else ""
        return _REFUSALS[exc.status_code] + (f"; the server says: {_redact(str(body), key)}" if body else "")
    return None


class OpenAICompatibleLLM:
    """Chat completions from any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio).

    ``api_key_env`` names the environment variable holding the key (read at construction, never
    stored in ``repr`` or printed). ``timeout`` is per request, in seconds; the SDK retries 429 and
    5xx responses, timeouts and failed connections ``max_retries`` times with exponential backoff.
    ``concurrency`` is how many calls a step may have in flight (:func:`concurrency_of`);
    ``requests_per_minute`` / ``tokens_per_minute`` (None: no limit) hold every request, before it is sent,
    within those budgets (:class:`RateLimiter`; a request is charged its prompt plus ``max_tokens``).
    ``temperature`` and ``seed`` (None: not sent) go to the server and into :attr:`params`.
    A missing key, an endpoint that cannot be reached, or HTTP 401/403/404 raise :class:`LLMUnavailable`;
    other errors propagate as the SDK raised them. An empty completion comes back as ``""``; callers
    treat it as malformed output. Taught in notebooks/05_map_reduce_answering.ipynb (constructing one
    connects to nothing; :meth:`complete` does).

    >>> import os
    >>> try:
    ...     OpenAICompatibleLLM("llama3", base_url="http://localhost:11434/v1", api_key_env="COOKBOOK_UNSET_KEY")
    ... except LLMUnavailable as e:
    ...     print(e)  # doctest: +ELLIPSIS
    LLM endpoint http://localhost:11434/v1, model 'llama3': no API key, COOKBOOK_UNSET_KEY is not set ...
    >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"  # a local server takes any key
    >>> OpenAICompatibleLLM("llama3", base_url="http://localhost:11434/v1", api_key_env="COOKBOOK_DEMO_KEY")
    OpenAICompatibleLLM(model='llama3', base_url='http://localhost:11434/v1')
    >>> del os.environ["COOKBOOK_DEMO_KEY"]
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60.0, max_retries: int = 3, temperature: float = 0.0, seed: int | None = None,
                 concurrency: int = 8, requests_per_minute: int | None = None,
                 tokens_per_minute: int | None = None):
        try:
            import openai
        except ImportError:
            raise ImportError("OpenAICompatibleLLM needs the 'openai' package: pip install "
                              "'graphrag-cookbook[llm]'") from None
        self.model = model
        self.base_url = base_url
        self.temperature = number(temperature, "temperature", low=0)
        self.seed = None if seed is None else integer(seed, "seed", at_least=0)
        self.concurrency = integer(concurrency, "concurrency")
        self.limiter = (RateLimiter(requests_per_minute, tokens_per_minute)
                        if requests_per_minute is not None or tokens_per_minute is not None else None)
        key = os.environ.get(api_key_env)
        if not key:
            raise LLMUnavailable(f"{self.endpoint()}: no API key, {api_key_env} is not set "
                                 "(a local server such as Ollama accepts any value)")
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r})"

    def endpoint(self) -> str:
        """``"LLM endpoint <base URL>, model '<model>'"`` (the SDK's default URL when none was given).

        >>> import os
        >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"
        >>> llm = OpenAICompatibleLLM("llama3", base_url="http://localhost:11434/v1/", api_key_env="COOKBOOK_DEMO_KEY")
        >>> llm.endpoint()
        "LLM endpoint http://localhost:11434/v1, model 'llama3'"
        >>> del os.environ["COOKBOOK_DEMO_KEY"]
        """
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return f"LLM endpoint {str(url).rstrip('/')}, model {self.model!r}"

    @property
    def params(self) -> dict:
        """The generation parameters besides the prompt and ``max_tokens`` that shape an answer (what
        :class:`CachedLLM` keys by; neither the endpoint nor the key).

        >>> import os
        >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"
        >>> OpenAICompatibleLLM("llama3", api_key_env="COOKBOOK_DEMO_KEY", seed=7).params
        {'seed': 7, 'temperature': 0.0}
        >>> del os.environ["COOKBOOK_DEMO_KEY"]
        """
        return {"seed": self.seed, "temperature": self.temperature}

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The server's chat completion of ``prompt`` as one user message, capped at ``max_tokens``;
        refusals and unreachable endpoints raise :class:`LLMUnavailable` (tests/test_llm.py runs it
        against a fake server). Waits for the rate limiter first, when there is one."""
        integer(max_tokens, "max_tokens")
        if self.limiter is not None:
            self.limiter.acquire(count_tokens(prompt) + max_tokens)
        extra = {} if self.seed is None else {"seed": self.seed}
        try:
            resp = self._client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens,
                temperature=self.temperature, **extra)
        except Exception as e:
            cause = _unavailable_cause(e, self._client.api_key)
            if cause is None:
                raise
            raise LLMUnavailable(f"{self.endpoint()}: {cause}") from None
        if not resp.choices:
            return ""
        return resp.choices[0].message.content or ""
