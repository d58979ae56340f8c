"""Matching a gazetteer in text: every surface form of every entity (name and aliases) → the entity ids it
may name, as :func:`cookbook.data.records.build_gazetteer` makes it. The corpus supplies it
(:meth:`cookbook.data.records.Corpus.gazetteer`); mention extraction (:mod:`cookbook.index.extract`), the
offline stand-in's graph extraction and question matching in the query stages all match names through it.

>>> from cookbook.data.records import build_gazetteer
>>> gaz = build_gazetteer([("E1", ["Ada Vell", "Vell"]), ("E2", ["Vell Works"])])
>>> [(m.surface, m.entity_id) for m in gazetteer_mentions({"d": "Ada Vell met Vell Works."}, gaz)]
[('Ada Vell', 'E1'), ('Vell Works', 'E2')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .records import Mention, doc_pairs

__all__ = ["AMBIGUITY_POLICIES", "CompiledGazetteer", "compile_gazetteer", "gazetteer_mentions"]


_TOKEN = re.compile(r"\w+|[^\w\s]")


AMBIGUITY_POLICIES = ("context", "first", "drop")


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
    :func:`cookbook.data.records.build_gazetteer`). A surface naming several entities is resolved by
    ``ambiguity``: ``"context"`` picks the one candidate already named unambiguously in the same
    document (dropped when none or several are), ``"first"`` takes the lowest id (the naive choice),
    ``"drop"`` discards it. Returns :class:`cookbook.data.records.Mention` objects sorted by (doc, start).
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
