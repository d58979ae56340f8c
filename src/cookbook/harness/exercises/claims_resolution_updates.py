"""Checkers of the exercises in notebooks/12_claims_resolution_updates.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

from .core import exercise, expect_choice, expect_equal

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


def _components(n, edges):
    label = list(range(n))
    changed = True
    while changed:  # brute force: relax every edge until no label changes (the reference, not union-find)
        changed = False
        for i, j in edges:
            low = min(label[i], label[j])
            for x in (i, j):
                if label[x] != low:
                    label[x], changed = low, True
    return label


@exercise("12.merge_labels", "merging: each name's cluster is the smallest index of its connected component")
def _merge_labels(fn):
    for n, edges in [(5, [(3, 4), (0, 3)]), (4, []), (6, [(5, 1), (2, 5), (4, 3)]), (3, [(0, 0)]),
                     (7, [(6, 5), (5, 4), (4, 3), (3, 2), (2, 1)])]:
        got = fn(n, [tuple(e) for e in edges])
        got = [int(x) for x in got] if got is not None and hasattr(got, "__iter__") else got
        expect_equal(got, _components(n, edges), f"merge_labels({n}, {edges})",
                     "union-find: start with every name its own parent, join the roots of each edge's two ends, then "
                     "label each name with its component's smallest index (a chain of edges merges transitively).")


@exercise("12.parse_claim", "one claim record of GraphRAG's format: 8 fields, status TRUE/FALSE/SUSPECTED")
def _parse_claim(fn):
    cases = ["(Ada<|>Acme<|>works for<|>true<|>NONE<|>NONE<|>Ada works for Acme.<|>Ada works for Acme.)",
             "Bo<|>NONE<|>FRAUD<|>suspected<|>2020-01-01<|>NONE<|>Bo is suspected of fraud.<|>said to defraud",
             "(Ada<|>Acme<|>WORKS_FOR<|>maybe<|>NONE<|>NONE<|>x<|>y)",
             "(Ada<|>Acme<|>WORKS_FOR)",
             "( Cy <|> Dee <|> knows <|> FALSE <|>NONE<|>NONE<|> Cy does not know Dee. <|> no )"]
    for record in cases:
        body = record.strip()
        body = body[1:-1] if body.startswith("(") and body.endswith(")") else body
        fields = [f.strip() for f in body.split("<|>")]
        want = None
        if len(fields) == 8 and fields[3].upper() in ("TRUE", "FALSE", "SUSPECTED"):
            fields[2], fields[3] = fields[2].upper(), fields[3].upper()
            want = tuple(fields)
        got = fn(record)
        expect_equal(tuple(got) if isinstance(got, list) else got, want, f"parse_claim({record!r})",
                     "strip the enclosing parentheses, split on '<|>', strip every field; 8 fields or None; "
                     "upper-case the type and the status, and refuse a status other than TRUE, FALSE, SUSPECTED.")


@exercise("12.predict_recall", "what a lower synonymy threshold does to the recall of merges")
def _predict_recall(answer):
    return expect_choice(answer, "higher or equal", ("higher or equal", "lower"),
                         "every pair above 0.8 is also above 0.6, so the lower threshold keeps every edge and may add "
                         "more; connected components only grow, so no merge is lost and recall cannot fall (precision "
                         "can).")
