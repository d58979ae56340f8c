import math


def npmi(c_ab, n_a, n_b, n):
    if c_ab == 0:
        return -1.0  # never together: the other end of the scale, by convention
    pmi = math.log(c_ab * n / (n_a * n_b))
    return 1.0 if c_ab == n else pmi / -math.log(c_ab / n)


def resolve(candidates):
    known = {ids[0] for ids in candidates if len(ids) == 1}
    out = []
    for ids in candidates:
        hits = [i for i in ids if i in known]
        out.append(hits[0] if len(hits) == 1 else None)
    return out


pmi_prediction = "zero"
