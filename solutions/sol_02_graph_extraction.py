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


def redecide(extraction, cooccurrence, max_gleanings):
    from cookbook.stats import hypothesis_verdict, paired_bootstrap

    allowed = [g for g in extraction if g <= max_gleanings]  # chosen on dev; a tie: fewer model calls
    weighting = min(cooccurrence, key=lambda w: -cooccurrence[w]["dev"])  # min keeps the first of a tie
    if not allowed:
        return "not measured", None, weighting
    g = min(allowed, key=lambda k: (-extraction[k]["dev"], k))
    r = paired_bootstrap(extraction[g]["test"], cooccurrence[weighting]["test"], seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n), g, weighting
