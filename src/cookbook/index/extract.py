"""Entity mention extraction, the first indexing step: gazetteer matching (:func:`gazetteer_mentions`, the
matcher of :mod:`cookbook.data.gazetteer`, listed here as the step it is, with :func:`ambiguous_mentions`, what
it could not resolve) and a capitalised-span contrast (:func:`capitalised_mentions`), scored against gold spans
(:func:`score_mentions`). Names are compared white space folded and, unless ``case_sensitive``, case folded.

Documents are given as a mapping ``{doc_id: text}`` or a sequence of objects with ``.id`` and
``.text`` (e.g. :class:`cookbook.data.records.Document`). Mentions come back as
:class:`cookbook.data.records.Mention` (doc id, character span, entity id, surface).
Taught in notebooks/01_entity_cooccurrence.ipynb.

>>> from cookbook.data.records import build_gazetteer
>>> gaz = build_gazetteer([("E1", ["Ada Vell", "Vell"]), ("E2", ["Vell Works"])])
>>> [(m.surface, m.entity_id) for m in gazetteer_mentions({"d": "Ada Vell met Vell Works."}, gaz)]
[('Ada Vell', 'E1'), ('Vell Works', 'E2')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..data.gazetteer import AMBIGUITY_POLICIES, ambiguous_mentions, compile_gazetteer, gazetteer_mentions
from ..data.records import Mention, doc_pairs
from ..metrics import precision_recall

__all__ = ["AMBIGUITY_POLICIES", "ambiguous_mentions", "capitalised_mentions", "gazetteer_mentions", "score_mentions"]

# A run of capitalised words; a one-letter initial may carry its period ("L. Selel").
_CAPS = re.compile(r"\b[A-Z][\w'-]*(?:(?<=\b[A-Z])\.)?(?:\s+[A-Z][\w'-]*(?:(?<=\b[A-Z])\.)?)*")


def capitalised_mentions(docs, gazetteer: Mapping[str, Iterable[str]] | None = None, *,
                         case_sensitive: bool = False) -> list[Mention]:
    """Every run of capitalised words is a mention (finds unknown names; many false positives).

    The entity id is the gazetteer's when the surface names exactly one entity (compared as
    :func:`gazetteer_mentions` compares, ``case_sensitive`` included; a full name wins over an alias), else
    ``""``. Returns :class:`cookbook.data.records.Mention` objects in document order. Taught in
    notebooks/01_entity_cooccurrence.ipynb.

    >>> [(m.surface, m.entity_id) for m in capitalised_mentions({"d": "Then Ada Vell met Bo."}, {"bo": ["E2"]})]
    [('Then Ada Vell', ''), ('Bo', 'E2')]
    """
    compiled = compile_gazetteer(gazetteer, case_sensitive=case_sensitive) if gazetteer else None
    out = []
    for doc_id, text in doc_pairs(docs):
        for m in _CAPS.finditer(text):
            ids = compiled.candidates(m.group()) if compiled else []
            out.append(Mention(doc_id, m.start(), m.end(), ids[0] if len(ids) == 1 else "", m.group()))
    return out


def score_mentions(predicted: Iterable[Mention], gold: Iterable[Mention], *, match: str = "entity") -> dict:
    """Precision, recall and F1 of ``predicted`` against ``gold``.

    ``match="span"`` counts a prediction correct when its (doc, start, end) is a gold span;
    ``match="entity"`` also requires the same entity id. Returns a dict with ``precision``, ``recall``,
    ``f1`` (floats) and ``tp``, ``fp``, ``fn`` (ints). Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> from cookbook.data.records import Mention
    >>> gold = [Mention("d", 0, 3, "E1", "Ada"), Mention("d", 8, 10, "E2", "Bo")]
    >>> pred = [Mention("d", 0, 3, "E1", "Ada"), Mention("d", 8, 10, "E9", "Bo")]
    >>> score_mentions(pred, gold)["f1"], score_mentions(pred, gold, match="span")["f1"]
    (0.5, 1.0)
    """
    if match not in ("span", "entity"):
        raise ValueError(f"unknown match {match!r}; expected 'span' or 'entity'")

    def key(m):
        return (m.doc_id, m.start, m.end) + ((m.entity_id,) if match == "entity" else ())

    return precision_recall({key(m) for m in predicted}, {key(m) for m in gold})
