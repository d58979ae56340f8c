"""The model layer's protocol: what every backend implements (:class:`LLM`), the one error that stops a
run (:class:`LLMUnavailable`), the error of one call that failed (:class:`LLMCallFailed`), the rule that a
step whose every call failed stops (:func:`stop_if_all_failed`), and the keeping of secrets out of text
(:func:`redact`, in every form a secret can be printed in; :func:`public_url`, a URL without its
credentials). Backends: :mod:`cookbook.llm.extractive` (offline stand-in), :mod:`cookbook.llm.openai_compatible`
(any OpenAI-compatible endpoint), :mod:`cookbook.llm.faults` (fault injection); wrappers:
:mod:`cookbook.llm.cached`, :mod:`cookbook.llm.ledger`.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from .._validate import integer, string

__all__ = ["LLM", "MIN_SECRET_CHARS", "FailureStreak", "LLMCallFailed", "LLMUnavailable", "add_secret", "holds_secret",
           "public_url", "redact", "secret_forms", "stop_if_all_failed"]


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


def secret_forms(value: str) -> set[str]:
    """The forms ``value`` can be printed in: as it is, stripped of surrounding whitespace, escaped as Python
    (``repr``, of the text and of its UTF-8 bytes: how HTTP libraries show an illegal header) and as JSON, and
    URL-encoded; forms shorter than :data:`MIN_SECRET_CHARS` are left out.

    >>> sorted(secret_forms("tok-0123456789\\r"))
    ['tok-0123456789', 'tok-0123456789\\r', 'tok-0123456789%0D', 'tok-0123456789\\\\r']
    """
    string(value, "secret")
    forms = {value, value.strip(), repr(value)[1:-1], repr(value.encode("utf-8", "backslashreplace"))[2:-1],
             json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], quote(value, safe=""),
             quote_plus(value, safe="")}
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def add_secret(value: str) -> None:
    """Remember ``value`` (an API key or password this process read) so that :func:`redact` masks it, in every
    form :func:`secret_forms` lists, and :func:`holds_secret` finds it; values shorter than
    :data:`MIN_SECRET_CHARS` are not secrets.

    >>> add_secret("tok-0123456789abcdef"); add_secret("ollama")
    >>> holds_secret("the key tok-0123456789abcdef"), holds_secret("ollama is running")
    (True, False)
    """
    if len(string(value, "secret")) >= MIN_SECRET_CHARS:
        with _LOCK:
            _SECRETS.update(secret_forms(value))


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
    """``text`` with every secret given to :func:`add_secret` (in each of its :func:`secret_forms`: stripped,
    escaped, URL-encoded), and anything shaped like an OpenAI key (servers echo a masked key), replaced by
    ``***``. For every text a server, a library or a model wrote that we carry on.

    >>> add_secret("tok-0123456789abcdef")
    >>> redact("Incorrect API key provided: tok-0123456789abcdef (sk-proj-****cdef); risk-free")
    'Incorrect API key provided: *** (***); risk-free'
    >>> add_secret("tok-trailing-newline\\n")
    >>> redact("Illegal header value b'Bearer tok-trailing-newline\\\\n'")
    "Illegal header value b'Bearer ***'"
    """
    string(text, "text")
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)  # a longer secret first: it may hold a shorter one
    for s in secrets:
        text = text.replace(s, "***")
    return _KEY_SHAPED.sub("***", text)


# Query parameters whose value is a credential (added to the secrets, so a library echoing the URL is masked too).
_CREDENTIAL_PARAM = re.compile(r"key|token|secret|pass|auth|sig|credential", re.IGNORECASE)


def public_url(url: str) -> str:
    """``url`` as the series prints it: without the user and password (``user:pass@``), every query parameter's
    value replaced by ``***`` (``?api-key=…``, ``?password=…``), path parameters (``;token=…``) by ``;***``, and
    no fragment. The password and the values of credential-like parameters (in the query, the fragment or the
    path parameters) become secrets (:func:`add_secret`), percent-encoded and decoded, and so does the userinfo's
    Basic authorization (base64), so a library's message that repeats the URL or the header is masked as well.
    Used for the model endpoint and the graph database alike; a text that is not a URL with a scheme comes back
    as ``<URL without a scheme>``, unprinted (it may be a secret pasted in the wrong place).

    >>> public_url("https://user:pa55word-123@example.org:8443/v1?api-key=abcdef123456&x=1#frag")
    'https://example.org:8443/v1?api-key=***&x=***'
    >>> public_url("redis://localhost:6379/?password=hunter2hunter2"), public_url("unix://:pw-0123456789@/tmp/f.sock")
    ('redis://localhost:6379/?password=***', 'unix:///tmp/f.sock')
    """
    string(url, "url")
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # a malformed IPv6 host
        return "<URL that cannot be parsed>"
    userinfo = parts.netloc.rpartition("@")[0]  # read by hand: a bad port or host must not hide the password
    user, has_password, password = userinfo.partition(":")
    given = [v for part in (parts.query, parts.fragment, parts.path.partition(";")[2].replace(";", "&"))
             for k, v in parse_qsl(part, keep_blank_values=True) if _CREDENTIAL_PARAM.search(k)]
    for secret in (password if has_password else user, *given):
        for form in {secret, unquote(secret)}:  # as given and as sent (%40 is @)
            if form:
                add_secret(form)  # a token given as the user (https://TOKEN@host) is one too
    if userinfo:  # as an HTTP library sends it: the Basic authorization header
        add_secret(base64.b64encode(unquote(userinfo).encode("utf-8", "backslashreplace")).decode())
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a port that is not a number in 0-65535
        return "<URL that cannot be parsed>"
    if not parts.scheme or (not parts.netloc and parts.scheme not in ("unix", "file")):
        return "<URL without a scheme>"
    query = parse_qsl(parts.query, keep_blank_values=True)
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    shown = "&".join(f"{quote(name, safe='-_.')}=***" for name, _ in query)
    path = parts.path.partition(";")[0] + (";***" if ";" in parts.path else "")  # ;token=… path parameters
    return f"{parts.scheme}://{netloc}{path}" + (f"?{shown}" if shown else "")  # unix:///path keeps its //


def stop_if_all_failed(step: str, failed: int, total: int, last: str) -> None:
    """The rule every step follows after its calls: when all ``total`` (> 0) calls failed — each a transient
    fault the step survives alone — nothing reached the model, so :class:`LLMUnavailable` is raised, naming the
    ``step`` and the ``last`` cause, rather than a result built from nothing. One call that failed among
    answers is left to the step (a batch scored 0, an empty report, a problem).

    >>> stop_if_all_failed("global search map", 1, 3, "HTTP 500")
    >>> stop_if_all_failed("global search map", 1, 1, "HTTP 500")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cookbook.llm.base.LLMUnavailable: global search map: all 1 call(s) failed, so nothing reached the model; ...
    """
    string(step, "step")
    total = integer(total, "total", at_least=0)
    failed = integer(failed, "failed", at_least=0, what=f"an integer in [0, total={total}]")
    if failed > total:
        raise ValueError(f"failed must be an integer in [0, total={total}], got {failed}")
    if total > 0 and failed == total:
        raise LLMUnavailable(redact(f"{step}: all {total} call(s) failed, so nothing reached the model; "
                                    f"the last: {' '.join(str(last).split())}"))


class FailureStreak:
    """The stop rule every backend shares: calls that failed after their retries one after another, counted
    across threads and reset by any answer. :meth:`failed` returns the :class:`LLMCallFailed` to raise for one
    such call, or raises :class:`LLMUnavailable` when it is the ``limit``-th in a row: the endpoint is down, not
    one request unlucky. A backend of one's own (Ollama, a notebook-hosted model) keeps one and calls
    :meth:`answered` / :meth:`failed`, and so stops the way :class:`OpenAICompatibleLLM` does.

    >>> streak = FailureStreak(2)
    >>> raise_ = streak.failed("LLM endpoint http://localhost:11434/v1, model 'llama3'", "HTTP 503", 503)
    >>> type(raise_).__name__, streak.in_a_row
    ('LLMCallFailed', 1)
    >>> streak.failed("LLM endpoint http://localhost:11434/v1, model 'llama3'", "HTTP 503", 503)
    Traceback (most recent call last):
    ...
    cookbook.llm.base.LLMUnavailable: LLM endpoint http://localhost:11434/v1, model 'llama3': 2 calls in a row failed \
after their retries; the last: HTTP 503
    """

    def __init__(self, limit: int = 3):
        self.limit = integer(limit, "limit")
        self.in_a_row = 0
        self._lock = threading.Lock()

    def answered(self) -> None:
        """An answer came: the streak is over.

        >>> streak = FailureStreak()
        >>> _ = streak.failed("LLM endpoint http://localhost:11434/v1, model 'llama3'", "timeout"); streak.answered()
        >>> streak.in_a_row
        0
        """
        with self._lock:
            self.in_a_row = 0

    def failed(self, where: str, cause: str, status: int | None = None) -> LLMCallFailed:
        """One more call failed (``where`` names the endpoint and model, ``cause`` what happened): the error to
        raise for it, or :class:`LLMUnavailable` raised at the ``limit``-th in a row. Both messages redacted.

        >>> FailureStreak().failed("LLM endpoint http://localhost:11434/v1, model 'llama3'", "HTTP 503", 503).status
        503
        """
        with self._lock:
            self.in_a_row += 1
            in_a_row = self.in_a_row
        if in_a_row >= self.limit:
            raise LLMUnavailable(redact(f"{where}: {in_a_row} calls in a row failed after their retries; the last: "
                                        f"{cause}"))
        return LLMCallFailed(redact(f"{where}: {cause}"), status)
