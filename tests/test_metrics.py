import math

import pytest

from cookbook import metrics


def test_jaccard_and_pairwise():
    assert metrics.jaccard(set(), set()) == 0.0
    assert metrics.jaccard({1}, {1}) == 1.0
    assert metrics.mean_pairwise_jaccard([{1, 2}, {2, 3}, {4}]) == (1 / 3 + 0 + 0) / 3
    assert metrics.mean_pairwise_jaccard([{1}]) == 0.0


def test_entropy_and_majority():
    assert metrics.label_entropy([]) == 0.0 and metrics.label_entropy([3, 3]) == 0.0
    assert math.isclose(metrics.label_entropy(list(range(8))), 3.0)
    assert metrics.majority_fraction([1, 1, 2]) == 2 / 3
    assert metrics.unique_nodes([1, 2], [2, 3]) == 3


def test_support_recall_counts_gold_found():
    assert metrics.support_recall(["D3", "D1", "D3"], ["D3", "D4"]) == 0.5
    assert metrics.support_recall([], ["D1"]) == 0.0
    assert metrics.support_recall(iter(["D1", "D2"]), ("D2", "D1")) == 1.0


def test_label_metrics_take_any_hashable_labels_and_refuse_missing_ones():
    """Labels are names, read once by _validate.labels (issue 30): mixed and tuple labels count as names."""
    assert metrics.label_entropy([1, "a", (2, 3), (2, 3)]) == pytest.approx(1.5)
    assert metrics.majority_fraction([0.2, 0.2, 0.7]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="missing label"):
        metrics.label_entropy([None, 1])
