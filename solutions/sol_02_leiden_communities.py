from collections import Counter

import numpy as np


def modularity(A, membership):
    two_m = A.sum()
    k = A.sum(axis=1)
    same = np.equal.outer(membership, membership)
    return float(((A - np.outer(k, k) / two_m) * same).sum() / two_m)


def purity(membership, planted):
    total = 0
    for c in set(membership):
        groups = Counter(p for m, p in zip(membership, planted) if m == c)
        total += groups.most_common(1)[0][1]
    return total / len(membership)
