"""Checkers of the exercises in notebooks/05_map_reduce_answering.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import exercise, expect_choice, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


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
        expect_equal(got, want, f"parse_points({raw!r})",
               "find the JSON object (it may sit inside prose or a ``` fence); it must hold a list 'points' whose "
               "items each have a non-empty description and a numeric score in 0-100 (True is not a number); "
               "anything else is malformed → None, so the caller can ask for a repair.")


@exercise("05.predict_timeout", "what global search does when a map call fails")
def _predict_timeout(answer):
    return expect_choice(answer, "score 0", ("stop", "retry", "score 0"),
            "a backend error (timeout, HTTP 5xx after the SDK's own retries) scores that batch 0 with a warning "
            "and the other batches still answer; only malformed output gets a repair request, and only "
            "LLMUnavailable (no key, 401/403/404) stops the run.")


@exercise("05.reduce_order", "the reduce step's point order")
def _reduce_order(fn):
    pts = [{"description": "b", "score": 40, "reports": ["R2"]}, {"description": "a", "score": 0, "reports": ["R1"]},
           {"description": "c", "score": 90, "reports": ["R3"]}, {"description": "d", "score": 40, "reports": ["R1"]}]
    got = [p["description"] for p in fn([dict(p) for p in pts])]
    expect_equal(got, ["c", "d", "b"], "order of the points",
           "drop score-0 points, then sort by score (high first), ties by report ids.")
