"""Checkers of the exercises in notebooks/02_graph_extraction.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import best_setting, check_redecision, decide, exercise, expect_choice, expect_equal, verdict_cases

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("02.parse_record", "tolerant parsing of one extraction record", hints=(
    "a record has a fixed shape: enclosing parentheses, a delimiter between fields, a kind that says how many fields "
    "follow and what they hold. Which part of a model's line can break each of these?",
    "strip the line, check for and remove the enclosing parentheses, split on '<|>', and take the double quotes off "
    "a field wrapped in them; the first field is the kind.",
    "an entity has 3 fields after its kind, a relationship 5, the last a float (float() raising ValueError means "
    "None); any other count or kind is None, never an exception."))
def _parse_record(fn):
    d = "<|>"
    cases = [(f'("entity"{d}Ada{d}person{d}An engineer.)', ("entity", "Ada", "person", "An engineer.")),
             (f'("relationship"{d}Ada{d}Acme{d}works_for{d}Ada works there.{d}7)',
              ("relationship", "Ada", "Acme", "works_for", "Ada works there.", 7.0)),
             (f'  ("relationship"{d}Ada{d}Acme{d}knows{d}x{d}2.5)  ',
              ("relationship", "Ada", "Acme", "knows", "x", 2.5)),
             (f'("relationship"{d}Ada{d}Acme{d}knows{d}x{d}strong)', None),
             # fields in double quotes, as GPT-4o writes them (notebook 02 §9): the quotes are not the name
             (f'("entity"{d}"Scrooge"{d}"person"{d}"A miser.")', ("entity", "Scrooge", "person", "A miser.")),
             (f'("relationship"{d}"Scrooge"{d}"Marley"{d}"partner_of"{d}"Old partners."{d}8)',
              ("relationship", "Scrooge", "Marley", "partner_of", "Old partners.", 8.0)),
             (f'("entity"{d}Ada)', None), (f'("event"{d}Fair{d}event{d}x)', None), ("Here you go:", None), ("", None)]
    for line, want in cases:
        expect_equal(fn(line), want, f"parse_record({line!r})",
               "hold this line against the record format of the exercise: what makes it a record, or not?")


@exercise("02.merge_descriptions", "merge descriptions: unique sentences in order within a word budget", hints=(
    "text units often repeat a sentence: what decides whether a sentence is new, and what decides where to stop?",
    "split each part into sentences after '. ' and remember the sentences already taken: a repeat is skipped, the "
    "rest keep the parts' order.",
    "keep a running word count and stop at the first new sentence that would take it over max_words (never skip it "
    "for a shorter one further on); join the kept sentences with spaces."))
def _merge_descriptions(fn):
    cases = [((["A is old. A is big.", "A is big. A sells."], 10), "A is old. A is big. A sells."),
             ((["A is old. A is big.", "A sells."], 6), "A is old. A is big."),
             ((["A is old. A is big.", "A sells."], 5), "A is old."),
             ((["A is old.", "A is old."], 2), ""),
             ((["One. Two.", "Two. Three."], 3), "One. Two. Three.")]
    for (parts, budget), want in cases:
        expect_equal(fn(list(parts), budget), want, f"merge_descriptions({parts}, max_words={budget})",
               "work this case sentence by sentence: which sentences repeat, and where does the word budget end?")


@exercise("02.predict_gleaning", "what a second gleaning round adds at the default cap")
def _predict_gleaning(answer):
    return expect_choice(answer, "less", ("more", "same", "less"),
            "at the default cap the first gleaning picks up what the cap cut off in every text unit whose records "
            "did not fit one answer; the second only helps units with more than two answers' worth of records, "
            "which are fewer. That is no rule: at a smaller cap the early rounds are spent on entities (every answer "
            "lists them first) and the second round can add more than the first. Section 4's table shows both.")


def _redecide_reference(extraction, cooccurrence, max_gleanings):
    """Gleanings among those allowed, by dev mean (ties: fewer rounds); the weighting by dev mean (ties: first)."""
    g = best_setting(extraction, lambda k, o: k <= max_gleanings, lambda k, o: k)
    w = best_setting(cooccurrence)
    if g is None:
        return ("not measured", None, w), None
    pair = (extraction[g]["test"], cooccurrence[w]["test"])
    return (decide(*pair), g, w), pair


def _redecide_cases():
    """Each verdict case behind one design: a round over the cap that leads on dev, an allowed one that leads only on
    test, a weighting that leads only on test, two weightings tied on dev; then a tie between gleaning counts (the
    cheaper wins) and a cap of 0."""
    cases = []
    for what, a, b in verdict_cases(n=24, seed=2):
        n = len(a)
        ext = {0: {"dev": 0.40, "test": [1.0] * n}, 1: {"dev": 0.50, "test": a}, 2: {"dev": 0.60, "test": [0.0] * n}}
        cooc = {"count": {"dev": 0.30, "test": [1.0] * n}, "pmi": {"dev": 0.45, "test": b},
                "npmi": {"dev": 0.45, "test": [0.0] * n}}
        cases.append((what + ", one gleaning allowed", (ext, cooc, 1)))
    _, a, b = verdict_cases(n=24, seed=2)[6]
    tie = {0: {"dev": 0.5, "test": a}, 1: {"dev": 0.5, "test": [1.0] * 24}, 2: {"dev": 0.5, "test": [1.0] * 24}}
    cases.append(("gleaning counts tied on dev", (tie, {"pmi": {"dev": 0.4, "test": b}}, 2)))
    cases.append(("no gleaning allowed", ({0: {"dev": 0.2, "test": b}, 1: {"dev": 0.9, "test": a}},
                                         {"count": {"dev": 0.3, "test": a}}, 0)))
    return cases


@exercise("02.redecide", "re-decide the extraction lesson at another answer budget, by the series' rule", hints=(
    "two choices come before any verdict, and both are made where the verdict is not: how many gleaning rounds "
    "extraction may spend, and how co-occurrence ranks its pairs. What may each choice look at, and what does a "
    "gleaning round cost?",
    "choose the gleaning count among those up to max_gleanings by its dev mean, a tie going to fewer rounds (each "
    "round is one more model call per text unit), and the weighting by its dev mean, a tie going to the first "
    "listed; never look at 'test' to choose. Then decide with the series' statistics on the two 'test' lists: "
    "cookbook.stats.paired_bootstrap(a, b, seed=0) and cookbook.stats.hypothesis_verdict.",
    "g = min((k for k in extraction if k <= max_gleanings), key=lambda k: (-extraction[k]['dev'], k)); w = the "
    "weighting with the highest 'dev', first listed on a tie; r = paired_bootstrap(extraction[g]['test'], "
    "cooccurrence[w]['test'], seed=0); return (hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), g, w) — "
    "('not measured', None, w) when no count is allowed."))
def _redecide(fn):
    check_redecision(fn, "redecide", _redecide_cases(), _redecide_reference, ("gleanings", "weighting"))
