"""Basic search (GraphRAG's name for plain retrieval-augmented generation): the ``k`` passages most similar
to the question, answered directly. The baseline every graph method is measured against. Taught in
notebooks/05_map_reduce_answering.ipynb.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._validate import integer
from ..llm.prompts import prompt
from .global_search import Answer

__all__ = ["flat_search"]


def flat_search(question: str, doc_ids: Sequence[str], doc_texts: Sequence[str], embedder, index, llm, *,
                k: int = 5, max_tokens: int = 500) -> Answer:
    """The baseline: the ``k`` documents most similar to the question, answered directly.

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
    ids = [doc_ids[int(i)] for i in rows]
    sources = [f"[{doc_ids[int(i)]}] {doc_texts[int(i)]}" for i in rows]
    text = llm.complete(prompt("answer", question=question, sources=sources), max_tokens=max_tokens)
    return Answer(question, text, sources=ids)
