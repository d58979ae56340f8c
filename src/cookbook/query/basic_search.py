"""Basic search (GraphRAG's name for plain retrieval-augmented generation): the top passages of a retriever's
ranking, by count or within a token budget, answered directly. The baseline every graph method is measured
against. Taught in notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._validate import integer
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens
from .global_search import Answer

__all__ = ["basic_search", "flat_search"]


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
