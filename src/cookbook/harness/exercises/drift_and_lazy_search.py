"""Checkers of the exercises in notebooks/11_drift_and_lazy_search.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import exercise, expect_choice, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("11.primer_folds", "DRIFT's primer: the ranked reports split round-robin into folds")
def _primer_folds(fn):
    for ids, k in [(["R1", "R2", "R3", "R4", "R5"], 2), (["R1", "R2"], 5), (["R9", "R1", "R5"], 3), ([], 3),
                   (["a", "b", "c", "d"], 1)]:
        want = [ids[i::k] for i in range(min(k, len(ids)))]
        got = fn(list(ids), k)
        got = [list(f) for f in got] if isinstance(got, (list, tuple)) else got
        expect_equal(got, want, f"primer_folds({ids}, {k})",
                     "report i goes to fold i mod k, so fold j is ids[j::k]; keep the ranking's order inside a fold "
                     "and make min(k, len(ids)) folds (no empty fold).")


@exercise("11.next_followups", "DRIFT's queue: the k best open follow-ups not asked yet")
def _next_followups(fn):
    cases = [({"a?": 50, "b?": 50, "c?": 90}, [], 2), ({"x?": 10, "y?": 80}, ["y?"], 3),
             ({"q1": 0, "q2": 0, "q10": 0}, [], 2), ({}, [], 2), ({"a": 5, "b": 7}, ["a", "b"], 1)]
    for open_, asked, k in cases:
        want = sorted((f for f in open_ if f not in asked), key=lambda f: (-open_[f], f))[:k]
        got = fn(dict(open_), list(asked), k)
        expect_equal(list(got) if isinstance(got, (list, tuple)) else got, want,
                     f"next_followups({open_}, {asked}, {k})",
                     "drop the queries already asked, sort the rest by score (highest first) and then by their text, "
                     "and keep the first k.")


@exercise("11.predict_drift_cost", "what DRIFT spends against one local search")
def _predict_drift_cost(answer):
    return expect_choice(answer, "more", ("more", "same", "fewer"),
                         "DRIFT makes primer_folds primer calls over reports, then up to n_depth · k_followups local "
                         "searches, each with a context as large as one local search's, and a reduce call: many calls "
                         "where local search makes one.")
