"""Reading the output folder of a Microsoft GraphRAG index (what ``graphrag index`` writes: ``documents``,
``text_units``, ``entities``, ``relationships``, ``communities``, ``community_reports``, ``covariates`` and
``embeddings.*`` parquet tables, GraphRAG's v1-v3 output schema) into plain records, so the series' methods run
on an index a user made. The index layer turns these rows into its own types
(:mod:`cookbook.index.graphrag_tables`: :class:`~cookbook.index.graph_extraction.ExtractedGraph`,
:class:`~cookbook.index.hierarchy.Hierarchy`, :class:`~cookbook.index.reports.Report`).

Parquet needs ``pyarrow``, the optional extra ``graphrag`` (``pip install pyarrow``, or
``pip install -e '.[graphrag]'`` in a checkout), imported inside :func:`read_graphrag_index` only. The same
records are also written to and read from JSON lines
(:func:`write_index_json`, :func:`read_index_json`), which need nothing but the standard library: that is how the
series ships GraphRAG's own example index (Operation Dulce, ``load_corpus("dulce")``).

>>> from cookbook.data.storage import data_dir
>>> idx = read_index_json(data_dir() / "dulce" / "index")
>>> len(idx.text_units), len(idx.entities), len(idx.relationships), len(idx.communities), len(idx.claims)
(5, 39, 107, 10, 41)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..paths import place_files
from ..text import sentence_spans
from .records import Document
from .storage import DataError, read_json_lines

__all__ = ["SCHEMA_COLUMNS", "GraphRAGIndex", "IndexClaim", "IndexCommunity", "IndexEntity", "IndexRelationship",
           "IndexReport", "read_graphrag_index", "read_index_json", "write_index_json"]


@dataclass(frozen=True)
class IndexEntity:
    """A row of GraphRAG's ``entities`` table: ``title`` is the name as GraphRAG stores it (upper case),
    ``human_readable_id`` the number reports cite (``[Data: Entities (4)]``), ``degree`` its relationships.

    >>> IndexEntity("e1", 0, "ALEX MERCER", "PERSON", "An agent.", ("u1",), 1, 3).title
    'ALEX MERCER'
    """

    id: str
    human_readable_id: int
    title: str
    type: str
    description: str
    text_unit_ids: tuple[str, ...]
    frequency: int
    degree: int


@dataclass(frozen=True)
class IndexRelationship:
    """A row of ``relationships``: ``source`` and ``target`` are entity *titles*; no relation type (GraphRAG
    extracts none); ``weight`` the strengths summed over text units.

    >>> IndexRelationship("r1", 0, "ALEX MERCER", "DULCE", "He goes there.", 2.0, 5, ("u1",)).weight
    2.0
    """

    id: str
    human_readable_id: int
    source: str
    target: str
    description: str
    weight: float
    combined_degree: int
    text_unit_ids: tuple[str, ...]


@dataclass(frozen=True)
class IndexCommunity:
    """A row of ``communities``: ``community`` its number, ``level`` (0 coarsest), ``parent`` (-1 at the top),
    ``children``, member ``entity_ids`` and ``relationship_ids`` (the tables' ``id`` columns).

    >>> IndexCommunity("c", 0, 0, 0, -1, (7,), "Community 0", ("e1",), (), (), 1).children
    (7,)
    """

    id: str
    human_readable_id: int
    community: int
    level: int
    parent: int
    children: tuple[int, ...]
    title: str
    entity_ids: tuple[str, ...]
    relationship_ids: tuple[str, ...]
    text_unit_ids: tuple[str, ...]
    size: int


@dataclass(frozen=True)
class IndexReport:
    """A row of ``community_reports``: what the model wrote for ``community`` (title, summary, ``findings`` as
    ``(summary, explanation)`` pairs citing ``[Data: Entities (...); Relationships (...)]``, ``rank`` its 0-10
    rating, ``full_content`` the whole report as markdown).

    >>> IndexReport("r", 7, 7, 1, 0, (), "Squad", "S.", "# Squad", 8.5, "High.", (("F", "E [Data: Entities (4)]"),),
    ...             4).findings[0][0]
    'F'
    """

    id: str
    human_readable_id: int
    community: int
    level: int
    parent: int
    children: tuple[int, ...]
    title: str
    summary: str
    full_content: str
    rank: float
    rating_explanation: str
    findings: tuple[tuple[str, str], ...]
    size: int


@dataclass(frozen=True)
class IndexClaim:
    """A row of ``covariates``: one claim (``covariate_type`` ``"claim"``) the model made about ``subject_id``
    (an entity title) — its ``type``, ``description``, ``status`` (TRUE / FALSE / SUSPECTED), dates, the
    ``source_text`` it quotes and the ``text_unit_id`` it came from.

    >>> IndexClaim("c", 0, "claim", "MISSION", "They met.", "SQUAD", "NONE", "TRUE", "NONE", "NONE", "q", "u1").status
    'TRUE'
    """

    id: str
    human_readable_id: int
    covariate_type: str
    type: str
    description: str
    subject_id: str
    object_id: str
    status: str
    start_date: str
    end_date: str
    source_text: str
    text_unit_id: str


@dataclass
class GraphRAGIndex:
    """A GraphRAG index as plain records: ``documents`` and ``text_units`` as
    :class:`~cookbook.data.records.Document` (a text unit's document in ``unit_document``, its GraphRAG token
    count in ``unit_tokens``), the other tables as rows, ``embeddings`` as ``{name: (ids, vectors)}`` (vectors a
    list of float lists; empty when read from JSON).

    >>> GraphRAGIndex([], [], {}, {}, [], [], [], [], []).entities
    []
    """

    documents: list[Document]
    text_units: list[Document]
    unit_document: dict[str, str]
    unit_tokens: dict[str, int]
    entities: list[IndexEntity]
    relationships: list[IndexRelationship]
    communities: list[IndexCommunity]
    reports: list[IndexReport]
    claims: list[IndexClaim]
    embeddings: dict[str, tuple[tuple[str, ...], list[list[float]]]] = field(default_factory=dict)

    def same_tables(self, other: GraphRAGIndex) -> bool:
        """Whether ``other`` holds the same records in every table (embeddings left out).

        >>> GraphRAGIndex([], [], {}, {}, [], [], [], [], []).same_tables(GraphRAGIndex([], [], {}, {}, [], [], [],
        ...                                                                              [], []))
        True
        """
        return all(getattr(self, t) == getattr(other, t) for t in _JSON_TABLES)


# The columns each table must have: GraphRAG's v1-v3 output schema (v3.1.2's example index has exactly these).
SCHEMA_COLUMNS = {
    "documents": ("id", "title", "text"),
    "text_units": ("id", "text", "n_tokens", "document_id"),
    "entities": tuple(f.name for f in fields(IndexEntity)),
    "relationships": tuple(f.name for f in fields(IndexRelationship)),
    "communities": tuple(f.name for f in fields(IndexCommunity)),
    "community_reports": tuple(f.name for f in fields(IndexReport)),
    "covariates": tuple(f.name for f in fields(IndexClaim)),
}
_REQUIRED = ("documents", "text_units", "entities", "relationships")
_OPTIONAL = ("communities", "community_reports", "covariates")
_ROWS = {"entities": IndexEntity, "relationships": IndexRelationship, "communities": IndexCommunity,
         "community_reports": IndexReport, "covariates": IndexClaim}
_ATTR = {"entities": "entities", "relationships": "relationships", "communities": "communities",
         "community_reports": "reports", "covariates": "claims"}
_JSON_TABLES = ("documents", "text_units", "unit_document", "unit_tokens", "entities", "relationships",
                "communities", "reports", "claims")


def _document(doc_id: str, text: str) -> Document:
    return Document(str(doc_id), text, tuple(sentence_spans(text)), 0)


def _value(v):
    """A parquet cell as the records hold it: lists and arrays as tuples, None text as ''."""
    if isinstance(v, (list, tuple)):
        return tuple(_value(x) for x in v)
    if isinstance(v, dict):
        return tuple(v[k] for k in ("summary", "explanation"))  # a finding
    return "" if v is None else v


def _row(cls, row: dict):
    return cls(**{f.name: _value(row[f.name]) for f in fields(cls)})


def _index_from_tables(tables: dict[str, list[dict]], embeddings, where) -> GraphRAGIndex:
    """The checked :class:`GraphRAGIndex` of ``tables``; a row without a field or of the wrong type, or tables
    that do not fit together (:func:`_check`), is one :class:`DataError` naming ``where``."""
    try:
        index = _build(tables, embeddings)
        problem = _check(index)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a row without a field, or of the wrong type
        raise DataError(f"corrupt index in {where}: a row lacks a field or has the wrong type "
                        f"({type(e).__name__}: {e})") from None
    if problem:
        raise DataError(f"corrupt index in {where}: {problem}")
    return index


def _duplicate(values) -> object | None:
    seen: set = set()
    return next((v for v in values if v in seen or seen.add(v)), None)


def _check(index: GraphRAGIndex) -> str | None:
    """What makes ``index``'s tables not one index (None: nothing): ids that repeat, a number that is not one,
    a reference to a row that is not there, or communities that are not a tree (each child one level below
    its parent, so that walking down ends)."""
    import math

    for table, rows, key in (("documents", index.documents, "id"), ("text_units", index.text_units, "id"),
                             ("entities", index.entities, "id"), ("entities", index.entities, "title"),
                             ("entities", index.entities, "human_readable_id"),
                             ("relationships", index.relationships, "id"),
                             ("communities", index.communities, "community")):
        again = _duplicate(getattr(r, key) for r in rows)
        if again is not None:
            return f"{table} has two rows with {key} {again!r}"
    bad = next((u for u, n in index.unit_tokens.items() if isinstance(n, bool) or n < 0), None)
    if bad is not None:
        return f"text unit {bad!r} has n_tokens {index.unit_tokens[bad]!r}"
    for e in index.entities:
        if not isinstance(e.human_readable_id, int) or isinstance(e.human_readable_id, bool) or e.human_readable_id < 0:
            return f"entity {e.title!r} has human_readable_id {e.human_readable_id!r}, not an integer >= 0"
    for r in index.relationships:
        if isinstance(r.weight, bool) or not isinstance(r.weight, int | float) or not math.isfinite(r.weight):
            return f"relationship {r.id!r} has weight {r.weight!r}, not a finite number"
    entity_ids = {e.id for e in index.entities}
    level = {c.community: c.level for c in index.communities}
    for c in index.communities:
        stray = next((u for u in c.entity_ids if u not in entity_ids), None)
        if stray is not None:
            return f"community {c.community} holds entity {stray!r}, which the entities table has not"
        child = next((k for k in c.children if level.get(k) != c.level + 1), None)
        if child is not None:
            return (f"community {c.community} (level {c.level}) lists child {child!r}, which is not a community "
                    "of the next level")
    for r in index.reports:
        if level.get(r.community) != r.level:
            return f"report {r.id!r} is about community {r.community!r} at level {r.level!r}, which is not one"
    return None


def _build(tables: dict[str, list[dict]], embeddings) -> GraphRAGIndex:
    units = tables["text_units"]
    return GraphRAGIndex(
        [_document(d["id"], d["text"]) for d in tables["documents"]],
        [_document(u["id"], u["text"]) for u in units],
        {u["id"]: u["document_id"] for u in units}, {u["id"]: int(u["n_tokens"]) for u in units},
        *[[_row(_ROWS[name], r) for r in tables.get(name, [])] for name in _ROWS], embeddings=embeddings)


def read_graphrag_index(folder: str | os.PathLike) -> GraphRAGIndex:
    """Read a GraphRAG output folder (the ``output/`` that ``graphrag index`` writes) into a
    :class:`GraphRAGIndex`. ``documents``, ``text_units``, ``entities`` and ``relationships`` must be there;
    ``communities``, ``community_reports``, ``covariates`` (claims, when claim extraction was on) and
    ``embeddings.*.parquet`` are read when present. A folder of GraphRAG v0's ``create_final_*.parquet``, a table
    missing a column of :data:`SCHEMA_COLUMNS` or a missing ``pyarrow`` is one ``ValueError`` / ``ImportError``
    naming it. Taught in notebooks/03_leiden_communities.ipynb.

    >>> from cookbook.data.storage import data_dir
    >>> idx = read_graphrag_index(data_dir() / "dulce" / "output")  # doctest: +SKIP
    >>> idx.same_tables(read_index_json(data_dir() / "dulce" / "index"))  # doctest: +SKIP
    True
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder (point read_graphrag_index at GraphRAG's output folder)")
    if list(folder.glob("create_final_*.parquet")):
        raise ValueError(f"{folder}: GraphRAG v0 output (create_final_*.parquet), an unknown schema version here: "
                         "this reader reads GraphRAG's v1-v3 output tables (entities.parquet, ...); re-index with "
                         "graphrag >= 1")
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError("reading GraphRAG's parquet tables needs pyarrow, the optional extra 'graphrag': "
                          "pip install pyarrow (the graphrag extra: pip install -e '.[graphrag]' in a checkout)") from e
    tables: dict[str, list[dict]] = {}
    for name in _REQUIRED + _OPTIONAL:
        path = folder / f"{name}.parquet"
        if not path.exists():
            if name in _REQUIRED:
                raise ValueError(f"{folder}: no {name}.parquet, which every GraphRAG index has")
            continue
        table = pq.read_table(path)
        missing = [c for c in SCHEMA_COLUMNS[name] if c not in table.column_names]
        if missing:
            raise ValueError(f"{path}: lacks column(s) {', '.join(missing)}, an unknown GraphRAG output schema "
                             "version: this reader reads GraphRAG's v1-v3 tables (cookbook.data.graphrag_index."
                             "SCHEMA_COLUMNS)")
        tables[name] = table.select(list(SCHEMA_COLUMNS[name])).to_pylist()
    embeddings = {}
    for path in sorted(folder.glob("embeddings.*.parquet")):
        table = pq.read_table(path)
        if not {"id", "embedding"} <= set(table.column_names):
            raise ValueError(f"{path}: an embeddings table needs columns id and embedding")
        embeddings[path.name[len("embeddings."):-len(".parquet")]] = (
            tuple(table.column("id").to_pylist()), table.column("embedding").to_pylist())
    return _index_from_tables(tables, embeddings, folder)


def write_index_json(index: GraphRAGIndex, folder: str | os.PathLike) -> Path:
    """Write ``index``'s tables as JSON lines under ``folder`` (created; an existing file or link of any of their
    names is refused before anything is written, nothing a user made is overwritten or written through),
    embeddings left out. :func:`read_index_json` reads them back equal.

    >>> import tempfile
    >>> idx = GraphRAGIndex([_document("d", "Hi.")], [_document("u", "Hi.")], {"u": "d"}, {"u": 2}, [], [], [], [],
    ...                     [])
    >>> read_index_json(write_index_json(idx, tempfile.mkdtemp() + "/x")).same_tables(idx)
    True
    """
    if not isinstance(index, GraphRAGIndex):
        raise TypeError(f"index must be a GraphRAGIndex, got {type(index).__name__}")
    folder = Path(folder)
    units = [{"id": u.id, "text": u.text, "document_id": index.unit_document[u.id], "n_tokens": index.unit_tokens[u.id]}
             for u in index.text_units]
    out = {"documents": [{"id": d.id, "text": d.text} for d in index.documents], "text_units": units}
    out.update({name: [asdict(r) for r in getattr(index, _ATTR[name])] for name in _ROWS})
    taken = next((folder / f"{name}.jsonl" for name in out if os.path.lexists(folder / f"{name}.jsonl")), None)
    if taken is not None:  # before anything is written; a link (a dangling one too) counts
        raise FileExistsError(f"{taken} exists: write into an empty folder")
    place_files({f"{name}.jsonl": "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                          for r in rows).encode("utf-8") for name, rows in out.items()}, folder)
    return folder


def read_index_json(folder: str | os.PathLike) -> GraphRAGIndex:
    """The :class:`GraphRAGIndex` :func:`write_index_json` wrote to ``folder`` (no embeddings).

    >>> from cookbook.data.storage import data_dir
    >>> read_index_json(data_dir() / "dulce" / "index").reports[0].title
    'Paranormal Military Squad and Operation Dulce'
    """
    folder = Path(folder)
    tables = {}
    for name in ("documents", "text_units", *_ROWS):
        path = folder / f"{name}.jsonl"
        if not path.exists():
            raise ValueError(f"{folder}: no {name}.jsonl (write it with write_index_json)")
        tables[name] = read_json_lines(path)
    try:
        for r in tables["community_reports"]:
            r["findings"] = [{"summary": s, "explanation": e} for s, e in r["findings"]]
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a row without a field, or of the wrong type
        raise DataError(f"corrupt index in {folder}: a row lacks a field or has the wrong type "
                        f"({type(e).__name__}: {e})") from None
    return _index_from_tables(tables, {}, folder)
