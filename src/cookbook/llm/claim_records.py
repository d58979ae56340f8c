"""Reading the claim records a model wrote (GraphRAG's covariates, :data:`cookbook.llm.prompts.EXTRACT_CLAIMS_PROMPT`):
:func:`parse_claims`, with :func:`format_claims` its inverse (what the offline stand-in writes). Fields are read and
escaped as :mod:`cookbook.llm.parse` reads and escapes extraction records. Taught in
notebooks/12_claims_resolution_updates.ipynb.

>>> parse_claims("(Ada<|>Acme<|>WORKS_FOR<|>TRUE<|>NONE<|>NONE<|>Ada works for Acme.<|>Ada works for Acme.)")[0][0].type
'WORKS_FOR'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._validate import string
from .parse import _clean, _escape
from .prompts import COMPLETE, RECORD_DELIMITER, TUPLE_DELIMITER

__all__ = ["CLAIM_STATUSES", "ClaimRecord", "format_claims", "parse_claims"]


CLAIM_STATUSES = ("TRUE", "FALSE", "SUSPECTED")


@dataclass(frozen=True)
class ClaimRecord:
    """One claim as a model wrote it (GraphRAG's covariate row before ids): ``subject`` and ``object`` names
    (``object`` ``"NONE"`` when there is none), ``type`` in capitals, ``status`` TRUE, FALSE or SUSPECTED,
    ``start_date``/``end_date`` as written (``"NONE"`` when not stated), the ``description`` and the
    ``source_text`` quoted.

    >>> ClaimRecord("Ada", "Acme", "WORKS_FOR", "TRUE", "NONE", "NONE", "Ada works for Acme.", "Ada works").status
    'TRUE'
    """

    subject: str
    object: str
    type: str
    status: str
    start_date: str
    end_date: str
    description: str
    source_text: str


def parse_claims(text: str) -> tuple[list[ClaimRecord], list[tuple[int, str]]]:
    """Claims from an ``extract_claims`` answer: records ``(subject<|>object<|>type<|>status<|>start<|>end<|>
    description<|>source text)`` separated by ``##`` or line breaks, up to ``<|COMPLETE|>``. A record with fewer
    than 8 fields, an empty subject or a status outside TRUE/FALSE/SUSPECTED is reported as ``(record number,
    why)`` and skipped; types and statuses are upper-cased (GraphRAG's types keep their spaces: "MISSION
    PREPARATION"), a missing object or date reads ``"NONE"``.

    >>> claims, problems = parse_claims("(Ada<|>Acme<|>works_for<|>true<|>NONE<|>NONE<|>Ada works for Acme.<|>Ada "
    ...                                 "works for Acme.)##(Bo<|>x)<|COMPLETE|>")
    >>> claims[0].type, claims[0].status, problems
    ('WORKS_FOR', 'TRUE', [(2, 'claim record needs 8 fields, got 2')])
    """
    string(text, "text")
    body = text.split(COMPLETE, 1)[0]
    pieces = [p.strip() for chunk in body.split(RECORD_DELIMITER) for p in chunk.splitlines()]
    claims, problems = [], []
    for n, piece in enumerate((p for p in pieces if p), start=1):
        if piece.startswith("(") and piece.endswith(")"):
            piece = piece[1:-1]
        fields = [_clean(f) for f in piece.split(TUPLE_DELIMITER)]
        if len(fields) != 8:
            problems.append((n, f"claim record needs 8 fields, got {len(fields)}"))
            continue
        subject, obj, typ, status, start, end, desc, source = fields
        status = status.upper()
        if not subject:
            problems.append((n, "claim record has no subject"))
        elif status not in CLAIM_STATUSES:
            problems.append((n, f"claim status {status!r} is not one of {CLAIM_STATUSES}"))
        else:
            claims.append(ClaimRecord(subject, obj or "NONE", typ.upper(), status, start or "NONE",
                                      end or "NONE", desc, source))
    return claims, problems


def format_claims(claims: Sequence[ClaimRecord]) -> str:
    """The records of ``claims`` as the prompt asks a model to write them, joined by ``##`` and closed by
    ``<|COMPLETE|>``; :func:`parse_claims` reads them back (fields escaped as
    :func:`~cookbook.llm.parse.format_records` escapes them).

    >>> c = ClaimRecord("Ada", "Acme", "WORKS_FOR", "TRUE", "NONE", "NONE", "Ada works for Acme.", "Ada works")
    >>> parse_claims(format_claims([c]))[0] == [c]
    True
    """
    bad = next((c for c in claims if not isinstance(c, ClaimRecord)), None)
    if bad is not None:
        raise TypeError(f"claims must hold ClaimRecords, got {type(bad).__name__}")
    d = TUPLE_DELIMITER
    records = [f"({d.join(_escape(f) for f in (c.subject, c.object, c.type, c.status, c.start_date, c.end_date, c.description, c.source_text))})"  # noqa: E501
               for c in claims]
    return RECORD_DELIMITER.join(records) + COMPLETE
