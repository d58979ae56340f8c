from dataclasses import asdict

import numpy as np
import pytest

from cookbook import stats
from cookbook.harness import checks
from cookbook.harness.checks import Checks, ChecksFailed


def test_records_and_saves(tmp_path):
    c = Checks("99_demo", results_dir=tmp_path, strict=True)
    c.at_least("a", 0.97, 0.95, "ok")
    c.at_most("b", 3, 5)
    c.close("c", 1.0000001, 1.0, 1e-6)
    c.equal("d", [1, 2], [1, 2])
    path = c.save()
    record = checks.read(path)
    assert record.passed and [r.name for r in record.checks] == ["a", "b", "c", "d"]
    assert record.checks == c.results  # read gives back what was saved


def test_strict_save_raises_on_failure_and_still_writes(tmp_path):
    c = Checks("99_demo", results_dir=tmp_path, strict=True)
    c.at_least("recall", 0.5, 0.9, "too low")
    c.check("fine", True)
    with pytest.raises(ChecksFailed, match="recall"):
        c.save()
    assert checks.read(tmp_path / "99_demo.json").passed is False


def test_nan_never_passes_and_duplicates_are_refused():
    c = Checks("99_demo", results_dir=None)
    assert not c.at_least("x", float("nan"), 0).passed
    assert not c.at_most("y", float("nan"), 0).passed
    with pytest.raises(ValueError, match="twice"):
        c.check("x", True)
    assert not c.passed and c.save() is None  # not strict: no raise


def test_better_passes_only_when_the_ci_clears_the_margin(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.random(60)
    a_clear, b_clear = base + 0.2, base + rng.normal(0, 0.05, 60)
    noise = rng.normal(0, 0.3, 60)
    a_noisy = base + noise - noise.mean() + 0.02  # A ahead by 0.02 on average, se ≈ 0.04: a lucky sample
    c = Checks("99_demo", results_dir=tmp_path)
    clear = c.better("clear", a_clear, b_clear, 0.1, "A ≫ B", labels=("new", "old"))
    noisy = c.better("noisy", a_noisy, base, 0.0, "a lucky sample?")
    ref = stats.paired_bootstrap(a_noisy, base)
    assert (noisy.value, noisy.ci_low, noisy.ci_high, noisy.wins) == (ref.mean_diff, ref.ci_low, ref.ci_high, ref.wins)
    assert clear.passed and clear.conclusion == "new better over 60 questions" and clear.ci_low > 0.1 and clear.n == 60
    assert not noisy.passed and noisy.value > 0 and noisy.ci_low <= 0 < noisy.ci_high
    assert noisy.conclusion == "no significant difference over 60 questions"
    assert c.failures() == [noisy]
    path = c.save()
    saved = {r.name: asdict(r) for r in checks.read(path).checks}
    assert saved["clear"]["value"] == pytest.approx(clear.value) and saved["clear"]["bound"] == 0.1
    assert {"ci_low", "ci_high", "n", "wins", "losses", "ties", "conclusion", "timing"} <= saved["noisy"].keys()
    table = c.table()
    assert f"[{clear.ci_low:+.3g}, {clear.ci_high:+.3g}]" in table and "CI low > 0.1" in table


def test_compare_records_a_finding_not_a_failure():
    c = Checks("99_demo", results_dir=None, strict=True)
    a = np.linspace(0, 1, 30)
    worse = c.compare("b_wins", a, a + 0.3 + 0.1 * np.cos(7 * a), labels=("fused", "two-step"))
    same = c.compare("same", a, a.copy())
    shifted = c.compare("shifted", a, a + 0.3, labels=("fused", "two-step"))  # one difference repeated: no win
    assert worse.passed and worse.conclusion == "two-step better over 30 questions" and worse.bound is None
    assert same.passed and same.conclusion == "identical on every one of the 30 questions"  # a CI of width 0
    assert shifted.conclusion == "the same difference (-0.3, two-step higher) on every one of the 30 questions"
    assert c.save() is None  # strict, but nothing failed
    with pytest.raises(ValueError, match="labels"):
        c.compare("bad", a, a, labels=("only one",))
    with pytest.raises(ValueError, match="same questions"):
        c.better("short", a, a[:-1])
def test_timing_checks_warn_instead_of_failing(tmp_path):
    """A busy machine must not fail a run: over budget is recorded and shown, strict save still passes;
    a wrong result still fails."""
    c = Checks("99_demo", results_dir=tmp_path, strict=True)
    over = c.runtime(-1)  # any runtime exceeds a negative budget
    slow = c.at_least("speedup", 0.5, 2.0, timing=True)
    fine = c.at_most("latency", 1.0, 2.0, timing=True)
    assert over.passed and slow.passed and fine.passed and c.passed
    assert over.bound == -1 and over.warning.endswith("is not <= -1 (timing: a warning, not a failure)")
    assert slow.warning == "0.5 is not >= 2 (timing: a warning, not a failure)" and fine.warning == ""
    assert [r.name for r in c.warnings()] == ["runtime_s", "speedup"]
    table = c.table().splitlines()
    assert [ln.split()[1] for ln in table[1:]] == ["WARN", "WARN", "TIMED"]  # a wall time never reads as a pass
    record = checks.read(c.save())
    assert record.passed and [r.warning != "" for r in record.checks] == [True, True, False]
    c.at_least("recall", 0.5, 0.9)  # not timing: fails as before
    with pytest.raises(ChecksFailed, match="recall"):
        c.save()
