"""Matching a gazetteer in text: every surface form of every entity (name and aliases) → the entity ids it
may name, as :func:`cookbook.data.records.build_gazetteer` makes it. The corpus supplies it
(:meth:`cookbook.data.records.Corpus.gazetteer`); mention extraction (:mod:`cookbook.index.extract`), the
offline stand-in's graph extraction and question matching in the query stages all match names through it.

How a surface is compared (:func:`fold_surface`): white space folded (any run of it is one space, so
``"ada  selel"`` is ``Ada Selel``), and case folded unless ``case_sensitive`` — case-insensitive is every
matcher's default. Spans are character offsets into the original text, whatever folding matched them.

>>> from cookbook.data.records import build_gazetteer
>>> gaz = build_gazetteer([("E1", ["Ada Vell", "Vell"]), ("E2", ["Vell Works"])])
>>> [(m.surface, m.entity_id) for m in gazetteer_mentions({"d": "Ada Vell met Vell Works."}, gaz)]
[('Ada Vell', 'E1'), ('Vell Works', 'E2')]
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._validate import string, string_collection
from .records import Gazetteer, Mention, doc_pairs

__all__ = ["AMBIGUITY_POLICIES", "AmbiguousMention", "CompiledGazetteer", "ambiguous_mentions", "compile_gazetteer",
           "fold_surface", "gazetteer_mentions"]


_TOKEN = re.compile(r"\w+|[^\w\s]")
_SPACES = re.compile(r"\s+")


AMBIGUITY_POLICIES = ("context", "first", "drop")


def fold_surface(surface: str, *, case_sensitive: bool = False) -> str:
    """The key a surface is matched by: white space runs made one space and trimmed, lower-cased unless
    ``case_sensitive``.

    >>> fold_surface(" Ada \\n Selel"), fold_surface("Ada  Selel", case_sensitive=True)
    ('ada selel', 'Ada Selel')
    """
    s = " ".join(string(surface, "surface").split())
    return s if case_sensitive else s.lower()


@dataclass(frozen=True)
class AmbiguousMention:
    """A span that names several entities and that the ambiguity policy could not resolve, so
    :func:`gazetteer_mentions` did not return it: ``entity_ids`` are its candidates (sorted), ``surface`` is
    ``text[start:end]``. Listed by :func:`ambiguous_mentions`.

    >>> AmbiguousMention("d", 0, 4, ("P1", "P2"), "Voss").entity_ids
    ('P1', 'P2')
    """

    doc_id: str
    start: int
    end: int
    entity_ids: tuple[str, ...]
    surface: str


@dataclass(frozen=True)
class CompiledGazetteer:
    """A gazetteer folded and merged once, for matching many texts (e.g. one question at a time):
    ``lookup`` maps a folded surface (:func:`fold_surface`) to its sorted entity ids, ``max_tokens`` is the
    longest surface, ``case_sensitive`` how it was folded, ``prefixes`` every proper prefix of a folded surface
    (a span that is none cannot grow into a surface; ``None``: try every span). ``full_names`` maps a folded
    surface naming several entities to the ones whose full name it is, when those are some but not all of
    them: an exact full name wins over another entity's alias. Taught in
    notebooks/06_personalized_pagerank.ipynb (through ``HippoRetriever``).

    >>> compile_gazetteer({"Ada Vell": ["E1"], "vell": ["E2", "E1"]}).lookup
    {'ada vell': ['E1'], 'vell': ['E1', 'E2']}
    """

    lookup: dict[str, list[str]]
    max_tokens: int
    case_sensitive: bool
    prefixes: frozenset[str] | None = None
    full_names: dict[str, list[str]] | None = None

    def candidates(self, surface: str) -> list[str]:
        """The entity ids ``surface`` may name once folded, after the full-name rule (``[]``: none).

        >>> from cookbook.data.records import build_gazetteer
        >>> gaz = compile_gazetteer(build_gazetteer([("E1", ["The Room"]), ("E2", ["The Room (film)", "The Room"])]))
        >>> gaz.lookup["the room"], gaz.candidates("the  ROOM")
        (['E1', 'E2'], ['E1'])
        """
        key = fold_surface(surface, case_sensitive=self.case_sensitive)
        return (self.full_names or {}).get(key) or self.lookup.get(key, [])


def compile_gazetteer(gazetteer: Mapping[str, Iterable[str]] | CompiledGazetteer, *,
                      case_sensitive: bool = False) -> CompiledGazetteer:
    """Fold (:func:`fold_surface`) and merge ``gazetteer``'s surfaces: the per-call set-up of
    :func:`gazetteer_mentions`, done once. A :class:`CompiledGazetteer` is returned as it is (its own
    ``case_sensitive`` applies). Full names come from a :class:`cookbook.data.records.Gazetteer`'s ``names``
    (what :func:`~cookbook.data.records.build_gazetteer` makes); a plain mapping has none, so every surface
    naming several entities is ambiguous.

    Each value must be a collection of entity ids: a string (``{"Ada": "E1"}``) is a ``TypeError`` naming the
    surface, not the ids ``'E'`` and ``'1'``; a surface that is not a string, a blank one, one naming no entity,
    or an empty gazetteer is an error too.

    >>> gaz = compile_gazetteer({"Ada Vell": ["E1"]})
    >>> gaz.max_tokens, [m.entity_id for m in gazetteer_mentions({"q": "Who is ada  vell?"}, gaz)]
    (2, ['E1'])
    >>> compile_gazetteer({"Ada": "E1"})
    Traceback (most recent call last):
    ...
    TypeError: gazetteer['Ada'] must be a collection of entity ids, got the string 'E1' (write ['E1'])
    """
    if isinstance(gazetteer, CompiledGazetteer):
        return gazetteer
    if not isinstance(gazetteer, Mapping):
        raise TypeError(f"gazetteer must be a mapping surface → entity ids, got {type(gazetteer).__name__}")
    if not gazetteer:
        raise ValueError("empty gazetteer: nothing to match")
    merged: dict[str, set[str]] = {}
    for surface, ids in gazetteer.items():
        if not isinstance(surface, str):
            raise TypeError(f"gazetteer surface {surface!r} must be a string, got {type(surface).__name__}")
        ids = set(string_collection(ids, f"gazetteer[{surface!r}]"))
        if not ids:
            raise ValueError(f"gazetteer surface {surface!r} names no entity")
        key = fold_surface(surface, case_sensitive=case_sensitive)
        if not key:
            raise ValueError(f"gazetteer surface {surface!r} is blank: it can match nothing")
        merged.setdefault(key, set()).update(ids)
    named: dict[str, set[str]] = {}
    for surface, ids in (gazetteer.names.items() if isinstance(gazetteer, Gazetteer) else ()):
        named.setdefault(fold_surface(surface, case_sensitive=case_sensitive), set()).update(ids)
    full_names = {k: sorted(named[k] & v) for k, v in merged.items() if len(v) > 1 and k in named
                  and 0 < len(named[k] & v) < len(v)}
    return CompiledGazetteer({k: sorted(v) for k, v in merged.items()},
                             max(len(_TOKEN.findall(s)) for s in merged), case_sensitive,
                             frozenset(k[:n] for k in merged for n in range(1, len(k))), full_names)


def _same(i: int) -> int:
    return i


def _fold_spaces(text: str):
    """``(folded, back)``: ``text`` with each white space run one space (what matching reads) and the function
    mapping an offset in it that is not inside a run to the same place in ``text``. Only a text with a tab,
    newline or double space needs it; any other maps to itself."""
    if "  " not in text and text.isprintable():  # no tab, newline, other space or double space: fast C scans
        return text, _same
    starts, shift, removed = [], [], 0  # per run: its start in `folded`, characters removed up to its end
    for m in _SPACES.finditer(text):
        starts.append(m.start() - removed)
        removed += m.end() - m.start() - 1
        shift.append(removed)

    def back(i: int) -> int:
        k = bisect.bisect_right(starts, i - 1) - 1  # the last run starting before i
        return i + (shift[k] if k >= 0 else 0)

    return _SPACES.sub(" ", text), back


def _match(docs, gazetteer, ambiguity: str, case_sensitive: bool) -> tuple[list[Mention], list[AmbiguousMention]]:
    """What :func:`gazetteer_mentions` returns and what it could not resolve (:func:`ambiguous_mentions`)."""
    if ambiguity not in AMBIGUITY_POLICIES:
        raise ValueError(f"unknown ambiguity policy {ambiguity!r}; expected one of {AMBIGUITY_POLICIES}")
    gazetteer = compile_gazetteer(gazetteer, case_sensitive=case_sensitive)
    fold = (lambda s: s) if gazetteer.case_sensitive else str.lower
    gaz, max_tokens, full_names = gazetteer.lookup, gazetteer.max_tokens, gazetteer.full_names or {}
    out: list[Mention] = []
    unresolved: list[AmbiguousMention] = []
    for doc_id, text in doc_pairs(docs):
        folded, back = _fold_spaces(text)
        toks = [m.span() for m in _TOKEN.finditer(folded)]
        # Folding a span is folding its pieces (so a span that is no surface's prefix cannot grow into one)
        # unless a capital sigma's final form depends on what follows it: then every span is tried.
        prefixes = None if not gazetteer.case_sensitive and "\u03a3" in text else gazetteer.prefixes
        # Folding once and slicing is folding each slice when folding kept every character's place (no
        # "İ" grew into two): then a token that neither is nor begins a surface is skipped at one lookup.
        low = fold(folded) if prefixes is not None else None
        if low is not None and len(low) != len(folded):
            low = None
        cands = []
        for i in range(len(toks)):
            if low is not None:
                first = low[toks[i][0]:toks[i][1]]
                if first not in prefixes and first not in gaz:
                    continue
            for j in range(i, min(i + max_tokens, len(toks))):
                s, e = toks[i][0], toks[j][1]
                key = low[s:e] if low is not None else fold(folded[s:e])
                if key in gaz:
                    cands.append((s, e, full_names.get(key) or gaz[key]))
                if prefixes is not None and key not in prefixes:
                    break
        # Longest first, then leftmost; a candidate overlapping a chosen one is dropped.
        cands.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
        chosen, taken = [], bytearray(len(folded))  # taken[c] = 1: character c is in a chosen span
        for s, e, ids in cands:
            if taken.find(1, s, e) < 0:
                taken[s:e] = b"\x01" * (e - s)
                chosen.append((s, e, ids))
        chosen.sort()
        known = {ids[0] for _, _, ids in chosen if len(ids) == 1}
        for s, e, ids in chosen:
            s, e = back(s), back(e)
            resolved = ids
            if len(ids) > 1:
                if ambiguity == "first":
                    resolved = ids[:1]
                elif ambiguity == "context":
                    hits = [i for i in ids if i in known]
                    resolved = hits if len(hits) == 1 else []
                else:
                    resolved = []
            if resolved:
                out.append(Mention(doc_id, s, e, resolved[0], text[s:e]))
            else:
                unresolved.append(AmbiguousMention(doc_id, s, e, tuple(ids), text[s:e]))
    return out, unresolved


def gazetteer_mentions(docs, gazetteer: Mapping[str, Iterable[str]] | CompiledGazetteer, *,
                       ambiguity: str = "context", case_sensitive: bool = False) -> list[Mention]:
    """Match gazetteer surfaces at word boundaries; longest match wins, overlaps are dropped.

    ``gazetteer`` maps a surface form to the entity ids it may name (see
    :func:`cookbook.data.records.build_gazetteer`); surfaces are compared white space and (unless
    ``case_sensitive``; the default is not) case folded, see :func:`fold_surface`. A surface that is one
    entity's full name and other entities' alias names that entity (the full name wins; a plain dict has no
    full names, see :func:`compile_gazetteer`). A surface still naming several entities is resolved by
    ``ambiguity``: ``"context"`` picks the one candidate that an unambiguous mention anywhere in the same
    document names, before or after the alias (none when no or several candidates are), ``"first"`` takes the
    lowest id (the naive choice),
    ``"drop"`` takes none. What is not resolved is not returned but not lost either:
    :func:`ambiguous_mentions` lists it. Returns :class:`cookbook.data.records.Mention` objects sorted by
    (doc, start), offsets into the original text. A :class:`CompiledGazetteer` skips the set-up (its own
    ``case_sensitive`` applies). Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> gaz = {"vell": ["E1", "E2"], "ada vell": ["E1"]}
    >>> docs = {"d": "Ada Vell came. Vell left."}
    >>> [(m.surface, m.entity_id) for m in gazetteer_mentions(docs, gaz)]  # context resolves "Vell"
    [('Ada Vell', 'E1'), ('Vell', 'E1')]
    >>> [m.surface for m in gazetteer_mentions(docs, gaz, ambiguity="drop")]
    ['Ada Vell']
    >>> [(m.surface, m.entity_id) for m in gazetteer_mentions({"d": "Vell came. Ada Vell left."}, gaz)]  # later too
    [('Vell', 'E1'), ('Ada Vell', 'E1')]
    """
    return _match(docs, gazetteer, ambiguity, case_sensitive)[0]


def ambiguous_mentions(docs, gazetteer: Mapping[str, Iterable[str]] | CompiledGazetteer, *,
                       ambiguity: str = "context", case_sensitive: bool = False) -> list[AmbiguousMention]:
    """The spans :func:`gazetteer_mentions` (same arguments) matched but left out because they name several
    entities and ``ambiguity`` could not pick one: :class:`AmbiguousMention` objects with their candidates,
    sorted by (doc, start). Together the two account for every chosen span (``"first"`` leaves none out).

    >>> gaz = {"Voss": ["P1", "P2"], "Tal Voss": ["P2"]}
    >>> [(m.surface, m.entity_ids) for m in ambiguous_mentions({"a": "Voss left.", "b": "Tal Voss met Voss."}, gaz)]
    [('Voss', ('P1', 'P2'))]
    """
    return _match(docs, gazetteer, ambiguity, case_sensitive)[1]
