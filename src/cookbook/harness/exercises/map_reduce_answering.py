"""Checkers of the exercises in notebooks/05_map_reduce_answering.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import math

from .core import best_setting, check_redecision, decide, exercise, expect_choice, expect_equal, verdict_cases

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("05.parse_points", "defensive parsing of a model's map answer", hints=(
    "a model's answer is text that should hold a JSON object: where can that object sit, and what makes it an "
    "answer the reduce step can use?",
    "find the JSON object inside prose or a ``` fence and json.loads it; it must be a dict holding a list 'points'.",
    "each point needs a non-empty description and a numeric score in 0-100 (True is not a number, NaN lies in no "
    "range); anything else → None, so the caller can ask for a repair."))
def _parse_points(fn):
    cases = [('{"points": [{"description": "Mining.", "score": 80}]}', [("Mining.", 80)]),
             ('Sure! ```json\n{"points": [{"description": "A", "score": 5}]}\n```', [("A", 5)]),
             ('{"points": []}', []),
             ('{"points": [{"description": "A", "score": 101}]}', None),
             ('{"points": [{"description": "A", "score": true}]}', None),
             ('{"points": [{"description": "A", "score": NaN}]}', None),  # json.loads reads NaN as a float
             ('{"points": [{"description": "", "score": 10}]}', None),
             ('{"points": [{"description": "A", "score": 40}', None),
             ('[{"description": "A", "score": 40}]', None),
             ("", None)]
    for raw, want in cases:
        got = fn(raw)
        got = None if got is None else [(str(d), s if isinstance(s, float) and not math.isfinite(s) else int(s))
                                        for d, s in got]
        expect_equal(got, want, f"parse_points({raw!r})",
               "read this answer as the reduce step would: is there a usable object, and is every point in it "
               "valid?")


@exercise("05.predict_timeout", "what global search does when a map call fails")
def _predict_timeout(answer):
    return expect_choice(answer, "score 0", ("stop", "call again", "score 0"),
            "global search never calls the map step again for a batch whose call raised (the SDK's own retries "
            "are inside that one call and have already run out): it scores that batch 0 with a warning and the "
            "other batches still answer. Only malformed output gets a second call, a repair request, and only "
            "LLMUnavailable (no key, 401/403/404) stops the run.")


@exercise("05.reduce_order", "the reduce step's point order", hints=(
    "some points say nothing, and the rest need one order that never depends on the order they arrived in: which "
    "key decides first, and which ones break its ties?",
    "drop the score-0 points; sort the rest by score, highest first.",
    "break ties by the points' report ids (lists compare element by element), then by their text: key=lambda p: "
    "(-p['score'], p['reports'], p['description']), as global_search.reduce_step does."))
def _reduce_order(fn):
    def pt(d, s, *reports):
        return {"description": d, "score": s, "reports": list(reports)}

    cases = [  # (points, the descriptions in the reduce step's order)
        ([pt("b", 40, "R2"), pt("a", 0, "R1"), pt("c", 90, "R3"), pt("d", 40, "R1")], ["c", "d", "b"]),
        ([pt("y", 50, "R1"), pt("x", 50, "R1"), pt("z", 50, "R0")], ["z", "x", "y"]),  # same reports: by text
        ([pt("p", 60, "R2"), pt("q", 60, "R1", "R9")], ["q", "p"]),  # report ids compare as lists, first id first
        ([pt("only", 0, "R1")], []),
        ([], [])]
    for pts, want in cases:
        got = fn([dict(p, reports=list(p["reports"])) for p in pts])
        got = None if got is None else [p["description"] for p in got]
        expect_equal(got, want, f"reduce_order({pts})",
               "look at the points that tie on score here: what tells them apart?")


def _redecide_reference(map_reduce, flat, budget):
    """The best flat setting on dev among those spending at most ``budget`` tokens (ties: fewer tokens, then first)."""
    s = best_setting(flat, lambda k, o: o["tokens"] <= budget, lambda k, o: o["tokens"])
    if s is None:
        return ("not measured", None), None
    pair = (map_reduce["test"], flat[s]["test"])
    return (decide(*pair), s), pair


def _redecide_cases():
    """Each verdict case behind one design: a flat setting over the budget that leads on dev, one within it that
    leads only on test, two within it tied on dev (the cheaper wins); then a budget below every setting, and one
    exactly at a setting's tokens (within means at most)."""
    cases = []
    for what, a, b in verdict_cases(n=24, seed=5):
        n = len(a)
        flat = {"BM25 top 20": {"tokens": 2400, "dev": 0.70, "test": [0.0] * n},
                "dense top 2": {"tokens": 300, "dev": 0.35, "test": [1.0] * n},
                "BM25 top 10": {"tokens": 1300, "dev": 0.55, "test": [0.0] * n},
                "BM25 top 5": {"tokens": 700, "dev": 0.55, "test": b}}
        cases.append((what + ", a budget of 1500 tokens", ({"test": a, "tokens": 1500}, flat, 1500)))
    _, a, b = verdict_cases(n=24, seed=5)[4]
    flat = {"BM25 top 5": {"tokens": 700, "dev": 0.5, "test": a}, "dense top 20": {"tokens": 2400, "dev": 0.6,
                                                                                   "test": b}}
    cases.append(("no flat setting within the budget", ({"test": a, "tokens": 600}, flat, 600)))
    cases.append(("a setting exactly at the budget", ({"test": a, "tokens": 2400}, flat, 2400)))
    return cases


@exercise("05.redecide", "re-decide the global search lesson with another token budget for flat, by the series' "
          "rule", hints=(
    "map-reduce spends many tokens; a fair baseline may spend up to as many, not exactly as many. Which flat "
    "settings may stand against it, which one of those, and on which half of the questions is that decided?",
    "keep the flat settings whose 'tokens' are at most budget; among them take the best 'dev' mean, a tie going to "
    "fewer tokens (then the first listed); never look at 'test' to choose. Then decide with the series' statistics "
    "on the two 'test' lists: cookbook.stats.paired_bootstrap(a, b, seed=0) and cookbook.stats.hypothesis_verdict.",
    "s = min((k for k, o in flat.items() if o['tokens'] <= budget), key=lambda k: (-flat[k]['dev'], "
    "flat[k]['tokens'])); r = paired_bootstrap(map_reduce['test'], flat[s]['test'], seed=0); return "
    "(hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), s) — ('not measured', None) when none fits."))
def _redecide(fn):
    check_redecision(fn, "redecide", _redecide_cases(), _redecide_reference, ("flat setting",))
