"""Uncertainty for the series' comparisons: percentile-bootstrap confidence intervals of a mean.

``paired_bootstrap(a, b)`` compares two methods scored on the *same* questions (``a[i]`` and ``b[i]``
belong to question ``i``): it resamples questions with replacement and reports the mean difference
``a - b`` with its confidence interval, plus how many questions each method won; "A beats B" holds when the
interval's lower bound clears the claimed margin.

>>> r = paired_bootstrap([0.9, 0.8, 0.7, 0.9, 0.6], [0.5, 0.6, 0.7, 0.4, 0.5])
>>> print(r)
+0.240 [+0.080, +0.400] over 5 questions (4 wins, 0 losses, 1 tie)
>>> r.significant(), r.significant(margin=0.1)
(True, False)

A comparison that finds no difference says how large a difference it could have found:
``minimum_detectable_effect(sd, n)`` is the true mean difference that a paired test over ``n`` questions whose
differences have standard deviation ``sd`` detects with 80 % power at α = 0.05 (two-sided), about
2.8 · sd / √n; ``PairedResult.mde`` is it at the comparison's own n and SD.

>>> round(minimum_detectable_effect(0.3, 100), 3), round(r.mde, 3)
(0.084, 0.26)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ._validate import integer, probability, summable
from ._validate import seed as check_seed
from .splits import best_on_dev, dev_test_split  # the dev/test design, re-exported where notebooks read it

__all__ = ["BY_CONSTRUCTION", "MeanCI", "PairedResult", "best_on_dev", "bootstrap_mean_ci", "bootstrap_statistic",
           "cluster_bootstrap", "construction",
           "dev_test_split", "MIN_QUESTIONS", "hypothesis_verdict", "minimum_detectable_effect", "paired_bootstrap"]

# Resampled indices per chunk: bounds memory (8 bytes each) whatever n × n_boot is.
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class MeanCI:
    """Mean of ``n`` values with a ``ci`` (e.g. 0.95) percentile-bootstrap interval [ci_low, ci_high], as
    :func:`bootstrap_mean_ci` returns it.

    >>> print(MeanCI(n=3, mean=0.5, ci_low=0.25, ci_high=0.75, ci=0.95))
    0.500 [0.250, 0.750] over 3
    """

    n: int
    mean: float
    ci_low: float
    ci_high: float
    ci: float

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] over {self.n}"


_ZERO_TOL = 1e-12  # relative to the largest |score|: a mean or CI bound this close to 0 is 0 (float rounding)


def _snap_zero(value: float, scale: float) -> float:
    """``value`` (a mean or a CI bound of scores whose largest magnitude is ``scale``), with float rounding at 0
    read as 0: 0.74 − 0.64 and 0.58 − 0.48 differ in the 17th digit, so a resample that cancels them has a mean of
    about 1e-18, not 0, and a CI bound there would decide a verdict on rounding. The one place the series'
    intervals and means are snapped (:func:`_interval`, :func:`bootstrap_mean_ci`, :func:`paired_bootstrap`,
    :func:`bootstrap_statistic`), so no verdict or reading flips on rounding.

    >>> _snap_zero((0.74 - 0.64) - (0.58 - 0.48), 0.74), _snap_zero(1e-9, 0.74)
    (0.0, 1e-09)
    """
    return 0.0 if abs(value) <= _ZERO_TOL * max(1.0, scale) else float(value)


def _zero_width(low: float, high: float) -> bool:
    """Whether an interval has width 0, up to float rounding (differences such as 0.74 - 0.64 and 0.58 - 0.48)."""
    return math.isclose(low, high, rel_tol=1e-9, abs_tol=1e-12)


MIN_QUESTIONS = 24  # the series' minimum for a claim: a comparison over fewer reads "too few to decide"
BY_CONSTRUCTION = "by construction"  # a caveat starting so marks a design whose outcome is fixed in advance


@dataclass(frozen=True)
class PairedResult:
    """Paired comparison of A against baseline B over ``n`` questions.

    ``mean_diff`` is mean(a − b); [ci_low, ci_high] its ``ci`` percentile-bootstrap interval;
    ``wins``/``losses``/``ties`` count questions where a > b, a < b, a == b; ``sd`` is the standard deviation of
    the differences a − b (ddof 1; NaN when unknown), ``mean_a`` and ``mean_b`` the two methods' own means (their
    absolute levels). Made by :func:`paired_bootstrap`.

    >>> print(PairedResult(n=2, mean_diff=0.1, ci_low=0.0, ci_high=0.2, wins=1, losses=0, ties=1, ci=0.95))
    +0.100 [+0.000, +0.200] over 2 questions (1 win, 0 losses, 1 tie)
    """

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    ties: int
    ci: float
    sd: float = math.nan
    mean_a: float = math.nan
    mean_b: float = math.nan
    clusters: int = 0  # resampled clusters (cluster_bootstrap); 0: the units themselves were resampled

    @property
    def identical(self) -> bool:
        """Whether A and B scored the same on every question (a CI of width 0 at 0: "identical on every unit").

        >>> PairedResult(n=3, mean_diff=0.0, ci_low=0.0, ci_high=0.0, wins=0, losses=0, ties=3, ci=0.95).identical
        True
        """
        return self.ties == self.n

    @property
    def constant(self) -> bool:
        """Whether every question showed the same non-zero difference (a CI of width 0 away from 0: one number
        repeated). That is no win: it reads "the same difference on every one of the n ...".

        >>> PairedResult(n=24, mean_diff=5e-4, ci_low=5e-4, ci_high=5e-4, wins=24, losses=0, ties=0, ci=0.95).constant
        True
        """
        return not self.identical and _zero_width(self.ci_low, self.ci_high)

    @property
    def mde(self) -> float:
        """The minimum detectable effect at this comparison's ``n`` and ``sd``
        (:func:`minimum_detectable_effect`, 80 % power, α = 0.05); NaN when ``sd`` is unknown.

        >>> round(PairedResult(100, 0.0, -0.05, 0.05, 30, 30, 40, 0.95, sd=0.25).mde, 3)
        0.07
        """
        return math.nan if math.isnan(self.sd) else minimum_detectable_effect(self.sd, self.n)

    def reading(self, labels=("A", "B"), unit: str = "questions", least: int = MIN_QUESTIONS) -> str:
        """What the comparison shows, in descriptive words (never a verdict: *supported* / *contradicted* belong
        to a lesson's hypothesis, harness/verdicts.py): the better side when the CI excludes 0, "identical on
        every ..." when every difference is 0 (a CI of width 0), "too few to decide" over fewer than ``least``
        units (:data:`MIN_QUESTIONS`: the CI is shown, not read), else "no significant difference".

        >>> r = PairedResult(4, 0.2, 0.1, 0.3, 3, 0, 1, 0.95)
        >>> PairedResult(4, 0.0, 0.0, 0.0, 0, 0, 4, 0.95).reading(("PPR", "BM25")), r.reading(("PPR", "BM25"))
        ('identical on every one of the 4 questions', 'too few to decide over 4 questions')
        >>> r.reading(("PPR", "BM25"), least=0)
        'PPR better over 4 questions'
        >>> PairedResult(24, 5e-4, 5e-4, 5e-4, 24, 0, 0, 0.95).reading(("Leiden", "greedy"), "seeds")
        'the same difference (+0.0005, Leiden higher) on every one of the 24 seeds'
        """
        if self.identical:
            return f"identical on every one of the {self.n} {unit}"
        if self.constant:
            higher = labels[0] if self.mean_diff > 0 else labels[1]
            return f"the same difference ({self.mean_diff:+.2g}, {higher} higher) on every one of the {self.n} {unit}"
        over = f"over {self.n} {unit}" + (f" in {self.clusters} clusters" if self.clusters else "")
        if (self.clusters or self.n) < least:  # clusters resampled: the clusters are the independent units
            return f"too few to decide {over}"
        if self.ci_low > 0:
            return f"{labels[0]} better {over}"
        if self.ci_high < 0:
            return f"{labels[1]} better {over}"
        return f"no significant difference {over}"

    def significant(self, margin: float = 0.0) -> bool:
        """True when the whole interval lies above ``margin`` (A beats B by more than ``margin``).

        >>> r = PairedResult(n=9, mean_diff=0.2, ci_low=0.05, ci_high=0.3, wins=7, losses=1, ties=1, ci=0.95)
        >>> r.significant(), r.significant(margin=0.1)
        (True, False)
        """
        return self.ci_low > margin

    def __str__(self) -> str:
        def plural(k, word):
            return f"{k} {word}" + ("" if k == 1 else ("es" if word.endswith("s") else "s"))

        return (f"{self.mean_diff:+.3f} [{self.ci_low:+.3f}, {self.ci_high:+.3f}] over {plural(self.n, 'question')} "
                f"({plural(self.wins, 'win')}, {plural(self.losses, 'loss')}, {plural(self.ties, 'tie')})")


def _sample(x, name: str) -> np.ndarray:
    """``x`` as a 1-D float array, or a ValueError/TypeError naming the problem."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, got {type(x).__name__}")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a sequence of numbers: {e}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one score per question), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: nothing to bootstrap")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name} has a non-finite value ({arr[bad[0]]}) at index {bad[0]}")
    return summable(arr, name, what="scores")  # a mean of 1e308s overflows


def _check_params(n_boot, ci) -> None:
    integer(n_boot, "n_boot")
    probability(ci, "ci", zero_ok=False, one_ok=False, what="a confidence level in (0, 1)")


def _interval(x: np.ndarray, n_boot: int, ci: float, seed: int) -> tuple[float, float]:
    """Percentile interval of the mean of ``x`` (shape (n,)) over ``n_boot`` resamples of its indices."""
    n = len(x)
    rng = np.random.default_rng(check_seed(seed))
    rows = max(1, _CHUNK_ELEMENTS // n)
    means = np.empty(n_boot)
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        idx = rng.integers(0, n, size=(stop - start, n))  # (rows, n): one resample of the questions per row
        means[start:stop] = x[idx].mean(axis=1)
    alpha = (1 - ci) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    scale = float(np.abs(x).max())
    return _snap_zero(low, scale), _snap_zero(high, scale)


def bootstrap_mean_ci(x, *, n_boot: int = 10_000, ci: float = 0.95, seed: int = 0) -> MeanCI:
    """Mean of ``x`` (shape (n,)) with a percentile-bootstrap ``ci`` interval.

    >>> print(bootstrap_mean_ci([1.0, 2.0, 3.0, 4.0]))
    2.500 [1.500, 3.500] over 4
    """
    x = _sample(x, "x")
    _check_params(n_boot, ci)
    low, high = _interval(x, n_boot, ci, seed)
    return MeanCI(len(x), _snap_zero(x.mean(), float(np.abs(x).max())), low, high, ci)


def bootstrap_statistic(statistic, n: int, *, n_boot: int = 1000, ci: float = 0.95, seed: int = 0) -> MeanCI:
    """``statistic(idx)`` on all ``n`` units (``idx = arange(n)``) with a percentile-bootstrap ``ci`` interval
    over ``n_boot`` resamples ``idx`` of the units, for a statistic that is not a mean of per-unit scores
    (e.g. the share of a co-occurrence graph's edges inside a group, the units being documents).
    ``statistic`` takes an int array of shape (n,), with repeats, and returns a number. For the mean of
    ``x[idx]`` it draws exactly what :func:`bootstrap_mean_ci` draws. Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> print(bootstrap_statistic(lambda idx: x[idx].mean(), len(x), n_boot=10_000))
    2.500 [1.500, 3.500] over 4
    """
    integer(n, "n")
    _check_params(n_boot, ci)
    if not callable(statistic):
        raise TypeError(f"statistic must be a function of an index array, got {type(statistic).__name__}")
    rng = np.random.default_rng(check_seed(seed))
    values = np.array([float(statistic(rng.integers(0, n, size=n))) for _ in range(n_boot)])
    if not np.isfinite(values).all():
        raise ValueError("statistic returned a non-finite value on a resample (e.g. an empty selection)")
    alpha = (1 - ci) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    scale = float(np.abs(values).max())
    return MeanCI(n, _snap_zero(float(statistic(np.arange(n))), scale), _snap_zero(low, scale),
                  _snap_zero(high, scale), ci)


def paired_bootstrap(a, b, *, n_boot: int = 10_000, ci: float = 0.95, seed: int = 0) -> PairedResult:
    """Mean of ``a - b`` (both shape (n,), one score per question) with a paired percentile-bootstrap interval.

    Questions are resampled with replacement, keeping each question's pair together; same ``seed`` →
    identical result. Different lengths, empty input and NaN/inf are refused with a ValueError.

    >>> r = paired_bootstrap([1.0, 1.0, 0.0], [0.0, 1.0, 0.0], n_boot=200)
    >>> round(r.mean_diff, 3), (r.wins, r.losses, r.ties)
    (0.333, (1, 0, 2))
    """
    a, b = _sample(a, "a"), _sample(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a and b must score the same questions: {len(a)} scores vs {len(b)}")
    _check_params(n_boot, ci)
    d = a - b
    low, high = _interval(d, n_boot, ci, seed)
    scale = float(np.abs(d).max())
    sd = _snap_zero(float(d.std(ddof=1)), scale) if len(d) > 1 else math.nan  # one difference repeated: SD 0, MDE 0
    mean = _snap_zero(d.mean(), scale)
    return PairedResult(len(d), mean, low, high, int((d > 0).sum()), int((d < 0).sum()),
                        int((d == 0).sum()), ci, sd, float(a.mean()), float(b.mean()))


def cluster_bootstrap(a, b, clusters, *, n_boot: int = 10_000, ci: float = 0.95, seed: int = 0) -> PairedResult:
    """:func:`paired_bootstrap` for units that are not independent: ``clusters`` (shape (n,), one label per unit,
    e.g. the community an entity's report comes from) groups units that share their score's cause, and whole
    clusters are resampled with replacement, the mean difference taken over every unit they hold (a ratio: the
    drawn clusters' summed differences over their units). Units of one community read one report, so resampling
    them one by one pretends there are ``n`` independent reports and gives too narrow an interval.

    The result counts units (``n``, wins, losses, ties) and ``clusters`` (what a reading's minimum counts); its
    ``sd`` is the per-unit SD the cluster design implies (the linearised standard error of the ratio, times √n),
    so ``mde`` is the minimum detectable effect of *this* design. With one unit per cluster it draws exactly what
    :func:`paired_bootstrap` draws. Checked against an exact enumeration of every resample in tests/test_stats.py;
    taught in notebooks/04_community_reports.ipynb.

    >>> r = cluster_bootstrap([1, 1, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1], ["x", "x", "y", "y", "z", "z"], n_boot=2000)
    >>> round(r.mean_diff, 3), r.n, r.ci_low <= 0 <= r.ci_high
    (0.333, 6, True)
    """
    a, b = _sample(a, "a"), _sample(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a and b must score the same units: {len(a)} scores vs {len(b)}")
    labels = np.asarray(clusters, dtype=object)
    if labels.ndim != 1 or len(labels) != len(a):
        raise ValueError(f"clusters must give one label per unit: {labels.size} labels for {len(a)} units")
    _check_params(n_boot, ci)
    d = a - b
    _, first, cluster_of = np.unique(labels.astype(str), return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # clusters numbered by first appearance, as the units are ordered
    cluster_of, k = order[cluster_of.ravel()], len(first)
    sums, sizes = np.bincount(cluster_of, weights=d, minlength=k), np.bincount(cluster_of, minlength=k)
    rng = np.random.default_rng(check_seed(seed))
    rows = max(1, _CHUNK_ELEMENTS // k)
    means = np.empty(n_boot)
    for start in range(0, n_boot, rows):
        idx = rng.integers(0, k, size=(min(start + rows, n_boot) - start, k))  # one resample of the clusters per row
        means[start:start + len(idx)] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    low, high = np.quantile(means, [(1 - ci) / 2, (1 + ci) / 2])
    scale = float(np.abs(d).max())
    mean = _snap_zero(d.mean(), scale)
    residual = sums - mean * sizes  # the linearised ratio estimator: SE² = k/(k−1) · Σ residual² / n²
    se = math.sqrt(k / (k - 1) * float((residual ** 2).sum())) / len(d) if k > 1 else math.nan
    sd = _snap_zero(se * math.sqrt(len(d)), scale)  # the per-unit SD the cluster design implies
    return PairedResult(len(d), mean, _snap_zero(low, scale), _snap_zero(high, scale), int((d > 0).sum()),
                        int((d < 0).sum()), int((d == 0).sum()), ci, sd, float(a.mean()), float(b.mean()), k)


def minimum_detectable_effect(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true mean paired difference a two-sided test at level ``alpha`` over ``n`` questions detects
    with probability ``power``, when the per-question differences have standard deviation ``sd``:
    (z₁₋α/₂ + z_power) · sd / √n (the normal approximation the bootstrap CI follows; about 2.80 · sd / √n at
    the defaults): a comparison that is not significant ruled out only differences above this. Checked against a
    brute-force simulation of paired bootstrap CIs in tests/test_stats.py; shown beside every verdict.

    >>> round(minimum_detectable_effect(1.0, 1), 3), round(minimum_detectable_effect(0.5, 25), 3)
    (2.802, 0.28)
    """
    if isinstance(sd, bool) or not isinstance(sd, (int, float, np.floating)) or not math.isfinite(sd) or sd < 0:
        raise ValueError(f"sd must be a finite number >= 0 (the differences' standard deviation), got {sd!r}")
    integer(n, "n")
    probability(alpha, "alpha", zero_ok=False, one_ok=False, what="a significance level in (0, 1)")
    probability(power, "power", zero_ok=False, one_ok=False, what="a power in (0, 1)")
    z = NormalDist().inv_cdf
    return float((z(1 - alpha / 2) + z(power)) * sd / math.sqrt(n))


def construction(caveat: str) -> bool | str:
    """How far a design fixes its outcome, from its caveat: True when it starts "by construction", "partly" when
    "partly by construction", else False (what :func:`hypothesis_verdict`'s ``by_construction`` takes).

    >>> construction("by construction: set A only"), construction("partly by construction: ..."), construction("")
    (True, 'partly', False)
    """
    if not isinstance(caveat, str):
        raise TypeError(f"caveat must be a string, got {type(caveat).__name__}")
    return True if caveat.startswith(BY_CONSTRUCTION) else "partly" if caveat.startswith("partly " + BY_CONSTRUCTION) \
        else False


def hypothesis_verdict(ci_low: float | None, ci_high: float | None, identical: bool = False,
                       n: int | None = None, by_construction: bool | str = False) -> str:
    """The verdict a 95 % CI of a paired difference gives a lesson's hypothesis (method − baseline): *supported*
    above zero, *contradicted* below, *not significant* when it spans zero, *identical on every unit* when every
    difference is 0, *not measured* without a CI; over ``n`` < :data:`MIN_QUESTIONS` questions the CI is shown,
    never concluded: *too few to decide*; a design whose outcome is fixed in advance (``by_construction``) reads
    *by construction*, whatever its CI (the difference is shown, not evidence); a design that fixes it in part
    (``by_construction="partly"``) keeps its word, qualified "(partly by construction)". Only a lesson's deciding
    comparison gets these words (``Checks.compare(..., hypothesis=True)``, harness/verdicts.py); any other
    comparison reads :meth:`PairedResult.reading`.

    >>> hypothesis_verdict(0.01, 0.2), hypothesis_verdict(-0.3, -0.02), hypothesis_verdict(-0.1, 0.1)
    ('supported', 'contradicted', 'not significant')
    >>> hypothesis_verdict(0.0, 0.0, identical=True), hypothesis_verdict(None, None)
    ('identical on every unit', 'not measured')
    >>> hypothesis_verdict(0.02, 0.02)  # a CI of width 0 away from 0: one difference repeated, not evidence
    'the same difference on every unit'
    >>> hypothesis_verdict(0.01, 0.2, n=18), hypothesis_verdict(0.01, 0.2, by_construction=True)
    ('too few to decide', 'by construction')
    >>> hypothesis_verdict(0.01, 0.2, n=30, by_construction="partly")
    'supported (partly by construction)'
    """
    if ci_low is None or ci_high is None:
        return "not measured"
    if by_construction is True:
        return "by construction"
    if not ci_low <= ci_high:
        raise ValueError(f"a CI runs from low to high, got [{ci_low}, {ci_high}]")
    if identical:
        return "identical on every unit"
    if _zero_width(ci_low, ci_high):  # one difference repeated; at 0 every unit scored the same
        return "identical on every unit" if _zero_width(ci_low, 0.0) else "the same difference on every unit"
    if n is not None and n < MIN_QUESTIONS:
        return "too few to decide"
    word = "supported" if ci_low > 0 else "contradicted" if ci_high < 0 else "not significant"
    return f"{word} (partly {BY_CONSTRUCTION})" if by_construction == "partly" and word != "not significant" else word
