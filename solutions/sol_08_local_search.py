def split_budget(budget, text_unit_prop, community_prop):
    if text_unit_prop + community_prop > 1:
        raise ValueError(f"text_unit_prop + community_prop must be <= 1, got {text_unit_prop} + {community_prop}")
    sources, reports = int(budget * text_unit_prop), int(budget * community_prop)
    return {"sources": sources, "reports": reports, "graph": budget - sources - reports}


tokens_prediction = "fewer"


def rank_text_units(entity_docs, relationship_docs):
    support = {}
    for docs in [*entity_docs.values(), *relationship_docs]:
        for d in set(docs):  # a list that repeats a document names it once
            support[d] = support.get(d, 0) + 1
    return sorted(support, key=lambda d: (-support[d], d))


def redecide(local, baselines, props):
    from cookbook.stats import hypothesis_verdict, paired_bootstrap

    b = min(baselines, key=lambda k: -baselines[k]["dev"])  # the strongest on dev; min keeps the first of a tie
    shares = [p for p in local if p in props and p > 0]  # a share of 0 leaves the reports out: another method
    if not shares:
        return "not measured", None, b
    cp = min(shares, key=lambda p: (-local[p]["dev"], p))  # chosen on dev; a tie: the smaller share
    r = paired_bootstrap(local[cp]["test"], baselines[b]["test"], seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), cp, b
