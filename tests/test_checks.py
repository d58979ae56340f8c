import json

import pytest

from cookbook.checks import Checks, ChecksFailed


def test_records_and_saves(tmp_path):
    c = Checks("99_demo", results_dir=tmp_path, strict=True)
    c.at_least("a", 0.97, 0.95, "ok")
    c.at_most("b", 3, 5)
    c.close("c", 1.0000001, 1.0, 1e-6)
    c.equal("d", [1, 2], [1, 2])
    path = c.save()
    record = json.loads(path.read_text())
    assert record["passed"] and [r["name"] for r in record["checks"]] == ["a", "b", "c", "d"]


def test_strict_save_raises_on_failure_and_still_writes(tmp_path):
    c = Checks("99_demo", results_dir=tmp_path, strict=True)
    c.at_least("recall", 0.5, 0.9, "too low")
    c.check("fine", True)
    with pytest.raises(ChecksFailed, match="recall"):
        c.save()
    assert json.loads((tmp_path / "99_demo.json").read_text())["passed"] is False


def test_nan_never_passes_and_duplicates_are_refused():
    c = Checks("99_demo", results_dir=None)
    assert not c.at_least("x", float("nan"), 0).passed
    assert not c.at_most("y", float("nan"), 0).passed
    with pytest.raises(ValueError, match="twice"):
        c.check("x", True)
    assert not c.passed and c.save() is None  # not strict: no raise


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
    assert [ln.split()[1] for ln in table[1:]] == ["WARN", "WARN", "PASS"]
    record = json.loads(c.save().read_text())
    assert record["passed"] and [r["warning"] != "" for r in record["checks"]] == [True, True, False]
    c.at_least("recall", 0.5, 0.9)  # not timing: fails as before
    with pytest.raises(ChecksFailed, match="recall"):
        c.save()
