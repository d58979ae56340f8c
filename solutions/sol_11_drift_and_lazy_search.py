def primer_folds(report_ids, k):
    return [report_ids[i::k] for i in range(min(k, len(report_ids)))]


drift_cost_prediction = "more"


def next_followups(open_followups, asked, k):
    todo = [f for f in open_followups if f not in asked]
    return sorted(todo, key=lambda f: (-open_followups[f], f))[:k]
