"""Checkers of the exercises in notebooks/10_graph_database.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`). 10.1 runs the student's Cypher on a private FalkorDB (the ``graphdb``
extra), started and stopped by the checker."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...query.seeds import bfs
from .core import Wrong, exercise, expect_choice, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name

def _random_incidence(rng, n_passages: int, n_entities: int) -> np.ndarray:
    X = (rng.random((n_passages, n_entities)) < 2.5 / n_entities).astype(float)
    X[0] = 0  # a passage that mentions nothing shares nothing
    return X


@exercise("10.shared_entities", "one Cypher query: the passages that share entities with a passage, and how many",
          hints=(
    "a passage reaches another passage only through an entity both mention: draw that path as one pattern, then "
    "ask what to count for each passage at its far end.",
    "MATCH from the passage with id $id along MENTIONS to an entity and back along MENTIONS to a passage; count the "
    "entities per far passage, and order the rows by that count, then by the passage.",
    "MATCH (s:Passage {id: $id})-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(p:Passage) WHERE p <> s RETURN p.id AS "
    "passage, count(e) AS shared ORDER BY shared DESC, passage ASC. WHERE p <> s matters: FalkorDB, unlike Neo4j, "
    "lets one pattern use the same relationship twice, so s comes back through each of its own entities."))
def _shared_entities(fn):
    from ...query.graphdb import CypherError, load_passage_graph, open_graph

    cypher = fn()
    if not isinstance(cypher, str) or not cypher.strip():
        raise Wrong(f"shared_entities_cypher() must return the Cypher text as a string, got {cypher!r}")
    rng = np.random.default_rng(10)
    with open_graph("exercise-10", private=True) as db:
        for n_passages, n_entities in ((12, 5), (30, 9)):
            X = _random_incidence(rng, n_passages, n_entities)
            A = sp.bmat([[None, sp.csr_matrix(X)], [sp.csr_matrix(X.T), None]], format="csr")
            load_passage_graph(db, A, rng.normal(size=(n_passages, 3)), replace=True)
            shared = X @ X.T  # in memory: passages × passages, the entities each pair shares
            for pid in range(n_passages):
                others = [p for p in range(n_passages) if p != pid and shared[pid, p] > 0]
                want = [[p, int(shared[pid, p])] for p in sorted(others, key=lambda p: (-shared[pid, p], p))]
                try:
                    got = db.query(cypher, {"id": pid})
                except CypherError as e:
                    raise Wrong(f"the server refused your query: {str(e).splitlines()[0]}.") from None
                got = [[int(v) if isinstance(v, (int, float)) else v for v in row] for row in got]
                what = f"rows for passage {pid} ({n_passages} passages, {n_entities} entities)"
                if any(row and row[0] == pid for row in got):
                    raise Wrong(f"{what}: got {got!r}, expected {want!r}. Passage {pid} is among its own rows: the "
                                "exercise asks for the other passages — what in your pattern lets it come back?")
                expect_equal(got, want, what, "which passages are missing or extra, and are the counts and the "
                                              "order right?")


@exercise("10.bfs_rows", "the expansion's aggregation: hop and score per node from each seed's distances", hints=(
    "a node reached from several seeds keeps one row: which of its arrivals decide its hop, and which its score?",
    "group the arrivals by node; its hop is the smallest distance, its score the best ann among the arrivals at "
    "exactly that distance (a farther seed with a higher score does not count).",
    "sort the rows by (hop, −score, node)."))
def _bfs_rows(fn):
    from scipy.sparse.csgraph import shortest_path

    hint = "work a few nodes out by hand: the seeds that reach each, at what distance, with what score?"
    rng = np.random.default_rng(11)
    cases = [(sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])), [0, 3], [0.4, 0.9], 2)]
    for n in (15, 40):
        M = sp.random(n, n, density=0.1, random_state=rng, data_rvs=np.ones)
        cases.append((((M + M.T) > 0).astype(float).tocsr(), sorted(rng.choice(n, 3, replace=False).tolist()),
                      np.round(rng.random(3), 2).tolist(), 2))
    for A, seed_nodes, ann, depth in cases:
        dist = shortest_path(A, unweighted=True, indices=seed_nodes)  # an independent route to the distances
        arrivals = [(s, v, int(dist[i, v]), ann[i]) for i, s in enumerate(seed_nodes)
                    for v in range(A.shape[0]) if dist[i, v] <= depth]
        r = bfs(A, seed_nodes, depth, ann)
        want = [(int(v), int(h), float(sc)) for v, h, sc in zip(r.nodes, r.hops, r.scores)]
        got = fn(list(arrivals))
        # the input in full, as the function received it (the seeds, ann and depth say where the arrivals came from)
        what = (f"bfs_rows(arrivals={[tuple(a) for a in arrivals]}) (arrivals from seeds {seed_nodes} with ann {ann}, "
                f"depth {depth})")
        if got is None:
            raise Wrong(f"{what}: your function returned None — did you forget `return`?")
        got = [(int(v), int(h), float(sc)) for v, h, sc in got]
        expect_equal(got, want, what, hint)


@exercise("10.predict_exact", "is the database's vector index exact")
def _predict_exact(answer):
    return expect_choice(answer, "no", ("yes", "no"),
                   "FalkorDB's vector index is HNSW, a graph of near neighbours searched greedily with a beam of "
                   "efRuntime candidates (10 by default): it returns the best nodes its walk met, which on a large "
                   "or clustered index can miss a true neighbour. A small index, or a beam as wide as the index, "
                   "can still come out exact on every query; section 3 measures both.")
