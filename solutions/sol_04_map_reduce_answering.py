def coverage(text, themes):
    low = text.lower()
    return sum(t.lower() in low for t in themes) / len(themes)


def reduce_order(points):
    kept = [p for p in points if p["score"] > 0]
    return sorted(kept, key=lambda p: (-p["score"], p["reports"]))
