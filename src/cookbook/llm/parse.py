"""Reading the graph extraction records a model wrote (:func:`parse_extraction`, with :func:`format_records` its
inverse for the records a prompt carries back, as gleaning does; JSON answers are
:mod:`cookbook.llm.json_answers`). The record
format is the one the extraction prompt asks for (:data:`cookbook.llm.prompts.EXTRACT_GRAPH_PROMPT`); the
offline stand-in writes it too, so it lives here in the model layer, under the stages that use it
(:mod:`cookbook.index.graph_extraction`).

>>> ents, rels, problems = parse_extraction('("entity"<|>Ada<|>person<|>An engineer.)\\n<|COMPLETE|>')
>>> ents, rels, problems
([EntityRecord(name='Ada', type='person', description='An engineer.')], [], [])
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._validate import string
from .json_answers import read_json
from .prompts import TUPLE_DELIMITER

__all__ = ["EntityRecord", "RelationshipRecord", "format_records", "name_key", "parse_extraction"]


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


# ---- reading a model's extraction answer, and writing records the way the prompt asks for them

_COMPLETE_MARK = r"<\|\s*complete\s*\|>"
# Where one record ends and the next begins: a run of '#' (GraphRAG's record delimiter "##") at the start or the
# end of a line, or before the next record or the completion marker; and the completion marker itself, in any
# case. A "##" inside a field is text.
# (The lookbehinds start a match only where a run of spaces or '#' begins, so a long run costs one pass.)
_SPLIT = re.compile(r'^\s*#{2,}\s*|(?<![\s#])\s*#{2,}(?!#)\s*(?=$|[({]|"?\s*(?:entity|relationship)\b|'
                    + _COMPLETE_MARK + r")|(?<!\s)\s*" + _COMPLETE_MARK + r"\s*", re.I)
_FENCE = re.compile(r"^`{3,}[\w+-]*|(?<!`)`{3,}$")
_JSON_AT = re.compile(r"\s*(?:`{3,}[\w+-]*\s*)?(?=[{\[])")  # a line whose content opens with a JSON value
_JSON_REST = re.compile(r"[ \t]*[,;]?")  # what may follow a JSON line's value (JSON lines written as a list)
_NOT_CONTINUATION = re.compile(r'[({\[#`]|<\||"?\s*(?:entity|relationship)\b', re.I)
_LIST_MARK = re.compile(r'^(?:\d{1,3}[.)]|[-*\u2022])\s+(?=\(\s*"?(?:entity|relationship|relation)\b)', re.I)
_MAX_WRAP = 10  # lines one hard-wrapped record may continue over
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")  # html.unescape's own pattern
_JSON_KEYS = {"entity": (("name", "entity_name"), ("type", "entity_type"), ("description", "entity_description")),
              "relationship": (("source", "source_entity"), ("target", "target_entity"),
                               ("relation", "relation_type"), ("description", "relationship_description"),
                               ("strength", "relationship_strength"))}
_JSON_OPTIONAL = ("description", "relation")


def _charref(m: re.Match) -> str:
    ref = m.group(1)
    if ref[0] != "#":
        return html.unescape(m.group())
    base, digits = (16, ref[2:]) if ref[1] in "xX" else (10, ref[1:])
    digits = digits.rstrip(";").lstrip("0") or "0"
    num = int(digits, base) if len(digits) <= 8 else 0x110000  # past Unicode either way: no huge int
    return chr(num) if num <= 0x10FFFF and not 0xD800 <= num <= 0xDFFF else "\ufffd"


def _clean(field: str) -> str:
    """One field as the model wrote it → its text: control characters become spaces, the field is stripped and
    unquoted (nano-graphrag quotes fields), then character references are decoded (``AT&amp;T`` → ``AT&T``;
    a numeric one to exactly the code point it names)."""
    field = _CONTROL.sub(" ", field).strip()
    if len(field) >= 2 and field[0] == field[-1] == '"':
        field = field[1:-1].strip()
    return _CHARREF.sub(_charref, field) if "&" in field else field


def _record(kind: str, values: Sequence[str]) -> tuple[EntityRecord | RelationshipRecord | None, str | None]:
    """The record of one kind and its raw fields, or ``(None, why)``."""
    kind = _clean(kind).strip("'").lower()
    values = [_clean(v) for v in values]
    if kind == "entity":
        if len(values) < 2 or not values[0] or not values[1]:
            return None, f"entity record needs a name and a type, got {len(values)} field(s)"
        return EntityRecord(values[0], values[1].lower(), values[2] if len(values) > 2 else ""), None
    if kind in ("relationship", "relation"):  # GPT-4o wrote "relation" for a few records of A Christmas Carol
        if len(values) == 4:  # GraphRAG's own form: no relation type
            values = [values[0], values[1], "", values[2], values[3]]
        if len(values) != 5 or not values[0] or not values[1]:
            return None, (f"relationship record needs source, target, relation, description and strength, "
                          f"got {len(values)} field(s)")
        try:
            strength = float(values[4].rstrip(")").strip())  # "1)": a closing parenthesis glued to the number
        except ValueError:
            return None, f"strength {values[4]!r} is not a number"
        if not math.isfinite(strength):
            return None, f"strength {values[4]!r} is not a finite number"
        return RelationshipRecord(values[0], values[1], _snake(values[2]), values[3], strength), None
    return None, f"unknown record kind {kind!r} (expected 'entity' or 'relationship')"


def _plain_record(line: str) -> bool:
    """Whether ``line`` is one whole record as the prompt asks for it, with nothing the general reading below
    acts on (no record delimiter, fence, completion marker, JSON or control character), so it reads alone."""
    line = line.strip()
    return (line.startswith('("') and line.endswith(")") and "#" not in line and "`" not in line
            and "omplete" not in line and "OMPLETE" not in line and not _CONTROL.search(line)
            and line.count("(") == 1 == line.count(")"))


def _delimited(piece: str):
    """A delimited record ``("kind"<|>field<|>...)``, its parentheses optional, or ``(None, why)``."""
    if TUPLE_DELIMITER not in piece:
        return None, f"not a record: {piece[:40]!r}"
    body = piece
    if body.startswith("("):
        body = body[1:-1] if body.endswith(")") else body[1:]  # no ")": a delimiter after it closed it
    elif body.endswith(")") and body.count(")") > body.count("("):  # the "(" dropped: '"relationship"<|>...<|>1)'
        body = body[:-1]
    kind, *values = body.split(TUPLE_DELIMITER)
    return _record(kind, values)


def _json_record(obj, kind: str | None):
    """One JSON record: an object with ``kind`` (or the list's ``kind``) and the fields by name (ours or
    GraphRAG's), or a list ``["entity", name, type, description]``."""
    if isinstance(obj, list) and obj and isinstance(obj[0], str):
        return _record(obj[0], ["" if v is None else str(v) for v in obj[1:]])
    if not isinstance(obj, dict):
        return None, f"not a record: JSON {type(obj).__name__}, not an object"
    kind = str(obj.get("kind", obj.get("type_of_record", kind or "")))
    keys = _JSON_KEYS.get(_clean(kind).lower())
    if keys is None:
        return _record(kind, [])
    values, missing = [], []
    for names in keys:
        name = next((n for n in names if n in obj), None)
        if name is None and names[0] not in _JSON_OPTIONAL:
            missing.append(names[0])
        values.append("" if name is None or obj[name] is None else str(obj[name]))
    if missing:
        return None, f"{_clean(kind).lower()} record lacks {', '.join(missing)}"
    return _record(kind, values)


def _json_records(value) -> list[tuple]:
    """The records of one JSON value: a record, ``{"entities": [...], "relationships": [...]}``, or a list of
    records; a problem in an item names the item."""
    if isinstance(value, dict) and "kind" not in value and "type_of_record" not in value and (
            "entities" in value or "relationships" in value):
        found = []
        for key, kind in (("entities", "entity"), ("relationships", "relationship")):
            items = value.get(key, [])
            if not isinstance(items, list):
                found.append((None, f"not a record: {key!r} is a JSON {type(items).__name__}, not a list"))
                continue
            found += [(rec, why and f"{key} item {i}: {why}")
                      for i, (rec, why) in enumerate((_json_record(x, kind) for x in items), 1)]
        return found
    if isinstance(value, list) and not (value and isinstance(value[0], str)):
        return [(rec, why and f"item {i}: {why}")
                for i, (rec, why) in enumerate((_json_record(x, None) for x in value), 1)]
    return [_json_record(value, None)]


def parse_extraction(text: str) -> tuple[list[EntityRecord], list[RelationshipRecord], list[tuple[int, str]]]:
    """Parse a model's extraction answer: ``(entities, relationships, problems)``.

    Reads the layouts Microsoft GraphRAG's and nano-graphrag's prompt examples teach and the ways real models
    deviate from them. Delimited records ``("entity"<|>name<|>type<|>description)`` and
    ``("relationship"<|>source<|>target<|>relation<|>description<|>strength)`` (the relation may be left
    out, as GraphRAG writes it), one a line or several on one line, separated by GraphRAG's record delimiter
    ``##`` at the end or the start of a line, on a line of its own or between two records; fields may be
    quoted (nano-graphrag), the kind quoted or not, in any case; a record missing a parenthesis, or hard-wrapped
    over several lines (joined with a space), is still read. JSON records: one object a line (``kind`` and
    the same fields by name, ours or GraphRAG's: ``name`` or ``entity_name``, ...), a pretty-printed object or
    ``{"entities": [...], "relationships": [...]}``, or an array of records; trailing commas allowed.
    ``<|COMPLETE|>`` in any case, glued to a record or not, blank lines and code fences are skipped; a record
    written as a list item (``1. ("entity"...``, ``- (...``) is read, and ``relation`` is read as ``relationship``
    (GPT-4o wrote both in A Christmas Carol's recorded answers, notebook 02). Fields
    are cleaned as GraphRAG's ``clean_str`` does, except where said below: stripped, HTML character references
    decoded (``AT&amp;T`` is ``AT&T``).

    Every other line that is not a well-formed record is reported in ``problems`` as ``(line number, why)``
    (a JSON value spanning lines at the line it opens on) and skipped, among them a record opened by ``(``
    that never closes and that no later line continues: an answer cut off mid-record, whose last field may be
    cut too, so none of it is kept. Never raises on a string: JSON nested deeper than 100 levels is a problem.

    Where this differs from GraphRAG's parser (``graph_extractor.py``), and why:

    - names keep their case as written (GraphRAG upper-cases names and types); types are lower-cased, and
      merging (:func:`cookbook.index.graph_extraction.merge_records`) compares names by :func:`name_key`;
    - a strength that is not a number is a problem and the record is skipped (GraphRAG and nano-graphrag
      use 1.0); ``8)``, a parenthesis glued to the number, reads as 8 (GraphRAG: 1.0);
    - ``##`` splits records only where a record ends or begins (GraphRAG splits on every ``##``, so a field
      holding one is cut); the completion marker in any case ends a record (GraphRAG leaves
      ``7)\\n<|COMPLETE|>`` in the last record's strength, which then reads as 1.0);
    - a record wrapped over lines is joined with a space (GraphRAG deletes the line break with the other
      control characters, gluing two words; nano-graphrag drops the record); a record cut off at the end
      is a problem (GraphRAG keeps the cut field);
    - quotes around a field are removed (GraphRAG and nano-graphrag keep them in names);
    - a relationship has 4 or 5 fields (GraphRAG: 4 or more, the last read as the strength); an entity needs
      a name and a type, its description is optional (GraphRAG: all three fields present);
    - control characters become spaces, so the words either side stay apart (``clean_str`` deletes them);
      a numeric character reference decodes to exactly the code point it names (HTML5, and so ``clean_str``,
      maps ``&#128;``-``&#159;`` to Windows-1252 and drops control characters): :func:`format_records`
      escapes with them;
    - JSON records are read (GraphRAG reads none), and every skipped line is reported (GraphRAG is silent).

    >>> ents, rels, problems = parse_extraction('''("entity"<|>AT&amp;T<|>ORGANIZATION<|>A carrier.)##
    ... ("entity"<|>"Ada"<|>"person"<|>"An engineer.")##("entity"<|>Acme<|>org<|>A firm
    ... that makes rope.)
    ... {"kind": "relationship", "source": "Ada", "target": "Acme", "relation": "works for", "strength": "9"}
    ... Here are more:
    ... ##("relationship"<|>Ada<|>AT&T<|>Ada calls on AT&T.<|>high)
    ... ##("relationship"<|>Ada<|>Acme<|>Ada knows Acme.<|>3)<|complete|>
    ... ("entity"<|>Ada Sel''')
    >>> [(e.name, e.type) for e in ents], ents[2].description
    ([('AT&T', 'organization'), ('Ada', 'person'), ('Acme', 'org')], 'A firm that makes rope.')
    >>> [(r.relation, r.strength) for r in rels]
    [('works_for', 9.0), ('', 3.0)]
    >>> for problem in problems: print(problem)
    (5, "not a record: 'Here are more:'")
    (6, "strength 'high' is not a number")
    (8, 'truncated record (no closing parenthesis): \\'("entity"<|>Ada Sel\\'')
    """
    string(text, "text")
    ents: list[EntityRecord] = []
    rels: list[RelationshipRecord] = []
    problems: list[tuple[int, str]] = []

    def keep(lineno, found):
        for rec, why in found:
            if why:
                problems.append((lineno, why))
            else:
                (ents if isinstance(rec, EntityRecord) else rels).append(rec)

    def cut_off(open_record):
        lineno, piece, _ = open_record
        problems.append((lineno, f"truncated record (no closing parenthesis): {piece[:60]!r}"))

    pending = None  # an open record: [line number, text so far, lines it continued over]
    end = skip_to = 0
    for lineno, raw in enumerate(text.splitlines(keepends=True), 1):
        start, end = end, end + len(raw)
        if end <= skip_to:  # inside a JSON value read from an earlier line
            continue
        if pending is None and start >= skip_to and _plain_record(raw):  # the common case, read as below would
            keep(lineno, [_delimited(raw.strip())])
            continue
        start = max(start, skip_to)
        while (m := _JSON_AT.match(text, start, end)) is not None:
            if pending is not None:
                cut_off(pending)
                pending = None
            try:
                value, stop = read_json(text, m.end())
            except ValueError as e:
                problems.append((lineno, f"not a record: {e}"))
                start = end
                break
            keep(lineno, _json_records(value))
            skip_to = stop
            start = _JSON_REST.match(text, stop, end).end() if stop < end else end
        if start >= end:
            continue
        line = _FENCE.sub("", text[start:end].strip()).strip()
        pieces = [p.strip() for p in _SPLIT.split(line)]
        pieces = [_LIST_MARK.sub("", p) for p in pieces]  # "1. (...)", "- (...)": a record written as a list item
        pieces = [re.sub(r"(?<=\))\s*[,;.]+$", "", p) if p.startswith("(") else p for p in pieces]  # "(...),"
        if pending is not None:
            if line and not _NOT_CONTINUATION.match(line) and pending[2] < _MAX_WRAP:
                pending[1] += " " + pieces[0]
                pending[2] += 1
                if len(pieces) == 1 and not pending[1].endswith(")"):
                    continue
                keep(pending[0], [_delimited(pending[1])])
                pieces = pieces[1:]
            elif len(pieces) > 1 and not pieces[0]:  # the line opens with "##" or the marker: it ended, ")" or not
                keep(pending[0], [_delimited(pending[1])])
            else:
                cut_off(pending)
            pending = None
        for k, piece in enumerate(pieces):
            if not piece:
                continue
            if k == len(pieces) - 1 and piece.startswith("(") and TUPLE_DELIMITER in piece and not piece.endswith(")"):
                pending = [lineno, piece, 0]  # open at the end of its line: wrapped, or cut off
            else:
                keep(lineno, [_delimited(piece)])
    if pending is not None:
        cut_off(pending)
    return ents, rels, problems


_ESCAPE = re.compile(r"&|<(?=\|)|#(?=#)|[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _ref(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


def _escape(field: str) -> str:
    """``field`` as :func:`format_records` writes it, so that :func:`parse_extraction` reads back exactly
    ``field``: character references for ``&``, the ``<|`` of a delimiter or marker, a ``#`` of ``##``, line
    breaks and control characters, whitespace at either end (stripped otherwise) and a leading quote."""
    field = _ESCAPE.sub(lambda m: "&amp;" if m.group() == "&" else _ref(m.group()), field)
    core = field.strip()
    if core != field:
        lead = len(field) - len(field.lstrip())
        field = _ref(field[:lead]) + core + _ref(field[lead + len(core):])
    return "&quot;" + field[1:] if field.startswith('"') else field


def _number(x: float) -> str:
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def format_records(entities: Sequence[EntityRecord], relationships: Sequence[RelationshipRecord]) -> str:
    """The delimited lines of ``entities`` then ``relationships``, one record a line, as the prompt asks a
    model to write them (without the closing ``<|COMPLETE|>``). Fields are escaped with HTML character
    references where :func:`parse_extraction` would read them as structure or strip them (``&`` → ``&amp;``,
    a line break → ``&#10;``, ...), and strengths are written to full precision, so any records read back
    exactly (types lower-cased, as the parser keeps them).

    >>> print(format_records([EntityRecord("Ada", "person", "An engineer\\nat AT&T.")],
    ...                      [RelationshipRecord("Ada", "Acme", "works_for", "Ada works for Acme.", 9.0)]))
    ("entity"<|>Ada<|>person<|>An engineer&#10;at AT&amp;T.)
    ("relationship"<|>Ada<|>Acme<|>works_for<|>Ada works for Acme.<|>9)
    >>> parse_extraction(format_records([EntityRecord("Ada", "person", "An engineer\\nat AT&T.")], []))[0]
    [EntityRecord(name='Ada', type='person', description='An engineer\\nat AT&T.')]
    """
    for name, items, kind in (("entities", entities, EntityRecord), ("relationships", relationships,
                                                                     RelationshipRecord)):
        bad = next((x for x in items if not isinstance(x, kind)), None)
        if bad is not None:
            raise TypeError(f"{name} must hold {kind.__name__}s, got {type(bad).__name__}")
    d = TUPLE_DELIMITER
    lines = [f'("entity"{d}{d.join(_escape(f) for f in (e.name, e.type, e.description))})' for e in entities]
    lines += [f'("relationship"{d}{d.join(_escape(f) for f in (r.source, r.target, r.relation, r.description))}'
              f"{d}{_number(r.strength)})" for r in relationships]
    return "\n".join(lines)
