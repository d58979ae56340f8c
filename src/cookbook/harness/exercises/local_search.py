"""Checkers of the exercises in notebooks/08_local_search.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import REDECIDE_HINTS, Wrong, check_redecide, exercise, expect_choice, expect_equal, redecide_cases

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
    "count, for each document id, how many of the entity lists and relationship lists name it.",
    "sort by that count, most first, ties by the id as a string ('d10' < 'd9'): sorted(support, key=lambda d: "
    "(-support[d], d))."))
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
        expect_equal(list(got) if got is not None else got, want, f"rank_text_units({entity_docs}, {rel_docs})",
               "tally this case by hand: which document is named most often?")


@exercise("08.redecide", "re-decide the local search lesson after one design change, by the series' rule",
          hints=REDECIDE_HINTS)
def _redecide(fn):
    check_redecide(fn, redecide_cases(scale=1.0, seed=8))  # ties, zero-width intervals, one win
