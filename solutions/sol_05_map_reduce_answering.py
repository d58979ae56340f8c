import json


def parse_points(raw):
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(raw[start:end + 1])
    except json.JSONDecodeError:
        return None
    points = obj.get("points") if isinstance(obj, dict) else None
    if not isinstance(points, list):
        return None
    out = []
    for p in points:
        d, s = (p.get("description"), p.get("score")) if isinstance(p, dict) else (None, None)
        if not isinstance(d, str) or not d.strip() or isinstance(s, bool) or not isinstance(s, (int, float)):
            return None
        if not 0 <= s <= 100:
            return None
        out.append((d, s))
    return out


def reduce_order(points):
    kept = [p for p in points if p["score"] > 0]
    return sorted(kept, key=lambda p: (-p["score"], p["reports"], p["description"]))


timeout_prediction = "score 0"


def redecide(map_reduce, flat, budget):
    from cookbook.stats import hypothesis_verdict, paired_bootstrap

    fits = [s for s in flat if flat[s]["tokens"] <= budget]  # within the budget, not exactly at it
    if not fits:
        return "not measured", None
    s = min(fits, key=lambda k: (-flat[k]["dev"], flat[k]["tokens"]))  # chosen on dev; a tie: the cheaper
    r = paired_bootstrap(map_reduce["test"], flat[s]["test"], seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), s
