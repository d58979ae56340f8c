"""Checkers of the exercises in notebooks/08_local_search.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import Wrong, best_setting, check_redecision, decide, exercise, expect_choice, expect_equal, verdict_cases

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("08.split_budget", "GraphRAG's context proportions: the token share of each section", hints=(
    "three sections share one budget: two get a fixed fraction each, the third whatever is left. Can a share be "
    "a fraction of a token, and what is left when the two fractions ask for more than the whole?",
    "each fixed share is a whole number of tokens, never more than its fraction of the budget; the third is the "
    "budget minus the two, so the three add up exactly. Proportions that together exceed 1 are a mistake to report.",
    "sources = int(budget · text_unit_prop), reports = int(budget · community_prop), graph = budget − sources − "
    "reports; raise ValueError when text_unit_prop + community_prop > 1, as GraphRAG's local search does."))
def _split_budget(fn):
    for budget, tu, cp in [(1000, 0.5, 0.1), (1500, 0.25, 0.15), (999, 0.333, 0.333), (800, 0.0, 0.0), (120, 1.0, 0.0)]:
        want = {"sources": int(budget * tu), "reports": int(budget * cp)}
        want["graph"] = budget - want["sources"] - want["reports"]
        got = fn(budget, tu, cp)
        got = {k: int(v) for k, v in got.items()} if isinstance(got, dict) else got
        expect_equal(got, want, f"split_budget({budget}, {tu}, {cp})",
                     "work this budget out by hand: are the shares whole tokens, and do the three add up to it?")
    for budget, tu, cp in [(100, 0.8, 0.5), (1000, 0.6, 0.41)]:  # proportions over 1: GraphRAG refuses them
        try:
            got = fn(budget, tu, cp)
        except ValueError:
            continue
        raise Wrong(f"split_budget({budget}, {tu}, {cp}) returned {got!r}, expected a ValueError: the proportions "
                    f"add up to {tu + cp:g}, more than the whole budget.")


@exercise("08.predict_tokens", "what local and global search spend on a corpus-wide question")
def _predict_tokens(answer):
    return expect_choice(answer, "fewer", ("more", "same", "fewer"),
                   "local search makes one call whose context is at most its budget (1,500 tokens here) "
                   "whatever the question (empty when it matches no entity); global search sends every community "
                   "report through the map step, as many calls as batches, and then reduces, so its cost grows "
                   "with the number of communities.")


@exercise("08.rank_text_units", "local search's text-unit order: support, then id", hints=(
    "each matched entity and each selected relationship vouches for the documents it names: what does a "
    "document's tally say about it?",
    "count, for each document id, how many of the entity lists and relationship lists name it (a list that repeats "
    "a document still names it once).",
    "for each list, for each d in set(docs): support[d] += 1; then sort by that count, most first, ties by the id as "
    "a string ('d10' < 'd9'): sorted(support, key=lambda d: (-support[d], d))."))
def _rank_text_units(fn):
    cases = [({"A": ["d2", "d1"], "B": ["d1"]}, [["d1"], ["d3"]]),
             ({"A": ["d9", "d10"]}, []),
             ({}, [["x"], ["y", "x"], ["z"]]),
             ({"A": ["d1"], "B": ["d2"]}, [["d2"], ["d1"]]),
             # a document repeated in one list: that entity or relationship names it once, so it counts once
             ({"A": ["d2", "d2"], "B": ["d1"]}, [["d3", "d3", "d3"]]),
             ({"A": ["d1"]}, [["d2", "d2"], ["d2"]])]
    for entity_docs, rel_docs in cases:
        support: dict[str, int] = {}
        for ds in [*entity_docs.values(), *rel_docs]:
            for d in dict.fromkeys(ds):  # each list vouches for a document once, however often it repeats it
                support[d] = support.get(d, 0) + 1
        want = sorted(support, key=lambda d: (-support[d], d))
        got = fn({k: list(v) for k, v in entity_docs.items()}, [list(x) for x in rel_docs])
        expect_equal(list(got) if got is not None else got, want, f"rank_text_units({entity_docs}, {rel_docs})",
               "tally this case by hand: which document is named most often?")


def _redecide_reference(local, baselines, props):
    """community_prop among ``props`` and above 0 (reports in the context) by dev mean (ties: the smaller); the
    baseline by dev mean (ties: first)."""
    cp = best_setting(local, lambda k, o: k in props and k > 0, lambda k, o: k)
    b = best_setting(baselines)
    if cp is None:
        return ("not measured", None, b), None
    pair = (local[cp]["test"], baselines[b]["test"])
    return (decide(*pair), cp, b), pair


def _redecide_cases():
    """Each verdict case behind one design: community_prop 0 (no reports) leads on dev, a share outside the grid
    leads on dev too, one in the grid leads only on test, two tied on dev (the smaller wins), a baseline that leads
    only on test; then a grid of 0 alone."""
    cases = []
    for what, a, b in verdict_cases(n=24, seed=8):
        n = len(a)
        local = {0.0: {"dev": 0.90, "test": [1.0] * n}, 0.05: {"dev": 0.40, "test": [1.0] * n},
                 0.25: {"dev": 0.60, "test": [0.0] * n}, 0.1: {"dev": 0.60, "test": a},
                 0.4: {"dev": 0.95, "test": [1.0] * n}}
        base = {"BM25 @ local's tokens": {"dev": 0.50, "test": [1.0] * n},
                "PPR @ local's tokens": {"dev": 0.55, "test": b}}
        cases.append((what + ", props (0.0, 0.05, 0.1, 0.25)", (local, base, (0.0, 0.05, 0.1, 0.25))))
    _, a, b = verdict_cases(n=24, seed=8)[0]
    cases.append(("reports left out of every setting", ({0.0: {"dev": 0.7, "test": a}, 0.1: {"dev": 0.5, "test": a}},
                                                        {"flat @ local's tokens": {"dev": 0.6, "test": b}}, (0.0,))))
    return cases


@exercise("08.redecide", "re-decide the local search lesson with another community_prop grid, by the series' rule",
          hints=(
    "the lesson is about GraphRAG's local search, whose context holds its communities' reports. Which settings of "
    "the grid still make that method, which one of them stands, and on which half is it chosen?",
    "keep the community_prop values that are in props and above 0 (a share of 0 leaves the reports out: another "
    "method); take the best 'dev' mean, a tie going to the smaller share; the baseline is the best 'dev' mean, a tie "
    "going to the first listed; never look at 'test' to choose. Then decide with the series' statistics on the two "
    "'test' lists: cookbook.stats.paired_bootstrap(a, b, seed=0) and cookbook.stats.hypothesis_verdict.",
    "cp = min((p for p in local if p in props and p > 0), key=lambda p: (-local[p]['dev'], p)); b = the baseline "
    "with the highest 'dev', first listed on a tie; r = paired_bootstrap(local[cp]['test'], baselines[b]['test'], "
    "seed=0); return (hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), cp, b) — ('not measured', None, "
    "b) when no share is left."))
def _redecide(fn):
    check_redecision(fn, "redecide", _redecide_cases(), _redecide_reference, ("community_prop", "baseline"))
