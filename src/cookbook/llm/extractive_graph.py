"""The offline stand-in's graph extraction (notebooks/02_graph_extraction.ipynb): what
:class:`~cookbook.llm.extractive.ExtractiveLLM` answers to the ``extract_graph`` and ``glean`` prompts.

It is a stand-in, not a language model: entities are the gazetteer's names (the model's "knowledge of
names"), relations are found only by the fixed English phrasings in :data:`PHRASES` between two mentions of
one sentence and by the labelled lists of :data:`LIST_CUES` (``"<name> — <label>: <items>"``, the
Factbook's field passages). A wording it was not built from yields no relation, where a real model would
read it; notebook 02 measures that gap. Like a length-limited model, one answer carries at most
``max_records`` records, which leaves work for gleaning.

>>> from cookbook.llm.prompts import parse_prompt, prompt
>>> g = GraphStandIn({"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"})
>>> p = prompt("extract_graph", entity_types="person, org", text="Ada works for Acme.")
>>> print(g.extract(parse_prompt(p)[1], 200))
("entity"<|>Ada<|>person<|>Ada works for Acme.)
("entity"<|>Acme<|>org<|>Ada works for Acme.)
("relationship"<|>Ada<|>Acme<|>works_for<|>Ada works for Acme.<|>9)
<|COMPLETE|>
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable, Mapping

from .._validate import integer
from ..data.gazetteer import compile_gazetteer, gazetteer_mentions
from ..text import sentence_spans
from .claim_records import ClaimRecord, format_claims
from .parse import EntityRecord, RelationshipRecord, format_records, parse_extraction
from .prompts import COMPLETE
from .tokens import count_tokens

__all__ = ["LIST_CUES", "PHRASES", "GraphStandIn"]

# Relation phrasings the stand-in knows: (regex the text between two mentions must match, predicate, type of
# the first mention, type of the second, passive: the second mention is the subject).
# Exactly the generated world's phrasing set A (cookbook.data.world._FACT_TEMPLATES) and nothing of set B, the
# wordings it has never seen (tests/test_datasets.py checks both), so that notebook 02 can score extraction on
# phrasings the stand-in was not built from.
PHRASES = [
    (r" works for | is employed by ", "works_for", "person", "org", False),
    (r" lives in | has a home in ", "lives_in", "person", "place", False),
    (r" is headquartered in | stand in ", "headquartered_in", "org", "place", False),
    (r" makes the ", "makes", "org", "product", False),
    (r" is manufactured by ", "makes", "product", "org", True),
    (r" is a longtime friend of | often meets ", "knows", "person", "person", False),
    (r" is part of the ", "in_trade", "org", "trade", False),
    (r" counts ", "in_trade", "trade", "org", True),
    (r" lies in the ", "located_in", "place", "region", False),
    (r" contains ", "located_in", "region", "place", True),
]
# Labelled lists ("<name> — <label>: <items>", the Factbook's field passages): (regex on the label,
# predicate, type of the named heading, type of the items, reverse: the first item is the subject).
LIST_CUES = [
    (r"boundar|border", "borders", "country", "country", False),
    (r"export.*partner", "exports_to", "country", "country", False),
    (r"organi[sz]ation participation|membership", "member_of", "country", "org", False),
    (r"industr", "has_industry", "country", "industry", False),
    (r"rivers", "shares_river", "country", "river", False),
    (r"^capital$", "capital_of", "country", "capital", True),
]

# Compiled once: the phrasings by the types of the two mentions (in PHRASES' order), the list cues, the heading.
_PHRASES_BY_TYPES: dict[tuple[str, str], list] = {}
for _pattern, _pred, _t1, _t2, _passive in PHRASES:
    _PHRASES_BY_TYPES.setdefault((_t1, _t2), []).append((re.compile(_pattern), _pred, _passive))
_CUES = [(re.compile(pattern, re.I), *rest) for pattern, *rest in LIST_CUES]
_LIST_HEAD = re.compile(r"(.+?) — ([^:]+):")

# Records the stand-ins found, by (TEXT, ENTITY_TYPES, what the stand-in knows), and the canonical copies of
# what stand-ins know; the oldest leave first. A unit's extraction and gleaning prompts, and the same unit at
# other caps, repeat its TEXT, so each text is read once.
_FOUND: dict[tuple, tuple[list, list]] = {}
_KNOWS: dict[tuple, tuple] = {}
_FOUND_LOCK = threading.Lock()


def _evict_oldest(memo: dict, size: int) -> None:
    while len(memo) > size:
        del memo[next(iter(memo))]


class GraphStandIn:
    """Extraction answers from a gazetteer (surface → entity ids) and entity ``types`` (id → type), at most
    ``max_records`` records an answer (None: no cap but ``max_tokens``). Names are found case-insensitively
    unless ``case_sensitive`` (a compiled gazetteer keeps its own setting, which is how
    :class:`~cookbook.llm.extractive.ExtractiveLLM` gets a case-sensitive one).

    >>> g = GraphStandIn({"Ada": ["E1"]}, {"E1": "person"}, max_records=1)
    >>> g.max_records, g.types
    (1, {'E1': 'person'})
    """

    def __init__(self, gazetteer: Mapping[str, Iterable[str]], types: Mapping[str, str], *,
                 max_records: int | None = 5, case_sensitive: bool = False):
        self.gazetteer = compile_gazetteer(gazetteer, case_sensitive=case_sensitive)
        self.types = dict(types)
        self.max_records = None if max_records is None else integer(max_records, "max_records")
        # Stand-ins that know the same names (e.g. at different caps) share what they found through one
        # canonical copy of what they know, compared by identity.
        gaz = self.gazetteer
        knows = (frozenset((k, tuple(v)) for k, v in gaz.lookup.items()), frozenset(self.types.items()),
                 gaz.case_sensitive, frozenset((k, tuple(v)) for k, v in (gaz.full_names or {}).items()))
        with _FOUND_LOCK:
            self._knows = _KNOWS.setdefault(knows, knows)
            _evict_oldest(_KNOWS, 8)

    def records(self, text: str, entity_types: str) -> tuple[list[EntityRecord], list[RelationshipRecord]]:
        """Every entity and relationship record the stand-in finds in ``text`` for the comma-separated
        ``entity_types``: entities by the gazetteer (first mention, in text order), then relations.

        >>> g = GraphStandIn({"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"})
        >>> [r.relation for r in g.records("Ada works for Acme.", "person, org")[1]]
        ['works_for']
        """
        key = (text, entity_types, self._knows)
        with _FOUND_LOCK:
            found = _FOUND.get(key)
        if found is None:
            found = self._find(text, entity_types)
            with _FOUND_LOCK:
                _FOUND[key] = found
                _evict_oldest(_FOUND, 64)
        return found

    def _find(self, text: str, entity_types: str) -> tuple[list, list]:
        wanted = {t.strip() for t in entity_types.split(",")}
        ms = [m for m in gazetteer_mentions({"t": text}, self.gazetteer) if self.types.get(m.entity_id) in wanted]
        spans = sentence_spans(text)
        starts = [a for a, _ in spans]

        def sentence_of(m):  # index of the sentence holding the mention's start, or -1
            i = bisect.bisect_right(starts, m.start) - 1
            return i if i >= 0 and m.start < spans[i][1] else -1

        where = [sentence_of(m) for m in ms]
        ents, first = [], set()
        for m, i in zip(ms, where):
            if m.entity_id not in first:
                first.add(m.entity_id)
                words = (text[spans[i][0]:spans[i][1]] if i >= 0 else text).split()
                desc = " ".join(words[:25]) + (" …" if len(words) > 25 else "")
                ents.append(EntityRecord(m.surface, self.types[m.entity_id], desc))
        rels: list[RelationshipRecord] = []
        seen: set[tuple[str, str, str]] = set()

        def add(src, tgt, pred, desc):
            key = (src.entity_id, pred, tgt.entity_id)
            if src.entity_id != tgt.entity_id and key not in seen:
                seen.add(key)
                rels.append(RelationshipRecord(src.surface, tgt.surface, pred, desc, 9.0))

        self._phrase_relations(text, spans, ms, where, add)
        self._list_relations(text, ms, add)
        return ents, rels

    def _phrase_relations(self, text, spans, ms, where, add) -> None:
        """Relations stated by a known phrasing between two mentions of one sentence."""
        typ = self.types
        inside: dict[int, list] = {}
        for m, i in zip(ms, where):
            if i >= 0:
                inside.setdefault(i, []).append(m)
        for i in sorted(inside):
            group, s = inside[i], text[spans[i][0]:spans[i][1]]
            for j, x in enumerate(group):
                for y in group[j + 1:]:
                    for pattern, pred, passive in _PHRASES_BY_TYPES.get((typ[x.entity_id], typ[y.entity_id]), ()):
                        if pattern.fullmatch(text[x.end:y.start]):
                            add(y, x, pred, s) if passive else add(x, y, pred, s)

    def _list_relations(self, text, ms, add) -> None:
        """Relations of a labelled list: the heading's entity and each listed item of the cue's type."""
        head = _LIST_HEAD.match(text)
        if not (head and ms and ms[0].start == 0):
            return
        typ, label = self.types, head.group(2)
        for pattern, pred, t_head, t_item, reverse in _CUES:
            if pattern.search(label) and typ[ms[0].entity_id] == t_head:
                items = [m for m in ms[1:] if m.start >= head.end() and typ[m.entity_id] == t_item]
                for m in items[:1] if reverse else items:
                    desc = f"{ms[0].surface}'s {label} lists {m.surface}."
                    add(m, ms[0], pred, desc) if reverse else add(ms[0], m, pred, desc)

    def _emit(self, ents, rels, max_tokens: int) -> str:
        """At most ``max_records`` records (entities first, as the format lists them), within ``max_tokens``:
        the output cap that leaves work for gleaning, as a real model's answer length does."""
        if self.max_records is not None:
            ents, rels = ents[:self.max_records], rels[:max(0, self.max_records - len(ents))]
        lines = format_records(ents, rels).splitlines() if ents or rels else []
        while lines and count_tokens("\n".join(lines) + "\n" + COMPLETE) > max_tokens:
            lines.pop()
        return "\n".join([*lines, COMPLETE])

    def extract(self, sec: Mapping[str, str], max_tokens: int) -> str:
        """The answer to an ``extract_graph`` prompt's sections: at most ``max_records`` records, then
        ``<|COMPLETE|>``.

        >>> g = GraphStandIn({"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}, max_records=1)
        >>> print(g.extract({"TEXT": "Ada works for Acme.", "ENTITY_TYPES": "person, org"}, 200))
        ("entity"<|>Ada<|>person<|>Ada works for Acme.)
        <|COMPLETE|>
        """
        return self._emit(*self.records(sec.get("TEXT", ""), sec.get("ENTITY_TYPES", "")), max_tokens)

    def glean(self, sec: Mapping[str, str], max_tokens: int) -> str:
        """The answer to a ``glean`` prompt's sections: the records not among its PREVIOUS ones.

        >>> from cookbook.llm.prompts import parse_prompt, prompt
        >>> g = GraphStandIn({"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}, max_records=1)
        >>> p = prompt("glean", entity_types="person, org", text="Ada works for Acme.",
        ...            previous='("entity"<|>Ada<|>person<|>x)')
        >>> g.glean(parse_prompt(p)[1], 200).splitlines()[0]
        '("entity"<|>Acme<|>org<|>Ada works for Acme.)'
        """
        ents, rels = self.records(sec.get("TEXT", ""), sec.get("ENTITY_TYPES", ""))
        prev_e, prev_r, _ = parse_extraction(sec.get("PREVIOUS", ""))
        done_e = {(e.name.lower(), e.type) for e in prev_e}
        done_r = {(r.source.lower(), r.relation, r.target.lower()) for r in prev_r}
        return self._emit([e for e in ents if (e.name.lower(), e.type) not in done_e],
                          [r for r in rels if (r.source.lower(), r.relation, r.target.lower()) not in done_r],
                          max_tokens)

    def claims(self, sec: Mapping[str, str], max_tokens: int) -> str:
        """The answer to an ``extract_claims`` prompt's sections: each relationship the stand-in finds, as a claim
        about its subject (type: the relation in capitals; status TRUE, as the text states it; no dates, as the
        stand-in reads none), then ``<|COMPLETE|>``; records past ``max_tokens`` are dropped. The claims are its
        relationships re-shaped, so their score against gold is its relation score (notebook 12 says so).

        >>> g = GraphStandIn({"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"})
        >>> g.claims({"TEXT": "Ada works for Acme.", "ENTITY_TYPES": "person, org"}, 200)
        '(Ada<|>Acme<|>WORKS_FOR<|>TRUE<|>NONE<|>NONE<|>Ada works for Acme.<|>Ada works for Acme.)<|COMPLETE|>'
        """
        _, rels = self.records(sec.get("TEXT", ""), sec.get("ENTITY_TYPES", ""))
        claims, used = [], count_tokens(COMPLETE)
        for r in rels:  # records while they fit, each counted once with its delimiter
            claim = ClaimRecord(r.source, r.target, r.relation.upper(), "TRUE", "NONE", "NONE", r.description,
                                r.description)
            cost = count_tokens(format_claims([claim])) - count_tokens(COMPLETE) + 1
            if used + cost > max_tokens:
                break
            claims.append(claim)
            used += cost
        return format_claims(claims)
