"""The offline stand-in's community reports (notebooks/04_community_reports.ipynb): what
:class:`~cookbook.llm.extractive.ExtractiveLLM` answers to a ``community_report`` prompt, in GraphRAG's schema.

It composes, it does not write. From GraphRAG's tables (ENTITIES, RELATIONSHIPS) it counts: the findings are
the relationship groups that dominate the community — one subject with many objects of one relation type, or
one object many subjects point at — each naming its entities and citing ``[Data: Entities (...);
Relationships (...)]``; the summary says what the community holds (entities by type, relationships by type, its
most connected members) and adds the most central sentences of the entity descriptions (PageRank over their
similarity graph). From text units (SOURCES, GraphRAG's FastGraphRAG reports) or sub-community REPORTS it
picks the most central sentences. The rating is the evidence the community rests on (``min(10, 2·log2(1 +
n))``, ``n`` its relationships or sources), not its importance, which the stand-in cannot judge; the
``rating_explanation`` says so. It never reads gold.

>>> from cookbook.llm.prompts import parse_prompt, prompt
>>> p = prompt("community_report", entities=["[E1] Acme (org, degree 2): A firm.",
...            "[E2] Ada (person, degree 1): An engineer.", "[E3] Bo (person, degree 1): A welder."],
...            relationships=["[r0] Ada -> Acme (works_for, weight 9): Ada works for Acme.",
...                           "[r1] Bo -> Acme (works_for, weight 9): Bo works for Acme."])
>>> report = write_report(parse_prompt(p)[1])
>>> report["title"], report["findings"][0]["summary"]
('Acme and Ada', 'Works for Acme: Ada and Bo.')
>>> report["findings"][0]["explanation"]
'Ada works for Acme. Bo works for Acme. [Data: Entities (E1, E2, E3); Relationships (r0, r1)]'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping

from ..text import split_sentences
from .prompts import cited_lines

__all__ = ["write_report"]

_ENTITY = re.compile(r"^\[([^\]]+)\] (.+?) \(([^,()]*), degree (\d+)\): ?(.*)$")
_RELATIONSHIP = re.compile(r"^\[(r\d+)\] (.+?) -> (.+?) \(([^,()]+), weight ([^)]+)\): ?(.*)$")
MAX_FINDINGS = 8  # GraphRAG asks for 5 to 10
MAX_IDS = 5  # GraphRAG's grounding rule: at most five ids per reference, then +more


def _names(names: list[str]) -> str:
    shown = names[:4] if len(names) > 5 else names
    head = ", ".join(shown[:-1]) + (" and " + shown[-1] if len(shown) > 1 else shown[0])
    return head if len(shown) == len(names) else f"{', '.join(shown)} and {len(names) - len(shown)} more"


def _refs(table: str, ids: list[str]) -> str:
    return f"{table} ({', '.join(ids[:MAX_IDS])}{', +more' if len(ids) > MAX_IDS else ''})"


def _rating(n: int, what: str) -> tuple[float, str]:
    rating = float(min(10, round(2 * math.log2(1 + n), 1)))
    return rating, (f"Rated by the evidence the community rests on, {n} {what} (min(10, 2·log2(1 + n))): the "
                    "offline stand-in counts, it cannot judge importance.")


def _groups(rels: list[tuple]) -> list[dict]:
    """Relationship groups, largest first: one subject with its objects per relation type, and one object with
    its subjects; each relationship in at most one finding (a group whose relationships are all taken is
    skipped). Ties: more weight, then the group's first relationship."""
    by: dict[tuple, list] = {}
    for r in rels:
        rid, src, tgt, pred, weight, _ = r
        by.setdefault(("from", pred, src), []).append(r)
        by.setdefault(("to", pred, tgt), []).append(r)
    order = sorted(by.items(), key=lambda kv: (-len(kv[1]), -sum(r[4] for r in kv[1]), int(kv[1][0][0][1:]), kv[0]))
    taken: set[str] = set()
    out = []
    for (side, pred, end), members in order:
        fresh = [r for r in members if r[0] not in taken]
        if not fresh:
            continue
        taken.update(r[0] for r in fresh)
        out.append({"side": side, "pred": pred, "end": end, "rels": fresh})
    return out


def _finding(group: dict, ids_of: Mapping[str, str]) -> dict:
    pred, end, rels = group["pred"].replace("_", " "), group["end"], group["rels"]
    if group["side"] == "from":  # one subject, its objects
        others = [r[2] for r in rels]
        summary = f"{end} {pred} {_names(others)}."
    else:  # one object, its subjects
        others = [r[1] for r in rels]
        summary = f"{pred[0].upper() + pred[1:]} {end}: {_names(others)}."
    entity_ids = sorted({ids_of[n] for n in [end, *others] if n in ids_of})
    said = " ".join(list(dict.fromkeys(r[5] for r in rels if r[5]))[:2])  # the first two descriptions, once each
    refs = "; ".join(x for x in (_refs("Entities", entity_ids) if entity_ids else "",
                                 _refs("Relationships", [r[0] for r in rels])) if x)
    return {"summary": summary, "explanation": f"{said} [Data: {refs}]".strip()}


def _entity_count(ents: list[tuple], rels: list[tuple]) -> str:
    """How many entities the tables name, and how many of those their ENTITIES rows describe: a budget that cuts
    the ENTITIES table still leaves names in the RELATIONSHIPS rows, so the two counts can differ.

    >>> _entity_count([("E1", "Ada", "person", 1, "")], [("r0", "Ada", "Acme", "works_for", 1.0, "")])
    'name 2 entities, describe 1 of them'
    """
    named = set(e[1] for e in ents) | {n for r in rels for n in (r[1], r[2])}
    if len(named) == len(ents):
        return f"describe {len(ents)} entit{'y' if len(ents) == 1 else 'ies'}"
    return f"name {len(named)} entities, describe {len(ents)} of them"


def _relation_types(rels: list[tuple], shown: int = 3) -> str:
    """The relationships by type, the ``shown`` most frequent named and the rest counted, so the counts add up
    to the total.

    >>> _relation_types([("r0", "a", "b", p, 1.0, "") for p in ["knows", "knows", "makes", "owns", "lives_in"]], 2)
    ' (knows 2, lives_in 1, and 2 more of 2 other types)'
    """
    preds = sorted(Counter(r[3] for r in rels).items(), key=lambda x: (-x[1], x[0]))
    if not preds:
        return ""
    rest = sum(n for _, n in preds[shown:])
    more = (f", and {rest} more of {len(preds) - shown} other type{'' if len(preds) - shown == 1 else 's'}"
            if rest else "")
    return f" ({', '.join(f'{p} {n}' for p, n in preds[:shown])}{more})"


def _table_report(ents: list[tuple], rels: list[tuple], extra: list[tuple[str, str]],
                  central: Callable) -> dict:
    ids_of = {name: eid for eid, name, *_ in ents}
    by_degree = sorted(ents, key=lambda e: (-e[3], e[0]))
    title = " and ".join(e[1] for e in by_degree[:2]) if ents else "Unnamed community"
    types = sorted(Counter(e[2] or "untyped" for e in ents).items(), key=lambda x: (-x[1], x[0]))
    parts = [f"Its tables {_entity_count(ents, rels)} ({', '.join(f'{n} {t}' for t, n in types)}) and list "
             f"{len(rels)} relationship{'' if len(rels) == 1 else 's'}{_relation_types(rels)}."]
    if by_degree:
        parts.append("Most connected: " + ", ".join(f"{e[1]} (degree {e[3]})" for e in by_degree[:3]) + ".")
    described = [(eid, desc) for eid, _, _, _, desc in ents if desc]
    parts += [s for _, s in central(described + extra)[:2]]
    findings = [_finding(g, ids_of) for g in _groups(rels)[:MAX_FINDINGS]]
    rating, why = _rating(len(rels), "relationships") if rels else _rating(len(extra), "sub-community reports")
    return {"title": title, "summary": " ".join(parts), "rating": rating, "rating_explanation": why,
            "findings": findings}


def _text_report(sources: list[tuple[str, str]], ents: list[str], central: Callable, table: str) -> dict:
    names = [e.split(" | ")[1] for e in ents if e.count(" | ") >= 2]
    ranked = central(sources)
    rating, why = _rating(len({sid for sid, _ in sources}), "source documents")
    return {"title": " and ".join(names[:2]) if names else "Unnamed community",
            "summary": " ".join(s for _, s in ranked[:3]), "rating": rating, "rating_explanation": why,
            "findings": [{"summary": s, "explanation": f"Stated in {table.lower()[:-1]} {sid}. [Data: {table} ({sid})]"}
                         for sid, s in ranked[3:8]]}


def _in_order(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for sid, text in pairs:
        for s in split_sentences(text):
            seen.setdefault(s, sid)
    return [(sid, s) for s, sid in seen.items()]


def write_report(sec: Mapping[str, str], central: Callable | None = None) -> dict:
    """The report (a JSON-ready dict in GraphRAG's schema) for a ``community_report`` prompt's sections:
    from typed ENTITIES/RELATIONSHIPS tables when the RELATIONSHIPS rows are typed, else from SOURCES (text
    units) or REPORTS (sub-community summaries). ``central`` ranks ``(id, text)`` pairs' unique sentences by
    centrality, best first, as ``[(id, sentence), ...]`` (the stand-in passes its PageRank ranking; None keeps
    the given order).

    >>> r = write_report({"SOURCES": "[d1] Acme mines coal. It grew.\\n[d2] Bo sells fish."})
    >>> r["summary"], r["rating"], r["findings"]
    ('Acme mines coal. It grew. Bo sells fish.', 3.2, [])
    """
    if not isinstance(sec, Mapping):
        raise TypeError(f"sec must be a mapping of prompt sections (parse_prompt's), got {type(sec).__name__}")
    central = central or _in_order
    ent_lines = sec.get("ENTITIES", "").splitlines()
    rels = [(m[1], m[2], m[3], m[4], float(m[5]), m[6]) for m in map(_RELATIONSHIP.match, sec.get("RELATIONSHIPS",
                                                                                              "").splitlines()) if m]
    ents = [(m[1], m[2], m[3], int(m[4]), m[5]) for m in map(_ENTITY.match, ent_lines) if m]
    sub = cited_lines(sec.get("REPORTS", ""))
    if rels or (ents and not sec.get("SOURCES")):
        return _table_report(ents, rels, sub, central)
    if sub:
        return _text_report(sub, ent_lines, central, "Reports")
    return _text_report(cited_lines(sec.get("SOURCES", "")), ent_lines, central, "Sources")
