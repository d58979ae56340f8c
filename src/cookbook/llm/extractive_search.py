"""The offline stand-in's answers to the DRIFT and LazyGraphRAG-style prompts
(notebooks/11_drift_and_lazy_search.ipynb): what :class:`~cookbook.llm.extractive.ExtractiveLLM` answers to
``drift_primer``, ``drift_local`` and ``relevance_test``.

It is a stand-in, not a model: an intermediate answer is the evidence sentences that share the most words with the
question; its score is the share of the question's words the best sentence holds (0-100); a follow-up query is the
question restated around one of those sentences (so a local search of it matches the entities that sentence names),
where a model would ask a new question; a primer with no evidence sentence asks the question itself. A relevance
rating is the best sentence's word share on GraphRAG's 0-5 scale, and 0 when it shares only one of the question's
several words: the lazy search tests only text units sharing a question word, so one shared word is no evidence
of relevance (rated 1, it passed every test at GraphRAG's threshold 1). Notebook 11 says what this leaves unshown.

>>> import json
>>> from cookbook.llm.prompts import parse_prompt, prompt
>>> sec = parse_prompt(prompt("drift_primer", question="Who mines coal?", reports=["[R1] Ada mines coal in Brask."]))[1]
>>> answer = json.loads(drift_primer(sec, 200))
>>> answer["intermediate_answer"], answer["score"], answer["follow_up_queries"]
('Ada mines coal in Brask. [R1]', 100, ['Who mines coal? Ada mines coal in Brask.'])
"""

from __future__ import annotations

import json

from ..embed import tokenize
from ..text import split_sentences
from .prompts import cited_lines
from .tokens import count_tokens

__all__ = ["drift_local", "drift_primer", "relevance_test"]


def _ranked(question: str, lines: list[tuple[str, str]]) -> tuple[list[tuple[int, str, str]], int]:
    """Evidence sentences sharing words with ``question`` as ``(overlap, id, sentence)``, most first (ties by id,
    then text), each sentence once; and the number of distinct question words."""
    q = set(tokenize(question))
    out, seen = [], set()
    for sid, text in lines:
        for s in split_sentences(text):
            overlap = len(q & set(tokenize(s)))
            if overlap and s not in seen:
                seen.add(s)
                out.append((overlap, sid, s))
    out.sort(key=lambda x: (-x[0], x[1], x[2]))
    return out, len(q)


def _clip(sentence: str, words: int = 30) -> str:
    """A sentence cut to its first ``words`` words (a follow-up query stays a question, not a paragraph)."""
    cut = sentence.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


def _answer(question: str, lines, max_tokens: int, key: str, follow_ups: int = 3, ask_anyway: bool = False) -> str:
    ranked, n_q = _ranked(question, lines)
    kept, used = [], 0
    for _, sid, s in ranked:
        cost = count_tokens(s) + 3
        if used + cost > max_tokens // 2:
            break
        kept.append(f"{s} [{sid}]")
        used += cost
    score = round(100 * ranked[0][0] / n_q) if ranked and n_q else 0
    obj = {key: " ".join(kept) if kept else "The data do not answer this question.", "score": int(score),
           "follow_up_queries": [f"{question} {_clip(s)}" for _, _, s in ranked[:follow_ups]] or
           ([question] if ask_anyway else [])}
    text = json.dumps(obj, sort_keys=True)
    while count_tokens(text) > max_tokens and obj["follow_up_queries"]:
        obj["follow_up_queries"].pop()
        text = json.dumps(obj, sort_keys=True)
    return text


def drift_primer(sec: dict, max_tokens: int) -> str:
    """The answer to a ``drift_primer`` prompt's sections (QUESTION, REPORTS): JSON with the intermediate answer,
    its score and up to three follow-up queries; reports without an evidence sentence score 0 and ask the question
    itself (the stand-in cannot write a sharper one).

    >>> answer = json.loads(drift_primer({"QUESTION": "Who mines coal?", "REPORTS": "[R1] Bo sells fish."}, 100))
    >>> answer["score"], answer["follow_up_queries"]
    (0, ['Who mines coal?'])
    """
    return _answer(sec.get("QUESTION", ""), cited_lines(sec.get("REPORTS", "")), max_tokens, "intermediate_answer",
                   ask_anyway=True)


def drift_local(sec: dict, max_tokens: int) -> str:
    """The answer to a ``drift_local`` prompt's sections (QUESTION and local search's four tables): JSON with the
    response, its score and up to two follow-up queries.

    >>> from cookbook.llm.prompts import parse_prompt, prompt
    >>> p = prompt("drift_local", question="Where does Ada work?", entities=[],
    ...            relationships=["[r0] Ada works for Acme."], sources=[], reports=[])
    >>> json.loads(drift_local(parse_prompt(p)[1], 200))["response"]
    'Ada works for Acme. [r0]'
    """
    lines = [x for name in ("ENTITIES", "RELATIONSHIPS", "SOURCES", "REPORTS") for x in cited_lines(sec.get(name, ""))]
    return _answer(sec.get("QUESTION", ""), lines, max_tokens, "response", follow_ups=2)


def relevance_test(sec: dict, max_tokens: int) -> str:
    """The answer to a ``relevance_test`` prompt's sections (QUESTION, TEXT): the share of the question's words
    the best sentence of the text units holds, on GraphRAG's 0-5 scale; 0 when that is one word of a question of
    several (the lazy search tests only text units sharing a question word: one shared word is no evidence).

    >>> relevance_test({"QUESTION": "Who mines coal?", "TEXT": "[d1] Ada mines coal."}, 60)
    '{"rating": 5, "reason": "its best sentence shares 2 of the question\\'s 2 words"}'
    >>> json.loads(relevance_test({"QUESTION": "Which firms mine coal in Brask?", "TEXT": "[d1] Bo sells coal."}, 60))
    {'rating': 0, 'reason': "its best sentence shares 1 of the question's 4 words"}
    """
    ranked, n_q = _ranked(sec.get("QUESTION", ""), cited_lines(sec.get("TEXT", "")))
    best = ranked[0][0] if ranked else 0
    return json.dumps({"rating": round(5 * best / n_q) if n_q and best >= min(2, n_q) else 0,
                       "reason": f"its best sentence shares {best} of the question's {n_q} words"}, sort_keys=True)
