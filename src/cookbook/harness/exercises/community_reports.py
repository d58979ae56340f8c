"""Checkers of the exercises in notebooks/04_community_reports.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import math

from .core import exercise, expect_close, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("04.pack", "pack lines into a token budget", hints=(
    "walk the lines in order with a running total: what should happen at the first line that would overflow it?",
    "count each line with count_tokens and add it to the total; keep the line while the total stays within the "
    "budget (equal is within).",
    "stop at the first line that does not fit, even when a later, shorter one would: the context is a prefix of "
    "the lines, in their order."))
def _pack(fn):
    def tok(s):
        return len(s.split())

    cases = [((["a b", "c d e", "f"], 5), ["a b", "c d e"]), ((["a b c d e f"], 5), []),
             ((["a", "b", "c"], 2), ["a", "b"]), ((["a b", "c d e f", "g"], 3), ["a b"])]
    for (lines, budget), want in cases:
        expect_equal(list(fn(lines, budget, tok)), want, f"pack({lines}, budget={budget})",
               "work this case by hand: here a line's token count is its number of words.")


@exercise("04.grounded", "is every summary sentence quoted from a source?", hints=(
    "a summary is grounded sentence by sentence: where must each sentence be found — anywhere in the sources, or "
    "in one of them?",
    "split the summary into sentences; a summary without sentences has nothing ungrounded.",
    "each sentence must occur verbatim inside one single document (any(s in d for d in docs)); joining the "
    "documents first lets a sentence straddle two of them."))
def _grounded(fn):
    docs = ["The glass trade is central. Ada met Bo.", "Bo builds lenses."]
    cases = [("Ada met Bo. Bo builds lenses.", docs, True), ("The glass trade is central.", docs, True),
             ("Ada met Bo. Bo sells lenses.", docs, False), ("", docs, True),
             # a sentence straddling two documents is quoted from neither (joining the documents hides that)
             ("Alpha beta gamma.", ["Alpha beta", "gamma. delta"], False)]
    for summary, documents, want in cases:
        expect_equal(bool(fn(summary, list(documents))), want, f"grounded({summary!r}, docs={documents!r})",
                     "check this summary by hand, one sentence against one document at a time.")


@exercise("04.predict_rating", "the extractive report rating: 2·log2(1 + n pieces of evidence), at most 10")
def _predict_rating(answer):
    want = min(10.0, round(2 * math.log2(1 + 7), 1))
    expect_close(answer, want, "the rating of a report written from 7 relationships",
           "rating = min(10, 2·log2(1 + n)) with n = 7 relationships in the context: 2·log2(8) = 6.", tol=0.05)
    return ("right, 6: the rating grows with the log of the evidence behind a report, 2·log2(8) = 6; doubling the "
            "relationships adds only 2 points, and 31 or more reach the cap of 10.")
