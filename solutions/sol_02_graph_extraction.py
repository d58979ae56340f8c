def parse_record(line):
    body = line.strip()
    if not (body.startswith("(") and body.endswith(")")):
        return None
    kind, *fields = body[1:-1].split("<|>")
    kind = kind.strip('"')
    fields = [f[1:-1] if len(f) >= 2 and f[0] == f[-1] == '"' else f for f in fields]  # GPT-4o quotes fields
    if kind == "entity" and len(fields) == 3:
        return ("entity", *fields)
    if kind == "relationship" and len(fields) == 5:
        try:
            return ("relationship", *fields[:4], float(fields[4]))
        except ValueError:
            return None
    return None


def merge_descriptions(parts, max_words):
    out, seen, words = [], set(), 0
    for part in parts:
        for sentence in part.replace(". ", ".\n").splitlines():
            sentence = sentence.strip()
            if not sentence or sentence in seen:
                continue
            n = len(sentence.split())
            if words + n > max_words:
                return " ".join(out)
            seen.add(sentence)
            out.append(sentence)
            words += n
    return " ".join(out)


gleaning_prediction = "less"


def redecide(a, b):
    from cookbook.stats import paired_bootstrap

    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical"
    if r.constant:  # every question differed by the same non-zero amount: one number repeated
        return "the same difference"
    return "supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"
