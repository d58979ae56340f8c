"""The Neo4j path's ownership rule against a fake driver (no Neo4j server is needed): like FalkorDB's, a load
refuses a database that already holds what it would make, and never drops an index someone else made.

The fake keeps a database's indexes (name → labels) and node count, answering the handful of statements the load
sends; ``SHOW INDEXES`` lists every index, so the filtering is the loader's, not the fake's."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from cookbook.query import graphdb


class FakeNeo4j:
    """A driver with ``execute_query`` and ``close`` over a database of indexes and a node count."""

    def __init__(self, indexes=None):
        self.indexes = dict(indexes or {})  # name -> labels
        self.nodes, self.sent = 0, []

    def execute_query(self, cypher, params, database_=None):
        self.sent.append(cypher)
        if cypher.startswith("SHOW INDEXES"):
            rows = [[name, list(labels)] for name, labels in sorted(self.indexes.items())]
        elif "RETURN count(n)" in cypher:
            rows = [[self.nodes]]
        elif m := re.match(r"CREATE (?:VECTOR )?INDEX (\w+) IF NOT EXISTS FOR \(\w+:(\w+)\)", cypher):
            self.indexes.setdefault(m.group(1), [m.group(2)])
            rows = []
        elif m := re.match(r"DROP INDEX (\w+) IF EXISTS", cypher):
            self.indexes.pop(m.group(1), None)
            rows = []
        elif cypher.startswith("UNWIND $rows AS r") and "CREATE (" in cypher.split("\n")[0] + cypher:
            self.nodes += len(params["rows"]) if "CREATE (:Entity" in cypher or "CREATE (p:Passage" in cypher else 0
            rows = []
        elif "DETACH DELETE" in cypher:
            self.nodes, rows = 0, []
        else:  # CALL db.awaitIndexes(), MATCH ... CREATE edges
            rows = []
        return rows, None, None

    def close(self):
        pass


A = sp.csr_matrix(np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]]))  # two passages, one entity
V = [[1.0, 0.0], [0.6, 0.8]]


def dropped(driver) -> list[str]:
    return [c for c in driver.sent if c.startswith("DROP")]


@pytest.mark.parametrize("replace", [False, True])
def test_a_users_index_on_our_labels_is_refused_by_name_and_never_dropped(replace):
    """Before: the load sent CREATE VECTOR INDEX passage_embedding IF NOT EXISTS beside the user's index and went on."""
    driver = FakeNeo4j({"thesis_vectors": ["Passage"], "people": ["Person"]})
    db = graphdb.Neo4jGraph(driver)
    with pytest.raises(graphdb.GraphDBError, match="index 'thesis_vectors'") as info:
        graphdb.load_passage_graph(db, A, V, replace=replace)
    assert "people" not in str(info.value)  # an index on another label is not in the way
    assert driver.indexes == {"thesis_vectors": ["Passage"], "people": ["Person"]}
    assert dropped(driver) == [] and not any(c.startswith("CREATE") for c in driver.sent)
    assert db.loaded is None


def test_an_index_named_as_ours_is_refused_unless_replace_is_asked():
    """An index named passage_embedding that no load of this session made (a previous run's, or the user's)."""
    driver = FakeNeo4j({"passage_embedding": ["Passage"]})
    db = graphdb.Neo4jGraph(driver)
    with pytest.raises(graphdb.GraphDBError, match="already exists \\(index 'passage_embedding'\\).*replace=True"):
        graphdb.load_passage_graph(db, A, V)
    assert driver.indexes == {"passage_embedding": ["Passage"]} and dropped(driver) == []
    report = graphdb.load_passage_graph(db, A, V, replace=True)  # asked: what a load makes is made anew
    assert (report.n_passages, report.n_entities) == (2, 1)
    assert sorted(driver.indexes) == sorted(graphdb.NEO4J_INDEXES)


def test_a_load_into_a_clean_database_then_drop_leaves_only_the_users_indexes():
    driver = FakeNeo4j({"people": ["Person"]})
    db = graphdb.Neo4jGraph(driver)
    graphdb.load_passage_graph(db, A, V)
    assert sorted(driver.indexes) == sorted(["people", *graphdb.NEO4J_INDEXES]) and driver.nodes == 3
    graphdb.drop_passage_graph(db)
    assert driver.indexes == {"people": ["Person"]} and driver.nodes == 0
    graphdb.load_passage_graph(db, A, V)  # nothing of the first load is left in the way of a second
