"""Claim extraction, GraphRAG's *covariates* (``extract_claims``, off by default in GraphRAG): per text unit, the
claims the text makes about entities — subject, object, type, status (TRUE, FALSE, SUSPECTED), start and end
dates, a description and the source text — asked for by :data:`cookbook.llm.prompts.EXTRACT_CLAIMS_PROMPT`, read
by :func:`cookbook.llm.claim_records.parse_claims`, names resolved to entity ids as graph extraction resolves them. The
result is GraphRAG's covariates table as :class:`Claim` rows; :func:`claim_lines` renders the claims of given
entities as a CLAIMS table for local search's context. Taught in notebooks/12_claims_resolution_updates.ipynb.

>>> from cookbook.llm import ExtractiveLLM
>>> gaz, types = {"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}
>>> claims, problems = extract_claims({"d1": "Ada works for Acme."}, ExtractiveLLM(gazetteer=gaz, types=types),
...                                   entity_types=["person", "org"], gazetteer=gaz)
>>> [(c.id, c.subject_id, c.type, c.object_id, c.status, c.text_unit_id) for c in claims]
[('c0', 'E1', 'WORKS_FOR', 'E2', 'TRUE', 'd1')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .._validate import integer
from ..data.gazetteer import compile_gazetteer
from ..data.records import doc_pairs
from ..llm import LLM, LLMUnavailable
from ..llm.base import redact, stop_if_all_failed
from ..llm.claim_records import parse_claims
from ..llm.prompts import prompt
from ..llm.tokens import pack_lines
from ..metrics import precision_recall
from .graph_extraction import _resolver

__all__ = ["DEFAULT_CLAIM_DESCRIPTION", "Claim", "claim_lines", "extract_claims", "score_claims"]

# GraphRAG's default claim description (graphrag's extract_claims config), kept as a named value.
DEFAULT_CLAIM_DESCRIPTION = "Any claims or facts that could be relevant to information discovery."


@dataclass(frozen=True)
class Claim:
    """One row of GraphRAG's covariates table: ``id`` (``c<n>``), ``subject_id`` and ``object_id`` (entity ids,
    resolved as graph extraction resolves names; ``object_id`` ``"NONE"`` when there is none), ``type``,
    ``status``, ``start_date``, ``end_date``, ``description``, ``source_text`` and the ``text_unit_id`` it came
    from.

    >>> Claim("c0", "E1", "E2", "WORKS_FOR", "TRUE", "NONE", "NONE", "Ada works for Acme.", "Ada works", "d1").status
    'TRUE'
    """

    id: str
    subject_id: str
    object_id: str
    type: str
    status: str
    start_date: str
    end_date: str
    description: str
    source_text: str
    text_unit_id: str


def extract_claims(docs, llm: LLM, *, entity_types: Sequence[str], gazetteer: Mapping[str, Iterable[str]] | None = None,
                   claim_description: str = DEFAULT_CLAIM_DESCRIPTION, max_tokens: int = 600
                   ) -> tuple[list[Claim], list[tuple[str, int, str]]]:
    """The claims of ``docs`` (objects with ``.id``/``.text``, pairs or a dict): one ``extract_claims`` call per
    text unit, its answer read by :func:`~cookbook.llm.claim_records.parse_claims`, subject and object names resolved
    through ``gazetteer`` (see :func:`~cookbook.index.graph_extraction.merge_records`). Returns ``(claims,
    problems)``, claims numbered in text-unit order, problems as ``(doc id, record, why)``; a unit whose call failed
    is reported and left out, :class:`~cookbook.llm.base.LLMUnavailable` stops, and so does every unit's call failing.

    >>> from cookbook.llm import ExtractiveLLM
    >>> gaz = {"Ada": ["E1"], "Acme": ["E2"]}
    >>> llm = ExtractiveLLM(gazetteer=gaz, types={"E1": "person", "E2": "org"})
    >>> [c.description for c in extract_claims([("d1", "Ada works for Acme. Acme is big.")], llm,
    ...                                          entity_types=["person", "org"], gazetteer=gaz)[0]]
    ['Ada works for Acme.']
    """
    max_tokens = integer(max_tokens, "max_tokens")
    types = ", ".join(entity_types)
    compiled = compile_gazetteer(gazetteer) if gazetteer else None
    claims, problems, failed = [], [], []
    pairs = doc_pairs(docs)
    for doc_id, text in pairs:
        p = prompt("extract_claims", entity_types=types, claim_description=claim_description, text=text)
        try:
            records, why = parse_claims(llm.complete(p, max_tokens=max_tokens) or "")
        except LLMUnavailable:
            raise
        except Exception as e:
            failed.append(redact(f"{type(e).__name__}: {e}"))
            problems.append((doc_id, 0, f"claim extraction failed, unit left out: {failed[-1]}"))
            continue
        problems += [(doc_id, n, w) for n, w in why]
        resolve = _resolver(compiled, [n for r in records for n in (r.subject, r.object) if n != "NONE"])
        for r in records:
            claims.append(Claim(f"c{len(claims)}", resolve(r.subject), "NONE" if r.object == "NONE" else
                                resolve(r.object), r.type, r.status, r.start_date, r.end_date, r.description,
                                r.source_text, doc_id))
    stop_if_all_failed("claim extraction", len(failed), len(pairs), failed[-1] if failed else "")
    return claims, problems


def score_claims(claims: Sequence[Claim], facts: Iterable) -> dict:
    """Precision and recall of the claims as ``(subject, type, object)`` triples against gold ``facts``
    (``subject``, ``predicate``, ``object``), a claim's type compared in lower case with the fact's predicate
    (:func:`cookbook.metrics.precision_recall`).

    >>> from cookbook.data.records import Fact
    >>> c = Claim("c0", "E1", "E2", "WORKS_FOR", "TRUE", "NONE", "NONE", "", "", "d1")
    >>> score_claims([c], [Fact("E1", "works_for", "E2", "d1"), Fact("E3", "knows", "E1", "d2")])["recall"]
    0.5
    """
    facts = list(facts)
    bad = next((f for f in facts if not all(hasattr(f, a) for a in ("subject", "predicate", "object"))), None)
    if bad is not None:
        raise TypeError(f"facts must have subject, predicate and object, got {type(bad).__name__}")
    predicted = {(c.subject_id, c.type.lower(), c.object_id) for c in claims}
    return precision_recall(predicted, {(f.subject, f.predicate, f.object) for f in facts})


def claim_lines(claims: Sequence[Claim], entity_ids: Iterable[str], names: Mapping[str, str],
                budget: int) -> tuple[list[str], list[str]]:
    """The CLAIMS table local search's context carries (GraphRAG's covariates section): the claims whose subject
    is one of ``entity_ids``, in the order of ``entity_ids`` then claim id, as ``[c<n>] subject -> object (TYPE,
    STATUS): description`` lines (names from ``names``), packed within ``budget`` tokens. Returns ``(lines,
    claim ids)``.

    >>> c = Claim("c0", "E1", "E2", "WORKS_FOR", "TRUE", "NONE", "NONE", "Ada works for Acme.", "", "d1")
    >>> claim_lines([c], ["E1"], {"E1": "Ada", "E2": "Acme"}, 50)
    (['[c0] Ada -> Acme (WORKS_FOR, TRUE): Ada works for Acme.'], ['c0'])
    """
    by_subject: dict[str, list[Claim]] = {}
    for c in claims:
        by_subject.setdefault(c.subject_id, []).append(c)
    chosen = [c for e in dict.fromkeys(entity_ids) for c in by_subject.get(e, [])]
    lines, _, _ = pack_lines((f"[{c.id}] {names.get(c.subject_id, c.subject_id)} -> "
                              f"{names.get(c.object_id, c.object_id)} ({c.type}, {c.status}): {c.description}"
                              for c in chosen), budget)
    return lines, [c.id for c in chosen[: len(lines)]]
