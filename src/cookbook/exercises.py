"""Self-checking exercises: ``check(exercise_id, answer)`` says what is wrong, not just "incorrect".

Every notebook ends with two exercises: a stub the student completes, then ``check("NN.name", fn)``.
A checker runs the answer on cases with known results (hand-worked, or from the package's own tested
implementation) and reports the first case that differs, with the input, what came back, what was
expected and a hint. It never raises, so a notebook with untouched stubs still runs top to bottom.
Reference solutions live in ``solutions/`` at the repository root, outside the notebooks.

>>> def npmi(c_ab, n_a, n_b, n):
...     raise NotImplementedError
>>> check("01.npmi", npmi, quiet=True).passed
False
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .answer import theme_coverage
from .ppr import transition_matrix
from .rerank import Hit, RRFReranker

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
    """Run exercise ``ex_id``'s checker on ``answer``; print and return :class:`Feedback`."""
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


@exercise("01.windows", "co-occurrence counts from windows of entity ids")
def _windows(fn):
    cases = [([["a", "b"], ["a", "b", "c"], ["c"]], {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1}),
             ([["x", "x", "y"]], {("x", "y"): 1}), ([["z"], []], {})]
    for windows, want in cases:
        got = fn(windows)
        got = {tuple(sorted(k)): v for k, v in dict(got or {}).items()}
        _equal(got, want, f"counts for windows {windows}",
               "count each unordered pair once per window; repeated mentions in one window count once.")


# ---------------------------------------------------------------- 02 communities

@exercise("02.modularity", "Newman modularity from an adjacency matrix")
def _modularity(fn):
    import igraph as ig

    rng = np.random.default_rng(0)
    for n in (4, 8, 12):
        A = np.triu((rng.random((n, n)) < 0.4) * rng.integers(1, 4, (n, n)), 1).astype(float)
        A = A + A.T
        if A.sum() == 0:
            A[0, 1] = A[1, 0] = 1
        m = rng.integers(0, 3, n)
        want = ig.Graph.Weighted_Adjacency(A.tolist(), mode="undirected").modularity(m.tolist(), weights="weight")
        _close(fn(A.copy(), m.copy()), want, f"modularity of a random {n}-node weighted graph",
               "Q = (1/2m) Σ_ij (A_ij − k_i k_j / 2m) [c_i = c_j], with 2m = A.sum() and k = A.sum(axis=1).", 1e-9)


@exercise("02.purity", "purity of communities against planted groups")
def _purity(fn):
    cases = [(([0, 0, 1, 1], [5, 5, 6, 6]), 1.0), (([0, 0, 0, 0], [1, 1, 2, 2]), 0.5),
             (([0, 1, 2, 2, 2], [7, 7, 7, 8, 8]), 0.8)]
    for (m, planted), want in cases:
        _close(fn(list(m), list(planted)), want, f"purity(membership={m}, planted={planted})",
               "for each community take its most common planted group; purity = matched nodes / all nodes.")


# ---------------------------------------------------------------- 03 reports

@exercise("03.pack", "pack lines into a token budget")
def _pack(fn):
    def tok(s):
        return len(s.split())

    cases = [((["a b", "c d e", "f"], 5), ["a b", "c d e"]), ((["a b c d e f"], 5), []),
             ((["a", "b", "c"], 2), ["a", "b"]), ((["a b", "c d e f", "g"], 3), ["a b"])]
    for (lines, budget), want in cases:
        _equal(list(fn(lines, budget, tok)), want, f"pack({lines}, budget={budget})",
               "keep lines in order while the running token count stays ≤ budget; stop at the first that does not fit.")


@exercise("03.grounded", "is every summary sentence quoted from a source?")
def _grounded(fn):
    docs = ["The glass trade is central. Ada met Bo.", "Bo builds lenses."]
    cases = [("Ada met Bo. Bo builds lenses.", True), ("The glass trade is central.", True),
             ("Ada met Bo. Bo sells lenses.", False), ("", True)]
    for summary, want in cases:
        _equal(bool(fn(summary, docs)), want, f"grounded({summary!r})",
               "split the summary into sentences; each must occur verbatim in some document.")


# ---------------------------------------------------------------- 04 map-reduce

@exercise("04.coverage", "gold-theme coverage of an answer")
def _coverage(fn):
    cases = [("Mining and ROBOTICS thrive.", ["mining", "robotics", "brewing"]), ("nothing here", ["mining"]),
             ("aviation, aviation", ["aviation"])]
    for text, themes in cases:
        _close(fn(text, themes), theme_coverage(text, themes), f"coverage({text!r}, {themes})",
               "share of themes that appear in the text, ignoring case.")


@exercise("04.reduce_order", "the reduce step's point order")
def _reduce_order(fn):
    pts = [{"description": "b", "score": 40, "reports": ["R2"]}, {"description": "a", "score": 0, "reports": ["R1"]},
           {"description": "c", "score": 90, "reports": ["R3"]}, {"description": "d", "score": 40, "reports": ["R1"]}]
    got = [p["description"] for p in fn([dict(p) for p in pts])]
    _equal(got, ["c", "d", "b"], "order of the points",
           "drop score-0 points, then sort by score (high first), ties by report ids.")


# ---------------------------------------------------------------- 05 PPR

@exercise("05.ppr_step", "one PPR iteration with the dangling-node fix")
def _ppr_step(fn):
    A = sp.csr_matrix(np.array([[0, 1, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=float))
    W = transition_matrix(A)
    dangling = np.asarray(W.sum(axis=0)).ravel() == 0
    v0 = np.array([0.5, 0, 0, 0.5])
    for v in (v0.copy(), np.array([0.1, 0.2, 0.3, 0.4])):
        want = 0.5 * (W @ v + v[dangling].sum() * v0) + 0.5 * v0
        got = fn(W, v.copy(), v0.copy(), 0.5, dangling.copy())
        if got is None or np.shape(got) != want.shape:
            raise _Wrong(f"expected a vector of shape {want.shape}, got {None if got is None else np.shape(got)}")
        if not np.allclose(got, want, atol=1e-12):
            raise _Wrong(f"step from v={v.tolist()}: got {np.round(got, 4).tolist()}, expected "
                         f"{np.round(want, 4).tolist()} (sum {float(np.sum(got)):.3f} vs 1). Hint: walkers on dangling "
                         "nodes (no out-edges) must jump back to v0, or probability mass leaks away.")


@exercise("05.rrf", "reciprocal-rank fusion")
def _rrf(fn):
    lists = [["a", "b", "c"], ["c", "a", "d"], ["d"]]
    want = [h.id for h in RRFReranker(60).fuse([[Hit(i, 0) for i in lst] for lst in lists], k=4)]
    _equal(list(fn(lists, 60))[:4], want, f"rrf({lists})",
           "score = Σ 1/(k_param + rank), ranks from 1; sort by score, ties by id.")


# ---------------------------------------------------------------- 06 seeds

@exercise("06.jaccard", "Jaccard similarity of two neighbourhoods")
def _jaccard(fn):
    for a, b, want in [({1, 2, 3}, {2, 3, 4}, 0.5), (set(), set(), 0.0), ({1}, {2}, 0.0), ({5}, {5}, 1.0)]:
        _close(fn(set(a), set(b)), want, f"jaccard({a}, {b})", "|a ∩ b| / |a ∪ b|, and 0 when both are empty.")


@exercise("06.tie_break", "the greedy selector's next pick, with its tie-break")
def _tie_break(fn):
    cases = [(([10, 11, 12], [0.5, 0.4, 0.4], [0.9, 0.8, 0.7]), 10),
             (([10, 11, 12], [0.4, 0.4, 0.3], [0.6, 0.8, 0.9]), 11),
             (([13, 11, 12], [0.4, 0.4, 0.4], [0.8, 0.8, 0.5]), 11)]
    for (ids, penalised, ann), want in cases:
        _equal(fn(list(ids), list(penalised), list(ann)), want, f"next pick among ids={ids}, penalised={penalised}, "
               f"ann={ann}", "highest penalised score; ties → higher ANN score; then lower id.")


# ---------------------------------------------------------------- 07 benchmark

@exercise("07.p95", "the 95th percentile of a latency sample")
def _p95(fn):
    rng = np.random.default_rng(1)
    for sample in ([1.0, 2.0, 3.0, 4.0, 100.0], rng.exponential(1.0, 57).tolist(), [7.0]):
        _close(fn(list(sample)), np.percentile(sample, 95), f"p95 of a sample of {len(sample)}",
               "use linear interpolation between order statistics (numpy's default), as bench.summarize does.")


@exercise("07.slope", "the log-log scaling slope")
def _slope(fn):
    for sizes, secs, want in [([10, 100, 1000], [1, 100, 10000], 2.0), ([1e3, 1e4], [0.5, 5.0], 1.0),
                              ([2, 4, 8, 16], [3, 3, 3, 3], 0.0)]:
        _close(fn(list(sizes), list(secs)), want, f"slope for sizes={sizes}, seconds={secs}",
               "fit a straight line to (log size, log seconds); its slope is the exponent.", 1e-6)
