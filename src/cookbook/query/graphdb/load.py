"""Loading a passage graph and its vectors into a :class:`~cookbook.query.graphdb.GraphDB` in ``UNWIND`` batches,
the vector index and its search width.

>>> import numpy as np, scipy.sparse as sp
>>> from cookbook.query.graphdb import open_graph
>>> with open_graph("doctest-load-module", private=True) as db:
...     load_passage_graph(db, sp.csr_matrix(np.array([[0, 1], [1, 0]])), [[1.0, 0.0]]).n_nodes
2
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..._validate import integer, square_csr
from .connection import FALKORDB, NEO4J, Dialect, GraphDB, LoadReport
from .server import GraphDBError

__all__ = ["NEO4J_INDEXES", "drop_passage_graph", "load_passage_graph", "set_vector_index"]

# The indexes a load makes on Neo4j (one database holds them all, by name): the two id indexes and the vector index.
NEO4J_INDEXES = ("entity_id", "passage_embedding", "passage_id")
_LABELS = ("Passage", "Entity")


# ---------------------------------------------------------------- loading

def _statements(dialect: Dialect) -> dict[str, str]:
    # Edges travel with their first endpoint (one index lookup per edge, not two: 3× faster than pairs).
    return {
        "passage id index": "CREATE INDEX FOR (p:Passage) ON (p.id)",
        "entity id index": "CREATE INDEX FOR (e:Entity) ON (e.id)",
        "entities": "UNWIND $rows AS r CREATE (:Entity {id: r.id, key: r.key})",
        "passages and mentions": "UNWIND $rows AS r\n"
                                 f"CREATE (p:Passage {{id: r.id, key: r.key, embedding: {dialect.vector_value}}})\n"
                                 "WITH p, r UNWIND r.entities AS eid\n"
                                 "MATCH (e:Entity {id: eid}) CREATE (p)-[:MENTIONS]->(e)",
        "related entities": "UNWIND $rows AS r MATCH (a:Entity {id: r.id})\n"
                            "WITH a, r UNWIND r.related AS bid\n"
                            "MATCH (b:Entity {id: bid}) CREATE (a)-[:RELATED]->(b)",
    }


def _wait_for_indexes(db: GraphDB, timeout: float = 60.0) -> int:
    """Poll until every index is built; returns the polls sent (a number that depends on timing)."""
    if db.dialect is NEO4J:
        db.query("CALL db.awaitIndexes()")
        return 1
    deadline, polls = time.monotonic() + timeout, 1
    while any(status != "OPERATIONAL" for (status,) in db.query("CALL db.indexes() YIELD status RETURN status")):
        if time.monotonic() > deadline:
            raise GraphDBError(f"the indexes of graph {db.name!r} were not built within {timeout:g} s")
        time.sleep(0.005)
        polls += 1
    return polls


def drop_passage_graph(db: GraphDB) -> None:
    """Delete what :func:`load_passage_graph` made in this session: on FalkorDB the whole graph (``GRAPH.DELETE``:
    nodes, edges and indexes; the load refused any graph that existed before it), on Neo4j the ``Passage`` and
    ``Entity`` nodes and the vector index, nothing else. A graph this session did not load is never deleted:
    :class:`GraphDBError`.

    >>> from cookbook.query.graphdb import open_graph
    >>> with open_graph("doctest-drop", private=True) as db:
    ...     _ = load_passage_graph(db, sp.csr_matrix((1, 1)), [[1.0]])
    ...     drop_passage_graph(db)
    ...     db.query("MATCH (n) RETURN count(n)"), db.loaded
    ([[0]], None)
    """
    if db.loaded is None:
        raise GraphDBError(f"graph {db.name!r} on {db.where} was not loaded by load_passage_graph in this session: "
                           "drop_passage_graph deletes only a graph it made, so it is left as it is")
    _delete(db)


def _delete(db: GraphDB) -> None:
    if db.dialect is NEO4J:  # our labels' nodes and the indexes a load makes, by name: nothing else
        db.query("MATCH (n) WHERE n:Passage OR n:Entity DETACH DELETE n")
        for name in NEO4J_INDEXES:
            db.query(f"DROP INDEX {name} IF EXISTS")
    else:
        import redis

        db.round_trips += 1
        try:
            db.graph.delete()
        except redis.RedisError as e:
            raise GraphDBError(f"cannot delete graph {db.name!r} on {db.where}: {e}") from None
    db.loaded = None


def load_passage_graph(db: GraphDB, adjacency, vectors, *, keys: Sequence[str] | None = None,
                       batch_size: int = 500, ef_runtime: int | None = None, replace: bool = False) -> LoadReport:
    """Load a passage graph into ``db``: nodes ``0 … P−1`` are passages (``vectors``, shape ``(P, d)``, one
    row each), the other nodes of the symmetric ``adjacency`` (``(n, n)``) are entities; an edge between a
    passage and an entity becomes ``(:Passage)-[:MENTIONS]->(:Entity)``, one between entities
    ``-[:RELATED]->`` (a passage–passage edge raises ``ValueError``). Node property ``id`` is the node's row;
    ``key`` its name (``keys``, default the row as text). Nodes go in ``UNWIND`` batches of ``batch_size``
    rows, each carrying its edges; then the cosine vector index (HNSW; ``ef_runtime`` is its search width, default the
    number of passages, which makes the search exhaustive: see :func:`set_vector_index`).

    On FalkorDB a graph that was on the server before ``db`` opened it (:attr:`GraphDB.existed`: nodes or not, an
    empty graph may hold someone's indexes) or that holds nodes or indexes is refused (on Neo4j: a database holding
    ``Passage`` or ``Entity`` nodes, an index named as ours, :data:`NEO4J_INDEXES`, or any index on those labels,
    which ``CREATE ... IF NOT EXISTS`` would silently take as ours), unless ``replace=True``, which deletes it
    first; so the graph :func:`drop_passage_graph` deletes is always one this load created. On Neo4j an index of
    another name on our labels is someone else's: refused even with ``replace=True``, never dropped.

    >>> from cookbook.query.graphdb import open_graph
    >>> with open_graph("doctest-load", private=True) as db:
    ...     r = load_passage_graph(db, sp.csr_matrix(np.array([[0, 1], [1, 0]])), [[1.0, 0.0]])
    ...     r.n_passages, r.n_entities, r.n_edges, db.query("MATCH (p:Passage)-[:MENTIONS]->(e) RETURN p.id, e.id")
    (1, 1, 1, [[0, 1]])
    """
    t0, trips0 = time.perf_counter(), db.round_trips
    A = square_csr(adjacency, "adjacency", dtype=None, csc_ok=True).tocsr()
    V = np.asarray(vectors, dtype=float)
    if V.ndim != 2 or V.shape[0] == 0 or V.shape[1] == 0:
        raise ValueError(f"vectors must be a non-empty 2-D (passages × dim) array, got shape {V.shape}")
    if not np.all(np.isfinite(V)):
        raise ValueError("vectors contain NaN or inf")
    P, n = V.shape[0], A.shape[0]
    if P > n:
        raise ValueError(f"vectors has {P} rows (passages) but adjacency only {n} nodes")
    norms = np.linalg.norm(V, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"passage {int(np.flatnonzero(norms == 0)[0])} has an all-zero vector: its cosine is "
                         "undefined (the database would score it NaN)")
    V = V / norms[:, None]
    keys = [str(i) for i in range(n)] if keys is None else [str(k) for k in keys]
    if len(keys) != n:
        raise ValueError(f"keys has length {len(keys)}, adjacency has {n} nodes")
    batch_size = integer(batch_size, "batch_size")
    P_pattern = sp.csr_matrix((np.ones(A.nnz, dtype=bool), A.indices, A.indptr), shape=A.shape)
    if (P_pattern != P_pattern.T).nnz:
        raise ValueError("adjacency is not symmetric: the database stores undirected edges once, so symmetrise it "
                         "first (A.maximum(A.T))")
    upper = sp.triu(P_pattern, k=1).tocoo()  # each undirected edge once, self-loops dropped
    order = np.lexsort((upper.col, upper.row))  # by first endpoint, then second: edges grouped per node
    u, v = upper.row[order].astype(int), upper.col[order].astype(int)
    if np.any(v < P):
        i = int(np.flatnonzero(v < P)[0])
        raise ValueError(f"edge {u[i]}–{v[i]} joins two passages: the passage graph links passages through entities")
    held, foreign = _existing(db)
    if held:
        if foreign or not replace:
            how = (f"replace=True would not delete {', '.join(map(repr, foreign))} either (an index on the "
                   f"{' and '.join(_LABELS)} labels a load does not make): drop it yourself or use another database"
                   if foreign else "pass replace=True to delete it and load anew, or choose another graph name")
            raise GraphDBError(f"graph {db.name!r} on {db.where} already exists ({held}): load_passage_graph loads "
                               f"only into a graph it creates, so that deleting it later deletes nothing else; {how}")
        _delete(db)
        db.existed = False
    st = _statements(db.dialect)
    if db.dialect is NEO4J:  # Neo4j refuses a second identical index: create them only when missing
        st["passage id index"] = "CREATE INDEX passage_id IF NOT EXISTS FOR (p:Passage) ON (p.id)"
        st["entity id index"] = "CREATE INDEX entity_id IF NOT EXISTS FOR (e:Entity) ON (e.id)"
    db.query(st["passage id index"])
    db.query(st["entity id index"])
    batches = 0

    def send(what, rows):
        nonlocal batches
        for s in range(0, len(rows), batch_size):
            db.query(st[what], {"rows": rows[s:s + batch_size]})
            batches += 1

    mentions = np.split(v[u < P], np.searchsorted(u[u < P], np.arange(1, P)))  # per passage, sorted
    send("entities", [{"id": i, "key": keys[i]} for i in range(P, n)])
    send("passages and mentions", [{"id": i, "key": keys[i], "v": V[i].tolist(), "entities": mentions[i].tolist()}
                                   for i in range(P)])
    ru, rv = u[u >= P], v[u >= P]
    starts = np.flatnonzero(np.r_[True, ru[1:] != ru[:-1]]) if len(ru) else np.array([], dtype=int)
    send("related entities", [{"id": int(ru[a]), "related": rv[a:b].tolist()}
                              for a, b in zip(starts, np.r_[starts[1:], len(ru)])])
    polls = _wait_for_indexes(db)
    ef = P if ef_runtime is None else integer(ef_runtime, "ef_runtime")
    st["vector index"] = db.dialect.create_vector_index(V.shape[1], ef)
    db.query(st["vector index"])
    polls += _wait_for_indexes(db)
    _, counts = np.unique(V.astype(np.float32), axis=0, return_counts=True)
    db.loaded = LoadReport(P, n - P, len(u), V.shape[1], int(counts.max()) - 1, time.perf_counter() - t0, batches,
                           db.round_trips - trips0 - polls, ef if db.dialect is FALKORDB else None, st)
    return db.loaded


def set_vector_index(db: GraphDB, ef_runtime: int) -> str:
    """Drop and recreate the passages' vector index with HNSW search width ``ef_runtime`` (FalkorDB's default
    is 10); returns the ``CREATE`` statement. HNSW is approximate: a search keeps the ``ef_runtime`` best
    nodes it has seen while it walks the graph, so a narrow beam can miss true neighbours; a beam as wide as
    the index keeps every node it reaches, which makes the search exhaustive on a connected HNSW graph (the
    notebook measures both).

    >>> from cookbook.query.graphdb import open_graph
    >>> with open_graph("doctest-ef", private=True) as db:
    ...     _ = load_passage_graph(db, sp.csr_matrix((1, 1)), [[1.0, 0.0]])
    ...     set_vector_index(db, 10).endswith("efRuntime: 10}"), db.loaded.ef_runtime
    (True, 10)
    """
    info = _loaded(db)
    if db.dialect is NEO4J:
        raise GraphDBError("Neo4j sets the HNSW search width per query, not on the index")
    ef_runtime = integer(ef_runtime, "ef_runtime")
    db.query(db.dialect.drop_vector_index)
    create = db.dialect.create_vector_index(info.dim, ef_runtime)
    db.query(create)
    _wait_for_indexes(db)
    info.ef_runtime = ef_runtime
    info.statements["vector index"] = create
    return create


def _existing(db: GraphDB) -> tuple[str, list[str]]:
    """What graph ``db.name`` already holds, in words ("" when nothing): on FalkorDB a graph that was on the server
    before ``db`` touched it (:attr:`GraphDB.existed`), or that holds nodes or indexes; on Neo4j our labels' nodes
    and the indexes named as ours or on our labels. Second, the Neo4j indexes among them a load never makes."""
    if db.dialect is NEO4J:
        n = db.query("MATCH (n) WHERE n:Passage OR n:Entity RETURN count(n)")[0][0]
        indexes = sorted(str(name) for name, labels in
                         db.query("SHOW INDEXES YIELD name, labelsOrTypes RETURN name, labelsOrTypes")
                         if name in NEO4J_INDEXES or set(labels or ()) & set(_LABELS))
        words = ([f"{n} Passage or Entity nodes"] if n else []) + [f"index {x!r}" for x in indexes]
        return ", ".join(words), [x for x in indexes if x not in NEO4J_INDEXES]
    nodes = db.query("MATCH (n) RETURN count(n)")[0][0]
    indexes = len(db.query("CALL db.indexes() YIELD label RETURN label"))
    return (f"{nodes} nodes, {indexes} indexes" if db.existed or nodes or indexes else ""), []


def _loaded(db: GraphDB) -> LoadReport:
    if not isinstance(db, GraphDB):
        raise TypeError(f"db must be a GraphDB (from open_graph or open_neo4j), got {type(db).__name__}")
    if db.loaded is None:
        raise GraphDBError(f"graph {db.name!r} has no passage graph loaded by this session: call "
                           "load_passage_graph(db, ...) first")
    return db.loaded
