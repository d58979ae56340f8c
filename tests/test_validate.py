"""The shared argument checks: one table of bad (and borderline good) inputs, with the message each must give."""

import numpy as np
import pytest
import scipy.sparse as sp

from cookbook import _validate as v
from cookbook import arrays, embed, stats
from cookbook.linalg import ppr, top_k
from cookbook.llm import tokens
from cookbook.query import global_search as answer
from cookbook.query import rerank, seeds

BAD = [
    (v.integer, (True, "k"), ValueError, "k must be a positive integer, got True"),
    (v.integer, (False, "depth"), ValueError, "got False"),
    (v.integer, (0, "k"), ValueError, "k must be a positive integer, got 0"),
    (v.integer, (1.0, "k"), ValueError, "got 1.0"),
    (v.integer, ("3", "k"), ValueError, "got '3'"),
    (v.integer, (-1, "depth"), ValueError, "depth must be an integer >= 0"),  # at_least=0 below
    (v.number, (float("nan"), "rate"), ValueError, "rate must be"),
    (v.number, (True, "rate"), ValueError, "got True"),
    (v.probability, (1.5, "rate"), ValueError, "rate must be in [0, 1], got 1.5"),
    (v.probability, (0, "restart λ"), ValueError, "restart λ must be in (0, 1], got 0"),  # zero_ok=False below
    (v.string, (None, "text"), TypeError, "text must be a string, got NoneType"),
    (v.strings, ("one text", "texts"), TypeError, "texts must be a sequence of strings"),
    (v.strings, ([], "texts"), ValueError, "texts is empty"),
    (v.strings, (["a", 1], "texts"), TypeError, "texts[1] must be str"),
    (v.finite_array, ([1.0, np.inf], "v0"), ValueError, "v0 contains NaN or inf"),
    (v.bool_mask, ([0, 1], 2, "dangling"), ValueError, "dangling must be a boolean mask of length 2"),
    (v.square_csr, (np.ones((2, 3)), "W"), ValueError, "W must be square, got shape (2, 3)"),
    (v.square_csr, (np.ones(3), "W"), ValueError, "W must be a 2-D matrix"),
    (v.square_csr, (np.ones((0, 0)), "W"), ValueError, "W is empty"),
]
KWARGS = {5: {"at_least": 0}, 9: {"zero_ok": False}}


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_gets_its_message(i):
    fn, args, exc, message = BAD[i]
    with pytest.raises(exc) as info:
        fn(*args, **KWARGS.get(i, {}))
    assert message in str(info.value)


def test_numpy_integers_and_ends_are_accepted():
    assert v.integer(np.int64(5), "k") == 5 and type(v.integer(np.int32(5), "k")) is int
    assert v.integer(0, "depth", at_least=0) == 0
    assert v.probability(1, "restart λ", zero_ok=False) == 1.0
    assert v.number(np.float32(0.5), "x", low=0) == 0.5


def test_square_csr_keeps_a_ready_matrix_and_converts_the_rest():
    A = sp.csr_matrix(np.eye(3))
    assert v.square_csr(A, "A") is A  # no O(nnz) re-wrap per query
    assert v.square_csr(A.tocsc(), "A").format == "csc"
    assert v.square_csr(A.tocsc(), "A", csc_ok=False).format == "csr"
    B = sp.csr_matrix(np.eye(3, dtype=int))
    assert v.square_csr(B, "B", dtype=None) is B
    assert v.square_csr([[0, 1], [1, 0]], "A").dtype == np.float64


# The public functions now agree: a bool count is refused and a numpy int accepted, everywhere.
INDEX = embed.CosineIndex(np.eye(3))
COUNTS = [
    lambda k: arrays.top_k([3.0, 1.0, 2.0], k),
    lambda k: INDEX.search(np.array([1.0, 0, 0]), k),
    lambda k: rerank.RRFReranker().fuse([[rerank.Hit("a", 1.0)]], k=k),
    lambda k: seeds.select_seeds(["a", "b"], [1.0, 0.5], sp.csr_matrix(np.eye(2)), k),
    lambda k: top_k.top_k_pagerank(ppr.transition_matrix(np.ones((3, 3))), np.ones(3), k),
    lambda k: tokens.truncate("some text", k),
    lambda k: tokens.pack_lines(["a"], k),
    lambda k: stats.bootstrap_mean_ci(np.arange(5.0), n_boot=k),
    lambda k: answer.map_batches([], k),
]


@pytest.mark.parametrize("call", COUNTS, ids=range(len(COUNTS)))
def test_counts_refuse_bools_and_accept_numpy_ints(call):
    with pytest.raises(ValueError, match="must be a positive"):
        call(True)
    call(np.int64(1))


# -- every public function taking a seed checks it once, in _validate.seed (issue 30) --------------------------

def _seeded():
    import igraph as ig

    from cookbook.data import corpus, realdata
    from cookbook.harness import bench, expansion
    from cookbook.index import communities, hierarchy

    g = ig.Graph.Famous("Zachary")
    return {
        "stats.bootstrap_mean_ci": lambda s: stats.bootstrap_mean_ci([1.0, 2.0], n_boot=10, seed=s),
        "stats.bootstrap_statistic": lambda s: stats.bootstrap_statistic(lambda i: 1.0, 3, n_boot=10, seed=s),
        "stats.paired_bootstrap": lambda s: stats.paired_bootstrap([1.0, 2.0], [2.0, 3.0], n_boot=10, seed=s),
        "stats.dev_test_split": lambda s: stats.dev_test_split([1, 2, 3, 1, 2, 3], seed=s),
        "expansion.question_sample": lambda s: expansion.question_sample([1, 2, 3, 1], 2, seed=s),
        "bench.make_manifest": lambda s: bench.make_manifest("x", 10, 3, seed=s),
        "global_search.map_batches": lambda s: answer.map_batches([], 100, seed=s),
        "realdata.power_law_graph": lambda s: realdata.power_law_graph(10, 12, seed=s),
        "corpus.load_corpus": lambda s: corpus.load_corpus("world", "tiny", seed=s),
        "communities.leiden": lambda s: communities.leiden(g, seed=s),
        "communities.louvain-networkx": lambda s: communities.louvain(g, seed=s, engine="networkx"),
        "hierarchy.hierarchical_leiden": lambda s: hierarchy.hierarchical_leiden(g, seed=s),
    }


@pytest.mark.parametrize("bad,error", [(1.5, TypeError), ("7", TypeError), (True, TypeError),
                                       (np.float64(3), TypeError), (-1, ValueError), (2**70, ValueError)],
                         ids=["float", "string", "bool", "numpy-float", "negative", "2**70"])
@pytest.mark.parametrize("name", list(_seeded()))
def test_every_seed_is_checked_the_same_way(name, bad, error):
    """Before: the same bad seed was accepted by one function (map_batches, leiden, power_law_graph took 1.5 or
    "7"), a numpy error in another, an OverflowError deep in igraph in a third."""
    with pytest.raises(error, match=r"^seed must be"):
        _seeded()[name](bad)
    _seeded()[name](np.int64(v.MAX_SEED))  # the largest seed is accepted everywhere


@pytest.mark.parametrize("call", [
    lambda: ppr.transition_matrix(sp.csr_matrix(np.array([[0, 1e308, 1e308], [1e308, 0, 0], [1e308, 0, 0]]))),
    lambda: __import__("cookbook.index.communities", fromlist=["leiden"]).leiden(
        sp.csr_matrix(np.array([[0, 1e308, 1e308], [1e308, 0, 1], [1e308, 1, 0]]))),
    lambda: stats.bootstrap_mean_ci([1e308, 1e308], n_boot=10),
], ids=["transition_matrix", "leiden", "bootstrap_mean_ci"])
def test_numbers_too_large_to_sum_are_refused_not_turned_into_zeros_or_nan(call):
    """Before (issue 30's family of personalized_pagerank(W, [1e308, 1e308, 0])): a row of such weights became a
    column of zeros, Leiden's modularity NaN and a mean inf, each with at most a numpy warning."""
    with pytest.raises(ValueError, match="overflow when summed.*rescale"):
        call()
