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


def redecide(fused, two_step, budget):
    from cookbook.stats import hypothesis_verdict, paired_bootstrap

    def pick(side):  # topK below the budget (the BFS runs), chosen on dev; a tie: fewer seeds
        below = [k for k in side if side[k]["top_k"] < budget]
        return min(below, key=lambda k: (-side[k]["dev"], side[k]["top_k"])) if below else None

    f, t = pick(fused), pick(two_step)
    if f is None or t is None:
        return "not measured", f, t
    r = paired_bootstrap(fused[f]["test"], two_step[t]["test"], seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), f, t
