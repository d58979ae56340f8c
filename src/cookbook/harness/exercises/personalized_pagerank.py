"""Checkers of the exercises in notebooks/06_personalized_pagerank.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from ...linalg.ppr import personalized_pagerank, transition_matrix
from ...query.hipporag import passage_graph, seed_vector
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


@exercise("06.seed_weights", "HippoRAG 2's seed vector: node specificity (1 / passage count) and passage hits",
          hints=(
    "two kinds of seeds, two weightings: which entity should pull the walk harder, one mentioned in a single "
    "passage or one mentioned in hundreds?",
    "an entity weighs its score / the number of passages mentioning it (at least 1); a passage hit weighs its "
    "score · passage_weight.",
    "put both in one dict, drop the zero weights, and divide every weight by their total so they sum to 1."))
def _seed_weights(fn):
    mention = namedtuple("mention", "doc_id entity_id")
    passages_of = {"e1": {"p1", "p2", "p3"}, "e2": {"p2"}, "e3": set()}
    pg = passage_graph([(p, "") for p in ("p1", "p2", "p3")],
                       [mention(p, e) for e, ps in passages_of.items() for p in sorted(ps)], list(passages_of))
    cases = [({"e1": 1.0, "e2": 1.0}, {}), ({"e1": 1.0}, {"p2": 0.8, "p3": 0.4}),
             ({"e2": 0.5, "e3": 1.0}, {"p1": 1.0}), ({}, {"p3": 0.9})]
    hint = "compare id by id: which nodes did you seed, and how do their weights compare before normalising?"
    for entity_scores, passage_scores in cases:
        v = seed_vector(pg, entity_scores, passage_scores)
        ids = [*pg.passage_ids, *pg.entity_ids]
        want = {ids[i]: v[i] / v.sum() for i in np.flatnonzero(v)}
        got = fn(dict(entity_scores), dict(passage_scores), {e: set(ps) for e, ps in passages_of.items()}, 0.05)
        what = f"seed_weights({entity_scores}, {passage_scores})"
        if not isinstance(got, dict):
            raise Wrong(f"{what}: expected a dict {{node id: weight}}, got {type(got).__name__}")
        got = {i: w for i, w in got.items() if w != 0}
        expect_equal(sorted(got), sorted(want), f"{what}: the seeded ids", hint)
        for i in want:
            expect_close(got[i], want[i], f"{what}[{i!r}]", hint)


CERTAIN_TOP_K_HINTS = (
    "which node could still overtake which? Each score can still grow by up to `remaining`, and any one node might "
    "get all of it.",
    "rank by p, ties by lower index. A node below can overtake the one above it only if their gap is at most "
    "`remaining`; look at the gaps the top k's set and order depend on — and at what nothing can change.",
    "certain when `remaining` is 0 (the ranking, ties by lower index, is final), or when each of the k consecutive "
    "gaps p[r] − p[r+1] along the ranking (the last one to the best outsider) is strictly larger than `remaining`; "
    "otherwise None.")


@exercise("06.certain_top_k", "PPR's certified top-k: stop once the remaining mass cannot change the ranking",
          hints=CERTAIN_TOP_K_HINTS)
def _certain_top_k(fn):
    cases = [(([0.5, 0.3, 0.1, 0.05], 0.1, 2), [0, 1]), (([0.5, 0.3, 0.1, 0.05], 0.25, 2), None),
             (([0.3, 0.5, 0.1, 0.05], 0.15, 2), [1, 0]), (([0.5, 0.45, 0.1], 0.1, 2), None),
             (([0.2, 0.6, 0.2, 0.0], 0.3, 1), [1]), (([0.2, 0.6, 0.2, 0.0], 0.4, 1), None),
             # a tie: with mass left either node may end ahead; with none, the tie-break by index is final
             (([0.4, 0.4, 0.1], 0.01, 1), None), (([0.4, 0.4, 0.1], 0.0, 1), [0]),
             (([0.1, 0.4, 0.4], 0.0, 2), [1, 2])]
    for (p, remaining, k), want in cases:
        got = fn(np.array(p), remaining, k)
        expect_equal(None if got is None else [int(i) for i in got], want,
                     f"certain_top_k(p={p}, remaining={remaining}, k={k})")
    # On a real walk: sum the PPR series term by term; the first certified answer must be the exact top-k, and
    # it must come: by 60 terms the remaining mass (2^-60) is far below every gap of this graph's top 3.
    rng = np.random.default_rng(5)
    A = sp.random(40, 40, density=0.08, random_state=rng, data_rvs=lambda n: np.ones(n))
    A = ((A + A.T) > 0).astype(float)
    W = transition_matrix(A)
    dangling = np.asarray(W.sum(axis=0)).ravel() == 0
    v0 = np.zeros(40)
    v0[[0, 1]] = 0.5
    lam, k = 0.5, 3
    exact = personalized_pagerank(W, v0, restart=lam, tol=1e-14, max_iter=1000).scores
    want = sorted(range(40), key=lambda i: (-exact[i], i))[:k]
    terms = 60
    assert min(np.diff(-np.sort(exact)[::-1][:k + 1])) > (1 - lam) ** terms  # the graph has no near-tie up there
    p, y, remaining = np.zeros(40), v0.copy(), 1.0
    for t in range(1, terms + 1):
        p += lam * remaining * y
        remaining *= 1 - lam
        y = W @ y + y[dangling].sum() * v0
        got = fn(p.copy(), remaining, k)
        if got is not None:
            expect_equal([int(i) for i in got], want, f"certified after {t} terms of the PPR series: the top {k}")
            return None
    raise Wrong(f"after {terms} terms of the series the remaining mass is below every gap of the top {k}, but "
                "your function never certified them.")


@exercise("06.predict_spread", "the restart probability λ sets how far the walk spreads")
def _predict_spread(answer):
    return expect_choice(answer, "up", ("up", "down", "the same"),
            "PPR sums walks of every length s, weighted λ(1-λ)^s: a smaller λ weighs long walks more (the mean walk "
            "has (1-λ)/λ steps: 1 at λ = 0.5, about 5.7 at λ = 0.15), so more mass reaches passages two or more "
            "hops away — the second hop's evidence, and also more noise.")


def _redecide_reference(ppr, baselines, seeding):
    """λ for the given seeding by dev mean (ties: the default 0.5 when tied, else the smaller); the baseline by dev
    mean (ties: first)."""
    lam = best_setting(ppr[seeding], tie=lambda k, o: (k != 0.5, k))
    b = best_setting(baselines)
    pair = (ppr[seeding][lam]["test"], baselines[b]["test"])
    return (decide(*pair), lam, b), pair


def _redecide_cases():
    """Each verdict case behind one design: the other seeding leads on dev, a λ that leads only on test, a λ tied on
    dev with the default 0.5 (the default stays), a baseline that leads only on test; then the other seeding, with two
    λ other than 0.5 tied on dev (the smaller wins)."""
    cases = []
    for what, a, b in verdict_cases(n=24, seed=6):
        n = len(a)
        ppr = {"BM25": {0.3: {"dev": 0.80, "test": [0.0] * n}, 0.5: {"dev": 0.70, "test": [0.0] * n}},
               "WordLlama": {0.15: {"dev": 0.55, "test": [0.0] * n}, 0.3: {"dev": 0.40, "test": [1.0] * n},
                             0.5: {"dev": 0.55, "test": a}, 0.9: {"dev": 0.2, "test": [1.0] * n}}}
        base = {"BM25": {"dev": 0.50, "test": b}, "RRF": {"dev": 0.45, "test": [1.0] * n},
                "TF-IDF": {"dev": 0.50, "test": [0.0] * n}}
        cases.append((what + ", WordLlama seeds", (ppr, base, "WordLlama")))
    _, a, b = verdict_cases(n=24, seed=6)[1]
    ppr = {"BM25": {0.85: {"dev": 0.6, "test": b}, 0.3: {"dev": 0.6, "test": a}, 0.5: {"dev": 0.4, "test": b}},
           "WordLlama": {0.5: {"dev": 0.9, "test": b}}}
    cases.append(("BM25 seeds, λ tied on dev", (ppr, {"WordLlama": {"dev": 0.3, "test": b}}, "BM25")))
    return cases


@exercise("06.redecide", "re-decide the PPR lesson with another seeding, by the series' rule", hints=(
    "once the seeding is fixed, PPR still has a knob of its own, and the baseline is still 'the strongest': both "
    "are chosen before the verdict. On which half, and what decides a tie between two restart values?",
    "take ppr[seeding]: choose its λ by the best 'dev' mean, a tie keeping the default 0.5 when it is among the "
    "tied (else the smaller λ); choose the baseline by the best 'dev' mean, a tie going to the first listed; never "
    "look at 'test' to choose. Then decide with the series' statistics on the two 'test' lists: "
    "cookbook.stats.paired_bootstrap(a, b, seed=0) and cookbook.stats.hypothesis_verdict.",
    "runs = ppr[seeding]; lam = min(runs, key=lambda x: (-runs[x]['dev'], x != 0.5, x)); b = the baseline with "
    "the highest 'dev', first listed on a tie; r = paired_bootstrap(runs[lam]['test'], baselines[b]['test'], seed=0); "
    "return (hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), lam, b)."))
def _redecide(fn):
    check_redecision(fn, "redecide", _redecide_cases(), _redecide_reference, ("restart λ", "baseline"))
