"""Reading what a model wrote: the JSON object of a report or map answer (:func:`parse_json`), and graph
extraction records (:func:`parse_extraction`, with :func:`format_records` its inverse for the records a
prompt carries back, as gleaning does). The record format is the one the extraction prompt asks for
(:data:`cookbook.llm.prompts.EXTRACT_GRAPH_PROMPT`); the offline stand-in writes it too, so it lives here in
the model layer, under the stages that use it (:mod:`cookbook.index.graph_extraction`).

>>> ents, rels, problems = parse_extraction('("entity"<|>Ada<|>person<|>An engineer.)\\n<|COMPLETE|>')
>>> ents, rels, problems
([EntityRecord(name='Ada', type='person', description='An engineer.')], [], [])
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._validate import string
from .prompts import COMPLETE, TUPLE_DELIMITER

__all__ = ["EntityRecord", "RelationshipRecord", "format_records", "name_key", "parse_extraction", "parse_json"]


def parse_json(text: str) -> dict:
    """The JSON object in a model's output (also inside code fences or prose); ``ValueError`` if none.

    >>> parse_json('Sure! ```json\\n{"points": []}\\n```')
    {'points': []}
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty model output")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in model output") from None
        try:
            obj = json.loads(text[start:end + 1])
        except json.JSONDecodeError as e:
            raise ValueError(f"malformed JSON in model output: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"model output is JSON but not an object: {type(obj).__name__}")
    return obj


@dataclass(frozen=True)
class EntityRecord:
    """One ``entity`` record as a model wrote it, before names are resolved to ids.

    >>> EntityRecord("Ada Selel", "person", "An engineer.").name
    'Ada Selel'
    """

    name: str
    type: str
    description: str = ""


@dataclass(frozen=True)
class RelationshipRecord:
    """One ``relationship`` record as a model wrote it: names, not ids; ``relation`` in snake_case
    (``""`` when the model gave none); ``strength`` a float.

    >>> RelationshipRecord("Ada Selel", "Acme", "works_for", "Ada works for Acme.", 9.0).relation
    'works_for'
    """

    source: str
    target: str
    relation: str
    description: str
    strength: float


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def name_key(name: str) -> str:
    """The key under which two spellings of one name meet: its lower-case words, single-spaced.

    >>> name_key("  Ada   SELEL, Jr.")
    'ada selel jr'
    """
    string(name, "name")
    return " ".join(re.findall(r"\w+", name.lower()))


def _fields(kind, values, lineno):
    """Records of one line's fields (delimited or JSON, already split), or ``(None, problem)``."""
    kind = kind.strip().strip('"').lower()
    values = [str(v).strip() for v in values]
    if kind == "entity":
        if len(values) < 2 or not values[0] or not values[1]:
            return None, (lineno, f"entity record needs a name and a type, got {len(values)} field(s)")
        return EntityRecord(values[0], values[1].lower(), values[2] if len(values) > 2 else ""), None
    if kind == "relationship":
        if len(values) == 4:  # GraphRAG's own form: no relation type
            values = [values[0], values[1], "", values[2], values[3]]
        if len(values) != 5 or not values[0] or not values[1]:
            return None, (lineno, f"relationship record needs source, target, relation, description and "
                                  f"strength, got {len(values)} field(s)")
        try:
            strength = float(values[4])
        except ValueError:
            return None, (lineno, f"strength {values[4]!r} is not a number")
        if not math.isfinite(strength):
            return None, (lineno, f"strength {values[4]!r} is not a finite number")
        return RelationshipRecord(values[0], values[1], _snake(values[2]), values[3], strength), None
    return None, (lineno, f"unknown record kind {kind!r} (expected 'entity' or 'relationship')")


_RECORD_SPLIT = re.compile(r"(?<=\))\s*##\s*(?=\()")  # GraphRAG's record delimiter between two records


_JSON_FIELDS = {"entity": ("name", "type", "description"),
                "relationship": ("source", "target", "relation", "description", "strength")}


def parse_extraction(text: str) -> tuple[list[EntityRecord], list[RelationshipRecord], list[tuple[int, str]]]:
    """Parse a model's extraction answer: ``(entities, relationships, problems)``.

    One record per line (GraphRAG's ``##`` record delimiter is accepted too), either
    ``("entity"<|>name<|>type<|>description)`` / ``("relationship"<|>source<|>target<|>relation<|>
    description<|>strength)`` (the relation may be left out, as GraphRAG writes it) or a JSON object with
    ``kind`` and the same fields. ``<|COMPLETE|>``, blank lines and code fences are skipped; every other
    line that is not a well-formed record is reported in ``problems`` as ``(line number, why)`` and
    skipped — among them a record opened by ``(`` but never closed: an answer cut off mid-record, whose
    last field may be cut too, so none of it is kept. Never raises on a string.

    >>> ents, rels, problems = parse_extraction('''("entity"<|>Ada<|>person<|>An engineer.)
    ... {"kind": "relationship", "source": "Ada", "target": "Acme", "relation": "works for", "strength": 9}
    ... Here are more:
    ... ("relationship"<|>Ada<|>Acme<|>knows<|>Old friends.<|>high)
    ... ("event"<|>Fair<|>event<|>A fair.)
    ... ("entity"<|>Ada Sel
    ... <|COMPLETE|>''')
    >>> ents[0].type, rels[0].relation, rels[0].strength
    ('person', 'works_for', 9.0)
    >>> for problem in problems: print(problem)
    (3, "not a record: 'Here are more:'")
    (4, "strength 'high' is not a number")
    (5, "unknown record kind 'event' (expected 'entity' or 'relationship')")
    (6, 'truncated record (no closing parenthesis): \\'("entity"<|>Ada Sel\\'')
    """
    string(text, "text")
    ents, rels, problems = [], [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        for piece in _RECORD_SPLIT.split(line) if "##" in line else [line]:
            piece = piece.replace(COMPLETE, "").strip()
            if not piece or piece.startswith("```"):
                continue
            if piece.startswith("{"):
                try:
                    obj = json.loads(piece)
                except json.JSONDecodeError:
                    problems.append((lineno, "not a record: malformed JSON"))
                    continue
                if not isinstance(obj, dict):
                    problems.append((lineno, "not a record: JSON but not an object"))
                    continue
                kind = str(obj.get("kind", obj.get("type_of_record", "")))
                names = _JSON_FIELDS.get(kind.strip().lower())
                if names is None:
                    rec, problem = _fields(kind, [], lineno)
                else:
                    missing = [n for n in names if n not in obj and n not in ("description", "relation")]
                    if missing:
                        problems.append((lineno, f"{kind} record lacks {', '.join(missing)}"))
                        continue
                    rec, problem = _fields(kind, [obj.get(n, "") for n in names], lineno)
            elif TUPLE_DELIMITER in piece:
                if piece.startswith("(") and not piece.endswith(")"):  # cut mid-record: its last field may be cut too
                    problems.append((lineno, f"truncated record (no closing parenthesis): {piece[:60]!r}"))
                    continue
                body = piece[1:-1] if piece.startswith("(") else piece
                kind, *values = body.split(TUPLE_DELIMITER)
                rec, problem = _fields(kind, values, lineno)
            else:
                problems.append((lineno, f"not a record: {piece[:40]!r}"))
                continue
            if problem:
                problems.append(problem)
            else:
                (ents if isinstance(rec, EntityRecord) else rels).append(rec)
    return ents, rels, problems


def format_records(entities: Sequence[EntityRecord], relationships: Sequence[RelationshipRecord]) -> str:
    """The delimited lines of ``entities`` then ``relationships``, as the prompt asks a model to write them
    (without the closing ``<|COMPLETE|>``); :func:`parse_extraction` reads them back.

    >>> print(format_records([EntityRecord("Ada", "person", "An engineer.")],
    ...                      [RelationshipRecord("Ada", "Acme", "works_for", "Ada works for Acme.", 9.0)]))
    ("entity"<|>Ada<|>person<|>An engineer.)
    ("relationship"<|>Ada<|>Acme<|>works_for<|>Ada works for Acme.<|>9)
    """
    for name, items, kind in (("entities", entities, EntityRecord), ("relationships", relationships,
                                                                     RelationshipRecord)):
        bad = next((x for x in items if not isinstance(x, kind)), None)
        if bad is not None:
            raise TypeError(f"{name} must hold {kind.__name__}s, got {type(bad).__name__}")
    d = TUPLE_DELIMITER
    lines = [f'("entity"{d}{e.name}{d}{e.type}{d}{e.description})' for e in entities]
    lines += [f'("relationship"{d}{r.source}{d}{r.target}{d}{r.relation}{d}{r.description}{d}{r.strength:g})'
              for r in relationships]
    return "\n".join(lines)
