def ppr_step(W, v, v0, lam, dangling):
    return (1 - lam) * (W @ v + v[dangling].sum() * v0) + lam * v0


def rrf(lists, k_param=60):
    scores = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k_param + rank)
    return sorted(scores, key=lambda i: (-scores[i], i))
