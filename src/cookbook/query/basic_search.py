"""Basic search (GraphRAG's name for plain retrieval-augmented generation): the top passages of a retriever's
ranking, by count or within a token budget, answered directly. The baseline every graph method is measured
against. Taught in notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._validate import integer
from ..arrays import top_k
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens
from .global_search import Answer

__all__ = ["RETRIEVERS", "basic_search", "flat_search", "rankings"]

RETRIEVERS = ("flat", "BM25", "PPR")  # the passage rankings a graph method's strongest flat baseline is chosen from


def basic_search(question: str, ranked_ids: Sequence[str], doc_text: Mapping[str, str], llm, *, k: int | None = 5,
                 budget: int | None = None, max_tokens: int = 500) -> Answer:
    """Answer ``question`` from the documents of any retriever's ranking (``ranked_ids``, best first, texts in
    ``doc_text``): the first ``k`` of them (None: no count limit), and with ``budget`` only as many as fit
    that many tokens (GraphRAG basic search's ``max_context_tokens``; a comparison at equal cost sets it to
    what the method compared with read). At least one document is read. ``sources`` lists those read.

    >>> from cookbook.llm import ExtractiveLLM
    >>> text = {"d1": "Ada founded Acme in Oslo.", "d2": "Bo sells fish.", "d3": "Ada met Bo."}
    >>> a = basic_search("Who founded Acme?", ["d1", "d3", "d2"], text, ExtractiveLLM(), k=None, budget=16)
    >>> a.sources, a.text
    (['d1', 'd3'], 'Ada founded Acme in Oslo. [d1]')
    """
    if k is not None:
        k = integer(k, "k")
    if budget is not None:
        budget = integer(budget, "budget", what="a positive number of tokens")
    chosen, lines, used = [], [], 0
    for d in ranked_ids[:k] if k is not None else ranked_ids:
        line = f"[{d}] {doc_text[d]}"
        cost = count_tokens(line) + 1
        if budget is not None and chosen and used + cost > budget:
            break
        chosen.append(d)
        lines.append(line)
        used += cost
    text = llm.complete(prompt("answer", question=question, sources=lines), max_tokens=max_tokens)
    return Answer(question, text, sources=chosen)


def flat_search(question: str, doc_ids: Sequence[str], doc_texts: Sequence[str], embedder, index, llm, *,
                k: int = 5, budget: int | None = None, max_tokens: int = 500) -> Answer:
    """The dense baseline: the ``k`` documents most similar to the question (``embedder`` and its ``index``),
    answered directly (:func:`basic_search`; ``budget`` as there).

    >>> from cookbook.embed import CosineIndex, LSAEmbedder
    >>> from cookbook.llm import ExtractiveLLM
    >>> texts = ["Ada founded Acme in Oslo.", "Bo sells fish.", "Cy builds robots in Rome."]
    >>> emb = LSAEmbedder(dim=2).fit(texts)
    >>> index = CosineIndex(emb.transform(texts))
    >>> flat_search("Who founded Acme?", ["d1", "d2", "d3"], texts, emb, index, ExtractiveLLM(), k=1).text
    'Ada founded Acme in Oslo. [d1]'
    """
    k = integer(k, "k")
    rows, _ = index.search(embedder.transform([question])[0], k)
    ranked = [doc_ids[int(i)] for i in rows]
    return basic_search(question, ranked, dict(zip(doc_ids, doc_texts)), llm, k=k, budget=budget,
                        max_tokens=max_tokens)


def rankings(question: str, depth: int, hippo, bm25, doc_ids: Sequence[str], *, seeds: int = 10,
             retrievers: Sequence[str] = RETRIEVERS) -> dict[str, list[str]]:
    """The first ``depth`` passage ids of each of :data:`RETRIEVERS`' rankings for ``question``, best first:
    **flat**, the dense ranking of ``hippo`` (a :class:`cookbook.query.hipporag.HippoRetriever`,
    ``dense_hits``); **BM25**, ``bm25`` (:class:`cookbook.embed.BM25` fitted on the texts of ``doc_ids``, in that
    order; ties by position); **PPR**, HippoRAG's walk (``hippo.retrieve``) seeded by flat's first ``seeds`` hits,
    as notebook 06 seeds it; a ``depth`` over the number of passages ranks them all. Only the ``retrievers`` named
    are computed (PPR is the costly one). Notebooks 08 and 11 choose the strongest of the three on a dev half,
    each handing its ranking to :func:`basic_search` within the method's tokens.

    >>> from cookbook.data.records import Document
    >>> from cookbook.data.gazetteer import gazetteer_mentions
    >>> from cookbook.embed import BM25
    >>> from cookbook.query.hipporag import HippoRetriever
    >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Bo met Cy.", ((0, 10),), 0),
    ...         Document("p3", "Cy sat.", ((0, 7),), 0)]
    >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
    >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz, dense="lsa")
    >>> r = rankings("Who met Ada?", 2, hr, BM25([d.text for d in docs]), ["p1", "p2", "p3"])
    >>> sorted(r), r["BM25"], r["PPR"]
    (['BM25', 'PPR', 'flat'], ['p1', 'p2'], ['p1', 'p2'])
    >>> rankings("Who met Ada?", 9, hr, BM25([d.text for d in docs]), ["p1", "p2", "p3"], retrievers=["BM25"])
    {'BM25': ['p1', 'p2', 'p3']}
    """
    depth, seeds = min(integer(depth, "depth"), len(doc_ids)), integer(seeds, "seeds")  # at most every passage
    unknown = sorted(set(retrievers) - set(RETRIEVERS))
    if unknown or not retrievers:
        raise ValueError(f"retrievers must name some of {RETRIEVERS}, got {list(retrievers)!r}")
    dense = hippo.dense_hits(question, max(depth, seeds)) if {"flat", "PPR"} & set(retrievers) else {}
    out = {}
    if "flat" in retrievers:
        out["flat"] = list(dense)[:depth]
    if "BM25" in retrievers:
        out["BM25"] = [doc_ids[i] for i in top_k(bm25.scores(question), depth)]
    if "PPR" in retrievers:
        out["PPR"] = hippo.retrieve(question, depth, dense_hits=dict(list(dense.items())[:seeds]))
    return out
