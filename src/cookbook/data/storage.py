"""Worlds on disk: byte-stable JSONL plus ``world.json``, validated when read.

>>> import tempfile
>>> from cookbook.data.world import make_world
>>> w = make_world(seed=0, scale="tiny")
>>> with tempfile.TemporaryDirectory() as d:
...     read_world(save_world(w, d)).documents == w.documents
True

:func:`load_world` reads the committed ``data/world-<scale>/`` (found by :func:`data_dir`) or
generates the identical world.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from .._validate import seed as check_seed
from ..paths import shipped
from .records import DEFAULT_SEED, ENTITY_TYPES, KNOBS, PHRASINGS, PREDICATES, ROW_TYPES, World, resolve_scale
from .world import make_world

__all__ = ["DataError", "data_dir", "load_world", "read_json_lines", "read_text", "read_world", "save_world"]


class DataError(ValueError):
    """A stored world that does not match its ``world.json`` or refers to ids it does not contain.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "world.json").write_text("[]")
    ...     read_world(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.data.storage.DataError: .../world.json: expected a JSON object, got list
    """


def _dumps(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _file_record(data: bytes) -> dict:
    """What ``world.json`` stores per JSONL file: its row count and the sha256 of its bytes."""
    return {"rows": len(data.splitlines()), "sha256": hashlib.sha256(data).hexdigest()}


def save_world(world: World, directory: str | os.PathLike) -> Path:
    """Write ``world`` as JSONL files plus ``world.json`` (metadata, and each file's row count and
    sha256, checked by :func:`read_world`) into ``directory``.

    >>> import tempfile
    >>> from cookbook.data.world import make_world
    >>> with tempfile.TemporaryDirectory() as d:
    ...     sorted(p.name for p in save_world(make_world(seed=0, scale="tiny"), d).iterdir())[-3:]
    ['mentions.jsonl', 'questions.jsonl', 'world.json']
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {"seed": world.seed, "scale": world.scale, **{k: getattr(world, k) for k in KNOBS},
            "group_themes": world.group_themes, "group_regions": world.group_regions, "stats": world.stats(),
            "files": {}}
    for name in ROW_TYPES:
        data = "".join(_dumps(asdict(r)) + "\n" for r in getattr(world, name)).encode("utf-8")
        (d / f"{name}.jsonl").write_bytes(data)
        meta["files"][f"{name}.jsonl"] = _file_record(data)
    (d / "world.json").write_text(_dumps(meta) + "\n", encoding="utf-8")
    return d


def _tuplify(v):
    return tuple(_tuplify(x) for x in v) if isinstance(v, list) else v


def _check_meta(meta, meta_path: Path) -> None:
    """``world.json`` has the fields :func:`read_world` needs, including a record for every JSONL file."""
    if not isinstance(meta, dict):
        raise DataError(f"{meta_path}: expected a JSON object, got {type(meta).__name__}")
    for key in ("seed", "scale", *KNOBS, "group_themes", "group_regions", "files"):
        if key not in meta:
            raise DataError(f"{meta_path}: no {key!r} field; write the world again with save_world")
    for name in ROW_TYPES:
        if not isinstance(meta["files"], dict) or not isinstance(meta["files"].get(f"{name}.jsonl"), dict):
            raise DataError(f"{meta_path}: 'files' has no row count and sha256 for {name}.jsonl")


def _check_file(path: Path, data: bytes, expected: dict) -> None:
    """Row count, then content hash, against what ``world.json`` recorded for this file."""
    got = _file_record(data)
    if got["rows"] != expected.get("rows"):
        raise DataError(f"{path}: {got['rows']} rows, world.json says {expected.get('rows')}")
    if got["sha256"] != expected.get("sha256"):
        raise DataError(f"{path}: content differs from world.json (sha256 {got['sha256'][:12]}…, "
                        f"recorded {str(expected.get('sha256'))[:12]}…): the file was edited; if on purpose, "
                        "write the world again with save_world")


def _check_references(world: World) -> None:
    """Every id a row refers to exists; ``file line N`` in a message is the row's line in its JSONL file."""
    groups = range(len(world.group_themes))

    def need(ok: bool, file: str, i: int, what: str) -> None:
        if not ok:
            raise DataError(f"{file}.jsonl line {i + 1}: {what}")

    def unique(rows, file: str) -> None:
        seen = set()
        for i, r in enumerate(rows):
            need(r.id not in seen, file, i, f"duplicate id {r.id!r}")
            seen.add(r.id)

    if len(world.group_regions) != len(world.group_themes):
        raise DataError(f"world.json: {len(world.group_themes)} group_themes but "
                        f"{len(world.group_regions)} group_regions")
    unique(world.entities, "entities")
    unique(world.documents, "documents")
    unique(world.questions, "questions")
    unique(world.global_questions, "global_questions")
    ents, docs = world.entity_index, world.doc_index
    for i, e in enumerate(world.entities):
        need(e.type in ENTITY_TYPES, "entities", i, f"type {e.type!r} is not one of {ENTITY_TYPES}")
        need(e.group in groups, "entities", i, f"group {e.group} is not a group in world.json")
    for i, d in enumerate(world.documents):
        need(d.group in groups, "documents", i, f"group {d.group} is not a group in world.json")
    for i, m in enumerate(world.mentions):
        need(m.doc_id in docs, "mentions", i, f"document {m.doc_id!r} is not in documents.jsonl")
        need(m.entity_id in ents, "mentions", i, f"entity {m.entity_id!r} is not in entities.jsonl")
        need(docs[m.doc_id].text[m.start:m.end] == m.surface, "mentions", i,
             f"span {m.start}:{m.end} of {m.doc_id} is not {m.surface!r}")
    for i, f in enumerate(world.facts):
        for eid in (f.subject, f.object):
            need(eid in ents, "facts", i, f"entity {eid!r} is not in entities.jsonl")
        need(f.doc_id in docs, "facts", i, f"document {f.doc_id!r} is not in documents.jsonl")
        need(f.predicate in PREDICATES, "facts", i, f"predicate {f.predicate!r} is not one of {sorted(PREDICATES)}")
        ends = (ents[f.subject].type, ents[f.object].type)
        need(ends == PREDICATES[f.predicate], "facts", i,
             f"{f.predicate} relates {' and '.join(PREDICATES[f.predicate])}, not {' and '.join(ends)}")
        need(f.phrasing in PHRASINGS, "facts", i, f"phrasing {f.phrasing!r} is not one of {PHRASINGS}")
    for i, q in enumerate(world.questions):
        for eid in (q.answer, *q.path):
            need(eid in ents, "questions", i, f"entity {eid!r} is not in entities.jsonl")
        for did in q.supporting:
            need(did in docs, "questions", i, f"supporting document {did!r} is not in documents.jsonl")
    for i, q in enumerate(world.global_questions):
        for g in q.groups:
            need(g in groups, "global_questions", i, f"group {g} is not a group in world.json")
        need(bool(q.themes) and bool(q.entities), "global_questions", i, "no gold themes or no gold entities")
        for t in q.themes:
            need(t in world.group_themes, "global_questions", i, f"theme {t!r} is not in world.json's group_themes")
        for eid in q.entities:
            need(eid in ents, "global_questions", i, f"entity {eid!r} is not in entities.jsonl")
        need(isinstance(q.family, str) and "/" in q.family, "global_questions", i,
             f"family {q.family!r} is not '<scope>/<ask>'")


def read_world(directory: str | os.PathLike, *, seed: int | None = None, scale: str | None = None) -> World:
    """Read a world written by :func:`save_world` and validate it: the seed and scale asked for (when given)
    against ``world.json``'s, each file's row count and sha256 against ``world.json``, then every id a row
    refers to. A missing file raises ``FileNotFoundError``, anything else wrong a :class:`DataError` naming
    the file (and line) and the problem.

    >>> import tempfile
    >>> from cookbook.data.world import make_world
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (save_world(make_world(seed=0, scale="tiny"), d) / "facts.jsonl").write_text("")
    ...     read_world(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.data.storage.DataError: .../facts.jsonl: 0 rows, world.json says 88
    >>> with tempfile.TemporaryDirectory() as d:
    ...     read_world(save_world(make_world(seed=0, scale="tiny"), d), seed=7, scale="ci")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.data.storage.DataError: .../world.json: holds the world of seed 0 at scale 'tiny', not the one ...
    """
    d = Path(directory)
    meta_path = d / "world.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"world metadata file missing: {meta_path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise DataError(f"corrupt world file {meta_path}: {_problem(e)}") from None
    _check_meta(meta, meta_path)
    asked = (meta["seed"] if seed is None else seed, meta["scale"] if scale is None else resolve_scale(scale))
    if asked != (meta["seed"], meta["scale"]):
        raise DataError(f"{meta_path}: holds the world of seed {meta['seed']} at scale {meta['scale']!r}, not the one "
                        f"asked for, seed {asked[0]} at scale {asked[1]!r}; write that one with `python -m cookbook "
                        f"world --scale {asked[1]} --seed {asked[0]} --out <folder>` (or set $COOKBOOK_DATA to a "
                        "folder that has it)")
    parts = {}
    for name, cls in ROW_TYPES.items():
        path = d / f"{name}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"world data file missing: {path}")
        data = path.read_bytes()
        _check_file(path, data, meta["files"][path.name])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"corrupt world file {path}: {_problem(e)}") from None
        rows = []
        for lineno, line in enumerate(text.splitlines(), 1):
            try:
                rows.append(cls(**{k: _tuplify(v) for k, v in json.loads(line).items()}))
            except (json.JSONDecodeError, TypeError, AttributeError, RecursionError) as e:
                raise DataError(f"corrupt world file {path}, line {lineno}: {_problem(e)}") from None
        parts[name] = rows
    world = World(meta["seed"], meta["scale"], meta["mixing"], meta["group_themes"], meta["group_regions"], **parts,
                  **{k: meta[k] for k in KNOBS if k != "mixing"})
    try:
        _check_references(world)
    except (TypeError, AttributeError, KeyError, ValueError) as e:  # a field of the wrong type in some row
        raise DataError(f"corrupt world in {d}: a field has the wrong type ({type(e).__name__}: {e})") from None
    return world


def read_text(path: str | os.PathLike) -> str:
    """The UTF-8 text of the data file ``path``; a file that is not UTF-8 is a :class:`DataError` naming it (a
    missing one stays ``FileNotFoundError``).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "book.txt").write_bytes(b"caf\\xe9")
    ...     read_text(Path(d) / "book.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.data.storage.DataError: corrupt data file .../book.txt: not UTF-8 text (... at byte 3)
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"corrupt data file {path}: {_problem(e)}") from None


def read_json_lines(path: str | os.PathLike) -> list[dict]:
    """The JSON objects of the JSON-lines file ``path``, one a non-blank line; a line that is not JSON, is JSON
    nested too deeply, or is not an object, and a file that is not UTF-8, are a :class:`DataError` naming the
    file and the line.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "rows.jsonl").write_text('{"id": 1}\\n[2]\\n')
    ...     read_json_lines(Path(d) / "rows.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.data.storage.DataError: corrupt data file .../rows.jsonl, line 2: a JSON list, not an object
    """
    rows = []
    for lineno, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as e:
            raise DataError(f"corrupt data file {path}, line {lineno}: {_problem(e)}") from None
        if not isinstance(row, dict):
            kind = {list: "list", str: "string"}.get(type(row), type(row).__name__)
            raise DataError(f"corrupt data file {path}, line {lineno}: a JSON {kind}, not an object")
        rows.append(row)
    return rows


def _problem(e: Exception) -> str:
    """What is wrong with a file's text, in words, for a :class:`DataError`."""
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8 text ({e.reason} at byte {e.start})"
    if isinstance(e, RecursionError):
        return "JSON nested too deeply to read"
    return f"{type(e).__name__}: {e}" if not isinstance(e, json.JSONDecodeError) else f"not valid JSON ({e})"


def data_dir() -> Path | None:
    """The ``data/`` folder: ``$COOKBOOK_DATA``, else one found above the cwd, else the checkout's or the
    installed wheel's (:func:`cookbook.paths.shipped`); ``None`` when there is none.

    >>> os.environ["COOKBOOK_DATA"] = "/srv/cookbook-data"
    >>> data_dir().as_posix()
    '/srv/cookbook-data'
    >>> del os.environ["COOKBOOK_DATA"]
    """

    env = os.environ.get("COOKBOOK_DATA")
    if env:
        return Path(env)
    for d in (Path.cwd(), *Path.cwd().parents):
        if (d / "data" / "world-class" / "world.json").exists():
            return d / "data"
    try:
        return shipped("data")
    except FileNotFoundError:
        return None


def load_world(scale: str = "class", seed: int = DEFAULT_SEED) -> World:
    """The world at ``scale``: read from ``data/world-<scale>/`` when committed there (default seed),
    otherwise generated — identical either way, so a notebook works from any directory. Taught in
    notebooks/00_quickstart.ipynb (through :func:`cookbook.data.corpus.load_corpus`).

    >>> load_world("ci", seed=0).stats()["entities"]
    51
    """
    name, seed = resolve_scale(scale), check_seed(seed)
    d = data_dir()
    if d is not None and seed == DEFAULT_SEED and (d / f"world-{name}" / "world.json").exists():
        return read_world(d / f"world-{name}", seed=seed, scale=name)
    return make_world(seed, name)

