"""Checkers of the exercises in notebooks/06_personalized_pagerank.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from ...linalg.ppr import personalized_pagerank, transition_matrix
from ...query.hipporag import passage_graph, seed_vector
from .core import (
    REDECIDE_HINTS,
    Wrong,
    check_redecide,
    exercise,
    expect_choice,
    expect_close,
    expect_equal,
    redecide_cases,
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


@exercise("06.redecide", "re-decide the PPR lesson after one design change, by the series' rule",
          hints=REDECIDE_HINTS)
def _redecide(fn):
    check_redecide(fn, redecide_cases(scale=1.0, seed=6))  # ties, zero-width intervals, one win
