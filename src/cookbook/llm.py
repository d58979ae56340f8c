"""LLM backends behind one protocol, ``complete(prompt, *, max_tokens) -> str``, and a token ledger.

- :class:`ExtractiveLLM` (default): offline and deterministic. It reads the structured sections that
  :func:`prompt` writes (``TASK:`` line, ``## SECTION`` blocks, ``[id] text`` lines) and answers from
  them: summaries are the most central sentences (PageRank over a sentence-similarity graph), map
  scores come from word overlap with the question, answers are assembled from the best evidence.
- :class:`OpenAICompatibleLLM`: any OpenAI-compatible endpoint through the ``openai`` SDK (the ``llm``
  extra); the key is read from an environment variable and never printed; timeouts and retries with
  backoff on 429/5xx are the SDK's own. An endpoint that cannot be reached or refuses raises
  :class:`LLMUnavailable`, which the pipeline never swallows.
- :class:`TokenLedger` wraps any backend: calls, prompt/completion tokens and cost per task, with a
  dry-run :meth:`TokenLedger.estimate` before a costly step.

>>> p = prompt("map", question="Which trades matter?", reports=["[C1] The mining trade is central."])
>>> ExtractiveLLM().complete(p, max_tokens=200)
'{"points": [{"description": "The mining trade is central.", "reports": ["C1"], "score": 50}]}'
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np

from .embed import TfidfVectorizer, tokenize

TASKS = ("community_report", "map", "reduce", "answer", "repair")
_SECTION = re.compile(r"^## ([A-Z_]+)\s*$", re.M)
_LINE = re.compile(r"^\[([^\]]+)\]\s*(.*)$")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

INSTRUCTIONS = {
    "community_report": 'Write one JSON object: {"title": str, "summary": str, "findings": [{"summary": str, '
                        '"explanation": str, "sources": [source ids]}], "rating": number 0-10}. Use only the '
                        "SOURCES; cite their ids.",
    "map": 'Answer from the REPORTS only. Return JSON {"points": [{"description": str, "score": integer 0-100, '
           '"reports": [report ids]}]}; score is how much the point helps answer the QUESTION; no points if '
           "nothing helps.",
    "reduce": "Write the final answer to the QUESTION from the POINTS, most important first, citing report ids "
              "in brackets. If the points do not answer it, say so.",
    "answer": "Answer the QUESTION from the SOURCES only, citing source ids in brackets.",
    "repair": 'The OUTPUT below was meant to be JSON of the form {"points": [{"description": str, "score": '
              'integer 0-100}]}. Return only that JSON, corrected.',
}


@runtime_checkable
class LLM(Protocol):
    def complete(self, prompt: str, *, max_tokens: int) -> str:
        ...


# ---------------------------------------------------------------- prompts

def prompt(task: str, **sections) -> str:
    """Build a prompt: ``TASK: <task>``, one ``## NAME`` block per keyword (a string, or a list of
    lines), then the task's instructions. Section names are upper-cased."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
    parts = [f"TASK: {task}"]
    for name, body in sections.items():
        text = body if isinstance(body, str) else "\n".join(body)
        parts.append(f"## {name.upper()}\n{text}")
    parts.append(f"## INSTRUCTIONS\n{INSTRUCTIONS[task]}")
    return "\n".join(parts)


def parse_prompt(text: str) -> tuple[str, dict[str, str]]:
    """Inverse of :func:`prompt`: ``(task, {SECTION: body})``."""
    first, _, rest = text.partition("\n")
    if not first.startswith("TASK: "):
        raise ValueError("not a cookbook prompt: the first line must be 'TASK: <task>'")
    pieces = _SECTION.split(rest)
    return first[6:].strip(), {pieces[i]: pieces[i + 1].strip("\n") for i in range(1, len(pieces) - 1, 2)}


def _need_str(value, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def cited_lines(body: str) -> list[tuple[str, str]]:
    """``[id] text`` lines of a section as ``(id, text)`` pairs."""
    _need_str(body, "body")
    out = []
    for line in body.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? when a capital letter follows."""
    _need_str(text, "text")
    return [s.strip() for s in _SENT.split(text) if s.strip()]


def parse_json(text: str) -> dict:
    """The JSON object in a model's output (also inside code fences or prose); ``ValueError`` if none."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty model output")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in model output") from None
        try:
            obj = json.loads(text[start:end + 1])
        except json.JSONDecodeError as e:
            raise ValueError(f"malformed JSON in model output: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"model output is JSON but not an object: {type(obj).__name__}")
    return obj


# ---------------------------------------------------------------- tokens

def count_tokens(text: str) -> int:
    """Tokens in ``text``: tiktoken's ``cl100k_base`` when installed *and* its encoding is available
    offline; otherwise the documented estimate of one token per four characters (OpenAI's rule of
    thumb for English), rounded up."""
    _need_str(text, "text")
    enc = _encoding()
    if enc is not None:
        return len(enc.encode(text))
    return math.ceil(len(text) / 4)


def pack_lines(lines: Iterable[str], budget: int, used: int = 0) -> tuple[list[str], int, bool]:
    """Take ``lines`` in order while ``used`` plus each line's tokens (+1 for its newline) stays within
    ``budget``; stop at the first that does not fit. Returns ``(kept, used, all_fitted)``."""
    if not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be a positive number of tokens, got {budget!r}")
    out = []
    for line in lines:
        cost = count_tokens(line) + 1
        if used + cost > budget:
            return out, used, False
        out.append(line)
        used += cost
    return out, used, True


@cache
def _encoding():
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # not installed, or its encoding file cannot be fetched offline
        return None


# Prices in US$ per million tokens (input, output), as published by the provider when written; check yours.
PRICES = {"extractive": (0.0, 0.0), "gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00),
          "gpt-4.1-mini": (0.40, 1.60)}


# ---------------------------------------------------------------- the offline backend

class ExtractiveLLM:
    """Deterministic, offline "LLM" that answers prompts built by :func:`prompt` by extraction."""

    model = "extractive"

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        task, sec = parse_prompt(prompt)
        handler = {"community_report": self._report, "map": self._map, "reduce": self._reduce,
                   "answer": self._answer, "repair": self._repair}.get(task)
        if handler is None:
            raise ValueError(f"ExtractiveLLM cannot do task {task!r}")
        return handler(sec, max_tokens)

    @staticmethod
    def _central_sentences(sources: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Unique sentences ranked by PageRank on their TF-IDF cosine graph, restarting in proportion to
        how many sources state each sentence (salience × centrality); ties by text. Each sentence keeps
        the first source that stated it."""
        from scipy import sparse as sp

        from .ppr import personalized_pagerank, transition_matrix

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
        q = set(tokenize(sec.get("QUESTION", "")))
        scored = []
        for sid, text in cited_lines(sec.get("SOURCES", "")):
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
    treat it as malformed output.
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
        """``"LLM endpoint <base URL>, model '<model>'"`` (the SDK's default URL when none was given)."""
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return f"LLM endpoint {str(url).rstrip('/')}, model {self.model!r}"

    def complete(self, prompt: str, *, max_tokens: int) -> str:
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
    """

    def __init__(self, inner: LLM, schedule: Sequence[str | None] = (), *, rate: float = 0.0,
                 kinds: Sequence[str] = FAULTS, seed: int = 0):
        bad = [f for f in [*schedule, *kinds] if f is not None and f not in FAULTS]
        if bad:
            raise ValueError(f"unknown fault {bad[0]!r}; expected one of {FAULTS}")
        if not 0 <= rate <= 1:
            raise ValueError(f"rate must be in [0, 1], got {rate!r}")
        self.inner, self.schedule, self.rate, self.kinds = inner, list(schedule), rate, list(kinds)
        self.model = getattr(inner, "model", "unknown")
        self._rng = np.random.default_rng(seed)
        self.injected: dict[str, int] = {}

    def complete(self, prompt: str, *, max_tokens: int) -> str:
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


def truncate(text: str, max_tokens: int) -> tuple[str, bool]:
    """Cut ``text`` to about ``max_tokens`` tokens (as an API stops at its limit); returns (text, was_cut)."""
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if count_tokens(text) <= max_tokens:
        return text, False
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix within the limit
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo], True


# ---------------------------------------------------------------- ledger

@dataclass
class TokenLedger:
    """Wraps a backend and counts what it costs. ``by_task[task]`` holds calls and tokens per prompt
    task (``TASK:`` line); repair calls are the retries. Only answered calls are charged: a call whose
    backend raised counts in ``failures`` and costs nothing. ``cost`` is None when ``prices`` has no
    entry for the model (the table says so in words)."""

    backend: LLM
    model: str | None = None
    prices: dict = field(default_factory=lambda: dict(PRICES))
    by_task: dict = field(default_factory=dict)
    failures: int = 0

    def __post_init__(self):
        if self.model is None:
            self.model = getattr(self.backend, "model", "unknown")

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        task = prompt.partition("\n")[0].removeprefix("TASK: ").strip() or "other"
        try:
            out = self.backend.complete(prompt, max_tokens=max_tokens)
        except Exception:
            self.failures += 1
            raise
        row = self.by_task.setdefault(task, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += 1
        row["prompt_tokens"] += count_tokens(prompt)
        row["completion_tokens"] += count_tokens(out or "")
        return out

    def _usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.model not in self.prices:
            return None
        pin, pout = self.prices[self.model]
        return (prompt_tokens * pin + completion_tokens * pout) / 1e6

    @property
    def calls(self) -> int:
        return sum(r["calls"] for r in self.by_task.values())

    @property
    def retries(self) -> int:
        return self.by_task.get("repair", {}).get("calls", 0)

    @property
    def prompt_tokens(self) -> int:
        return sum(r["prompt_tokens"] for r in self.by_task.values())

    @property
    def completion_tokens(self) -> int:
        return sum(r["completion_tokens"] for r in self.by_task.values())

    @property
    def cost(self) -> float | None:
        """US$ spent on answered calls; None when the model's price is unknown."""
        return self._usd(self.prompt_tokens, self.completion_tokens)

    def estimate(self, prompts: Sequence[str], *, max_tokens: int) -> dict:
        """Dry run: what sending ``prompts`` would cost at most (completions at ``max_tokens``);
        ``max_cost_usd`` is None when the model's price is unknown."""
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        p_tok = sum(count_tokens(p) for p in prompts)
        c_tok = max_tokens * len(prompts)
        return {"model": self.model, "calls": len(prompts), "prompt_tokens": p_tok,
                "max_completion_tokens": c_tok, "max_cost_usd": self._usd(p_tok, c_tok)}

    def table(self) -> str:
        lines = [f"{'task':18} {'calls':>6} {'prompt tok':>11} {'completion tok':>15}"]
        for task, r in sorted(self.by_task.items()):
            lines.append(f"{task:18} {r['calls']:6d} {r['prompt_tokens']:11d} {r['completion_tokens']:15d}")
        cost = self.cost
        priced = f"cost ${cost:.4f}" if cost is not None else "cost unknown: no price for this model in prices"
        lines.append(f"{'total':18} {self.calls:6d} {self.prompt_tokens:11d} {self.completion_tokens:15d}"
                     f"   {priced} ({self.model})")
        if self.failures:
            lines.append(f"{self.failures} failed call(s), not charged")
        return "\n".join(lines)
