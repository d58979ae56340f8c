def jaccard(a, b):
    return len(a & b) / len(a | b) if a | b else 0.0


def next_pick(ids, penalised, ann):
    return max(zip(ids, penalised, ann), key=lambda t: (t[1], t[2], -t[0]))[0]
