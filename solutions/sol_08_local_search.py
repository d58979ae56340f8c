def split_budget(budget, text_unit_prop, community_prop):
    if text_unit_prop + community_prop > 1:
        raise ValueError(f"text_unit_prop + community_prop must be <= 1, got {text_unit_prop} + {community_prop}")
    sources, reports = int(budget * text_unit_prop), int(budget * community_prop)
    return {"sources": sources, "reports": reports, "graph": budget - sources - reports}


tokens_prediction = "fewer"


def rank_text_units(entity_docs, relationship_docs):
    support = {}
    for docs in [*entity_docs.values(), *relationship_docs]:
        for d in docs:
            support[d] = support.get(d, 0) + 1
    return sorted(support, key=lambda d: (-support[d], d))


def redecide(a, b):
    from cookbook.stats import paired_bootstrap

    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical"
    if r.constant:  # every question differed by the same non-zero amount: one number repeated
        return "the same difference"
    return "supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"
