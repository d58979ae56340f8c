"""Self-checking exercises: ``check(exercise_id, answer)`` says what is wrong, not just "incorrect".

Every notebook ends with exercises of two kinds. A *code* exercise is a stub the student completes, then
``check("NN.name", fn)``: the checker runs the answer on cases with known results (hand-worked, brute
force, or the package's own tested implementation) and reports the first case that differs, with the
input, what came back, what was expected and a hint. A *prediction* (``"NN.predict_*"``) asks the student
to commit to a number or a choice before a cell reveals it: ``check("03.predict_resolution", "more")``
grades the answer and explains why. It never raises, so a notebook with untouched stubs still runs top to bottom.
Reference solutions live in ``solutions/`` at the repository root, outside the notebooks.

>>> def npmi(c_ab, n_a, n_b, n):
...     raise NotImplementedError
>>> check("01.npmi", npmi, quiet=True).passed
False
"""

from __future__ import annotations

import math
import traceback
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .hipporag import passage_graph, seed_vector
from .ppr import personalized_pagerank, top_k_pagerank, transition_matrix
from .seeds import bfs, select_seeds
from .stats import paired_bootstrap

__all__ = ["EXERCISES", "Feedback", "check", "exercise"]


@dataclass
class Feedback:
    """What :func:`check` returns: which ``exercise``, whether it ``passed``, and the ``message`` printed.

    >>> str(Feedback("01.npmi", False, "npmi(1, 2, 2, 4) returned 0, expected 1.0"))
    '✗ 01.npmi: npmi(1, 2, 2, 4) returned 0, expected 1.0'
    """

    exercise: str
    passed: bool
    message: str

    def __str__(self) -> str:
        return f"{'✓' if self.passed else '✗'} {self.exercise}: {self.message}"


class _Wrong(Exception):
    """A checker's finding: the message is shown to the student."""


EXERCISES: dict[str, tuple[str, Callable]] = {}


def exercise(ex_id: str, title: str):
    """Register the decorated checker as exercise ``ex_id`` ("NN.name") with a ``title``; :func:`check`
    looks it up by that id.

    >>> "01.npmi" in EXERCISES
    True
    """
    def register(fn):
        EXERCISES[ex_id] = (title, fn)
        return fn
    return register


def check(ex_id: str, answer, *, quiet: bool = False) -> Feedback:
    """Run exercise ``ex_id``'s checker on ``answer``; print and return :class:`Feedback`. Never raises:
    an unknown id, an untouched stub or a crash in the answer is feedback too. Every notebook's exercises
    call it, from notebooks/01_entity_cooccurrence.ipynb on.

    >>> check("03.predict_resolution", "more").passed  # doctest: +ELLIPSIS
    ✓ 03.predict_resolution: ...
    True
    >>> check("03.predict_resolution", ...).message
    ✗ 03.predict_resolution: not attempted yet: replace the placeholder with your answer
    'not attempted yet: replace the placeholder with your answer'
    """
    if ex_id not in EXERCISES:
        fb = Feedback(ex_id, False, f"no such exercise; known: {', '.join(sorted(EXERCISES))}")
    elif answer is None or answer is Ellipsis:
        fb = Feedback(ex_id, False, "not attempted yet: replace the placeholder with your answer")
    else:
        title, checker = EXERCISES[ex_id]
        try:
            msg = checker(answer)
            fb = Feedback(ex_id, True, msg or f"correct — {title}")
        except NotImplementedError:
            fb = Feedback(ex_id, False, "not attempted yet: the stub still raises NotImplementedError")
        except _Wrong as e:
            fb = Feedback(ex_id, False, str(e))
        except Exception as e:  # the student's code crashed: say where
            where = traceback.extract_tb(e.__traceback__)[-1]
            fb = Feedback(ex_id, False, f"your code raised {type(e).__name__}: {e} (line {where.lineno})")
    if not quiet:
        print(fb)
    return fb


def _close(got, want, what: str, hint: str = "", tol: float = 1e-9):
    if got is None:
        raise _Wrong(f"{what}: your function returned None — did you forget `return`?")
    try:
        ok = math.isclose(float(got), float(want), rel_tol=tol, abs_tol=tol)
    except (TypeError, ValueError):
        raise _Wrong(f"{what}: expected a number, got {type(got).__name__} {got!r}") from None
    if not ok:
        raise _Wrong(f"{what}: got {float(got):.6g}, expected {float(want):.6g}. {hint}".strip())


def _choice(answer, want: str, options: tuple[str, ...], why: str) -> str:
    """Grade a multiple-choice prediction; the explanation comes with the verdict either way."""
    got = str(answer).strip().lower().strip('"\'')
    if got not in options:
        raise _Wrong(f"answer one of {', '.join(map(repr, options))}, not {answer!r}")
    if got != want:
        raise _Wrong(f"you predicted {got!r}; it is {want!r}: {why}")
    return f"right, {want!r}: {why}"


def _equal(got, want, what: str, hint: str = ""):
    if got != want:
        raise _Wrong(f"{what}: got {got!r}, expected {want!r}. {hint}".strip())


# ---------------------------------------------------------------- 01 entity co-occurrence

@exercise("01.npmi", "NPMI of a pair from window counts")
def _npmi(fn):
    cases = [((2, 4, 4, 10), math.log(2 * 10 / 16) / -math.log(2 / 10)), ((3, 3, 3, 12), 1.0),
             ((1, 5, 6, 10), math.log(10 / 30) / -math.log(1 / 10)), ((5, 5, 5, 5), 1.0)]
    for (c, a, b, n), want in cases:
        _close(fn(c, a, b, n), want, f"npmi(c_ab={c}, n_a={a}, n_b={b}, n={n})",
               "NPMI = PMI / −log p(a,b), with PMI = log(c_ab·n / (n_a·n_b)); a pair in every window scores 1.")


@exercise("01.resolve", "alias disambiguation from document context")
def _resolve(fn):
    cases = [([["p1"], ["p1", "p2"]], ["p1", "p1"]),
             ([["p1", "p2"], ["p2"]], ["p2", "p2"]),  # a full name later in the document counts too
             ([["p1", "p2"], ["o9"]], [None, "o9"]),
             ([["p1"], ["p2"], ["p1", "p2"]], ["p1", "p2", None]),
             ([["p1", "p3"], ["p2", "p3"]], [None, None])]
    for mentions, want in cases:
        got = fn([list(c) for c in mentions])
        _equal(None if got is None else list(got), want, f"resolve({mentions})",
               "collect the ids named by unambiguous mentions (one candidate) anywhere in the document; an "
               "ambiguous mention takes its one candidate among them, and None when none or several are.")


@exercise("01.predict_pmi", "PMI's baseline is independence, not zero co-occurrence")
def _predict_pmi(answer):
    return _choice(answer, "zero", ("positive", "zero", "negative"),
            "c_ab·N / (n_a·n_b) = 2·100 / (10·20) = 1: the pair co-occurs exactly as often as chance predicts, "
            "so PMI = log 1 = 0. PMI is positive only above chance, whatever the raw count.")


# ---------------------------------------------------------------- 02 graph extraction

@exercise("02.parse_record", "tolerant parsing of one extraction record")
def _parse_record(fn):
    d = "<|>"
    cases = [(f'("entity"{d}Ada{d}person{d}An engineer.)', ("entity", "Ada", "person", "An engineer.")),
             (f'("relationship"{d}Ada{d}Acme{d}works_for{d}Ada works there.{d}7)',
              ("relationship", "Ada", "Acme", "works_for", "Ada works there.", 7.0)),
             (f'  ("relationship"{d}Ada{d}Acme{d}knows{d}x{d}2.5)  ',
              ("relationship", "Ada", "Acme", "knows", "x", 2.5)),
             (f'("relationship"{d}Ada{d}Acme{d}knows{d}x{d}strong)', None),
             (f'("entity"{d}Ada)', None), (f'("event"{d}Fair{d}event{d}x)', None), ("Here you go:", None), ("", None)]
    for line, want in cases:
        _equal(fn(line), want, f"parse_record({line!r})",
               "strip the parentheses, split on <|>; an entity has 4 fields, a relationship 6 with a numeric "
               "strength (a float); anything else is None, never an exception.")


@exercise("02.merge_descriptions", "merge descriptions: unique sentences in order within a word budget")
def _merge_descriptions(fn):
    cases = [((["A is old. A is big.", "A is big. A sells."], 10), "A is old. A is big. A sells."),
             ((["A is old. A is big.", "A sells."], 6), "A is old. A is big."),
             ((["A is old. A is big.", "A sells."], 5), "A is old."),
             ((["A is old.", "A is old."], 2), ""),
             ((["One. Two.", "Two. Three."], 3), "One. Two. Three.")]
    for (parts, budget), want in cases:
        _equal(fn(list(parts), budget), want, f"merge_descriptions({parts}, max_words={budget})",
               "split into sentences after '. ', keep each sentence the first time only, in order, and stop at "
               "the first sentence that would take the total word count over max_words.")


@exercise("02.predict_gleaning", "gleaning has diminishing returns")
def _predict_gleaning(answer):
    return _choice(answer, "less", ("more", "same", "less"),
            "the first gleaning picks up what the output cap cut off in every text unit whose records did not "
            "fit one answer; the second only helps units with more than two answers' worth of records, which "
            "are fewer. Recall grows by less each round (GraphRAG caps max_gleanings for this reason).")


# ---------------------------------------------------------------- 02 communities

def _modularity(A, membership) -> float:
    """Reference modularity (γ = 1) from igraph, independent of the student's arithmetic."""
    import igraph as ig

    g = ig.Graph.Weighted_Adjacency(np.asarray(A).tolist(), mode="undirected")
    return g.modularity(list(membership), weights="weight")


@exercise("03.best_move", "Louvain/Leiden's local move: the community that most increases modularity")
def _best_move(fn):
    rng = np.random.default_rng(0)
    for n in (5, 8, 12):
        A = np.triu((rng.random((n, n)) < 0.45) * rng.integers(1, 4, (n, n)), 1).astype(float)
        A = A + A.T
        A[0, 1] = A[1, 0] = max(A[0, 1], 1)
        m = rng.integers(0, 3, n)
        for node in range(n):
            # brute force: modularity after moving `node` into each neighbouring community
            options = sorted({int(m[j]) for j in np.flatnonzero(A[node])} | {int(m[node])})
            q = {}
            for c in options:
                moved = m.copy()
                moved[node] = c
                q[c] = round(_modularity(A, moved), 12)
            want = min(options, key=lambda c: (-q[c], c != m[node], c))
            got = fn(A.copy(), m.copy(), node)
            _equal(None if got is None else int(got), want,
                   f"best move of node {node} in a {n}-node graph (membership {m.tolist()}, modularity by "
                   f"community {q})",
                   "try each community of a neighbour, compute ΔQ (or Q after the move); keep the largest; "
                   "stay put unless a move strictly gains, and break ties by the lowest label.")


@exercise("03.purity", "purity of communities against planted groups")
def _purity(fn):
    cases = [(([0, 0, 1, 1], [5, 5, 6, 6]), 1.0), (([0, 0, 0, 0], [1, 1, 2, 2]), 0.5),
             (([0, 1, 2, 2, 2], [7, 7, 7, 8, 8]), 0.8)]
    for (m, planted), want in cases:
        _close(fn(list(m), list(planted)), want, f"purity(membership={m}, planted={planted})",
               "for each community take its most common planted group; purity = matched nodes / all nodes.")


@exercise("03.predict_resolution", "the resolution γ sets the scale of communities")
def _predict_resolution(answer):
    return _choice(answer, "more", ("more", "fewer", "the same"),
            "γ multiplies the random-graph term k_i·k_j/2m: raising it makes every community pay more for its "
            "expected internal weight, so big communities split and there are more of them.")


# ---------------------------------------------------------------- 03 reports

@exercise("04.pack", "pack lines into a token budget")
def _pack(fn):
    def tok(s):
        return len(s.split())

    cases = [((["a b", "c d e", "f"], 5), ["a b", "c d e"]), ((["a b c d e f"], 5), []),
             ((["a", "b", "c"], 2), ["a", "b"]), ((["a b", "c d e f", "g"], 3), ["a b"])]
    for (lines, budget), want in cases:
        _equal(list(fn(lines, budget, tok)), want, f"pack({lines}, budget={budget})",
               "keep lines in order while the running token count stays ≤ budget; stop at the first that does not fit.")


@exercise("04.grounded", "is every summary sentence quoted from a source?")
def _grounded(fn):
    docs = ["The glass trade is central. Ada met Bo.", "Bo builds lenses."]
    cases = [("Ada met Bo. Bo builds lenses.", True), ("The glass trade is central.", True),
             ("Ada met Bo. Bo sells lenses.", False), ("", True)]
    for summary, want in cases:
        _equal(bool(fn(summary, docs)), want, f"grounded({summary!r})",
               "split the summary into sentences; each must occur verbatim in some document.")


@exercise("04.predict_rating", "the extractive report rating: 2·log2(1 + cited documents), at most 10")
def _predict_rating(answer):
    want = min(10.0, round(2 * math.log2(1 + 7), 1))
    _close(answer, want, "the rating of a report written from 7 source documents",
           "rating = min(10, 2·log2(1 + n)) with n = 7 distinct documents: 2·log2(8) = 6.", tol=0.05)
    return ("right, 6: the rating grows with the log of the evidence behind a report, 2·log2(8) = 6; doubling the "
            "documents adds only 2 points, and 31 or more documents reach the cap of 10.")


# ---------------------------------------------------------------- 04 map-reduce

@exercise("05.parse_points", "defensive parsing of a model's map answer")
def _parse_points(fn):
    cases = [('{"points": [{"description": "Mining.", "score": 80}]}', [("Mining.", 80)]),
             ('Sure! ```json\n{"points": [{"description": "A", "score": 5}]}\n```', [("A", 5)]),
             ('{"points": []}', []),
             ('{"points": [{"description": "A", "score": 101}]}', None),
             ('{"points": [{"description": "A", "score": true}]}', None),
             ('{"points": [{"description": "", "score": 10}]}', None),
             ('{"points": [{"description": "A", "score": 40}', None),
             ('[{"description": "A", "score": 40}]', None),
             ("", None)]
    for raw, want in cases:
        got = fn(raw)
        got = None if got is None else [(str(d), int(s)) for d, s in got]
        _equal(got, want, f"parse_points({raw!r})",
               "find the JSON object (it may sit inside prose or a ``` fence); it must hold a list 'points' whose "
               "items each have a non-empty description and a numeric score in 0-100 (True is not a number); "
               "anything else is malformed → None, so the caller can ask for a repair.")


@exercise("05.predict_timeout", "what global search does when a map call fails")
def _predict_timeout(answer):
    return _choice(answer, "score 0", ("stop", "retry", "score 0"),
            "a backend error (timeout, HTTP 5xx after the SDK's own retries) scores that batch 0 with a warning "
            "and the other batches still answer; only malformed output gets a repair request, and only "
            "LLMUnavailable (no key, 401/403/404) stops the run.")


@exercise("05.reduce_order", "the reduce step's point order")
def _reduce_order(fn):
    pts = [{"description": "b", "score": 40, "reports": ["R2"]}, {"description": "a", "score": 0, "reports": ["R1"]},
           {"description": "c", "score": 90, "reports": ["R3"]}, {"description": "d", "score": 40, "reports": ["R1"]}]
    got = [p["description"] for p in fn([dict(p) for p in pts])]
    _equal(got, ["c", "d", "b"], "order of the points",
           "drop score-0 points, then sort by score (high first), ties by report ids.")


# ---------------------------------------------------------------- 05 PPR

@exercise("06.seed_weights", "HippoRAG 2's seed vector: node specificity (1 / passage count) and passage hits")
def _seed_weights(fn):
    mention = namedtuple("mention", "doc_id entity_id")
    passages_of = {"e1": {"p1", "p2", "p3"}, "e2": {"p2"}, "e3": set()}
    pg = passage_graph([(p, "") for p in ("p1", "p2", "p3")],
                       [mention(p, e) for e, ps in passages_of.items() for p in sorted(ps)], list(passages_of))
    cases = [({"e1": 1.0, "e2": 1.0}, {}), ({"e1": 1.0}, {"p2": 0.8, "p3": 0.4}),
             ({"e2": 0.5, "e3": 1.0}, {"p1": 1.0}), ({}, {"p3": 0.9})]
    hint = ("an entity weighs score / (passages mentioning it, at least 1): a rare entity is specific; a passage "
            "hit weighs score · passage_weight; drop zeros and divide by the total so the weights sum to 1.")
    for entity_scores, passage_scores in cases:
        v = seed_vector(pg, entity_scores, passage_scores)
        ids = [*pg.passage_ids, *pg.entity_ids]
        want = {ids[i]: v[i] / v.sum() for i in np.flatnonzero(v)}
        got = fn(dict(entity_scores), dict(passage_scores), {e: set(ps) for e, ps in passages_of.items()}, 0.05)
        what = f"seed_weights({entity_scores}, {passage_scores})"
        if not isinstance(got, dict):
            raise _Wrong(f"{what}: expected a dict {{node id: weight}}, got {type(got).__name__}")
        got = {i: w for i, w in got.items() if w != 0}
        _equal(sorted(got), sorted(want), f"{what}: the seeded ids", hint)
        for i in want:
            _close(got[i], want[i], f"{what}[{i!r}]", hint)


@exercise("06.certain_top_k", "PPR's certified top-k: stop once the remaining mass cannot change the ranking")
def _certain_top_k(fn):
    hint = ("rank by p (ties by lower index); every score can still grow by at most `remaining`, so the top k "
            "and their order are certain only when each of the k consecutive gaps p[r] − p[r+1] along that "
            "ranking (the last one to the best outsider) is strictly larger than `remaining`; otherwise None.")
    cases = [(([0.5, 0.3, 0.1, 0.05], 0.1, 2), [0, 1]), (([0.5, 0.3, 0.1, 0.05], 0.25, 2), None),
             (([0.3, 0.5, 0.1, 0.05], 0.15, 2), [1, 0]), (([0.5, 0.45, 0.1], 0.1, 2), None),
             (([0.2, 0.6, 0.2, 0.0], 0.3, 1), [1]), (([0.2, 0.6, 0.2, 0.0], 0.4, 1), None),
             (([0.4, 0.4, 0.1], 0.0, 1), None)]
    for (p, remaining, k), want in cases:
        got = fn(np.array(p), remaining, k)
        _equal(None if got is None else [int(i) for i in got], want,
               f"certain_top_k(p={p}, remaining={remaining}, k={k})", hint)
    # On a real walk: sum the PPR series term by term; the first certified answer must be the exact top-k,
    # and come no later than the package's top_k_pagerank (which checks less often).
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
    package = top_k_pagerank(W, v0, k, restart=lam)
    p, y, remaining = np.zeros(40), v0.copy(), 1.0
    for t in range(1, package.iterations + 1):
        p += lam * remaining * y
        remaining *= 1 - lam
        y = W @ y + y[dangling].sum() * v0
        got = fn(p.copy(), remaining, k)
        if got is not None:
            _equal([int(i) for i in got], want, f"certified after {t} terms of the PPR series: the top {k}", hint)
            return None
    raise _Wrong(f"the package certifies the top {k} after {package.iterations} terms of the series; your "
                 f"function never did. {hint}")


@exercise("06.predict_spread", "the restart probability λ sets how far the walk spreads")
def _predict_spread(answer):
    return _choice(answer, "up", ("up", "down", "the same"),
            "PPR sums walks of every length s, weighted λ(1-λ)^s: a smaller λ weighs long walks more (the mean walk "
            "has (1-λ)/λ steps: 1 at λ = 0.5, about 5.7 at λ = 0.15), so more mass reaches passages two or more "
            "hops away — the second hop's evidence, and also more noise.")


# ---------------------------------------------------------------- 06 seeds

@exercise("07.switch_penalty", "the greedy selector's marginal gain: the penalty at which the second seed changes")
def _switch_penalty(fn):
    hint = ("the first seed s is the best ANN hit; the runner-up b stays second while ann(b) − λ·J(b, s) ≥ "
            "ann(c) − λ·J(c, s) for every other c (ties go to the higher ANN score). Only a c that overlaps s less "
            "than b does can overtake it, at λ = (ann(b) − ann(c)) / (J(b, s) − J(c, s)): return the smallest such "
            "λ, or math.inf when no candidate ever overtakes b.")
    cases = [  # (ids, ann, neighbourhoods): 1 is the first seed, 2 the runner-up
        ([1, 2, 3], [0.9, 0.8, 0.6], {1: {10, 11}, 2: {10, 11}, 3: {12}}),
        ([1, 2, 3, 4], [0.9, 0.8, 0.7, 0.5], {1: {10, 11, 12}, 2: {10, 11}, 3: {10, 13}, 4: {14}}),
        ([1, 2, 3], [0.9, 0.8, 0.7], {1: {10}, 2: {11}, 3: {10}}),
        ([1, 2, 3], [0.9, 0.8, 0.8], {1: {10, 11}, 2: {10, 11}, 3: {11, 12}}),
        ([1, 2], [0.9, 0.1], {1: set(), 2: set()}),
    ]
    for ids, ann, nbhd in cases:
        first = nbhd[ids[0]]
        J = [len(nbhd[c] & first) / len(nbhd[c] | first) if nbhd[c] | first else 0.0 for c in ids]
        want = min(((ann[1] - ann[i]) / (J[1] - J[i]) for i in range(2, len(ids)) if J[i] < J[1]), default=math.inf)
        what = f"switch_penalty(ids={ids}, ann={ann}, nbhd={nbhd})"
        got = fn(list(ids), list(ann), {c: set(n) for c, n in nbhd.items()})
        if want == math.inf:
            _equal(got, math.inf, what, hint)
            continue
        _close(got, want, what, hint)
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


@exercise("07.bfs_hops", "bounded BFS by frontiers on an adjacency dict")
def _bfs_hops(fn):
    hint = ("start with the seeds at hop 0 as the frontier; each pass visits the neighbours of the frontier only, "
            "keeps those not reached yet at hop h, and makes them the next frontier; stop after `depth` passes.")
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
        what = f"bfs_hops(adj with {n} nodes, seeds={seed_nodes}, depth={depth})"
        if not isinstance(got, dict):
            raise _Wrong(f"{what}: expected a dict {{node: hop}}, got {type(got).__name__}")
        _equal(dict(sorted(got.items())), dict(sorted(want.items())), what, hint)


@exercise("07.predict_recall", "what the overlap penalty does to seed recall")
def _predict_recall(answer):
    return _choice(answer, "down", ("up", "down", "the same"),
                   "the supporting passages of a question are usually its best ANN hits, and they tend to share "
                   "entities; a larger penalty swaps some of them for lower-scoring passages elsewhere in the graph, "
                   "so fewer supporting passages are among the seeds — diversity helps a traversal cover the graph, "
                   "not the seeds' own recall.")


# ---------------------------------------------------------------- 07 benchmark

@exercise("09.paired_ci", "a paired bootstrap CI by hand, as stats.paired_bootstrap computes it")
def _paired_ci(fn):
    hint = ("d = a − b per question; rng = np.random.default_rng(seed); draw one (n_boot, n) array of question "
            "indices with rng.integers(0, n, size=(n_boot, n)); the mean of d over each row is one resample; the "
            "interval is np.quantile(means, [0.025, 0.975]). Resample questions, keeping each pair together.")
    rng = np.random.default_rng(11)
    cases = [([1.0, 1.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], 7), (rng.random(20).tolist(), rng.random(20).tolist(), 0),
             ([0.2, 0.4, 0.6], [0.2, 0.4, 0.6], 3)]
    for a, b, seed in cases:
        want = paired_bootstrap(a, b, n_boot=500, seed=seed)
        got = fn(list(a), list(b), 500, seed)
        what = f"paired_ci(n={len(a)}, n_boot=500, seed={seed})"
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            raise _Wrong(f"{what}: expected a tuple (mean_diff, low, high), got {got!r}")
        for x, w, name in zip(got, (want.mean_diff, want.ci_low, want.ci_high), ("mean_diff", "low", "high")):
            _close(x, w, f"{what}: {name}", hint)


@exercise("09.interleave", "a run order that cancels a linear drift")
def _interleave(fn):
    hint = ("run each query's methods together and rotate their order from one query to the next (query q starts "
            "with method q mod m), as bench.run_manifest does; running all of one method first hands it the cold "
            "start and the other the drift.")
    for methods, n_queries in ((["a", "b"], 4), (["x", "y", "z"], 6), (["p", "q", "r", "s"], 8)):
        order = fn(list(methods), n_queries)
        what = f"run_order({methods}, {n_queries})"
        want = sorted((m, q) for m in methods for q in range(n_queries))
        if sorted(map(tuple, order)) != want:
            raise _Wrong(f"{what}: every (method, query) pair must run exactly once. {hint}")
        # A machine that slows down linearly adds its position to each run: equal mean positions cancel it.
        pos = {m: np.mean([i for i, (mm, _) in enumerate(order) if mm == m]) for m in methods}
        if max(pos.values()) - min(pos.values()) > 1e-9:
            raise _Wrong(f"{what}: mean run position per method {pos}: a linear drift adds that to each method's "
                         f"mean latency, so the comparison is biased. {hint}")
        # A drift that is not linear (a warm cache, a noisy neighbour) is cancelled best when a query's runs
        # are close together.
        for q in range(n_queries):
            at = [i for i, (_, qq) in enumerate(order) if qq == q]
            if max(at) - min(at) != len(methods) - 1:
                raise _Wrong(f"{what}: query {q}'s runs are at positions {at}, not next to each other. {hint}")


@exercise("09.predict_spread", "which method's latency varies more from query to query")
def _predict_latency_spread(answer):
    return _choice(answer, "ppr", ("ppr", "dense"),
                   "a dense search costs one scan of the index whatever the question, so its latencies bunch "
                   "together; PPR iterates until the scores converge, and how many iterations (and how much of the "
                   "graph the seeds reach) depends on the question, so its calls stretch further along the log scale.")


# ---------------------------------------------------------------- 08 local search

@exercise("08.split_budget", "GraphRAG's context proportions: the token share of each section")
def _split_budget(fn):
    for budget, tu, cp in [(1000, 0.5, 0.1), (1500, 0.25, 0.15), (999, 0.333, 0.333), (800, 0.0, 0.0), (120, 1.0, 0.0)]:
        want = {"sources": int(budget * tu), "reports": int(budget * cp)}
        want["graph"] = budget - want["sources"] - want["reports"]
        got = fn(budget, tu, cp)
        got = {k: int(v) for k, v in got.items()} if isinstance(got, dict) else got
        _equal(got, want, f"split_budget({budget}, {tu}, {cp})",
               "sources = int(budget · text_unit_prop), reports = int(budget · community_prop), both rounded down; "
               "the graph (entities and relationships) gets whatever is left, so the shares add up to the budget.")


@exercise("08.predict_tokens", "what local and global search spend on a corpus-wide question")
def _predict_tokens(answer):
    return _choice(answer, "fewer", ("more", "same", "fewer"),
                   "local search makes one call whose context is at most its budget (1,500 tokens here) "
                   "whatever the question (empty when it matches no entity); global search sends every community "
                   "report through the map step, as many calls as batches, and then reduces, so its cost grows "
                   "with the number of communities.")


@exercise("08.rank_text_units", "local search's text-unit order: support, then id")
def _rank_text_units(fn):
    cases = [({"A": ["d2", "d1"], "B": ["d1"]}, [["d1"], ["d3"]]),
             ({"A": ["d9", "d10"]}, []),
             ({}, [["x"], ["y", "x"], ["z"]]),
             ({"A": ["d1"], "B": ["d2"]}, [["d2"], ["d1"]])]
    for entity_docs, rel_docs in cases:
        support: dict[str, int] = {}
        for ds in [*entity_docs.values(), *rel_docs]:
            for d in ds:
                support[d] = support.get(d, 0) + 1
        want = sorted(support, key=lambda d: (-support[d], d))
        got = fn({k: list(v) for k, v in entity_docs.items()}, [list(x) for x in rel_docs])
        _equal(list(got) if got is not None else got, want, f"rank_text_units({entity_docs}, {rel_docs})",
               "count, for each document, the matched entities and the selected relationships that name it; "
               "sort by that count (most first), ties by document id (as strings: 'd10' < 'd9').")
