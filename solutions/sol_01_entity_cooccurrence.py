import itertools
import math


def npmi(c_ab, n_a, n_b, n):
    pmi = math.log(c_ab * n / (n_a * n_b))
    return 1.0 if c_ab == n else pmi / -math.log(c_ab / n)


def cooccurrence_counts(windows):
    counts = {}
    for window in windows:
        for pair in itertools.combinations(sorted(set(window)), 2):
            counts[pair] = counts.get(pair, 0) + 1
    return counts
