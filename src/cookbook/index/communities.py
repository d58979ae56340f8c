"""Community detection: real Leiden (leidenalg / igraph), baselines and metrics (GraphRAG's community
hierarchy, built by recursive Leiden, is :mod:`cookbook.index.hierarchy`).

Graphs may be given as an :class:`cookbook.index.graph.EntityGraph`, an ``igraph.Graph`` (edge attribute
``weight`` used when present), a ``networkx.Graph`` or a symmetric scipy sparse matrix. A membership is
an ``int`` array of length ``n_nodes`` with communities numbered ``0..k-1`` by size (largest first),
ties broken by the smallest node index — so equal partitions always print the same.

Engines. ``leidenalg`` (Traag's reference implementation) supports every objective and is what the
notebooks teach with. igraph's built-in ``community_leiden`` is the same algorithm in C without the
Python/C++ bridge: on a 20k-node / 200k-edge planted partition it took 0.13 s against leidenalg's 2.0 s
(NMI 0.998 vs 0.98), and on an 8k-node / 40k-edge heavy-tailed graph ~1 s against ~12 s per run.
``engine="auto"`` uses igraph for graphs with more than :data:`AUTO_IGRAPH_EDGES` (5,000) edges and
leidenalg otherwise, where the difference is usually milliseconds; a small graph of many loosely joined pieces
is the exception (notebook 03's typed Factbook graph, 851 nodes / 2.5k edges: leidenalg iterating to
convergence took 0.25 s a run, igraph 9 ms), which is why that notebook's seed sweeps pass ``engine="igraph"``.
Both optimise the same objective and
:attr:`Partition.quality` is on one scale whichever ran, but the two engines draw different random
numbers, so the same seed gives different (equally good) memberships on either side of the threshold;
pass ``engine=`` explicitly when runs on graphs of different sizes must be comparable.
:attr:`Partition.engine` records which engine ran.

Self-loops are kept for every input type (a diagonal entry ``A[i, i] = w`` is one loop of weight ``w``,
counted twice in node ``i``'s strength, as networkx and igraph count it), so modularity does not depend
on how the graph was handed in.

>>> import igraph as ig
>>> p = leiden(ig.Graph.Famous("Zachary"), seed=1)
>>> p.n_communities, round(p.modularity, 3)
(4, 0.42)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validate import integer, labels, number, summable
from .._validate import seed as check_seed

__all__ = ["AUTO_IGRAPH_EDGES", "ENGINES", "OBJECTIVES", "Partition", "canonical", "chance_agreement", "compare",
           "disconnected_communities", "greedy_modularity", "leiden", "louvain", "modularity", "to_igraph"]

OBJECTIVES = ("modularity", "cpm")
ENGINES = ("auto", "leidenalg", "igraph")
AUTO_IGRAPH_EDGES = 5_000


@dataclass
class Partition:
    """``membership[i]`` is node ``i``'s community.

    ``quality`` is on one scale whatever the engine: igraph's ``Graph.modularity(membership, weights,
    resolution)``, i.e. Newman's weighted modularity (resolution-scaled γ for the modularity objective,
    γ = 1 for CPM, whose resolution is a density, not a modularity resolution); ``modularity`` is the same
    number under its own name. ``engine_quality`` is the engine's own objective value, on the engine's
    scale (leidenalg reports modularity unnormalised and CPM as a raw sum; NaN when the engine reports none).
    Returned by :func:`leiden` and the baselines; taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> p = leiden(g)
    >>> p.membership.tolist(), p.engine, round(p.modularity, 3)
    ([0, 0, 0, 1, 1, 1], 'leidenalg', 0.357)
    """

    membership: np.ndarray
    quality: float
    modularity: float
    engine: str
    objective: str = "modularity"
    resolution: float = 1.0
    engine_quality: float = float("nan")

    @property
    def n_communities(self) -> int:
        """How many communities (0 for an empty membership). Taught in notebooks/03_leiden_communities.ipynb.

        >>> Partition(np.array([0, 0, 1, 2]), 0.0, 0.0, "demo").n_communities
        3
        """
        return int(self.membership.max()) + 1 if len(self.membership) else 0

    def communities(self) -> list[list[int]]:
        """Node indices per community, community 0 (the largest) first.
        Taught in notebooks/03_leiden_communities.ipynb.

        >>> Partition(np.array([1, 0, 0, 1, 0]), 0.0, 0.0, "demo").communities()
        [[1, 2, 4], [0, 3]]
        """
        return [np.flatnonzero(self.membership == c).tolist() for c in range(self.n_communities)]


def to_igraph(graph, *, allow_empty: bool = False):
    """Any supported graph → an undirected ``igraph.Graph`` with a float ``weight`` edge attribute.

    Raises ``ValueError`` for no nodes, no edges (unless ``allow_empty``), negative or non-finite weights.

    >>> import scipy.sparse as sp
    >>> g = to_igraph(sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]])))
    >>> g.vcount(), g.ecount(), g.es["weight"]
    (2, 1, [2.0])
    """
    import igraph as ig

    if hasattr(graph, "to_igraph"):
        g = graph.to_igraph()
    elif isinstance(graph, ig.Graph):
        g = graph.copy()
        if "weight" not in g.es.attributes():
            g.es["weight"] = [1.0] * g.ecount()
    elif sp.issparse(graph):
        A = sp.csr_matrix(graph)
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"adjacency must be square, got shape {A.shape}")
        # An asymmetric matrix is read as directed edges whose weights add up (as ``combine_edges="sum"``
        # does for igraph/networkx input); the diagonal holds self-loops, kept once.
        up = (sp.triu(A) + sp.tril(A, k=-1).T if (A != A.T).nnz else sp.triu(A)).tocoo()
        g = ig.Graph(n=A.shape[0], edges=list(zip(up.row.tolist(), up.col.tolist())))
        g.es["weight"] = up.data.astype(float).tolist()
    elif hasattr(graph, "nodes") and hasattr(graph, "edges"):
        nodes = list(graph.nodes())
        index = {v: i for i, v in enumerate(nodes)}
        g = ig.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b in graph.edges()])
        g.vs["name"] = [str(v) for v in nodes]
        g.es["weight"] = [float(d.get("weight", 1.0)) for *_, d in graph.edges(data=True)]
    else:
        raise TypeError(f"unsupported graph type {type(graph).__name__}: use EntityGraph, igraph, networkx "
                        "or a sparse matrix")
    if g.is_directed():
        g = g.as_undirected(combine_edges="sum")
    if g.vcount() == 0:
        raise ValueError("empty graph: it has no nodes")
    if g.ecount() == 0 and not allow_empty:
        raise ValueError("graph has no edges: every partition is trivial")
    w = np.asarray(g.es["weight"], dtype=float) if g.ecount() else np.zeros(0)
    if not np.all(np.isfinite(w)):
        raise ValueError("edge weights must be finite (found NaN or inf)")
    summable(w, "graph", what="edge weights")  # modularity sums them: an overflow would make it NaN
    if np.any(w < 0):
        raise ValueError(f"negative edge weights are not supported (min {w.min():.3g}); "
                         "use counts or positive PMI")
    return g


def canonical(membership) -> np.ndarray:
    """Renumber communities by size (largest first), ties by smallest member index. Labels are any hashable
    names (:func:`cookbook._validate.labels`).

    >>> canonical(["b", "a", "a", "c"]).tolist()  # 'a' is largest; 'b' and 'c' tie, 'b' appears first
    [1, 0, 0, 2]
    """
    m = labels(membership, "membership")  # codes numbered by first appearance: a code's order is its first member's
    if m.size == 0:
        return m.astype(int)
    counts = np.bincount(m)
    order = sorted(range(len(counts)), key=lambda c: (-counts[c], c))
    new = np.empty(len(counts), dtype=int)
    new[order] = np.arange(len(counts))
    return new[m]


def _resolution(value) -> float:
    return number(value, "resolution", low=0, low_open=True, what="a positive number")


class _seeded_igraph_rng:
    """igraph draws from a global RNG; swap in a seeded one for the duration of a call."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __enter__(self):
        import igraph as ig

        ig.set_random_number_generator(self.rng)

    def __exit__(self, *exc):
        import igraph as ig

        ig.set_random_number_generator(random)


def leiden(graph, *, resolution: float = 1.0, objective: str = "modularity", seed: int = 0,
           n_iterations: int = -1, engine: str = "auto") -> Partition:
    """Leiden communities honouring edge weights.

    ``objective="modularity"`` uses leidenalg's ``ModularityVertexPartition`` at resolution 1 and
    ``RBConfigurationVertexPartition`` otherwise (modularity with a resolution γ); ``"cpm"`` uses
    ``CPMVertexPartition`` (communities denser than γ). ``n_iterations=-1`` iterates until no
    improvement. Same graph, seed and engine → same membership. ``engine="auto"``: see the module doc.
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> leiden(g).membership.tolist(), leiden(g, objective="cpm", resolution=0.5).n_communities
    ([0, 0, 0, 1, 1, 1], 2)
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; expected one of {OBJECTIVES}")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    resolution, seed = _resolution(resolution), check_seed(seed)
    g = to_igraph(graph)
    if engine == "auto":
        engine = "igraph" if g.ecount() > AUTO_IGRAPH_EDGES else "leidenalg"
    if engine == "leidenalg":
        import leidenalg as la

        if objective == "cpm":
            cls, kw = la.CPMVertexPartition, {"resolution_parameter": resolution}
        elif resolution == 1.0:
            cls, kw = la.ModularityVertexPartition, {}
        else:
            cls, kw = la.RBConfigurationVertexPartition, {"resolution_parameter": resolution}
        part = la.find_partition(g, cls, weights="weight", seed=seed, n_iterations=n_iterations, **kw)
        membership, own = part.membership, part.quality()
    else:
        with _seeded_igraph_rng(seed):
            cl = g.community_leiden(objective_function="modularity" if objective == "modularity" else "CPM",
                                    weights="weight", resolution=resolution, n_iterations=n_iterations)
        membership, own = cl.membership, cl.quality
    membership = canonical(membership)
    mod = g.modularity(membership.tolist(), weights="weight", resolution=resolution if objective == "modularity"
                       else 1.0)
    return Partition(membership, float(mod), float(mod), engine, objective, resolution,
                     float("nan") if own is None else float(own))


def louvain(graph, *, resolution: float = 1.0, seed: int = 0, engine: str = "igraph") -> Partition:
    """Louvain baseline: igraph's ``community_multilevel`` or networkx's ``louvain_communities``.
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> louvain(g).membership.tolist(), louvain(g, engine="networkx").engine
    ([0, 0, 0, 1, 1, 1], 'louvain-networkx')
    """
    resolution, seed = _resolution(resolution), check_seed(seed)
    g = to_igraph(graph)
    if engine == "igraph":
        with _seeded_igraph_rng(seed):
            membership = g.community_multilevel(weights="weight", resolution=resolution).membership
    elif engine == "networkx":
        membership = _networkx_membership(g, "louvain", resolution, seed)
    else:
        raise ValueError(f"unknown engine {engine!r} for louvain; expected 'igraph' or 'networkx'")
    membership = canonical(membership)
    mod = g.modularity(membership.tolist(), weights="weight", resolution=resolution)
    return Partition(membership, float(mod), float(mod), f"louvain-{engine}", "modularity", resolution)


def greedy_modularity(graph, *, resolution: float = 1.0) -> Partition:
    """Clauset–Newman–Moore greedy modularity (networkx); deterministic, slow on large graphs.
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> greedy_modularity(g).membership.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    resolution = _resolution(resolution)
    g = to_igraph(graph)
    membership = canonical(_networkx_membership(g, "greedy", resolution, 0))
    mod = g.modularity(membership.tolist(), weights="weight", resolution=resolution)
    return Partition(membership, float(mod), float(mod), "greedy-networkx", "modularity", resolution)


def _networkx_membership(g, method: str, resolution: float, seed: int) -> np.ndarray:
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(g.vcount()))
    G.add_weighted_edges_from((e.source, e.target, w) for e, w in zip(g.es, g.es["weight"]))
    if method == "louvain":
        comms = nx.community.louvain_communities(G, weight="weight", resolution=resolution, seed=seed)
    else:
        comms = nx.community.greedy_modularity_communities(G, weight="weight", resolution=resolution)
    m = np.empty(g.vcount(), dtype=int)
    for c, nodes in enumerate(comms):
        m[list(nodes)] = c
    return m


# ---------------------------------------------------------------- hierarchy


# ---------------------------------------------------------------- metrics

def modularity(graph, membership, *, resolution: float = 1.0) -> float:
    """Weighted Newman modularity of ``membership`` on ``graph`` (igraph). Labels are only names: any hashable
    values (floats and strings included) are relabelled first (:func:`cookbook._validate.labels`).
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> round(modularity(g, [0, 0, 0, 1, 1, 1]), 3), modularity(g, [0] * 6)  # one community scores 0
    (0.357, 0.0)
    """
    g = to_igraph(graph)
    m = labels(membership, "membership", n=g.vcount())
    return float(g.modularity(m.tolist(), weights="weight", resolution=_resolution(resolution)))


def compare(a, b, method: str = "nmi") -> float:
    """Agreement of two memberships: ``"nmi"`` or ``"ari"`` (via ``igraph.compare_communities``), or ``"ami"``,
    adjusted mutual information: ``(MI − E[MI]) / (mean(H_a, H_b) − E[MI])``, E[MI] the mutual information a
    random partition with the same community sizes has on average (Vinh, Epps & Bailey 2010; the arithmetic
    mean, as NMI here). NMI is not corrected for chance: between partitions of very different sizes (dozens of
    singletons against four groups) it is well above 0 for random labels, where ARI and AMI are about 0.
    Labels are any hashable names, relabelled first (:func:`cookbook._validate.labels`).
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> compare([0, 0, 1, 1], [1, 1, 0, 0])  # labels are only names: the same split agrees fully
    1.0
    >>> round(compare([0, 0, 1, 1], [0, 1, 0, 1], method="ari"), 6)  # worse than chance
    -0.5
    >>> alone, halves = [0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1]  # six singletons against two groups: no agreement
    >>> round(compare(alone, halves), 3), round(compare(alone, halves, "ami"), 9)
    (0.558, 0.0)
    """
    import igraph as ig

    methods = {"nmi": "nmi", "ari": "adjusted_rand", "ami": None}
    if method not in methods:
        raise ValueError(f"unknown method {method!r}; expected 'nmi', 'ari' or 'ami'")
    a = labels(a, "a")
    b = labels(b, "b")
    if len(a) != len(b):
        raise ValueError(f"memberships differ in length: {len(a)} vs {len(b)}")
    if method == "ami":
        return _ami(a, b)
    return float(ig.compare_communities(a.tolist(), b.tolist(), method=methods[method]))


def _ami(a: np.ndarray, b: np.ndarray) -> float:
    """Adjusted mutual information (arithmetic normalisation) of two label-code arrays of equal length."""
    from scipy.special import gammaln

    n = len(a)
    table = sp.coo_matrix((np.ones(n), (a, b))).toarray()
    ra, cb = table.sum(axis=1), table.sum(axis=0)
    h_a, h_b = (float(-(x / n * np.log(x / n)).sum()) for x in (ra, cb))
    nz = table > 0
    mi = float((table[nz] / n * np.log(n * table[nz] / np.outer(ra, cb)[nz])).sum())
    emi = 0.0  # E[MI] under random labels with these sizes: each cell's count k is hypergeometric
    y = cb[:, None]  # (C, 1) against k = 1 … K, one row of the table at a time
    k = np.arange(1, int(min(ra.max(), cb.max())) + 1)[None, :]
    sizes, repeats = np.unique(ra, return_counts=True)  # a row's share depends on its size only
    for x, times in zip(sizes, repeats):
        ok = (k >= x + y - n) & (k <= np.minimum(x, y))
        kk = np.where(ok, k, 1)  # masked cells get harmless arguments
        log_p = (gammaln(x + 1) + gammaln(y + 1) + gammaln(n - x + 1) + gammaln(n - y + 1) - gammaln(n + 1)
                 - gammaln(kk + 1) - gammaln(x - kk + 1) - gammaln(np.maximum(y - kk, 0) + 1)
                 - gammaln(np.maximum(n - x - y + kk, 0) + 1))
        emi += times * float(np.where(ok, kk / n * np.log(n * kk / (x * y)) * np.exp(log_p), 0.0).sum())
    denominator = (h_a + h_b) / 2 - emi
    if abs(denominator) < 1e-12:  # both partitions trivial (one community, or every node alone in both)
        return 1.0 if abs(mi - emi) < 1e-12 else 0.0
    return float((mi - emi) / denominator)


def chance_agreement(a, b, method: str = "nmi", *, n_perm: int = 200, seed: int = 0) -> np.ndarray:
    """The permutation baseline of :func:`compare`: its value between ``a`` and ``n_perm`` random relabellings of
    ``b``'s nodes (the same community sizes, no relation to ``a``), shape (n_perm,). What a score must clear to
    say anything: NMI between a partition of many small communities and a few large groups is far above 0 here.

    >>> float(np.mean(chance_agreement([0, 1, 2, 3, 4, 5], [0, 0, 0, 1, 1, 1], n_perm=50))) > 0.5
    True
    """
    b = labels(b, "b")
    n_perm = integer(n_perm, "n_perm")
    rng = np.random.default_rng(check_seed(seed))
    return np.array([compare(a, rng.permutation(b), method) for _ in range(n_perm)])


def disconnected_communities(graph, membership) -> int:
    """How many communities are not connected inside themselves (Louvain's known defect).

    One pass: keep only edges inside a community, label connected components, and count the
    communities whose members fall into more than one component.
    Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> g = ig.Graph(edges=[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])  # two triangles, one bridge
    >>> disconnected_communities(g, [0, 0, 1, 1, 1, 0])  # community 0 = {0, 1, 5}: node 5 hangs apart
    1
    """
    from scipy.sparse.csgraph import connected_components

    g = to_igraph(graph, allow_empty=True)
    m = labels(membership, "membership", n=g.vcount())
    edges = np.asarray(g.get_edgelist(), dtype=int).reshape(-1, 2)
    inside = edges[m[edges[:, 0]] == m[edges[:, 1]]]
    n = g.vcount()
    A = sp.csr_matrix((np.ones(len(inside)), (inside[:, 0], inside[:, 1])), shape=(n, n))
    _, comp = connected_components(A, directed=False)
    pairs = np.unique(np.stack([m, comp], axis=1), axis=0)
    return int(np.sum(np.bincount(pairs[:, 0] - pairs[:, 0].min()) > 1))
