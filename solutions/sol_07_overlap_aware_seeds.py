import math


def switch_penalty(ids, ann, nbhd):
    def jaccard(a, b):
        return len(a & b) / len(a | b) if a | b else 0.0

    first, runner_up = ids[0], ids[1]  # ids come ranked by ANN score (ties by id)
    j_b = jaccard(nbhd[runner_up], nbhd[first])
    thresholds = []
    for c, s in zip(ids[2:], ann[2:]):
        j_c = jaccard(nbhd[c], nbhd[first])
        if j_c < j_b:  # only a candidate that overlaps the first seed less can overtake the runner-up
            thresholds.append((ann[1] - s) / (j_b - j_c))
    return min(thresholds, default=math.inf)


def bfs_hops(adj, seeds, depth):
    hop = {s: 0 for s in seeds}
    frontier = list(hop)
    for h in range(1, depth + 1):
        new = []
        for u in frontier:
            for v in adj[u]:
                if v not in hop:
                    hop[v] = h
                    new.append(v)
        frontier = new
    return hop


recall_prediction = "down"


def redecide(a, b):
    from cookbook.stats import paired_bootstrap

    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical"
    if r.constant:  # every question differed by the same non-zero amount: one number repeated
        return "the same difference"
    return "supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"
