from collections import Counter

import numpy as np


def best_move(A, membership, node):
    two_m = A.sum()
    k = A.sum(axis=1)
    others = np.arange(len(k)) != node

    def gain(c):  # ΔQ of a lone `node` joining c: its edges into c minus what chance would put there
        inside = (membership == c) & others
        return A[node, inside].sum() / (two_m / 2) - 2 * k[node] * k[inside].sum() / two_m ** 2

    stay = membership[node]
    options = {stay} | set(membership[np.flatnonzero(A[node])].tolist())
    return min(options, key=lambda c: (-round(gain(c), 12), c != stay, c))


def purity(membership, planted):
    total = 0
    for c in set(membership):
        groups = Counter(p for m, p in zip(membership, planted) if m == c)
        total += groups.most_common(1)[0][1]
    return total / len(membership)


resolution_prediction = "more"
