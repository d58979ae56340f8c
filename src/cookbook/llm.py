"""LLM backends behind one protocol, ``complete(prompt, *, max_tokens) -> str``, with fault injection.

- :class:`ExtractiveLLM` (default): offline and deterministic. It reads the structured sections that
  :func:`cookbook.prompts.prompt` writes (``TASK:`` line, ``## SECTION`` blocks, ``[id] text`` lines) and
  answers from them: summaries are the most central sentences (PageRank over a sentence-similarity
  graph), map scores come from word overlap with the question, answers are assembled from the best evidence.
- :class:`OpenAICompatibleLLM`: any OpenAI-compatible endpoint through the ``openai`` SDK (the ``llm``
  extra); the key is read from an environment variable and never printed; timeouts and retries with
  backoff on 429/5xx are the SDK's own. An endpoint that cannot be reached or refuses raises
  :class:`LLMUnavailable`, which the pipeline never swallows.
- :class:`FaultInjectingLLM` wraps any backend and injects timeouts, server errors and malformed output.
  It lives here, beside the backends, and not in tests: notebook readers use it to see what the pipeline
  survives, and it is a backend like the others.

The prompt format is :mod:`cookbook.prompts`; token counting and the :class:`TokenLedger` are
:mod:`cookbook.tokens` (``TokenLedger`` and ``split_sentences`` are re-exported here, where notebooks 04
and 04 first met them). Taught in notebooks/04_community_reports.ipynb and
notebooks/05_map_reduce_answering.ipynb.

>>> from cookbook.prompts import prompt
>>> p = prompt("map", question="Which trades matter?", reports=["[C1] The mining trade is central."])
>>> ExtractiveLLM().complete(p, max_tokens=200)
'{"points": [{"description": "The mining trade is central.", "reports": ["C1"], "score": 50}]}'
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from scipy import sparse as sp

from ._validate import integer, number
from .embed import TfidfVectorizer, tokenize
from .ppr import personalized_pagerank, transition_matrix
from .prompts import cited_lines, parse_json, parse_prompt, split_sentences
from .tokens import TokenLedger, count_tokens, pack_lines

__all__ = ["FAULTS", "LLM", "ExtractiveLLM", "FaultInjectingLLM", "LLMUnavailable", "OpenAICompatibleLLM",
           "TokenLedger", "split_sentences"]


@runtime_checkable
class LLM(Protocol):
    """What every backend implements, and what students implement to plug in their own model:
    ``complete(prompt, *, max_tokens) -> str``, the model's text for a prompt built by
    :func:`cookbook.prompts.prompt`, at most about ``max_tokens`` tokens long. Raise
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


class ExtractiveLLM:
    """Deterministic, offline "LLM" that answers prompts built by :func:`prompt` by extraction.
    Taught in notebooks/04_community_reports.ipynb and notebooks/05_map_reduce_answering.ipynb.

    >>> from cookbook.prompts import prompt
    >>> p = prompt("answer", question="Where is the mine?", sources=["[D1] The mine is in Brask. Fish swim."])
    >>> ExtractiveLLM().complete(p, max_tokens=50)
    'The mine is in Brask. [D1]'
    """

    model = "extractive"

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The extractive answer to ``prompt``, as the task in its ``TASK:`` line asks.

        >>> from cookbook.prompts import prompt
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> print(ExtractiveLLM().complete(p, max_tokens=50))
        Key points from the community reports:
        - [R1] Trade grew.
        """
        integer(max_tokens, "max_tokens")
        task, sec = parse_prompt(prompt)
        handler = {"community_report": self._report, "map": self._map, "reduce": self._reduce,
                   "answer": self._answer, "local_search": self._local_search, "repair": self._repair}.get(task)
        if handler is None:
            raise ValueError(f"ExtractiveLLM cannot do task {task!r}")
        return handler(sec, max_tokens)

    @staticmethod
    def _central_sentences(sources: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Unique sentences ranked by PageRank on their TF-IDF cosine graph, restarting in proportion to
        how many sources state each sentence (salience × centrality); ties by text. Each sentence keeps
        the first source that stated it."""
        first: dict[str, str] = {}
        repeats: dict[str, int] = {}
        for sid, text in sources:
            for s in split_sentences(text):
                first.setdefault(s, sid)
                repeats[s] = repeats.get(s, 0) + 1
        sents = list(first)
        if len(sents) < 2:
            return [(first[s], s) for s in sents]
        try:
            X = TfidfVectorizer().fit_transform(sents)
        except ValueError:  # stopwords only
            return [(first[s], s) for s in sents]
        S = sp.csr_matrix(X @ X.T)
        S.setdiag(0)
        S.eliminate_zeros()
        v0 = np.array([repeats[s] for s in sents], dtype=float)
        r = personalized_pagerank(transition_matrix(S), v0, restart=0.15, tol=1e-10, max_iter=500).scores
        order = sorted(range(len(sents)), key=lambda i: (-round(r[i], 12), sents[i]))
        return [(first[sents[i]], sents[i]) for i in order]

    def _report(self, sec, max_tokens):
        sources = cited_lines(sec.get("SOURCES", ""))
        ents = [line.split(" | ") for line in sec.get("ENTITIES", "").splitlines() if " | " in line]
        names = [e[1] for e in ents[:2]]
        title = " and ".join(names) if names else "Unnamed community"
        ranked = self._central_sentences(sources)
        summary = " ".join(s for _, s in ranked[:3])
        findings = [{"summary": s, "explanation": f"Stated in source {sid}.", "sources": [sid]}
                    for sid, s in ranked[3:8]]
        n_docs = len({sid for sid, _ in sources})
        out = {"title": title, "summary": summary, "findings": findings,
               "rating": float(min(10, round(2 * math.log2(1 + n_docs), 1)))}
        return _fit(out, max_tokens, "findings")

    def _map(self, sec, max_tokens):
        q = set(tokenize(sec.get("QUESTION", "")))
        points = []
        for rid, text in cited_lines(sec.get("REPORTS", "")):
            scored = []
            for s in split_sentences(text):
                overlap = len(q & set(tokenize(s))) / len(q) if q else 0.0
                if overlap > 0:
                    scored.append((round(100 * overlap), s))
            for score, s in sorted(scored, key=lambda x: (-x[0], x[1]))[:3]:
                points.append({"description": s, "score": int(score), "reports": [rid]})
        return _fit({"points": points}, max_tokens, "points")

    def _reduce(self, sec, max_tokens):
        lines = [line.strip() for line in sec.get("POINTS", "").splitlines() if line.strip()]
        if not lines:
            return "No relevant information was found in the community reports to answer this question."
        header = "Key points from the community reports:"
        kept, _, _ = pack_lines(lines, max_tokens, count_tokens(header))
        return header + "\n" + "\n".join(f"- {line}" for line in kept)

    def _answer(self, sec, max_tokens):
        return self._extract_answer(sec.get("QUESTION", ""), cited_lines(sec.get("SOURCES", "")), max_tokens)

    def _local_search(self, sec, max_tokens):
        # Every table's [id] lines are evidence: a relationship's description states the fact a source holds.
        lines = [x for name in ("ENTITIES", "RELATIONSHIPS", "SOURCES", "REPORTS")
                 for x in cited_lines(sec.get(name, ""))]
        return self._extract_answer(sec.get("QUESTION", ""), lines, max_tokens)

    @staticmethod
    def _extract_answer(question, lines, max_tokens):
        q = set(tokenize(question))
        scored = []
        for sid, text in lines:
            for s in split_sentences(text):
                overlap = len(q & set(tokenize(s)))
                if overlap:
                    scored.append((overlap, sid, s))
        scored.sort(key=lambda x: (-x[0], x[1], x[2]))
        out, used, seen = [], 0, set()
        for _, sid, s in scored:
            if s in seen:
                continue
            cost = count_tokens(s) + 3
            if used + cost > max_tokens:
                break
            seen.add(s)
            out.append(f"{s} [{sid}]")
            used += cost
        return " ".join(out) if out else "The sources do not answer this question."

    def _repair(self, sec, max_tokens):
        try:
            obj = parse_json(sec.get("OUTPUT", ""))
            return json.dumps(obj, sort_keys=True)
        except ValueError:
            return '{"points": []}'


def _fit(obj: dict, max_tokens: int, shrink: str) -> str:
    """Serialise ``obj``, dropping items from the list ``obj[shrink]`` until it fits ``max_tokens``."""
    text = json.dumps(obj, sort_keys=True)
    while count_tokens(text) > max_tokens and obj[shrink]:
        obj[shrink] = obj[shrink][:-1]
        text = json.dumps(obj, sort_keys=True)
    return text


# ---------------------------------------------------------------- OpenAI-compatible backend

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
    cookbook.llm.LLMUnavailable: LLM endpoint http://localhost:11434/v1, model 'llama3': cannot connect
    """


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
    A missing key, an endpoint that cannot be reached, or HTTP 401/403/404 raise :class:`LLMUnavailable`;
    other errors propagate as the SDK raised them. An empty completion comes back as ``""``; callers
    treat it as malformed output. Taught in notebooks/05_map_reduce_answering.ipynb (constructing one
    connects to nothing; :meth:`complete` does).

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
                 timeout: float = 60.0, max_retries: int = 3, temperature: float = 0.0):
        try:
            import openai
        except ImportError:
            raise ImportError("OpenAICompatibleLLM needs the 'openai' package: pip install "
                              "'graphrag-cookbook[llm]'") from None
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        key = os.environ.get(api_key_env)
        if not key:
            raise LLMUnavailable(f"{self.endpoint()}: no API key, {api_key_env} is not set "
                                 "(a local server such as Ollama accepts any value)")
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r})"

    def endpoint(self) -> str:
        """``"LLM endpoint <base URL>, model '<model>'"`` (the SDK's default URL when none was given).

        >>> os.environ["COOKBOOK_DEMO_KEY"] = "ollama"
        >>> llm = OpenAICompatibleLLM("llama3", base_url="http://localhost:11434/v1/", api_key_env="COOKBOOK_DEMO_KEY")
        >>> llm.endpoint()
        "LLM endpoint http://localhost:11434/v1, model 'llama3'"
        >>> del os.environ["COOKBOOK_DEMO_KEY"]
        """
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return f"LLM endpoint {str(url).rstrip('/')}, model {self.model!r}"

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The server's chat completion of ``prompt`` as one user message, capped at ``max_tokens``;
        refusals and unreachable endpoints raise :class:`LLMUnavailable` (tests/test_llm.py runs it
        against a fake server)."""
        try:
            resp = self._client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens,
                temperature=self.temperature)
        except Exception as e:
            cause = _unavailable_cause(e, self._client.api_key)
            if cause is None:
                raise
            raise LLMUnavailable(f"{self.endpoint()}: {cause}") from None
        if not resp.choices:
            return ""
        return resp.choices[0].message.content or ""


# ---------------------------------------------------------------- fault injection

FAULTS = ("timeout", "server_error", "malformed", "empty", "overlong")


class FaultInjectingLLM:
    """Wraps a backend and injects faults, for testing what the pipeline survives.

    ``schedule`` lists one fault (or None) per call, in order; after it runs out, each call fails with
    probability ``rate`` (seeded) with a fault drawn from ``kinds``. ``timeout`` and ``server_error``
    raise (``TimeoutError``, ``ConnectionError``); ``malformed`` cuts the real output in half;
    ``empty`` returns ""; ``overlong`` appends prose well past ``max_tokens``. ``injected`` counts them.
    Taught in notebooks/05_map_reduce_answering.ipynb.

    >>> from cookbook.prompts import prompt
    >>> flaky = FaultInjectingLLM(ExtractiveLLM(), rate=0.5, kinds=["empty"], seed=0)
    >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
    >>> [len(flaky.complete(p, max_tokens=50)) > 0 for _ in range(6)], flaky.injected
    ([True, False, False, False, True, True], {'empty': 3})
    """

    def __init__(self, inner: LLM, schedule: Sequence[str | None] = (), *, rate: float = 0.0,
                 kinds: Sequence[str] = FAULTS, seed: int = 0):
        bad = [f for f in [*schedule, *kinds] if f is not None and f not in FAULTS]
        if bad:
            raise ValueError(f"unknown fault {bad[0]!r}; expected one of {FAULTS}")
        number(rate, "rate", low=0, high=1)
        self.inner, self.schedule, self.rate, self.kinds = inner, list(schedule), rate, list(kinds)
        self.model = getattr(inner, "model", "unknown")
        self._rng = np.random.default_rng(seed)
        self.injected: dict[str, int] = {}

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The inner backend's answer, or the next scheduled (else random) fault instead.

        >>> from cookbook.prompts import prompt
        >>> llm = FaultInjectingLLM(ExtractiveLLM(), schedule=["timeout", "malformed", None])
        >>> p = prompt("map", question="Which trade?", reports=["[C1] The mining trade is central."])
        >>> llm.complete(p, max_tokens=200)
        Traceback (most recent call last):
        ...
        TimeoutError: injected fault: request timed out
        >>> llm.complete(p, max_tokens=200)  # half of the real JSON
        '{"points": [{"description": "The mining trade i'
        >>> llm.complete(p, max_tokens=200) == ExtractiveLLM().complete(p, max_tokens=200), llm.injected
        (True, {'timeout': 1, 'malformed': 1})
        """
        if self.schedule:
            fault = self.schedule.pop(0)
        else:
            fault = self.kinds[self._rng.integers(len(self.kinds))] if self._rng.random() < self.rate else None
        if fault:
            self.injected[fault] = self.injected.get(fault, 0) + 1
        if fault == "timeout":
            raise TimeoutError("injected fault: request timed out")
        if fault == "server_error":
            raise ConnectionError("injected fault: HTTP 503 from the server")
        if fault == "empty":
            return ""
        out = self.inner.complete(prompt, max_tokens=max_tokens)
        if fault == "malformed":
            return out[: len(out) // 2]
        if fault == "overlong":
            return out + "\n\nIn conclusion, " + "the evidence is extensive. " * (max_tokens + 10)
        return out
