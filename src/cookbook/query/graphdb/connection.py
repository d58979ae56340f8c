"""Connections: :class:`GraphDB` (one graph on a FalkorDB server, one round trip per query), :class:`Neo4jGraph`
(the same over the ``neo4j`` driver) and the :class:`Dialect` each speaks.

>>> with open_graph("doctest-connection", private=True) as db:
...     db.query("RETURN 1"), db.round_trips
([[1]], 1)
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

from ..._validate import identifier, integer, string
from ...llm.base import add_secret, public_url, redact
from .server import INSTALL_HINT, CypherError, FalkorServer, GraphDBError, ServerDied

__all__ = ["FALKORDB", "NEO4J", "Dialect", "GraphDB", "LoadReport", "Neo4jGraph", "cypher_differences", "open_graph",
           "open_neo4j"]


# ---------------------------------------------------------------- what a load reports

@dataclass
class LoadReport:
    """What :func:`~cookbook.query.graphdb.load.load_passage_graph` loaded (kept on :attr:`GraphDB.loaded`), the
    statements it sent and what it cost.

    ``tie_slack`` is the largest number of passages sharing one (float32) vector, less one: vector searches
    fetch that many extra hits, so a tie cut at the ``k``-th hit is broken by id, as in memory. ``round_trips``
    counts the load's statements; the polls that wait for the indexes to be built are left out (how many
    there are depends on timing).

    >>> LoadReport(2, 1, 2, 2, 0, 0.01, 3, 5, 1).n_nodes
    3
    """

    n_passages: int
    n_entities: int
    n_edges: int
    dim: int
    tie_slack: int
    seconds: float
    batches: int
    round_trips: int
    ef_runtime: int | None
    statements: dict[str, str] = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        """Passages plus entities.

        >>> LoadReport(2, 1, 2, 2, 0, 0.01, 3, 5, None).n_nodes
        3
        """
        return self.n_passages + self.n_entities


# ---------------------------------------------------------------- dialects

@dataclass(frozen=True)
class Dialect:
    """Where FalkorDB's and Neo4j's Cypher differ for this module: storing a vector, creating and querying the
    vector index, and turning its score into a cosine (FalkorDB returns the distance ``1 − cos``, Neo4j the
    similarity ``(1 + cos) / 2``). Everything else (``UNWIND``, ``MATCH``, variable-length paths, ``reduce``)
    is the same text.

    >>> FALKORDB.vector_call("$fetch", "$q")
    "CALL db.idx.vector.queryNodes('Passage', 'embedding', $fetch, vecf32($q)) YIELD node, score"
    >>> NEO4J.vector_call("$fetch", "$q")
    "CALL db.index.vector.queryNodes('passage_embedding', $fetch, $q) YIELD node, score"
    """

    name: str
    vector_value: str  # the expression that stores a list parameter as a vector
    vector_call_template: str
    cosine_of_score: str  # the expression, in `score`, of the cosine
    create_vector_index_template: str
    drop_vector_index: str

    def vector_call(self, k: str, q: str) -> str:
        """The ``CALL … YIELD node, score`` of a vector search for ``k`` neighbours of ``q`` (Cypher
        expressions, usually parameters).

        >>> FALKORDB.vector_call("5", "$q").split("(")[0]
        'CALL db.idx.vector.queryNodes'
        """
        return self.vector_call_template.format(k=k, q=q)

    def create_vector_index(self, dim: int, ef_runtime: int | None) -> str:
        """The statement that creates the passages' cosine vector index of dimension ``dim``; FalkorDB takes the
        HNSW search width ``ef_runtime`` (default 10), Neo4j sets it per query (not here).

        >>> FALKORDB.create_vector_index(64, 500)
        "CREATE VECTOR INDEX FOR (p:Passage) ON (p.embedding) OPTIONS {dimension: 64, similarityFunction: 'cosine', \
efRuntime: 500}"
        """
        ef = "" if ef_runtime is None or self is NEO4J else f", efRuntime: {integer(ef_runtime, 'ef_runtime')}"
        return self.create_vector_index_template.format(dim=integer(dim, "dim"), ef=ef)


FALKORDB = Dialect(
    "FalkorDB", "vecf32(r.v)",
    "CALL db.idx.vector.queryNodes('Passage', 'embedding', {k}, vecf32({q})) YIELD node, score",
    "1.0 - score",
    "CREATE VECTOR INDEX FOR (p:Passage) ON (p.embedding) "
    "OPTIONS {{dimension: {dim}, similarityFunction: 'cosine'{ef}}}",
    "DROP VECTOR INDEX FOR (p:Passage) ON (p.embedding)")
NEO4J = Dialect(
    "Neo4j", "r.v",
    "CALL db.index.vector.queryNodes('passage_embedding', {k}, {q}) YIELD node, score",
    "2.0 * score - 1.0",
    "CREATE VECTOR INDEX passage_embedding IF NOT EXISTS FOR (p:Passage) ON (p.embedding) OPTIONS {{indexConfig: "
    "{{`vector.dimensions`: {dim}, `vector.similarity_function`: 'cosine'}}}}{ef}",
    "DROP INDEX passage_embedding IF EXISTS")


def cypher_differences(dim: int = 256) -> list[tuple[str, str, str]]:
    """``(what, FalkorDB, Neo4j)`` for every statement part that differs between the two dialects, the vector
    index written for ``dim``-dimensional vectors (default 256, the series' dense retriever's).

    >>> [what for what, _, _ in cypher_differences()]
    ['store a vector', 'create the vector index', 'query the vector index', 'cosine from the score', \
'drop the vector index']
    """
    return [("store a vector", FALKORDB.vector_value, NEO4J.vector_value),
            ("create the vector index", FALKORDB.create_vector_index(dim, None),
             NEO4J.create_vector_index(dim, None)),
            ("query the vector index", FALKORDB.vector_call("$k", "$q"), NEO4J.vector_call("$k", "$q")),
            ("cosine from the score", FALKORDB.cosine_of_score, NEO4J.cosine_of_score),
            ("drop the vector index", FALKORDB.drop_vector_index, NEO4J.drop_vector_index)]


# ---------------------------------------------------------------- connections

class GraphDB:
    """One graph on a FalkorDB server. :meth:`query` sends one statement (one round trip, counted in
    ``round_trips``) and returns its rows; errors name the cause and show the Cypher. ``server`` is the
    private :class:`FalkorServer` this object stops on :meth:`close`, or None for a user's server; ``existed``
    whether the graph was on the server before this object first touched it (any query creates it), which
    :func:`~cookbook.query.graphdb.load.load_passage_graph` refuses to load into.

    >>> with open_graph("doctest-query", private=True) as db:
    ...     db.query("RETURN $x + 1 AS y", {"x": 41}), db.round_trips
    ([[42]], 1)
    """

    dialect = FALKORDB

    def __init__(self, graph, *, server: FalkorServer | None = None, where: str = "FalkorDB", existed: bool = False):
        self.graph, self.server, self.where, self.existed = graph, server, where, existed
        self.round_trips = 0
        self.loaded: LoadReport | None = None

    @property
    def name(self) -> str:
        """The graph's name on the server.

        >>> with open_graph("doctest-name", private=True) as db:
        ...     db.name
        'doctest-name'
        """
        return self.graph.name

    def query(self, cypher: str, params: dict | None = None) -> list[list]:
        """Run one Cypher statement with ``params`` and return its rows (lists, in the order returned).

        >>> with open_graph("doctest-bad", private=True) as db:
        ...     db.query("MATCH (a RETURN a")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        cookbook.query.graphdb.CypherError: FalkorDB refused the query: errMsg: Invalid input ...
        --- the Cypher ---
        MATCH (a RETURN a
        """
        import redis

        self.round_trips += 1
        try:
            return self.graph.query(cypher, params).result_set
        except redis.ResponseError as e:
            raise CypherError(f"{self.where} refused the query: {e}", cypher) from None
        except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
            raise self._lost(e, cypher) from None

    def _lost(self, error: Exception, cypher: str) -> GraphDBError:
        server = self.server
        if server is not None:
            try:
                server._proc.wait(timeout=2)  # a server that just died needs a moment to be reaped
            except (subprocess.TimeoutExpired, AttributeError):
                pass
            if not server.alive:
                return ServerDied(f"the FalkorDB server (pid {server.pid}) has exited ({server.exit_status()}) "
                                  f"during the query below; its log ends:\n{server.log_tail()}\n--- the Cypher ---\n"
                                  f"{cypher}")
        return GraphDBError(redact(f"lost the connection to {self.where} ({type(error).__name__}: {error}) during:\n"
                                   f"{cypher}"))

    def close(self) -> None:
        """Close the connection and stop the private server, if this object started one.

        >>> db = open_graph("doctest-close", private=True)
        >>> db.close(); db.server.alive
        False
        """
        try:
            self.graph.client.connection.close()
        except Exception:  # closing a connection to a dead server may raise; nothing is left to release
            pass
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> GraphDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_graph(name: str = "cookbook", *, url: str | None = None, private: bool = False,
               folder: str | None = None) -> GraphDB:
    """A :class:`GraphDB` on graph ``name``: on the server at ``url`` (default ``$FALKORDB_URL``, e.g.
    ``falkor://localhost:6379`` or ``unix:///path/to.sock``) when one is given, else (or when ``private``) on a
    private :class:`FalkorServer` started under ``folder`` (stopped by ``close()`` or the ``with`` block). The URL
    is printed without its credentials (user, password, query values: :func:`~cookbook.llm.base.public_url`), in
    :attr:`GraphDB.where` and every message.

    >>> with open_graph("doctest-open", private=True) as db:
    ...     db.server is not None, db.where
    (True, 'FalkorDB')
    """
    name = identifier(name, "name")  # "" would be the client's own TypeError
    try:
        from falkordb import FalkorDB
    except ImportError:
        raise GraphDBError(f"the FalkorDB client is not installed (no package falkordb): {INSTALL_HINT}") from None
    if private and url is not None:
        raise ValueError("pass url= or private=True, not both")
    url = None if private else url if url is not None else os.environ.get("FALKORDB_URL") or None
    if url is not None:
        import redis

        where = f"the FalkorDB server at {public_url(string(url, 'url'))}"
        try:
            client = FalkorDB.from_url(url)
            client.connection.ping()
            existed = name in client.list_graphs()  # before any query of ours creates it
        except (redis.RedisError, OSError, ValueError) as e:
            raise GraphDBError(redact(f"cannot reach {where}: {type(e).__name__}: {e}")) from None
        return GraphDB(client.select_graph(name), where=where, existed=existed)
    server = FalkorServer(folder=folder).start()
    try:
        client = FalkorDB(unix_socket_path=server.socket)
        return GraphDB(client.select_graph(name), server=server)
    except BaseException:
        server.stop()
        raise


class Neo4jGraph(GraphDB):
    """The same interface over the official ``neo4j`` driver (``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``
    from the environment, through :func:`open_neo4j`), speaking :data:`NEO4J`'s dialect. Opt-in: no test needs
    a Neo4j server; ``driver`` is any object with ``execute_query`` and ``close``.

    >>> class Fake:
    ...     def execute_query(self, cypher, params, database_=None):
    ...         return [[1]], None, None
    ...     def close(self): pass
    >>> db = Neo4jGraph(Fake())
    >>> db.query("RETURN 1"), db.round_trips, db.dialect.name
    ([[1]], 1, 'Neo4j')
    """

    dialect = NEO4J

    def __init__(self, driver, *, database: str | None = None, where: str = "Neo4j"):
        self.driver, self.database, self.where, self.existed = driver, database, where, False
        self.server, self.round_trips, self.loaded = None, 0, None

    @property
    def name(self) -> str:
        """The Neo4j database queried ("default" for the server's default).

        >>> Neo4jGraph(None).name
        'default'
        """
        return self.database or "default"

    def query(self, cypher: str, params: dict | None = None) -> list[list]:
        """Run one statement through ``driver.execute_query`` (one round trip); rows as lists.

        >>> class Refuses:
        ...     def execute_query(self, cypher, params, database_=None):
        ...         raise RuntimeError("Invalid input")
        >>> Neo4jGraph(Refuses()).query("MATCH (a RETURN a")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        cookbook.query.graphdb.CypherError: Neo4j refused the query: RuntimeError: Invalid input
        --- the Cypher ---
        MATCH (a RETURN a
        """
        self.round_trips += 1
        try:
            records, _, _ = self.driver.execute_query(cypher, params or {}, database_=self.database)
        except Exception as e:  # the driver's errors (CypherSyntaxError, ServiceUnavailable, ...) have no common base
            raise CypherError(f"{self.where} refused the query: {type(e).__name__}: {e}", cypher) from None
        return [list(r) for r in records]

    def close(self) -> None:
        """Close the driver.

        >>> Neo4jGraph(type("D", (), {"close": lambda self: None})()).close()
        """
        self.driver.close()


def open_neo4j(*, database: str | None = None) -> Neo4jGraph:
    """A :class:`Neo4jGraph` on the server ``$NEO4J_URI`` names, with ``$NEO4J_USER`` / ``$NEO4J_PASSWORD``
    (the password is never printed). Raises :class:`GraphDBError` when ``NEO4J_URI`` is unset or the ``neo4j``
    driver is missing (``pip install neo4j``).

    >>> os.environ.pop("NEO4J_URI", None) and None
    >>> open_neo4j()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cookbook.query.graphdb.GraphDBError: NEO4J_URI is not set: ...
    """
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        raise GraphDBError("NEO4J_URI is not set: export NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD) to run the "
                           "queries on Neo4j")
    try:
        import neo4j
    except ImportError:
        raise GraphDBError("the neo4j driver is not installed: pip install 'neo4j>=5.14' "
                           "(the neo4j extra: pip install -e '.[neo4j]' in a checkout)") from None
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""))
    if auth[1]:
        add_secret(auth[1])  # masked wherever a driver's message might repeat it
    driver = neo4j.GraphDatabase.driver(uri, auth=auth)
    where = f"Neo4j at {public_url(uri)}"
    try:
        driver.verify_connectivity()
    except Exception as e:
        driver.close()
        raise GraphDBError(f"cannot reach {where}: {type(e).__name__}") from None
    return Neo4jGraph(driver, database=database, where=where)
