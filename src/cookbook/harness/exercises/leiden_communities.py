"""Checkers of the exercises in notebooks/03_leiden_communities.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import numpy as np

from .core import exercise, expect_choice, expect_close, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


def _modularity(A, membership) -> float:
    """Reference modularity (γ = 1) from igraph, independent of the student's arithmetic."""
    import igraph as ig

    g = ig.Graph.Weighted_Adjacency(np.asarray(A).tolist(), mode="undirected")
    return g.modularity(list(membership), weights="weight")


def _tie_graph():
    """Two triangles joined through node 6 by one edge to each: moving 6 from its community (label 1, the left
    triangle) to the right one (label 0) gains exactly what staying does, so the rule "stay put unless a move
    strictly gains" is tested; a solution that moves on a tie (to the lowest label, say) picks 0 and fails."""
    A = np.zeros((7, 7))
    for i, j in ((0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5), (6, 0), (6, 3)):
        A[i, j] = A[j, i] = 1.0
    return A, np.array([1, 1, 1, 0, 0, 0, 1]), 6


@exercise("03.best_move", "Louvain/Leiden's local move: the community that most increases modularity", hints=(
    "staying is one option among the neighbours' communities, and every option must be scored the same way: where "
    "is the node while you score its own community?",
    "take the node out of its community first; then joining community C (its own included) gains "
    "ΔQ = k_i,C / m − k_i·Σ_C / (2m²), with Σ_C summed over C's nodes without the node.",
    "keep the option with the largest ΔQ; move only when it strictly beats staying (compare with a small tolerance "
    "for floating point), and break ties by the lowest label."))
def _best_move(fn):
    rng = np.random.default_rng(0)
    cases = []
    for n in (5, 8, 12):
        A = np.triu((rng.random((n, n)) < 0.45) * rng.integers(1, 4, (n, n)), 1).astype(float)
        A = A + A.T
        A[0, 1] = A[1, 0] = max(A[0, 1], 1)
        m = rng.integers(0, 3, n)
        cases += [(A, m, node) for node in range(n)]
    cases.append(_tie_graph())
    for A, m, node in cases:
        n = len(m)
        # brute force: modularity after moving `node` into each neighbouring community
        options = sorted({int(m[j]) for j in np.flatnonzero(A[node])} | {int(m[node])})
        q = {}
        for c in options:
            moved = m.copy()
            moved[node] = c
            q[c] = round(_modularity(A, moved), 12)
        want = min(options, key=lambda c: (-q[c], c != m[node], c))
        got = fn(A.copy(), m.copy(), node)
        expect_equal(None if got is None else int(got), want,
               f"best move of node {node} in a {n}-node graph, adjacency A = {A.astype(int).tolist()}, "
               f"membership {m.tolist()}; the whole graph's Q with the node moved into each candidate "
               f"community: {q}",
               "read your choice against these Q values: is it the largest, and when options tie or only "
               "match staying, which one does the exercise keep?")


@exercise("03.purity", "purity of communities against planted groups", hints=(
    "purity asks how well each community matches one planted group: for one community, which group is that, and "
    "how many of its members agree with it?",
    "group the nodes by community; in each, count the planted labels and keep the largest count.",
    "purity = the sum of those largest counts / the number of nodes."))
def _purity(fn):
    cases = [(([0, 0, 1, 1], [5, 5, 6, 6]), 1.0), (([0, 0, 0, 0], [1, 1, 2, 2]), 0.5),
             (([0, 1, 2, 2, 2], [7, 7, 7, 8, 8]), 0.8)]
    for (m, planted), want in cases:
        expect_close(fn(list(m), list(planted)), want, f"purity(membership={m}, planted={planted})",
               "work this partition out by hand, one community at a time.")


@exercise("03.predict_resolution", "the resolution γ sets the scale of communities")
def _predict_resolution(answer):
    return expect_choice(answer, "more", ("more", "fewer", "the same"),
            "γ multiplies the random-graph term k_i·k_j/2m: raising it makes every community pay more for its "
            "expected internal weight, so big communities split and there are more of them.")
