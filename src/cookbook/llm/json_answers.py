"""Reading the JSON a model wrote (a community report, a map answer, a judgement) the way models write it:
fenced, pretty-printed, after a sentence of prose, with trailing commas; :func:`read_json` reads one JSON value
where it opens, in one pass that refuses nesting deeper than a model ever writes before Python's ``json``
recurses; :func:`parse_json` takes the first value that parses and is an object.

>>> parse_json('Sure! Here it is: ```json\\n{"points": [{"score": 80,},]}\\n```')
{'points': [{'score': 80}]}
"""

from __future__ import annotations

import json
import re

from .._validate import string

__all__ = ["parse_json", "read_json"]


# JSON a model writes is a few levels deep; deeper is an attack or garbage, and Python's json recurses per level.
_MAX_JSON_DEPTH = 100


_JSON_STOP = re.compile(r'[][{},"]')  # the characters the scan below acts on; it jumps over the rest


_STRING_STOP = re.compile(r'["\\]')


_JSON_OPEN = re.compile(r"[{\[]")


def _json_span(text: str, start: int) -> tuple[str, int]:
    """The JSON text of the value opening at ``text[start]`` with its trailing commas removed, and its end;
    ``ValueError`` when it never closes or nests deeper than ``_MAX_JSON_DEPTH`` (checked before any
    recursive parse). One pass, no backtracking."""
    depth, cuts, comma, i, end = 0, [], -1, start, -1
    while end < 0 and (m := _JSON_STOP.search(text, i)) is not None:
        i, c = m.start(), m.group()
        if c == '"':  # skip the string: to the next quote not escaped by a backslash
            s = _STRING_STOP.search(text, i + 1)
            while s is not None and s.group() == "\\":
                s = _STRING_STOP.search(text, s.end() + 1)
            if s is None:
                break
            i, comma = s.end(), -1
            continue
        if c in "{[":
            depth += 1
            if depth > _MAX_JSON_DEPTH:
                raise ValueError(f"malformed JSON in model output: nested deeper than {_MAX_JSON_DEPTH} levels")
        elif c in "}]":
            if comma >= 0 and not text[comma + 1:i].strip():
                cuts.append(comma)  # a trailing comma: [1, 2,] / {"a": 1,}
            depth -= 1
            if depth == 0:
                end = i + 1
        comma = i if c == "," else -1
        i += 1
    if end < 0:
        kind = "object" if text[start] == "{" else "array"
        raise ValueError(f"malformed JSON in model output: the {kind} opened at character {start} is never closed")
    pieces, at = [], start
    for cut in cuts:
        pieces.append(text[at:cut])
        at = cut + 1
    pieces.append(text[at:end])
    return "".join(pieces), end


def read_json(text: str, start: int = 0):
    """The JSON value that opens (``{`` or ``[``) at ``text[start]``, and the index just past it:
    ``(value, end)``. Trailing commas are accepted (``[1, 2,]``); a value that never closes, is malformed or
    is nested deeper than 100 levels raises ``ValueError`` (never ``RecursionError``).

    >>> read_json('x = {"a": [1, 2,],} and more', 4)
    ({'a': [1, 2]}, 19)
    >>> read_json("[" * 1000 + "]" * 1000)
    Traceback (most recent call last):
    ...
    ValueError: malformed JSON in model output: nested deeper than 100 levels
    """
    string(text, "text")
    if not (0 <= start < len(text) and text[start] in "{["):
        raise ValueError(f"no JSON object or array opens at character {start}")
    blob, end = _json_span(text, start)
    try:
        return json.loads(blob), end
    except json.JSONDecodeError as e:
        raise ValueError(f"malformed JSON in model output: {e}") from None


def parse_json(text: str) -> dict:
    """The JSON object in a model's output: the first ``{...}`` or ``[...]`` that parses (read by
    :func:`read_json`: pretty-printed, inside code fences or prose, trailing commas allowed) and is an
    object. ``ValueError`` if there is none, naming the first problem met: malformed or unclosed JSON, JSON
    nested deeper than 100 levels, or JSON that is not an object.

    >>> parse_json('Sure! ```json\\n{"points": []}\\n```')
    {'points': []}
    >>> parse_json('```json {"points": [{"description": "x", "score": "80"},],} ```')
    {'points': [{'description': 'x', 'score': '80'}]}
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty model output")
    whole = text.strip()
    if whole[0] == "{" and whole.count("{") + whole.count("[") <= _MAX_JSON_DEPTH:  # plain JSON, shallow: as is
        try:
            obj = json.loads(whole)
        except json.JSONDecodeError:
            pass  # prose, fences, trailing commas: read below
        else:
            if isinstance(obj, dict):
                return obj
    problem, pos = None, 0
    while (m := _JSON_OPEN.search(text, pos)) is not None:
        try:
            blob, pos = _json_span(text, m.start())
        except ValueError as e:  # never closed, or too deep: what follows belongs to it
            problem = problem or str(e)
            break
        try:
            obj = json.loads(blob)
        except json.JSONDecodeError as e:
            problem = problem or f"malformed JSON in model output: {e}"
            continue
        if isinstance(obj, dict):
            return obj
        problem = problem or f"model output is JSON but not an object: {type(obj).__name__}"
    raise ValueError(problem or "no JSON object in model output")
