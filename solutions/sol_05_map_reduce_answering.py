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


def redecide(a, b):
    from cookbook.stats import paired_bootstrap

    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical"
    if r.constant:  # every question differed by the same non-zero amount: one number repeated
        return "the same difference"
    return "supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"
