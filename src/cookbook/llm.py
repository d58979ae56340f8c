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
- :class:`CachedLLM` wraps any backend with an on-disk response cache keyed by (model, prompt, parameters),
  so a rerun, or a crashed run resumed, sends nothing it already paid for.

Speed with a real model: a step with many independent calls (map batches, community reports) runs them
through :func:`ordered_map`, a bounded thread pool whose results come back in input order however the calls
finish; its width is the backend's ``concurrency`` (1 for the CPU-bound extractive backend, 8 by default for
an endpoint), and :class:`RateLimiter` keeps an endpoint within its requests and tokens per minute (Microsoft
GraphRAG's ``concurrent_requests``, ``requests_per_minute``, ``tokens_per_minute``).

The prompt format is :mod:`cookbook.prompts`; token counting and the :class:`TokenLedger` are
:mod:`cookbook.tokens` (``TokenLedger`` and ``split_sentences`` are re-exported here, where notebooks 04
and 05 first met them). Taught in notebooks/04_community_reports.ipynb and
notebooks/05_map_reduce_answering.ipynb.

>>> from cookbook.prompts import prompt
>>> p = prompt("map", question="Which trades matter?", reports=["[C1] The mining trade is central."])
>>> ExtractiveLLM().complete(p, max_tokens=200)
'{"points": [{"description": "The mining trade is central.", "reports": ["C1"], "score": 50}]}'
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Protocol, runtime_checkable

import numpy as np
from scipy import sparse as sp

from ._validate import integer, number
from .cache import read_entry, write_entry
from .embed import TfidfVectorizer, tokenize
from .extract import compile_gazetteer, gazetteer_mentions
from .ppr import personalized_pagerank, transition_matrix
from .prompts import cited_lines, parse_json, parse_prompt, split_sentences
from .tokens import TokenLedger, count_tokens, pack_lines

__all__ = ["FAULTS", "LLM", "CachedLLM", "ExtractiveLLM", "FaultInjectingLLM", "LLMUnavailable",
           "OpenAICompatibleLLM", "RateLimiter", "TokenLedger", "complete_many", "concurrency_of", "ordered_map",
           "split_sentences"]


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

    def __init__(self, *, gazetteer=None, types=None, max_records: int | None = 5):
        # Graph extraction only: the gazetteer and entity types stand in for a model's knowledge of names;
        # max_records caps the records of one answer (None: no cap but max_tokens).
        self.gazetteer = compile_gazetteer(gazetteer) if gazetteer else None
        self.types = dict(types or {})
        self.max_records = None if max_records is None else integer(max_records, "max_records")
        # What the records found in a text depend on: stand-ins that know the same names (e.g. at different
        # caps) share what they found (see _graph_records) through one canonical copy, compared by identity.
        knows = (frozenset((k, tuple(v)) for k, v in self.gazetteer.lookup.items()) if self.gazetteer else None,
                 frozenset(self.types.items()))
        with _FOUND_LOCK:
            self._knows = _KNOWS.setdefault(knows, knows)
            _evict_oldest(_KNOWS, 8)

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
                   "answer": self._answer, "local_search": self._local_search, "repair": self._repair,
                   "extract_graph": self._extract_graph, "glean": self._glean}.get(task)
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

    # ---- graph extraction (notebooks/02_graph_extraction.ipynb): a stand-in, not a language model

    def _graph_records(self, sec) -> tuple[list, list]:
        """Every entity and relationship record the stand-in finds in the TEXT: entities of ENTITY_TYPES by
        the gazetteer (first mention, in text order), relations by generic phrasings between two mentions in
        one sentence (``_PHRASES``) and by labelled lists (``"<name> — <label>: <items>"``, ``_LIST_CUES``).
        The last texts' records are kept: a unit's extraction and gleaning prompts, and the same unit at other
        caps, repeat its TEXT."""
        if self.gazetteer is None:
            raise ValueError("ExtractiveLLM needs a gazetteer for graph extraction: "
                             "ExtractiveLLM(gazetteer=corpus.gazetteer(), types={entity id: type})")
        text, entity_types = sec.get("TEXT", ""), sec.get("ENTITY_TYPES", "")
        key = (text, entity_types, self._knows)
        with _FOUND_LOCK:
            found = _FOUND.get(key)
        if found is None:
            found = self._find_records(text, entity_types)
            with _FOUND_LOCK:
                _FOUND[key] = found
                _evict_oldest(_FOUND, 64)
        return found

    def _find_records(self, text: str, entity_types: str) -> tuple[list, list]:
        from .graph_extraction import EntityRecord, RelationshipRecord

        wanted = {t.strip() for t in entity_types.split(",")}
        ms = [m for m in gazetteer_mentions({"t": text}, self.gazetteer) if self.types.get(m.entity_id) in wanted]
        spans, at = [], 0
        for s in split_sentences(text):
            start = text.find(s, at)
            spans.append((start, start + len(s), s))
            at = start + len(s)
        starts = [a for a, _, _ in spans]

        def sentence_of(m):  # index of the sentence holding the mention's start, or -1
            i = bisect.bisect_right(starts, m.start) - 1
            return i if i >= 0 and m.start < spans[i][1] else -1

        where = [sentence_of(m) for m in ms]
        ents, first = [], {}
        for m, i in zip(ms, where):
            if m.entity_id not in first:
                first[m.entity_id] = m
                words = (spans[i][2] if i >= 0 else text).split()
                desc = " ".join(words[:25]) + (" …" if len(words) > 25 else "")
                ents.append(EntityRecord(m.surface, self.types[m.entity_id], desc))
        rels, seen = [], set()

        def add(src, tgt, pred, desc):
            key = (src.entity_id, pred, tgt.entity_id)
            if src.entity_id != tgt.entity_id and key not in seen:
                seen.add(key)
                rels.append(RelationshipRecord(src.surface, tgt.surface, pred, desc, 9.0))

        typ = self.types
        inside: dict[int, list] = {}
        for m, i in zip(ms, where):
            if i >= 0:
                inside.setdefault(i, []).append(m)
        for i in sorted(inside):
            group, s = inside[i], spans[i][2]
            for j, x in enumerate(group):
                for y in group[j + 1:]:
                    phrases = _PHRASES_BY_TYPES.get((typ[x.entity_id], typ[y.entity_id]))
                    if not phrases:
                        continue
                    between = text[x.end:y.start]
                    for pattern, pred, passive in phrases:
                        if pattern.fullmatch(between):
                            add(y, x, pred, s) if passive else add(x, y, pred, s)
        head = _LIST_HEAD.match(text)
        if head and ms and ms[0].start == 0:
            label = head.group(2)
            for pattern, pred, t_head, t_item, reverse in _LIST_CUES:
                if pattern.search(label) and typ[ms[0].entity_id] == t_head:
                    items = [m for m in ms[1:] if m.start >= head.end() and typ[m.entity_id] == t_item]
                    for m in items[:1] if reverse else items:
                        desc = f"{ms[0].surface}'s {label} lists {m.surface}."
                        add(m, ms[0], pred, desc) if reverse else add(ms[0], m, pred, desc)
        return ents, rels

    def _emit(self, ents, rels, max_tokens) -> str:
        """At most ``max_records`` records (entities first, as the format lists them), within ``max_tokens``:
        the output cap that leaves work for gleaning, as a real model's answer length does."""
        from .graph_extraction import format_records

        if self.max_records is not None:
            ents, rels = ents[:self.max_records], rels[:max(0, self.max_records - len(ents))]
        lines = format_records(ents, rels).splitlines() if ents or rels else []
        while lines and count_tokens("\n".join(lines) + "\n<|COMPLETE|>") > max_tokens:
            lines.pop()
        return "\n".join([*lines, "<|COMPLETE|>"])

    def _extract_graph(self, sec, max_tokens):
        return self._emit(*self._graph_records(sec), max_tokens)

    def _glean(self, sec, max_tokens):
        from .graph_extraction import parse_extraction

        ents, rels = self._graph_records(sec)
        prev_e, prev_r, _ = parse_extraction(sec.get("PREVIOUS", ""))
        done_e = {(e.name.lower(), e.type) for e in prev_e}
        done_r = {(r.source.lower(), r.relation, r.target.lower()) for r in prev_r}
        return self._emit([e for e in ents if (e.name.lower(), e.type) not in done_e],
                          [r for r in rels if (r.source.lower(), r.relation, r.target.lower()) not in done_r],
                          max_tokens)


# Relation phrasings the extraction stand-in knows: (regex the text between two mentions must match,
# predicate, type of the first mention, type of the second, passive: the second mention is the subject).
# Generic English wordings of the world's predicates, not its gold facts.
_PHRASES = [
    (r" (?:works?|worked) (?:for|at) | (?:is|was) employed (?:by|at) | (?:is|was) on the staff of ", "works_for",
     "person", "org", False),
    (r" (?:lives?|lived|resides?|resided) in | (?:has|had) a home in ", "lives_in", "person", "place", False),
    (r" (?:is|was) (?:headquartered|based) in | (?:stands?|stood) in | (?:has|had) (?:its )?offices in ",
     "headquartered_in", "org", "place", False),
    (r" (?:makes|made|produces|produced|manufactures|manufactured) (?:the |a |an )?", "makes", "org", "product", False),
    (r" (?:is|was) (?:made|produced|manufactured) by ", "makes", "product", "org", True),
    (r" (?:is|was) an? (?:\w+ )?friend of | (?:often |regularly )?(?:meets|met) | knows ", "knows",
     "person", "person", False),
]
# Labelled lists ("<name> — <label>: <items>", the Factbook's field passages): (regex on the label,
# predicate, type of the named heading, type of the items, reverse: the first item is the subject).
_LIST_CUES = [
    (r"boundar|border", "borders", "country", "country", False),
    (r"export.*partner", "exports_to", "country", "country", False),
    (r"organi[sz]ation participation|membership", "member_of", "country", "org", False),
    (r"industr", "has_industry", "country", "industry", False),
    (r"rivers", "shares_river", "country", "river", False),
    (r"^capital$", "capital_of", "country", "capital", True),
]
# Records the stand-ins found, by (TEXT, ENTITY_TYPES, what the stand-in knows), and the canonical copies of
# what stand-ins know; the oldest leave first.
_FOUND: dict[tuple, tuple[list, list]] = {}
_KNOWS: dict[tuple, tuple] = {}
_FOUND_LOCK = threading.Lock()


def _evict_oldest(memo: dict, size: int) -> None:
    while len(memo) > size:
        del memo[next(iter(memo))]

# Compiled once: the phrasings by the types of the two mentions (in _PHRASES' order), the list cues, the heading.
_PHRASES_BY_TYPES: dict[tuple[str, str], list] = {}
for _pattern, _pred, _t1, _t2, _passive in _PHRASES:
    _PHRASES_BY_TYPES.setdefault((_t1, _t2), []).append((re.compile(_pattern), _pred, _passive))
_LIST_CUES = [(re.compile(pattern, re.I), *rest) for pattern, *rest in _LIST_CUES]
_LIST_HEAD = re.compile(r"(.+?) — ([^:]+):")


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
    ``concurrency`` is how many calls a step may have in flight (:func:`concurrency_of`);
    ``requests_per_minute`` / ``tokens_per_minute`` (None: no limit) hold every request, before it is sent,
    within those budgets (:class:`RateLimiter`; a request is charged its prompt plus ``max_tokens``).
    ``temperature`` and ``seed`` (None: not sent) go to the server and into :attr:`params`.
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


# ---------------------------------------------------------------- fault injection

FAULTS = ("timeout", "server_error", "malformed", "empty", "overlong")


class FaultInjectingLLM:
    """Wraps a backend and injects faults, for testing what the pipeline survives.

    ``schedule`` lists one fault (or None) per call, in order; after it runs out, each call fails with
    probability ``rate`` (seeded) with a fault drawn from ``kinds``. ``timeout`` and ``server_error``
    raise (``TimeoutError``, ``ConnectionError``); ``malformed`` cuts the real output in half;
    ``empty`` returns ""; ``overlong`` appends prose well past ``max_tokens``. ``injected`` counts them.
    It has no ``concurrency`` of its own, so steps call it one call at a time and the faults land on the
    same calls on every run. Taught in notebooks/05_map_reduce_answering.ipynb.

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
        self._lock = threading.Lock()  # one draw at a time when a caller asks for concurrency
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
        with self._lock:
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


# ---------------------------------------------------------------- concurrency, rate limits, response cache

def concurrency_of(llm, concurrency: int | None = None) -> int:
    """How many calls a step sends to ``llm`` at once: ``concurrency`` when given, else the backend's own
    ``concurrency`` attribute (wrappers such as :class:`TokenLedger` pass their inner backend's on), else 1.

    >>> concurrency_of(ExtractiveLLM()), concurrency_of(ExtractiveLLM(), 4)
    (1, 4)
    >>> concurrency_of(ExtractiveLLM(), 0)
    Traceback (most recent call last):
    ...
    ValueError: concurrency must be a positive integer, got 0
    """
    return integer(getattr(llm, "concurrency", 1) if concurrency is None else concurrency, "concurrency")


def ordered_map(fn: Callable, items: Iterable, *, concurrency: int) -> list:
    """``[fn(x) for x in items]``, with up to ``concurrency`` calls in flight on a thread pool (the calls
    wait on the network, so threads overlap them). Results are in input order whatever order the calls
    finish in. The first exception ``fn`` raises stops the map: calls not yet started never start, the
    running ones finish, and the exception of the earliest failed item is raised as ``fn`` raised it
    (an :class:`LLMUnavailable` stays one). With ``concurrency=1`` the calls run one by one in this thread.

    >>> ordered_map(lambda x: x * x, range(6), concurrency=3)
    [0, 1, 4, 9, 16, 25]
    >>> ordered_map(lambda x: 1 / x, [1, 0, 2], concurrency=2)
    Traceback (most recent call last):
    ...
    ZeroDivisionError: division by zero
    """
    concurrency = integer(concurrency, "concurrency")
    items = list(items)
    if concurrency == 1 or len(items) <= 1:
        return [fn(x) for x in items]
    failed = threading.Event()
    skipped = object()

    def call(x):
        if failed.is_set():  # an earlier call failed: do not send another request
            return skipped
        try:
            return fn(x)
        except BaseException:
            failed.set()
            raise

    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix="cookbook-llm")
    futures = [pool.submit(call, x) for x in items]
    try:
        wait(futures, return_when=FIRST_EXCEPTION)
    finally:  # also on Ctrl-C: cancel what has not started, let the running calls end
        pool.shutdown(wait=True, cancel_futures=True)
    errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
    if errors:
        raise errors[0]
    return [f.result() for f in futures]


def complete_many(llm: LLM, prompts: Sequence[str], *, max_tokens: int, concurrency: int | None = None
                  ) -> list[str]:
    """``llm``'s completions of ``prompts``, in their order, with :func:`concurrency_of` calls in flight
    (see :func:`ordered_map`); for any step that sends many independent prompts. A backend's exception
    stops the batch and is raised as the backend raised it.

    >>> from cookbook.prompts import prompt
    >>> ps = [prompt("answer", question="Who founded Acme?", sources=[f"[d{i}] Ada{i} founded Acme."])
    ...       for i in range(3)]
    >>> complete_many(ExtractiveLLM(), ps, max_tokens=50, concurrency=2)
    ['Ada0 founded Acme. [d0]', 'Ada1 founded Acme. [d1]', 'Ada2 founded Acme. [d2]']
    """
    integer(max_tokens, "max_tokens")
    n = concurrency_of(llm, concurrency)
    return ordered_map(lambda p: llm.complete(p, max_tokens=max_tokens), prompts, concurrency=n)


class RateLimiter:
    """Holds requests within ``requests_per_minute`` and ``tokens_per_minute`` (None: no limit) over a
    sliding window of the last ``window`` seconds: :meth:`acquire` returns at once while the request fits,
    else sleeps until enough earlier requests have left the window. Thread-safe. ``clock`` and ``sleep``
    are injectable so its accounting can be tested without waiting; ``sent`` and ``waited`` count what
    it let through and how long callers slept.

    >>> now = [0.0]
    >>> limiter = RateLimiter(2, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    >>> [limiter.acquire(10) for _ in range(5)]  # seconds each request waited
    [0.0, 0.0, 60.0, 0.0, 60.0]
    >>> limiter.sent, limiter.waited
    (5, 120.0)
    """

    def __init__(self, requests_per_minute: int | None = None, tokens_per_minute: int | None = None, *,
                 window: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rpm = None if requests_per_minute is None else integer(requests_per_minute, "requests_per_minute")
        self.tpm = None if tokens_per_minute is None else integer(tokens_per_minute, "tokens_per_minute")
        self.window = number(window, "window", low=0, low_open=True)
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._recent: deque[tuple[float, int]] = deque()  # (sent at, tokens) within the window
        self._tokens = 0  # tokens in _recent
        self.sent, self.waited = 0, 0.0

    def _delay(self, now: float, tokens: int) -> float:
        """Seconds until a request of ``tokens`` fits (<= 0: it fits now); called under the lock."""
        while self._recent and self._recent[0][0] + self.window <= now:
            self._tokens -= self._recent.popleft()[1]
        delay = 0.0
        if self.rpm is not None and len(self._recent) >= self.rpm:
            delay = self._recent[len(self._recent) - self.rpm][0] + self.window - now
        if self.tpm is not None and self._tokens + tokens > self.tpm:
            freed = 0
            for at, t in self._recent:  # oldest first: wait until enough of them have left
                freed += t
                if self._tokens - freed + tokens <= self.tpm:
                    delay = max(delay, at + self.window - now)
                    break
        return delay

    def acquire(self, tokens: int = 0) -> float:
        """Wait until a request of ``tokens`` tokens fits the limits, record it, return the seconds waited.
        A request larger than ``tokens_per_minute`` could never be sent: ``ValueError``.

        >>> limiter = RateLimiter(tokens_per_minute=100)
        >>> limiter.acquire(60)
        0.0
        >>> limiter.acquire(101)
        Traceback (most recent call last):
        ...
        ValueError: a request of 101 tokens exceeds tokens_per_minute=100: it could never be sent
        """
        tokens = integer(tokens, "tokens", at_least=0)
        if self.tpm is not None and tokens > self.tpm:
            raise ValueError(f"a request of {tokens} tokens exceeds tokens_per_minute={self.tpm}: "
                             "it could never be sent")
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                delay = self._delay(now, tokens)
                if delay <= 0:
                    self._recent.append((now, tokens))
                    self._tokens += tokens
                    self.sent += 1
                    self.waited += waited
                    return waited
            self._sleep(delay)  # outside the lock: other threads may take their turn meanwhile
            waited += delay


class CachedLLM:
    """Wraps a backend with an on-disk response cache (:func:`cookbook.cache.read_entry` under
    ``$COOKBOOK_CACHE`` or ``~/.cache/graphrag-cookbook``): a prompt answered before, by the same
    ``model`` with the same ``max_tokens`` and generation :attr:`params` (temperature, seed), is read back
    and not sent. The endpoint and the API key are never part of a key or an entry; entries are written
    atomically, and one that cannot be read is recomputed. Failed calls and empty answers are not stored.
    Wrap it in a :class:`TokenLedger` to count the hits and the tokens they saved.

    >>> import tempfile
    >>> from cookbook.prompts import prompt
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> ledger = TokenLedger(CachedLLM(ExtractiveLLM()))
    >>> p = prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."])
    >>> [ledger.complete(p, max_tokens=50) for _ in range(2)]
    ['Ada founded Acme. [d1]', 'Ada founded Acme. [d1]']
    >>> ledger.calls, ledger.hits
    (1, 1)
    >>> del os.environ["COOKBOOK_CACHE"]
    """

    def __init__(self, inner: LLM):
        self.inner = inner
        self.model = getattr(inner, "model", "unknown")
        self.concurrency = getattr(inner, "concurrency", 1)
        self._lock = threading.Lock()
        self.hits, self.misses = 0, 0

    @property
    def params(self) -> dict:
        """The inner backend's generation parameters (``{}`` when it declares none).

        >>> CachedLLM(ExtractiveLLM()).params
        {}
        """
        return dict(getattr(self.inner, "params", {}))

    def key(self, prompt: str, max_tokens: int) -> dict:
        """What an entry is keyed by: model, prompt, ``max_tokens`` and :attr:`params`.

        >>> CachedLLM(ExtractiveLLM()).key("TASK: answer", 50)
        {'model': 'extractive', 'prompt': 'TASK: answer', 'max_tokens': 50, 'params': {}}
        """
        return {"model": self.model, "prompt": prompt, "max_tokens": integer(max_tokens, "max_tokens"),
                "params": self.params}

    def complete_with_hit(self, prompt: str, *, max_tokens: int) -> tuple[str, bool]:
        """``(text, from_cache)``: the cached answer, or the inner backend's (stored when not empty).

        >>> import tempfile
        >>> from cookbook.prompts import prompt
        >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
        >>> cached = CachedLLM(ExtractiveLLM())
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> [cached.complete_with_hit(p, max_tokens=50)[1] for _ in range(2)]
        [False, True]
        >>> del os.environ["COOKBOOK_CACHE"]
        """
        key = self.key(prompt, max_tokens)
        text = read_entry("llm", key)
        if isinstance(text, str):
            with self._lock:
                self.hits += 1
            return text, True
        text = self.inner.complete(prompt, max_tokens=max_tokens)
        with self._lock:
            self.misses += 1
        if text:  # an empty answer is malformed output: ask again next time
            write_entry("llm", key, text)
        return text, False

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The cached answer to ``prompt``, or the inner backend's (see :meth:`complete_with_hit`).

        >>> import tempfile
        >>> from cookbook.prompts import prompt
        >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
        >>> cached = CachedLLM(ExtractiveLLM())
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> cached.complete(p, max_tokens=50) == cached.complete(p, max_tokens=50), cached.hits, cached.misses
        (True, 1, 1)
        >>> del os.environ["COOKBOOK_CACHE"]
        """
        return self.complete_with_hit(prompt, max_tokens=max_tokens)[0]
