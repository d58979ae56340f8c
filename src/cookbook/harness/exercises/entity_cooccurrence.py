"""Checkers of the exercises in notebooks/01_entity_cooccurrence.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import math

from .core import exercise, expect_choice, expect_close, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("01.npmi", "NPMI of a pair from window counts", hints=(
    "PMI compares the pair's joint probability with what independence predicts; NPMI divides it by a quantity "
    "that makes a perfect pair score exactly 1. Which counts make a logarithm undefined?",
    "NPMI = PMI / −log p(a,b), with PMI = log(c_ab·n / (n_a·n_b)) and p(a,b) = c_ab / n.",
    "two ends by convention: a pair in every window (c_ab = n, so −log p = 0) scores 1; a pair never together "
    "(c_ab = 0, log 0) scores −1, the other end of the scale."))
def _npmi(fn):
    cases = [((2, 4, 4, 10), math.log(2 * 10 / 16) / -math.log(2 / 10)), ((3, 3, 3, 12), 1.0),
             ((1, 5, 6, 10), math.log(10 / 30) / -math.log(1 / 10)), ((5, 5, 5, 5), 1.0),
             ((0, 3, 4, 10), -1.0), ((0, 1, 1, 2), -1.0)]
    for (c, a, b, n), want in cases:
        # The feedback names the case, never the formula: that is hint 2's, asked for (issue 33).
        expect_close(fn(c, a, b, n), want, f"npmi(c_ab={c}, n_a={a}, n_b={b}, n={n})",
                     "work this pair out by hand: the pair never appears together here — what should the scale's "
                     "lowest score be?" if c == 0 else "work this pair out by hand: its probabilities are counts "
                     "over n, and NPMI lies in [−1, 1].")


@exercise("01.resolve", "alias disambiguation from document context", hints=(
    "an ambiguous mention cannot be decided from its own candidates: what else in the same document could say "
    "which of them is meant?",
    "first read the whole document: collect the ids that the unambiguous mentions (one candidate) name, wherever "
    "they sit, before or after the ambiguous one.",
    "then an unambiguous mention keeps its id; an ambiguous one takes its single candidate among the collected ids, "
    "and None when none or several of its candidates are among them."))
def _resolve(fn):
    cases = [([["p1"], ["p1", "p2"]], ["p1", "p1"]),
             ([["p1", "p2"], ["p2"]], ["p2", "p2"]),  # a full name later in the document counts too
             ([["p1", "p2"], ["o9"]], [None, "o9"]),
             ([["p1"], ["p2"], ["p1", "p2"]], ["p1", "p2", None]),
             ([["p1", "p3"], ["p2", "p3"]], [None, None])]
    for mentions, want in cases:
        got = fn([list(c) for c in mentions])
        expect_equal(None if got is None else list(got), want, f"resolve({mentions})",
               "work this document out by hand: which mentions name exactly one id, and which ids are those?")


@exercise("01.predict_pmi", "PMI's baseline is independence, not zero co-occurrence")
def _predict_pmi(answer):
    return expect_choice(answer, "zero", ("positive", "zero", "negative"),
            "c_ab·N / (n_a·n_b) = 2·100 / (10·20) = 1: the pair co-occurs exactly as often as chance predicts, "
            "so PMI = log 1 = 0. PMI is positive only above chance, whatever the raw count.")
