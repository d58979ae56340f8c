"""Entity mention extraction: an alias gazetteer matcher and a capitalised-span contrast.

Documents are given as a mapping ``{doc_id: text}`` or a sequence of objects with ``.id`` and
``.text`` (e.g. :class:`cookbook.datasets.Document`). Mentions come back as
:class:`cookbook.datasets.Mention` (doc id, character span, entity id, surface).

>>> from cookbook.datasets import build_gazetteer
>>> gaz = build_gazetteer([("E1", ["Ada Vell", "Vell"]), ("E2", ["Vell Works"])])
>>> [(m.surface, m.entity_id) for m in gazetteer_mentions({"d": "Ada Vell met Vell Works."}, gaz)]
[('Ada Vell', 'E1'), ('Vell Works', 'E2')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter

from .metrics import precision_recall
from .records import Mention

__all__ = ["AMBIGUITY_POLICIES", "CompiledGazetteer", "capitalised_mentions", "compile_gazetteer", "doc_ids",
           "doc_pairs", "gazetteer_mentions", "score_mentions"]

_TOKEN = re.compile(r"\w+|[^\w\s]")
# A run of capitalised words; a one-letter initial may carry its period ("L. Selel").
_CAPS = re.compile(r"\b[A-Z][\w'-]*(?:(?<=\b[A-Z])\.)?(?:\s+[A-Z][\w'-]*(?:(?<=\b[A-Z])\.)?)*")

AMBIGUITY_POLICIES = ("context", "first", "drop")


def doc_pairs(docs) -> list[tuple[str, str]]:
    """Normalise documents (a mapping ``{doc_id: text}``, or a sequence of objects with ``.id`` and
    ``.text``, or of ``(doc_id, text)`` pairs) to ``[(doc_id, text), ...]``; an empty corpus or a duplicate
    id is an error.

    >>> doc_pairs({"d1": "Ada.", "d2": "Bo."})
    [('d1', 'Ada.'), ('d2', 'Bo.')]
    """
    if isinstance(docs, Mapping):
        pairs = [(str(k), v) for k, v in docs.items()]
    elif isinstance(docs, Iterable) and not isinstance(docs, (str, bytes)):
        pairs = [(d.id, d.text) if hasattr(d, "text") else tuple(d) for d in docs]
    else:
        raise TypeError(f"docs must be a mapping id→text or a sequence of documents, got {type(docs).__name__}")
    if not pairs:
        raise ValueError("empty corpus: docs has no documents")
    seen = set()
    for doc_id, text in pairs:
        if not isinstance(text, str):
            raise TypeError(f"document {doc_id!r}: text must be str, got {type(text).__name__}")
        if doc_id in seen:
            raise ValueError(f"docs has a duplicate document id {doc_id!r}")
        seen.add(doc_id)
    return pairs


def doc_ids(docs) -> list[str]:
    """The document ids of :func:`doc_pairs`, in order, without reading the texts or building pairs (an
    incidence matrix needs only the ids; 21k pairs cost a third of a co-occurrence build). Anything unusual
    (pairs rather than objects, a duplicate id, an empty corpus) goes through :func:`doc_pairs`, which names
    the problem.

    >>> doc_ids({"d1": "Ada.", "d2": "Bo."}), doc_ids([("d1", "Ada.")])
    (['d1', 'd2'], ['d1'])
    """
    if isinstance(docs, Mapping):
        ids = list(map(str, docs))
    elif isinstance(docs, Iterable) and not isinstance(docs, (str, bytes)):
        docs = list(docs)
        try:
            ids = list(map(attrgetter("id"), docs))
        except AttributeError:
            ids = []
    else:
        ids = []
    if not ids or len(set(ids)) != len(ids):
        return [doc_id for doc_id, _ in doc_pairs(docs)]
    return ids


@dataclass(frozen=True)
class CompiledGazetteer:
    """A gazetteer folded and merged once, for matching many texts (e.g. one question at a time):
    ``lookup`` maps a folded surface to its sorted entity ids, ``max_tokens`` is the longest surface,
    ``prefixes`` every proper prefix of a folded surface (a span that is none cannot grow into a surface;
    ``None``: try every span).
    Taught in notebooks/06_personalized_pagerank.ipynb (through ``HippoRetriever``).

    >>> compile_gazetteer({"Ada Vell": ["E1"], "vell": ["E2", "E1"]}).lookup
    {'ada vell': ['E1'], 'vell': ['E1', 'E2']}
    """

    lookup: dict[str, list[str]]
    max_tokens: int
    case_sensitive: bool
    prefixes: frozenset[str] | None = None


def compile_gazetteer(gazetteer: Mapping[str, Iterable[str]], *, case_sensitive: bool = False) -> CompiledGazetteer:
    """Fold (unless ``case_sensitive``) and merge ``gazetteer``'s surfaces: the per-call set-up of
    :func:`gazetteer_mentions`, done once. An empty gazetteer or a surface naming no entity is an error.

    >>> gaz = compile_gazetteer({"Ada Vell": ["E1"]})
    >>> gaz.max_tokens, [m.entity_id for m in gazetteer_mentions({"q": "Who is ada vell?"}, gaz)]
    (2, ['E1'])
    """
    if not gazetteer:
        raise ValueError("empty gazetteer: nothing to match")
    fold = (lambda s: s) if case_sensitive else str.lower
    merged: dict[str, set[str]] = {}
    for surface, ids in gazetteer.items():
        ids = set(ids)
        if not ids:
            raise ValueError(f"gazetteer surface {surface!r} names no entity")
        merged.setdefault(fold(surface), set()).update(ids)
    return CompiledGazetteer({k: sorted(v) for k, v in merged.items()},
                             max(len(_TOKEN.findall(s)) for s in merged), case_sensitive,
                             frozenset(k[:n] for k in merged for n in range(1, len(k))))


def gazetteer_mentions(docs, gazetteer: Mapping[str, Iterable[str]] | CompiledGazetteer, *,
                       ambiguity: str = "context", case_sensitive: bool = False) -> list[Mention]:
    """Match gazetteer surfaces at word boundaries; longest match wins, overlaps are dropped.

    ``gazetteer`` maps a surface form to the entity ids it may name (see
    :func:`cookbook.datasets.build_gazetteer`). A surface naming several entities is resolved by
    ``ambiguity``: ``"context"`` picks the one candidate already named unambiguously in the same
    document (dropped when none or several are), ``"first"`` takes the lowest id (the naive choice),
    ``"drop"`` discards it. Returns :class:`cookbook.datasets.Mention` objects sorted by (doc, start).
    A :class:`CompiledGazetteer` skips the set-up (its own ``case_sensitive`` applies).
    Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> gaz = {"vell": ["E1", "E2"], "ada vell": ["E1"]}
    >>> docs = {"d": "Ada Vell came. Vell left."}
    >>> [(m.surface, m.entity_id) for m in gazetteer_mentions(docs, gaz)]  # context resolves "Vell"
    [('Ada Vell', 'E1'), ('Vell', 'E1')]
    >>> [m.surface for m in gazetteer_mentions(docs, gaz, ambiguity="drop")]
    ['Ada Vell']
    """
    if ambiguity not in AMBIGUITY_POLICIES:
        raise ValueError(f"unknown ambiguity policy {ambiguity!r}; expected one of {AMBIGUITY_POLICIES}")
    if not isinstance(gazetteer, CompiledGazetteer):
        gazetteer = compile_gazetteer(gazetteer, case_sensitive=case_sensitive)
    fold = (lambda s: s) if gazetteer.case_sensitive else str.lower
    gaz, max_tokens = gazetteer.lookup, gazetteer.max_tokens
    out: list[Mention] = []
    for doc_id, text in doc_pairs(docs):
        toks = [m.span() for m in _TOKEN.finditer(text)]
        # Folding a span is folding its pieces (so a span that is no surface's prefix cannot grow into one)
        # unless a capital sigma's final form depends on what follows it: then every span is tried.
        prefixes = None if not gazetteer.case_sensitive and "\u03a3" in text else gazetteer.prefixes
        cands = []
        for i in range(len(toks)):
            for j in range(i, min(i + max_tokens, len(toks))):
                s, e = toks[i][0], toks[j][1]
                key = fold(text[s:e])
                if key in gaz:
                    cands.append((s, e, gaz[key]))
                if prefixes is not None and key not in prefixes:
                    break
        # Longest first, then leftmost; a candidate overlapping a chosen one is dropped.
        cands.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
        chosen, taken = [], bytearray(len(text))  # taken[c] = 1: character c is in a chosen span
        for s, e, ids in cands:
            if taken.find(1, s, e) < 0:
                taken[s:e] = b"\x01" * (e - s)
                chosen.append((s, e, ids))
        chosen.sort()
        known = {ids[0] for _, _, ids in chosen if len(ids) == 1}
        for s, e, ids in chosen:
            if len(ids) > 1:
                if ambiguity == "first":
                    ids = ids[:1]
                elif ambiguity == "context":
                    hits = [i for i in ids if i in known]
                    ids = hits if len(hits) == 1 else []
                else:
                    ids = []
            if ids:
                out.append(Mention(doc_id, s, e, ids[0], text[s:e]))
    return out


def capitalised_mentions(docs, gazetteer: Mapping[str, Iterable[str]] | None = None) -> list[Mention]:
    """Every run of capitalised words is a mention (finds unknown names; many false positives).

    The entity id is the gazetteer's when the surface names exactly one entity, else ``""``. Returns
    :class:`cookbook.datasets.Mention` objects in document order. Taught in
    notebooks/01_entity_cooccurrence.ipynb.

    >>> [(m.surface, m.entity_id) for m in capitalised_mentions({"d": "Then Ada Vell met Bo."}, {"bo": ["E2"]})]
    [('Then Ada Vell', ''), ('Bo', 'E2')]
    """
    merged: dict[str, set[str]] = {}
    for surface, ids in (gazetteer or {}).items():
        merged.setdefault(surface.lower(), set()).update(ids)
    lookup = {k: sorted(v) for k, v in merged.items()}
    out = []
    for doc_id, text in doc_pairs(docs):
        for m in _CAPS.finditer(text):
            ids = lookup.get(m.group().lower(), [])
            out.append(Mention(doc_id, m.start(), m.end(), ids[0] if len(ids) == 1 else "", m.group()))
    return out


def score_mentions(predicted: Iterable[Mention], gold: Iterable[Mention], *, match: str = "entity") -> dict:
    """Precision, recall and F1 of ``predicted`` against ``gold``.

    ``match="span"`` counts a prediction correct when its (doc, start, end) is a gold span;
    ``match="entity"`` also requires the same entity id. Returns a dict with ``precision``, ``recall``,
    ``f1`` (floats) and ``tp``, ``fp``, ``fn`` (ints). Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> from cookbook.datasets import Mention
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
