import re


def pack(lines, budget, count_tokens):
    out, used = [], 0
    for line in lines:
        if used + count_tokens(line) > budget:
            break
        out.append(line)
        used += count_tokens(line)
    return out


def grounded(summary, docs):
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", summary) if s.strip()]
    return all(any(s in d for d in docs) for s in sentences)


rating_prediction = 6.0
