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


def redecide(ppr, baselines, seeding):
    from cookbook.stats import hypothesis_verdict, paired_bootstrap

    runs = ppr[seeding]
    lam = min(runs, key=lambda x: (-runs[x]["dev"], x != 0.5, x))  # chosen on dev; a tie keeps the default 0.5
    b = min(baselines, key=lambda k: -baselines[k]["dev"])  # the strongest on dev; min keeps the first of a tie
    r = paired_bootstrap(runs[lam]["test"], baselines[b]["test"], seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), lam, b
