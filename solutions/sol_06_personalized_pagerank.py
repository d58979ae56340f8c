def seed_weights(entity_scores, passage_scores, passages_of, passage_weight=0.05):
    weights = {}
    for e, s in entity_scores.items():
        weights[e] = weights.get(e, 0.0) + s / max(len(passages_of.get(e, ())), 1)
    for p, s in passage_scores.items():
        weights[p] = weights.get(p, 0.0) + s * passage_weight
    total = sum(weights.values())
    return {i: w / total for i, w in weights.items() if w > 0}


def certain_top_k(p, remaining, k):
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    gaps = [p[order[r]] - p[order[r + 1]] for r in range(k)]
    return order[:k] if remaining == 0 or all(g > remaining for g in gaps) else None


spread_prediction = "up"


def redecide(a, b):
    from cookbook.stats import paired_bootstrap

    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical"
    if r.constant:  # every question differed by the same non-zero amount: one number repeated
        return "the same difference"
    return "supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"
