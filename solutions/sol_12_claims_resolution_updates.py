recall_prediction = "higher or equal"


def merge_labels(n, edges):
    parent = list(range(n))

    def root(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j in edges:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [root(x) for x in range(n)]


def parse_claim(record):
    body = record.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    fields = [f.strip() for f in body.split("<|>")]
    if len(fields) != 8 or fields[3].upper() not in ("TRUE", "FALSE", "SUSPECTED"):
        return None
    fields[2], fields[3] = fields[2].upper(), fields[3].upper()
    return tuple(fields)
