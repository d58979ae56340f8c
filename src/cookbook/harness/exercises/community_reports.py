"""Checkers of the exercises in notebooks/04_community_reports.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import math

from .core import exercise, expect_close, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("04.pack", "pack lines into a token budget")
def _pack(fn):
    def tok(s):
        return len(s.split())

    cases = [((["a b", "c d e", "f"], 5), ["a b", "c d e"]), ((["a b c d e f"], 5), []),
             ((["a", "b", "c"], 2), ["a", "b"]), ((["a b", "c d e f", "g"], 3), ["a b"])]
    for (lines, budget), want in cases:
        expect_equal(list(fn(lines, budget, tok)), want, f"pack({lines}, budget={budget})",
               "keep lines in order while the running token count stays ≤ budget; stop at the first that does not fit.")


@exercise("04.grounded", "is every summary sentence quoted from a source?")
def _grounded(fn):
    docs = ["The glass trade is central. Ada met Bo.", "Bo builds lenses."]
    cases = [("Ada met Bo. Bo builds lenses.", docs, True), ("The glass trade is central.", docs, True),
             ("Ada met Bo. Bo sells lenses.", docs, False), ("", docs, True),
             # a sentence straddling two documents is quoted from neither (joining the documents hides that)
             ("Alpha beta gamma.", ["Alpha beta", "gamma. delta"], False)]
    for summary, documents, want in cases:
        expect_equal(bool(fn(summary, list(documents))), want, f"grounded({summary!r}, docs={documents!r})",
                     "split the summary into sentences; each must occur verbatim in one document.")


@exercise("04.predict_rating", "the extractive report rating: 2·log2(1 + n pieces of evidence), at most 10")
def _predict_rating(answer):
    want = min(10.0, round(2 * math.log2(1 + 7), 1))
    expect_close(answer, want, "the rating of a report written from 7 relationships",
           "rating = min(10, 2·log2(1 + n)) with n = 7 relationships in the context: 2·log2(8) = 6.", tol=0.05)
    return ("right, 6: the rating grows with the log of the evidence behind a report, 2·log2(8) = 6; doubling the "
            "relationships adds only 2 points, and 31 or more reach the cap of 10.")
