"""The offline, deterministic stand-in for a language model: :class:`ExtractiveLLM` reads the structured
sections that :func:`cookbook.llm.prompts.prompt` writes (``TASK:`` line, ``## SECTION`` blocks, ``[id] text``
lines) and answers from them by extraction. Summaries are the most central sentences (PageRank over a
sentence-similarity graph), map scores come from word overlap with the question, answers are assembled from
the best evidence; graph extraction is :mod:`cookbook.llm.extractive_graph`. It is not a model: it cannot
paraphrase, infer or judge, and the notebooks say what that leaves unshown. Taught in
notebooks/04_community_reports.ipynb and notebooks/05_map_reduce_answering.ipynb.

>>> from cookbook.llm.prompts import prompt
>>> p = prompt("map", question="Which trades matter?", reports=["[C1] The mining trade is central."])
>>> ExtractiveLLM().complete(p, max_tokens=200)
'{"points": [{"description": "The mining trade is central.", "reports": ["C1"], "score": 50}]}'
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
from scipy import sparse as sp

from .._validate import integer
from ..embed import TfidfVectorizer, tokenize
from ..linalg.ppr import personalized_pagerank, transition_matrix
from ..text import split_sentences
from . import extractive_search
from .base import LLMUnavailable
from .extractive_graph import GraphStandIn
from .extractive_report import write_report
from .json_answers import parse_json
from .prompts import cited_lines, parse_prompt
from .tokens import count_tokens, pack_lines

__all__ = ["ExtractiveLLM"]


class ExtractiveLLM:
    """Deterministic, offline "LLM" that answers prompts built by :func:`prompt` by extraction.
    Taught in notebooks/04_community_reports.ipynb and notebooks/05_map_reduce_answering.ipynb.

    >>> from cookbook.llm.prompts import prompt
    >>> p = prompt("answer", question="Where is the mine?", sources=["[D1] The mine is in Brask. Fish swim."])
    >>> ExtractiveLLM().complete(p, max_tokens=50)
    'The mine is in Brask. [D1]'
    """

    model = "extractive"

    def __init__(self, *, gazetteer=None, types=None, max_records: int | None = 5):
        # Graph extraction only: the gazetteer and entity types stand in for a model's knowledge of names;
        # max_records caps the records of one answer (None: no cap but max_tokens).
        self.max_records = None if max_records is None else integer(max_records, "max_records")
        self.graph = GraphStandIn(gazetteer, types or {}, max_records=max_records) if gazetteer else None

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The extractive answer to ``prompt``, as the task in its ``TASK:`` line asks.

        >>> from cookbook.llm.prompts import prompt
        >>> p = prompt("reduce", question="Why?", points=["[R1] Trade grew."])
        >>> print(ExtractiveLLM().complete(p, max_tokens=50))
        Key points from the community reports:
        - [R1] Trade grew.
        """
        integer(max_tokens, "max_tokens")
        task, sec = parse_prompt(prompt)
        if task == "judge":  # a verdict needs a reader; an extractive rule would only make one up
            raise LLMUnavailable("ExtractiveLLM, the offline stand-in, cannot judge: comparing two answers needs a "
                                 "real model (LLM=\"openai\"); it gives no verdict")
        handler = {"community_report": self._report, "map": self._map, "reduce": self._reduce,
                   "answer": self._answer, "local_search": self._local_search, "repair": self._repair,
                   "extract_graph": self._extract_graph, "glean": self._glean,
                   "rate_relevance": self._rate, "drift_primer": extractive_search.drift_primer,
                   "drift_local": extractive_search.drift_local, "relevance_test": extractive_search.relevance_test,
                   "extract_claims": self._extract_claims}.get(task)
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
        return _fit(write_report(sec, self._central_sentences), max_tokens, "findings")

    def _map(self, sec, max_tokens):
        q = set(tokenize(sec.get("QUESTION", "")))
        points = []
        for rid, text in cited_lines(sec.get("REPORTS", "")):
            scored = []
            for s, words in _sentence_words(text):
                overlap = len(q & words) / len(q) if q else 0.0
                if overlap > 0:
                    scored.append((round(100 * overlap), s))
            for score, s in sorted(scored, key=lambda x: (-x[0], x[1]))[:3]:
                points.append({"description": s, "score": int(score), "reports": [rid]})
        return _fit({"points": points}, max_tokens, "points")

    def _rate(self, sec, max_tokens):
        # The share of the question's words the report's best sentence shares, on GraphRAG's 0-5 scale.
        q = set(tokenize(sec.get("QUESTION", "")))
        best = max((len(q & words) for _, words in _sentence_words(sec.get("REPORT", ""))), default=0)
        rating = round(5 * best / len(q)) if q else 0
        return json.dumps({"rating": rating, "reason": f"its best sentence shares {best} of the question's "
                                                       f"{len(q)} words"}, sort_keys=True)

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
        lines = [x for name in ("ENTITIES", "RELATIONSHIPS", "CLAIMS", "SOURCES", "REPORTS")
                 for x in cited_lines(sec.get(name, ""))]
        return self._extract_answer(sec.get("QUESTION", ""), lines, max_tokens)

    @staticmethod
    def _extract_answer(question, lines, max_tokens):
        q = set(tokenize(question))
        scored = []
        for sid, text in lines:
            for s, words in _sentence_words(text):  # memoised: the same documents recur across questions and budgets
                overlap = len(q & words)
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

    def _stand_in(self) -> GraphStandIn:
        if self.graph is None:
            raise ValueError("ExtractiveLLM needs a gazetteer for graph extraction: "
                             "ExtractiveLLM(gazetteer=corpus.gazetteer(), types={entity id: type})")
        return self.graph

    def _extract_graph(self, sec, max_tokens):
        return self._stand_in().extract(sec, max_tokens)

    def _extract_claims(self, sec, max_tokens):
        return self._stand_in().claims(sec, max_tokens)

    def _glean(self, sec, max_tokens):
        return self._stand_in().glean(sec, max_tokens)

    def _repair(self, sec, max_tokens):
        output = sec.get("OUTPUT", "")
        try:
            return json.dumps(parse_json(output), sort_keys=True)
        except ValueError:  # cut short, as a real model would repair it: keep the points written out in full
            return json.dumps({"points": _whole_points(output)}, sort_keys=True)


@lru_cache(maxsize=16384)
def _sentence_words(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The sentences of a report line or a document with their word sets: every question's map and rating calls
    read the same reports, and flat retrieval's answers the same documents, so each is split and tokenised once.

    >>> sentence, words = _sentence_words("Ada mines coal. Bo sells it.")[1]
    >>> sentence, sorted(words)
    ('Bo sells it.', ['bo', 'sell'])
    """
    return tuple((s, frozenset(tokenize(s))) for s in split_sentences(text))


def _whole_points(text: str) -> list[dict]:
    """The point objects of a ``{"points": [...`` answer that are complete before it was cut off.

    >>> _whole_points('{"points": [{"description": "a", "score": 5}, {"descr')
    [{'description': 'a', 'score': 5}]
    """
    start = text.find("[", text.find('"points"'))
    if '"points"' not in text or start < 0:
        return []
    decoder, points, i = json.JSONDecoder(), [], start + 1
    while True:
        while i < len(text) and text[i] in " \n\t\r,":
            i += 1
        try:
            obj, i = decoder.raw_decode(text, i)
        except ValueError:
            return points
        if isinstance(obj, dict):
            points.append(obj)


def _fit(obj: dict, max_tokens: int, shrink: str) -> str:
    """Serialise ``obj``, keeping the longest prefix of the list ``obj[shrink]`` that fits ``max_tokens`` (found
    by bisection: a shorter prefix never serialises to more tokens), none if even one item does not fit.

    >>> _fit({"points": ["a" * 40, "b" * 40, "c" * 40]}, 25, "points").count('"b')
    1
    """
    items = obj[shrink]

    def text(k):
        return json.dumps({**obj, shrink: items[:k]}, sort_keys=True)

    if count_tokens(text(len(items))) <= max_tokens:
        return text(len(items))
    low, high = 0, len(items) - 1  # the answer lies in [low, high]: k = 0 always "fits" (nothing more to drop)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(text(mid)) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return text(low)
