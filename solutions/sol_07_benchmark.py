import numpy as np


def p95(latencies):
    return float(np.percentile(latencies, 95))


def loglog_slope(sizes, seconds):
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])
