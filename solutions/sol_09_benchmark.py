import numpy as np


def paired_ci(a, b, n_boot, seed):
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(d.mean()), float(low), float(high)


def run_order(methods, n_queries):
    m = len(methods)
    return [(methods[(q + i) % m], q) for q in range(n_queries) for i in range(m)]


outlier_prediction = "mean"
