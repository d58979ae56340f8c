"""Chat completions from any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio) through the
``openai`` SDK (the ``llm`` extra); :mod:`cookbook.llm.backends` wires it to a notebook's ``LLM`` parameter.
The key is read from an environment variable and never printed; an endpoint that
cannot be used raises :class:`~cookbook.llm.base.LLMUnavailable`, which the pipeline never swallows; one call
that failed after its retries raises :class:`~cookbook.llm.base.LLMCallFailed`, which it survives. Taught in
notebooks/05_map_reduce_answering.ipynb; tested against tests/fake_openai.py (tests/test_endpoint_faults.py
is the fault matrix).
"""

from __future__ import annotations

import json
import os
import time
from urllib.parse import urlsplit

from .._validate import integer, number
from .base import FailureStreak, LLMUnavailable, add_secret, public_url, redact
from .concurrency import RateLimiter, call_within
from .tokens import count_tokens

__all__ = ["OpenAICompatibleLLM"]

# Statuses that mean the endpoint refuses this key or model: permanent, so not worth a retry.
_REFUSALS = {401: "HTTP 401, the API key was rejected", 403: "HTTP 403, access is forbidden",
             404: "HTTP 404, not found (check the base URL and the model name)"}
_MAX_WAIT = 8.0  # the longest backoff between two attempts, as the openai SDK's


def _base_url_problem(url) -> str | None:
    """What makes ``url`` unusable as a base URL (None: nothing), in words that do not repeat it (it may hold a
    credential, or be a key pasted into the wrong variable)."""
    if not isinstance(url, str):
        return f"the base URL must be a string, got {type(url).__name__}"
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises on a port that is not a number in 0-65535)
    except ValueError as e:
        return f"the base URL cannot be parsed ({str(e).split(':')[0]})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ("the base URL (base_url=, or $OPENAI_BASE_URL) must start with http:// or https:// and name a host "
                "(e.g. http://localhost:11434/v1 for Ollama); the value given does not")
    return None


def _snippet(text, n: int = 160) -> str:
    """``text`` on one line, secrets redacted (before the cut, so no part of a key survives), at most ``n``
    characters."""
    one = redact(" ".join(str(text).split()))
    return one if len(one) <= n else one[:n] + "…"


def _status_outcome(exc) -> tuple[str, str, int, float | None]:
    """``(kind, cause, status, retry_after)`` for an SDK status error (see :meth:`OpenAICompatibleLLM._attempt`)."""
    status = exc.status_code
    body = exc.body.get("message", "") if isinstance(exc.body, dict) else exc.body  # not JSON: the raw text
    says = f"; the server says: {_snippet(body)}" if body else ""
    if status in _REFUSALS:
        return "stop", _REFUSALS[status] + says, status, None
    if status == 429 and "insufficient_quota" in f"{exc.body} {exc.code} {getattr(exc, 'type', '')}":
        return "stop", "HTTP 429, the quota is exhausted (insufficient_quota: check the plan and billing)" + says, \
            status, None
    if status in (408, 409, 429) or status >= 500:  # what the openai SDK retries too
        try:
            after = float(exc.response.headers.get("retry-after", ""))
        except ValueError:  # absent, or an HTTP date: our own backoff then
            after = None
        return "retry", f"HTTP {status}{says}", status, after if after is not None and 0 <= after < 1e6 else None
    return "fail", f"HTTP {status}{says}", status, None  # a bad request: the same request fails the same way


def _not_a_completion(text: str) -> str:
    return (f"the response is not an OpenAI chat completion (no 'choices' list): {_snippet(text, 80)!r}; "
            "is the base URL an OpenAI-compatible API?")


def _body_outcome(content_type: str, body: bytes) -> tuple[str, str, int, None]:
    """``("ok", content, 200, None)`` for the bytes of a chat completion, ``("stop", why, 200, None)`` for anything
    else: a body that is not UTF-8, not JSON (an HTML page: a wrong base URL), JSON nested too deeply to read,
    or JSON that is not a chat completion."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        return "stop", (f"the response is not UTF-8 text ({e.reason} at byte {e.start} of {len(body)}, content type "
                        f"{content_type or 'none'}): is the base URL an OpenAI-compatible API?"), 200, None
    if "json" not in content_type:  # what the openai SDK reads as JSON
        return "stop", (f"the response is not JSON but {content_type or 'untyped'} ({_snippet(text, 80)!r}): is the "
                        "base URL an OpenAI-compatible API (it usually ends in /v1)?"), 200, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:  # a body the server calls JSON that is not
        return "stop", f"the response is not JSON although its content type says so ({e})", 200, None
    except RecursionError:
        return "stop", "the response is JSON nested too deeply to read, not an OpenAI chat completion", 200, None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        return "stop", _not_a_completion(text), 200, None
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return "ok", redact(content) if isinstance(content, str) else "", 200, None  # "" is malformed output


class OpenAICompatibleLLM:
    """Chat completions from any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio).

    ``api_key_env`` names the environment variable holding the key (read at construction, never stored in
    ``repr`` or printed; :func:`~cookbook.llm.base.redact` masks it in every text carried on, the model's
    answers included). ``concurrency`` is how many calls a step may have in flight (:func:`concurrency_of`);
    ``requests_per_minute`` / ``tokens_per_minute`` (None: no limit) hold every call, before it is sent, within
    those budgets (:class:`RateLimiter`; a call is charged its prompt plus ``max_tokens`` once, whatever its
    retries). ``temperature`` and ``seed`` (None: not sent) go to the server and into :attr:`params`.

    What a call does with a fault (tests/test_endpoint_faults.py has one test per row):

    - HTTP 408, 409, 429 (a rate limit), 5xx, a timeout (``timeout`` seconds per request) or a failed
      connection: retried up to ``max_retries`` times, waiting ``backoff`` seconds, then twice as long each
      time (at most 8 s), or what the server's ``Retry-After`` asks;
    - still failing after the retries, or another 4xx (a bad request): :class:`LLMCallFailed`, a transient
      fault the steps survive (a map batch scores 0, a report stays empty, a text unit is a problem);
    - ``max_consecutive_failures`` (3) calls in a row failing so — counted across threads, reset by any
      answer — raise :class:`LLMUnavailable`: the endpoint is down, not one request unlucky;
    - any other error, whatever a library raises on a strange answer: :class:`LLMCallFailed`, counted the same;
    - :class:`LLMUnavailable` at once, and not retried: a missing key, or one with surrounding whitespace (a
      trailing newline) or characters an HTTP header cannot carry (at construction), a connection still
      refused after the retries, HTTP 401/403/404, a 429 whose body says ``insufficient_quota`` (OpenAI's
      exhausted quota), a 200 whose body is not UTF-8, not JSON (a wrong base URL serving an HTML page), JSON
      nested too deeply to read or JSON but not a chat completion (no ``choices``), no complete answer within
      ``deadline`` seconds for the whole call (retries, waits and a body trickling in included: a hung or
      crawling server; :func:`~cookbook.llm.concurrency.call_within`), and a prompt plus ``max_tokens`` larger than
      ``tokens_per_minute`` (refused before anything is sent, as it could never be).

    An empty completion comes back as ``""``; callers treat it as malformed output. Constructing one connects
    to nothing; :meth:`complete` does. The base URL is shown without its credentials (``user:pass@``, query
    values: :func:`~cookbook.llm.base.public_url`) in ``repr`` and every message. Taught in
    notebooks/05_map_reduce_answering.ipynb.

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
                 timeout: float = 60.0, max_retries: int = 3, deadline: float = 120.0, backoff: float = 0.5,
                 max_consecutive_failures: int = 3, temperature: float = 0.0, seed: int | None = None,
                 concurrency: int = 8, requests_per_minute: int | None = None,
                 tokens_per_minute: int | None = None):
        try:
            import openai
        except ImportError:
            raise ImportError("OpenAICompatibleLLM needs the 'openai' package: pip install "
                              "'graphrag-cookbook[llm]'") from None
        self.model = model
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string (the model's name on the server), got {model!r}")
        self.base_url = base_url
        if base_url is not None and _base_url_problem(base_url):
            raise LLMUnavailable(f"LLM endpoint <base URL not shown>, model {model!r}: {_base_url_problem(base_url)}")
        self.timeout = number(timeout, "timeout", low=0, low_open=True)
        self.max_retries = integer(max_retries, "max_retries", at_least=0)
        self.deadline = number(deadline, "deadline", low=0, low_open=True)
        self.backoff = number(backoff, "backoff", low=0)
        self.max_consecutive_failures = integer(max_consecutive_failures, "max_consecutive_failures")
        self.temperature = number(temperature, "temperature", low=0)
        self.seed = None if seed is None else integer(seed, "seed", at_least=0)
        self.concurrency = integer(concurrency, "concurrency")
        self.limiter = (RateLimiter(requests_per_minute, tokens_per_minute)
                        if requests_per_minute is not None or tokens_per_minute is not None else None)
        self.streak = FailureStreak(self.max_consecutive_failures)  # the stop rule, shared by every backend
        self.endpoint()  # registers the base URL's credentials as secrets (public_url) before anything is sent
        key = os.environ.get(api_key_env)
        if not key:
            raise LLMUnavailable(f"{self.endpoint()}: no API key, {api_key_env} is not set "
                                 "(a local server such as Ollama accepts any value)")
        add_secret(key)
        if key != key.strip() or not (key.isascii() and key.isprintable()):
            flaw = ("surrounding whitespace (a trailing newline or carriage return, as a key copied from a file has)"
                    if key != key.strip() else "characters other than printable ASCII")
            raise LLMUnavailable(f"{self.endpoint()}: the API key in {api_key_env} has {flaw}, which an HTTP header "
                                 "cannot carry; set it again without them (the key itself is not shown)")
        # Retries are ours (complete), so that a call has one deadline and a hopeless answer is not retried.
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=self.timeout, max_retries=0)

    def __repr__(self) -> str:
        shown = None if self.base_url is None else public_url(str(self.base_url))
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={shown!r})"

    def endpoint(self) -> str:
        """``"LLM endpoint <base URL>, model '<model>'"`` (the SDK's default URL when none was given), the URL
        without its credentials (:func:`~cookbook.llm.base.public_url`).

        >>> import os
        >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"
        >>> llm = OpenAICompatibleLLM("llama3", base_url="http://localhost:11434/v1/", api_key_env="COOKBOOK_DEMO_KEY")
        >>> llm.endpoint()
        "LLM endpoint http://localhost:11434/v1, model 'llama3'"
        >>> del os.environ["COOKBOOK_DEMO_KEY"]
        """
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return redact(f"LLM endpoint {public_url(str(url)).rstrip('/')}, model {self.model!r}")

    @property
    def failures_in_a_row(self) -> int:
        """Calls that failed after their retries since the last answer (:class:`FailureStreak`).

        >>> import os
        >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"
        >>> OpenAICompatibleLLM("llama3", api_key_env="COOKBOOK_DEMO_KEY").failures_in_a_row
        0
        """
        return self.streak.in_a_row

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

    def _named_attempt(self, prompt: str, max_tokens: int, timeout: float, expired) -> tuple[str, str, int | None,
                                                                                           float | None]:
        """:meth:`_attempt`, with whatever else it raises (a library's error on a strange answer, in a subclass's
        attempt too) turned into a named ``"fail"``, counted by the stop rule like any failed call."""
        try:
            return self._attempt(prompt, max_tokens, timeout, expired)
        except Exception as e:
            return "fail", f"unexpected {type(e).__name__} ({_snippet(e)})", None, None

    def _attempt(self, prompt: str, max_tokens: int, timeout: float, expired=None) -> tuple[str, str, int | None,
                                                                                          float | None]:
        """One request: ``(kind, text or cause, status, retry_after)`` with kind ``"ok"`` (an answer),
        ``"retry"`` (transient, worth another attempt), ``"connect"`` (no connection: worth another attempt,
        hopeless after them), ``"fail"`` (transient, not worth one) or ``"stop"`` (the endpoint cannot be used).
        Returns rather than raises, so that no library exception, which may carry the server's text, is chained
        to ours. ``expired`` (a ``threading.Event``, see :func:`~cookbook.llm.concurrency.call_within`) set: the
        caller has given up, stop reading. A subclass (another transport) overrides this."""
        import openai

        extra = {} if self.seed is None else {"seed": self.seed}
        try:
            with self._client.chat.completions.with_streaming_response.create(
                    model=self.model, messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens,
                    temperature=self.temperature, timeout=timeout, **extra) as raw:
                content_type = raw.headers.get("content-type", "").split(";")[0].strip().lower()
                chunks = []
                for chunk in raw.iter_bytes():  # chunk by chunk, so that a body trickling in can be left
                    if expired is not None and expired.is_set():
                        return "retry", "the answer was still arriving", None, None
                    chunks.append(chunk)
        except openai.APITimeoutError:  # a subclass of APIConnectionError
            return "retry", f"no answer within the timeout of {timeout:.3g} s", None, None
        except openai.APIConnectionError as e:
            return "connect", f"cannot connect ({_snippet(e.__cause__ or e.__context__ or e)})", None, None
        except openai.APIStatusError as e:
            return _status_outcome(e)
        except Exception as e:  # the HTTP library's own errors while the body is read (not wrapped by the SDK)
            if "timeout" in type(e).__name__.lower():
                return "retry", f"no answer within the timeout of {timeout:.3g} s", None, None
            if type(e).__module__.split(".")[0].startswith(("httpx", "httpcore", "h11")):
                return "retry", f"the connection broke while the answer arrived ({type(e).__name__})", None, None
            raise
        return _body_outcome(content_type, b"".join(chunks))

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The server's chat completion of ``prompt`` as one user message, capped at ``max_tokens``, after
        the rate limiter's wait when there is one; faults as the class doc lists them (tests/test_llm.py and
        tests/test_endpoint_faults.py run it against a fake server)."""
        integer(max_tokens, "max_tokens")
        if self.limiter is not None:
            need = count_tokens(prompt) + max_tokens
            if self.limiter.tpm is not None and need > self.limiter.tpm:
                raise LLMUnavailable(f"{self.endpoint()}: a call of {need} tokens (prompt plus max_tokens) exceeds "
                                     f"tokens_per_minute={self.limiter.tpm}, so it could never be sent; raise "
                                     "tokens_per_minute or send smaller prompts (a smaller budget or max_tokens)")
            self.limiter.acquire(need)
        start, attempts = time.monotonic(), 0
        while True:
            attempts += 1
            budget = min(self.timeout, self.deadline - (time.monotonic() - start))
            left = max(self.deadline - (time.monotonic() - start), 1e-3)  # the whole call's, not one read's
            read = max(budget, 1e-3)  # one read's timeout

            def attempt(expired, read=read):
                return self._named_attempt(prompt, max_tokens, read, expired)
            done, outcome = call_within(attempt, left)
            if not done:  # the answer had not ended by the deadline (a server sending a byte at a time)
                raise LLMUnavailable(f"{self.endpoint()}: no answer within the deadline of {self.deadline:g} s per "
                                     f"call ({attempts} attempt(s); the last was still arriving)")
            kind, cause, status, after = outcome
            if kind == "ok":
                self.streak.answered()
                return cause
            if kind == "stop":
                raise LLMUnavailable(f"{self.endpoint()}: {cause}")
            more = kind != "fail" and attempts <= self.max_retries
            wait = min(self.backoff * 2 ** (attempts - 1), _MAX_WAIT) if after is None else after
            left = self.deadline - (time.monotonic() - start)
            if kind == "retry" and status is None and (budget < self.timeout or (more and wait >= left)):
                # no answer, and the deadline cut this attempt short or leaves no time for the next: a hung server
                raise LLMUnavailable(f"{self.endpoint()}: no answer within the deadline of {self.deadline:g} s "
                                     f"per call ({attempts} attempt(s); the last: {cause})")
            if not more or wait >= left:
                break
            time.sleep(wait)
        if kind == "connect":
            raise LLMUnavailable(f"{self.endpoint()}: {cause}")
        raise self.streak.failed(self.endpoint(), f"{cause} ({attempts} attempt(s))", status)

