import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap

from cookbook import stats

N_BOOT = 40_000


def _scipy_paired(a, b, ci):
    res = bootstrap((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True, vectorized=True,
                    method="percentile", confidence_level=ci, n_resamples=N_BOOT, random_state=123)
    return res.confidence_interval


@pytest.mark.parametrize("n, ci, kind", [(30, 0.95, "normal"), (120, 0.95, "binary"), (60, 0.90, "skewed")])
def test_paired_ci_agrees_with_scipy(n, ci, kind):
    rng = np.random.default_rng(n)
    if kind == "normal":
        a, b = rng.normal(0.6, 0.2, n), rng.normal(0.5, 0.2, n)
    elif kind == "binary":  # recall@k-like scores: many ties
        a, b = rng.integers(0, 2, n).astype(float), rng.integers(0, 2, n).astype(float)
    else:
        a, b = rng.exponential(0.1, n), rng.exponential(0.05, n)
    ours = stats.paired_bootstrap(a, b, n_boot=N_BOOT, ci=ci, seed=1)
    ref = _scipy_paired(a, b, ci)
    se = np.std(a - b, ddof=1) / np.sqrt(n)
    # Two independent Monte Carlo estimates of the same percentiles: ~0.02 se apart; 0.15 se is > 5 sigma.
    assert ours.ci_low == pytest.approx(ref.low, abs=0.15 * se)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.15 * se)
    d = a - b
    assert ours.mean_diff == pytest.approx(d.mean())
    assert (ours.n, ours.wins, ours.losses, ours.ties) == (n, (d > 0).sum(), (d < 0).sum(), (d == 0).sum())


def test_mean_ci_agrees_with_scipy():
    x = np.random.default_rng(5).gamma(2.0, 0.1, 80)
    ours = stats.bootstrap_mean_ci(x, n_boot=N_BOOT, seed=2)
    ref = bootstrap((x,), np.mean, method="percentile", n_resamples=N_BOOT, random_state=7).confidence_interval
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert ours.mean == pytest.approx(x.mean())
    assert ours.ci_low == pytest.approx(ref.low, abs=0.15 * se)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.15 * se)


def test_identical_scores_give_a_zero_interval():
    a = np.random.default_rng(0).random(50)
    r = stats.paired_bootstrap(a, a.copy())
    assert (r.mean_diff, r.ci_low, r.ci_high, r.ties) == (0.0, 0.0, 0.0, 50)
    assert not r.significant()
    assert str(r) == "+0.000 [+0.000, +0.000] over 50 questions (0 wins, 0 losses, 50 ties)"


def test_chunking_does_not_change_the_result(monkeypatch):
    a, b = np.random.default_rng(1).random((2, 40))
    whole = stats.paired_bootstrap(a, b, n_boot=3000, seed=4)
    monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", 40 * 7)  # 7 resamples per chunk, a ragged last chunk
    assert stats.paired_bootstrap(a, b, n_boot=3000, seed=4) == whole


def test_clear_position_of_the_difference():
    a = np.full(40, 0.8)
    b = np.full(40, 0.5)
    b[:5] = 0.9  # A loses 5 of 40 questions
    r = stats.paired_bootstrap(a, b, seed=3)
    assert r.significant() and r.significant(margin=0.1) and not r.significant(margin=0.3)
    assert (r.wins, r.losses, r.ties) == (35, 5, 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=1, max_size=30),
       st.floats(-1, 1), st.integers(0, 2**32 - 1))
def test_properties(pairs, shift, seed):
    a, b = np.array(pairs).T
    r = stats.paired_bootstrap(a, b, n_boot=500, seed=seed)
    d = a - b
    assert r.wins + r.losses + r.ties == r.n == len(d)
    assert d.min() - 1e-12 <= r.ci_low <= r.ci_high <= d.max() + 1e-12
    assert stats.paired_bootstrap(a, b, n_boot=500, seed=seed) == r  # same seed, same result
    swapped = stats.paired_bootstrap(b, a, n_boot=500, seed=seed)  # the same resamples, negated
    assert swapped.ci_low == pytest.approx(-r.ci_high, abs=1e-9)
    assert swapped.ci_high == pytest.approx(-r.ci_low, abs=1e-9)
    assert (swapped.wins, swapped.losses) == (r.losses, r.wins)
    shifted = stats.paired_bootstrap(a + shift, b, n_boot=500, seed=seed)
    assert shifted.ci_low == pytest.approx(r.ci_low + shift, abs=1e-9)


@pytest.mark.parametrize("a, b, kw, err, match", [
    ([1, 2], [1], {}, ValueError, "same questions"),
    ([], [], {}, ValueError, "empty"),
    ([0.1, float("nan")], [0.1, 0.2], {}, ValueError, r"non-finite value \(nan\) at index 1"),
    ([0.1, 0.2], [0.1, float("inf")], {}, ValueError, "b has a non-finite"),
    ([[0.1, 0.2]], [[0.1, 0.2]], {}, ValueError, "one-dimensional"),
    ("abc", "abd", {}, TypeError, "sequence of numbers"),
    (["x", "y"], [1, 2], {}, TypeError, "a must be a sequence of numbers"),
    ([1, 2], [1, 2], {"n_boot": 0}, ValueError, "n_boot"),
    ([1, 2], [1, 2], {"ci": 95}, ValueError, "ci must be"),
])
def test_bad_inputs(a, b, kw, err, match):
    with pytest.raises(err, match=match):
        stats.paired_bootstrap(a, b, **kw)


def test_mean_ci_bad_inputs():
    with pytest.raises(ValueError, match="x is empty"):
        stats.bootstrap_mean_ci([])
    with pytest.raises(ValueError, match="non-finite"):
        stats.bootstrap_mean_ci([1.0, float("nan")])


def test_bootstrap_statistic_draws_what_the_mean_ci_draws_and_refuses_bad_input():
    x = np.random.default_rng(1).random(37)
    for seed in (0, 5):
        mean_ci = stats.bootstrap_mean_ci(x, n_boot=2000, seed=seed)
        general = stats.bootstrap_statistic(lambda idx: x[idx].mean(), len(x), n_boot=2000, seed=seed)
        assert (general.mean, general.ci_low, general.ci_high) == pytest.approx(
            (mean_ci.mean, mean_ci.ci_low, mean_ci.ci_high), abs=1e-12)
    with pytest.raises(TypeError, match="statistic"):
        stats.bootstrap_statistic("mean", 3)
    with pytest.raises(ValueError, match="non-finite"):
        stats.bootstrap_statistic(lambda idx: np.nan, 3, n_boot=10)
    with pytest.raises(ValueError, match="n"):
        stats.bootstrap_statistic(lambda idx: 0.0, 0)


def test_bootstrap_statistic_of_a_ratio_agrees_with_scipy_and_a_deduplicated_draw_does_not():
    """A ratio of per-unit sums (notebook 01's share of co-mentions) against scipy.stats.bootstrap's percentile
    interval, paired over the same units; drawing each unit at most once (a subsample, the old notebook 01) gives a
    visibly narrower interval, so the comparison can fail."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    total = rng.integers(1, 30, size=200).astype(float)
    within = np.floor(total * rng.beta(2, 3, size=200))

    def ratio(w, t, axis=-1):
        return w.sum(axis) / t.sum(axis)

    ours = stats.bootstrap_statistic(lambda idx: ratio(within[idx], total[idx]), 200, n_boot=10_000, seed=0)
    ref = scipy_stats.bootstrap((within, total), ratio, paired=True, vectorized=True, n_resamples=10_000,
                                method="percentile", random_state=0).confidence_interval
    width = ref.high - ref.low
    assert ours.mean == pytest.approx(within.sum() / total.sum())
    assert abs(ours.ci_low - ref.low) < 0.05 * width and abs(ours.ci_high - ref.high) < 0.05 * width
    once = stats.bootstrap_statistic(lambda idx: ratio(within[np.unique(idx)], total[np.unique(idx)]), 200,
                                     n_boot=10_000, seed=0)
    assert once.ci_high - once.ci_low < 0.85 * width


@pytest.mark.parametrize("n,sd", [(30, 0.4), (100, 0.25)])
def test_minimum_detectable_effect_has_80_percent_power_by_brute_force(n, sd):
    """Simulate the series' own test (a paired bootstrap CI above 0) on differences whose true mean is the MDE:
    about 80 % of the runs detect it, and at half the MDE far fewer do (an MDE formula off by a factor fails)."""
    mde = stats.minimum_detectable_effect(sd, n)
    rng = np.random.default_rng(0)

    def power(effect, runs=300):
        hits = 0
        for i in range(runs):
            d = rng.normal(effect, sd, n)
            hits += stats.paired_bootstrap(d, np.zeros(n), n_boot=1000, seed=i).ci_low > 0
        return hits / runs

    assert 0.72 <= power(mde) <= 0.88
    assert power(mde / 2) <= 0.45
    r = stats.paired_bootstrap(rng.normal(0, sd, n), np.zeros(n), n_boot=200)
    assert r.mde == pytest.approx(stats.minimum_detectable_effect(r.sd, n))


def test_minimum_detectable_effect_refuses_bad_input_and_flags_identical_scores():
    for sd, n, match in ((-0.1, 10, "sd"), (float("nan"), 10, "sd"), (0.2, 0, "n")):
        with pytest.raises(ValueError, match=match):
            stats.minimum_detectable_effect(sd, n)
    r = stats.paired_bootstrap([0.5, 1.0, 0.0], [0.5, 1.0, 0.0], n_boot=100)
    assert r.identical and r.mde == 0.0 and (r.mean_a, r.mean_b) == (0.5, 0.5)
    assert not stats.paired_bootstrap([1.0, 1.0, 0.0], [0.5, 1.0, 0.0], n_boot=100).identical


def test_a_constant_nonzero_difference_is_no_win():
    """Issue 33 (second review): 03 read Leiden's one modularity repeated over 24 seeds against deterministic
    greedy modularity as "Leiden better over 24 seeds". A zero-width CI away from 0 is one number repeated."""
    leiden, greedy = [0.8721] * 24, [0.8716] * 24
    r = stats.paired_bootstrap(leiden, greedy, seed=0)
    assert r.ci_low == r.ci_high == pytest.approx(0.0005) and r.constant and not r.identical
    reading = r.reading(("Leiden", "greedy"), "seeds")
    assert "better" not in reading and reading.startswith("the same difference") and "24 seeds" in reading
    assert stats.hypothesis_verdict(r.ci_low, r.ci_high, r.identical) == "the same difference on every unit"
    # The rules around it hold: zero width at 0 is identical; a varying gain is a win.
    same = stats.paired_bootstrap(greedy, greedy, seed=0)
    assert same.identical and not same.constant and same.reading().startswith("identical on every one")
    varied = stats.paired_bootstrap([0.9, 0.8, 0.85, 0.9] * 6, [0.5] * 24, seed=0)
    assert not varied.constant and varied.reading(("A", "B")) == "A better over 24 questions"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=8, max_size=8), min_size=1, max_size=5), st.integers(0, 2**31))
def test_best_on_dev_reads_only_the_dev_rows(grid, seed):
    """Whatever the test half holds, the choice is the same: the brute-force argmax over the dev rows (ties: first
    listed), recomputed after every test score is replaced at random."""
    names = [f"m{i}" for i in range(len(grid))]
    scores = {n: np.array(row, dtype=float) / 4 for n, row in zip(names, grid)}
    dev = [0, 2, 3, 6]
    test = [i for i in range(8) if i not in dev]
    means = [sum(scores[n][i] for i in dev) for n in names]
    want = names[means.index(max(means))]
    assert stats.best_on_dev(scores, dev) == want
    rng = np.random.default_rng(seed)
    scrambled = {n: s.copy() for n, s in scores.items()}
    for s in scrambled.values():
        s[test] = rng.random(len(test)) * 10
    assert stats.best_on_dev(scrambled, dev) == want
    mask = np.isin(np.arange(8), dev)
    assert stats.best_on_dev(scrambled, mask) == want


def test_best_on_dev_ties_keep_the_default_then_the_first_listed():
    flat = {0.15: [0.5, 0.5], 0.5: [0.5, 0.5], 0.85: [0.0, 0.0]}
    assert stats.best_on_dev(flat, [0, 1], prefer=0.5) == 0.5
    assert stats.best_on_dev(flat, [0, 1]) == 0.15
    assert stats.best_on_dev(flat, [0, 1], prefer=0.85) == 0.15  # a default that is not among the best is no tie


def test_a_bound_at_zero_up_to_rounding_is_zero_and_decides_nothing():
    """Issue 33 (finding 4): 07 printed and decided a CI bound of +6.17e-19 where the exact bound is 0, because
    0.74 − 0.64 and 0.58 − 0.48 differ in the 17th digit. Reference: the same resamples in exact integer
    arithmetic (scores in hundredths), so the true bounds are known; the float ones must equal them."""
    a = [0.7, 0.2, 0.3, 0.74, 0.2, 0.64]
    b = [0.6, 0.1, 0.2, 0.64, 0.1, 0.74]
    r = stats.paired_bootstrap(a, b, n_boot=1000, seed=0)
    d_exact = np.array([round(x * 100) - round(y * 100) for x, y in zip(a, b)])  # integers: no rounding
    idx = np.random.default_rng(0).integers(0, len(a), size=(1000, len(a)))  # the draws paired_bootstrap makes
    sums = np.sort(d_exact[idx].sum(axis=1))  # exact; the percentile bounds are at the 25th and 975th sums
    assert sums[24] == 0  # the exact lower bound is 0 (between two resample means that are both exactly 0)
    assert r.ci_low == 0.0 and r.ci_high == pytest.approx(np.quantile(sums, 0.975) / 600)
    assert stats.hypothesis_verdict(r.ci_low, r.ci_high, r.identical) == "not significant"  # old: "supported"
    assert not r.significant() and "better" not in r.reading()
    # The mean, the mean CI and a statistic's CI are snapped the same way; a real 1e-9 is kept.
    assert stats.paired_bootstrap([0.74, 0.58], [0.64, 0.48], n_boot=200).mean_diff != 0.0
    assert stats.bootstrap_mean_ci([(0.74 - 0.64) - (0.58 - 0.48)] * 3, n_boot=100).mean == 0.0
    assert stats.bootstrap_mean_ci([1e-9, 0.0], n_boot=100).ci_high == 1e-9


def test_cluster_bootstrap_against_exact_enumeration_and_its_special_cases():
    """Issue 33 (finding 3): 04's CI over entities treated the members of one community, which share one report,
    as independent. References: every one of the k^k equally likely resamples of k clusters enumerated (the exact
    bootstrap distribution); one unit per cluster is paired_bootstrap; equal clusters of one repeated score are
    paired_bootstrap over the cluster means, and the entity-wise interval is then far too narrow."""
    from itertools import product
    d_of = {"p": [0.5, 0.25, 0.0], "q": [-0.25], "r": [0.75, 0.5], "s": [0.0, -0.5, 0.0, 0.25]}
    labels = [c for c, ds in d_of.items() for _ in ds]
    d = np.array([x for ds in d_of.values() for x in ds])
    r = stats.cluster_bootstrap(d, np.zeros_like(d), labels, n_boot=40_000, seed=3)
    exact = np.sort([sum(sum(d_of[c]) for c in draw) / sum(len(d_of[c]) for c in draw)
                     for draw in product(d_of, repeat=len(d_of))])  # 256 resamples, each 1/256
    assert exact[int(0.015 * 256)] <= r.ci_low <= exact[int(0.035 * 256)]
    assert exact[int(0.965 * 256)] <= r.ci_high <= exact[int(0.985 * 256)]
    assert r.mean_diff == pytest.approx(d.mean()) and r.n == len(d)
    # One unit per cluster: the paired bootstrap, draw for draw.
    a, b = np.random.default_rng(1).random(30), np.random.default_rng(2).random(30)
    one = stats.cluster_bootstrap(a, b, [f"u{i}" for i in range(30)], seed=4)
    paired = stats.paired_bootstrap(a, b, seed=4)
    assert (one.ci_low, one.ci_high, one.sd) == pytest.approx((paired.ci_low, paired.ci_high, paired.sd), abs=1e-12)
    # Ten communities of ten entities sharing their report's score: ten units of evidence, not a hundred.
    per_cluster = np.random.default_rng(5).random(10) - 0.4
    shared = np.repeat(per_cluster, 10)
    clustered = stats.cluster_bootstrap(shared, np.zeros(100), np.repeat(np.arange(10), 10), seed=6)
    of_means = stats.paired_bootstrap(per_cluster, np.zeros(10), seed=6)
    assert (clustered.ci_low, clustered.ci_high) == pytest.approx((of_means.ci_low, of_means.ci_high), abs=1e-12)
    naive = stats.paired_bootstrap(shared, np.zeros(100), seed=6)
    assert naive.ci_high - naive.ci_low < 0.5 * (clustered.ci_high - clustered.ci_low)
    assert clustered.mde == pytest.approx(of_means.mde, rel=0.06)  # the design's MDE, not the naive one's
    with pytest.raises(ValueError, match="one label per unit"):
        stats.cluster_bootstrap([1.0, 0.0], [0.0, 0.0], ["x"])


def test_a_repeated_difference_has_sd_and_mde_zero_not_rounding_noise():
    """03 printed an MDE of 3.2e-17 for AMI's one difference repeated over 24 seeds (0.66097… − 1.0 each time):
    the SD of equal numbers is 0, and the snap reads it so."""
    r = stats.paired_bootstrap([0.6609772637601298] * 24, [1.0] * 24, seed=0)
    assert r.sd == 0.0 and r.mde == 0.0 and r.constant
    c = stats.cluster_bootstrap([0.6609772637601298] * 24, [1.0] * 24, list(range(12)) * 2, seed=0)
    assert c.sd == 0.0
