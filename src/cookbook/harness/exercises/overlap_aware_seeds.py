"""Checkers of the exercises in notebooks/07_overlap_aware_seeds.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ...query.seeds import bfs, select_seeds
from .core import (
    Wrong,
    best_setting,
    check_redecision,
    decide,
    exercise,
    expect_choice,
    expect_close,
    expect_equal,
    verdict_cases,
)

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("07.switch_penalty", "the greedy selector's marginal gain: the penalty at which the second seed changes",
          hints=(
    "write down the score the selector gives the runner-up and another candidate once the first seed is chosen, "
    "both as functions of the penalty: two lines. Where do they cross, and which candidates can cross at all?",
    "each candidate c scores ann(c) − penalty·J(c, s) against the first seed s: a line falling with slope J(c, s). "
    "Only a candidate whose line falls more slowly than the runner-up's — a smaller J — can ever overtake it.",
    "for each c with J(c, s) < J(b, s), the lines cross at (ann(b) − ann(c)) / (J(b, s) − J(c, s)); return the "
    "smallest crossing, or math.inf when no c can cross."))
def _switch_penalty(fn):
    hint = ("the first seed s is the best ANN hit; the runner-up b stays second while its penalised score is at "
            "least every other candidate's (ties go to the higher ANN score). Which candidates can ever overtake "
            "it as the penalty grows, and when?")
    cases = [  # (ids, ann, neighbourhoods): 1 is the first seed, 2 the runner-up
        ([1, 2, 3], [0.9, 0.8, 0.6], {1: {10, 11}, 2: {10, 11}, 3: {12}}),
        ([1, 2, 3, 4], [0.9, 0.8, 0.7, 0.5], {1: {10, 11, 12}, 2: {10, 11}, 3: {10, 13}, 4: {14}}),
        ([1, 2, 3], [0.9, 0.8, 0.7], {1: {10}, 2: {11}, 3: {10}}),
        ([1, 2, 3], [0.9, 0.8, 0.8], {1: {10, 11}, 2: {10, 11}, 3: {11, 12}}),
        ([1, 2], [0.9, 0.1], {1: set(), 2: set()}),
        # the first candidate able to overtake (3, at 0.3) is not the first to do so (4, at 0.2): take the minimum
        ([1, 2, 3, 4], [0.9, 0.8, 0.7, 0.6], {1: {10, 11}, 2: {10, 11}, 3: {10, 11, 12}, 4: {13}}),
    ]
    for ids, ann, nbhd in cases:
        first = nbhd[ids[0]]
        J = [len(nbhd[c] & first) / len(nbhd[c] | first) if nbhd[c] | first else 0.0 for c in ids]
        want = min(((ann[1] - ann[i]) / (J[1] - J[i]) for i in range(2, len(ids)) if J[i] < J[1]), default=math.inf)
        what = f"switch_penalty(ids={ids}, ann={ann}, nbhd={nbhd})"
        got = fn(list(ids), list(ann), {c: set(n) for c, n in nbhd.items()})
        if want == math.inf:
            expect_equal(got, math.inf, what, hint)
            continue
        expect_close(got, want, what, hint)
        # The package's selector agrees: just below the threshold the runner-up is second, just above it is not.
        N = _nbhd_matrix(ids, nbhd)
        below = select_seeds(ids, ann, N, 2, overlap_penalty=want * (1 - 1e-6))[1]
        above = select_seeds(ids, ann, N, 2, overlap_penalty=want * (1 + 1e-6) + 1e-12)[1]
        assert below == ids[1] and above != ids[1], "checker case inconsistent with seeds.select_seeds"


def _nbhd_matrix(ids, nbhd) -> sp.csr_matrix:
    """One binary row per candidate, as :func:`seeds.neighbourhoods` builds from a graph."""
    cols = sorted(set().union(*nbhd.values())) or [0]
    at = {c: j for j, c in enumerate(cols)}
    rows = [(i, at[n]) for i, c in enumerate(ids) for n in nbhd[c]]
    data = np.ones(len(rows))
    return sp.csr_matrix((data, ([r for r, _ in rows], [c for _, c in rows])), shape=(len(ids), len(cols)))


@exercise("07.bfs_hops", "bounded BFS by frontiers on an adjacency dict", hints=(
    "a breadth-first search visits the graph in rings around the seeds: what does one ring need from the ring "
    "before it, and nothing more?",
    "start with the seeds at hop 0 as the frontier; each pass looks only at the frontier's neighbours.",
    "keep the neighbours not reached yet, at hop h, and make them the next frontier; stop after `depth` passes."))
def _bfs_hops(fn):
    hint = "trace this graph by hand from the seeds: which nodes lie one hop away, which two?"
    rng = np.random.default_rng(3)
    cases = [({0: [1], 1: [0, 2], 2: [1, 3], 3: [2]}, [0], 2), ({0: [1], 1: [0, 2], 2: [1, 3], 3: [2]}, [0, 3], 1),
             ({0: [], 1: [2], 2: [1]}, [0], 3)]
    for n in (12, 30):  # random sparse graphs, checked against the package's vectorised bfs
        A = sp.random(n, n, density=0.12, random_state=rng, data_rvs=lambda m: np.ones(m))
        A = ((A + A.T) > 0).astype(float).tocsr()
        adj = {i: A.indices[A.indptr[i]:A.indptr[i + 1]].tolist() for i in range(n)}
        cases.append((adj, sorted(rng.choice(n, 2, replace=False).tolist()), 2))
    for adj, seed_nodes, depth in cases:
        n = len(adj)
        A = sp.csr_matrix((np.ones(sum(map(len, adj.values()))),
                           ([u for u in adj for _ in adj[u]], [v for u in adj for v in adj[u]])), shape=(n, n))
        r = bfs(A, seed_nodes, depth)
        want = {int(v): int(h) for v, h in zip(r.nodes, r.hops)}
        got = fn({u: list(vs) for u, vs in adj.items()}, list(seed_nodes), depth)
        what = f"bfs_hops(adj, seeds={seed_nodes}, depth={depth}) with adj = {adj}"  # the input in full
        if not isinstance(got, dict):
            raise Wrong(f"{what}: expected a dict {{node: hop}}, got {type(got).__name__}")
        expect_equal(dict(sorted(got.items())), dict(sorted(want.items())), what, hint)


@exercise("07.predict_recall", "what the overlap penalty does to seed recall")
def _predict_recall(answer):
    return expect_choice(answer, "down", ("up", "down", "the same"),
                   "the supporting passages of a question are usually its best ANN hits, and they tend to share "
                   "entities; a larger penalty swaps some of them for lower-scoring passages elsewhere in the graph, "
                   "so fewer supporting passages are among the seeds. Whether the wider expansion wins them back is "
                   "what the rest of section 6 measures.")


def _redecide_reference(fused, two_step, budget):
    """Each side's best setting on dev among those with fewer seeds than ``budget`` (the BFS runs; ties: fewer seeds,
    then first); 'not measured' when a side has none."""
    def below(k, o):
        return o["top_k"] < budget

    f = best_setting(fused, below, lambda k, o: o["top_k"])
    t = best_setting(two_step, below, lambda k, o: o["top_k"])
    if f is None or t is None:
        return ("not measured", f, t), None
    pair = (fused[f]["test"], two_step[t]["test"])
    return (decide(*pair), f, t), pair


def _redecide_cases():
    """Each verdict case behind one design at B = 20: a setting with topK ≥ B that leads on dev (its BFS never runs),
    one below B that leads only on test, two tied on dev (fewer seeds win); then a budget no setting is below."""
    cases = []
    for what, a, b in verdict_cases(n=24, seed=7):
        n = len(a)
        fused = {"fused topK 50, penalty 0.1": {"top_k": 50, "dev": 0.90, "test": [1.0] * n},
                 "fused topK 5, penalty 0.1": {"top_k": 5, "dev": 0.40, "test": [1.0] * n},
                 "fused topK 10, penalty 0.1": {"top_k": 10, "dev": 0.60, "test": a}}
        # topK 10 listed before topK 5 and tied with it on dev: the tie goes to fewer seeds, not to the order
        two = {"two-step topK 20": {"top_k": 20, "dev": 0.80, "test": [0.0] * n},
               "two-step topK 10": {"top_k": 10, "dev": 0.55, "test": [0.0] * n},
               "two-step topK 5": {"top_k": 5, "dev": 0.55, "test": b}}
        cases.append((what + ", B = 20", (fused, two, 20)))
    _, a, b = verdict_cases(n=24, seed=7)[3]
    cases.append(("a budget at the fewest seeds", ({"fused topK 5": {"top_k": 5, "dev": 0.5, "test": a}},
                                                   {"two-step topK 5": {"top_k": 5, "dev": 0.5, "test": b}}, 5)))
    return cases


@exercise("07.redecide", "re-decide the seeds lesson at another budget, by the series' rule", hints=(
    "the lesson is about seeds *and* the BFS from them within B nodes. A setting can spend the whole budget on "
    "seeds: what then is left of the method being compared? Which settings may stand, and chosen on which half?",
    "on each side keep the settings whose 'top_k' is below budget (the BFS runs), take the best 'dev' mean, a tie "
    "going to fewer seeds (then the first listed); never look at 'test' to choose. Then decide with the series' "
    "statistics on the two 'test' lists: cookbook.stats.paired_bootstrap(a, b, seed=0) and "
    "cookbook.stats.hypothesis_verdict.",
    "pick(side) = min((k for k, o in side.items() if o['top_k'] < budget), key=lambda k: (-side[k]['dev'], "
    "side[k]['top_k'])); r = paired_bootstrap(fused[f]['test'], two_step[t]['test'], seed=0); return "
    "(hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), f, t) — ('not measured', f, t) with None for a "
    "side that has no setting below the budget."))
def _redecide(fn):
    check_redecision(fn, "redecide", _redecide_cases(), _redecide_reference, ("fused setting", "two-step setting"))
