"""Named, measured notebook checks. Each records what was measured, the bound it was held to and a message, so a
reader (and CI) sees *how far* from failing a claim is, not only whether it held.

>>> c = Checks("00_demo", results_dir=None, strict=False)
>>> c.at_least("recall", 0.97, 0.95, "gazetteer recall vs gold").passed
True
>>> c.passed
True

Comparisons carry their uncertainty: ``better`` passes only when the paired-bootstrap CI of the mean
difference clears the margin; ``compare`` records what the data support without claiming anything.

>>> c.better("a_beats_b", [0.9, 0.8, 0.7, 0.9, 0.6], [0.5, 0.6, 0.7, 0.4, 0.5]).passed
True
>>> c.compare("c_vs_d", [0.5, 0.6, 0.4], [0.6, 0.5, 0.4], labels=("C", "D")).conclusion
'too few to decide over 3 questions'
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import stats

__all__ = ["Checks", "ChecksFailed", "Record", "Result", "read"]


class ChecksFailed(AssertionError):
    """Raised by :meth:`Checks.save` in strict mode when any check failed.

    >>> c = Checks("99_demo", results_dir=None, strict=True)
    >>> _ = c.at_least("recall", 0.5, 0.9)
    >>> c.save()
    Traceback (most recent call last):
    ...
    cookbook.harness.checks.ChecksFailed: 99_demo: failed checks: recall
    ...
    """


@dataclass
class Result:
    """One recorded check: its ``name``, whether it ``passed``, the measured ``value``, the ``bound`` it
    was held to with the comparison ``op``, and a ``message``; returned by every :class:`Checks` method.

    >>> r = Checks("99_demo", results_dir=None).at_most("errors", 0, 2, "few errors")
    >>> r.passed, r.value, r.op, r.bound
    (True, 0, '<=', 2)
    """

    name: str
    passed: bool
    value: object
    bound: object
    op: str
    message: str
    timing: bool = False  # measured wall time: varies run to run, excluded from determinism comparisons
    warning: str = ""  # set when a timing check misses its bound: recorded and shown, never a failure
    # Comparative checks only (better/compare): value is the mean difference A − B over n questions.
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    conclusion: str | None = None
    # Also comparative: the methods' own means (absolute levels), the minimum detectable effect at n (80 % power,
    # α = 0.05; stats.minimum_detectable_effect), whether the comparison tests a lesson's hypothesis (then its
    # conclusion is a verdict: supported / contradicted / not significant / identical on every unit) and a caveat
    # naming what the comparison cannot show (by construction, a floor); read by harness/verdicts.py.
    mean_a: float | None = None
    mean_b: float | None = None
    mde: float | None = None
    hypothesis: bool = False
    caveat: str = ""

    @property
    def status(self) -> str:
        """``"PASS"``, ``"FAIL"``, ``"TIMED"`` (a timing check within its bound: a wall time, which decides
        nothing), ``"WARN"`` (one over its bound) or ``"RECORDED"`` (a :meth:`Checks.compare` finding, which claims
        nothing and so cannot fail).

        >>> Checks("99_demo", results_dir=None).compare("a_vs_b", [0, 1], [1, 0], n_boot=100).status
        'RECORDED'
        >>> Checks("99_demo", results_dir=None).at_most("latency_ms", 3.0, 5.0, timing=True).status
        'TIMED'
        """
        if self.warning:
            return "WARN"
        if self.op == "compare":
            return "RECORDED"
        if self.timing:
            return "TIMED"
        return "PASS" if self.passed else "FAIL"


def _num(x):
    """JSON-friendly number (numpy scalars → Python; NaN stays a float, printed as NaN)."""
    if hasattr(x, "item"):
        x = x.item()
    return x


class Checks:
    """Collect named checks for one notebook; ``save()`` writes ``RESULTS_DIR/<notebook_id>.json``.

    ``strict=True`` (as under papermill in CI) makes ``save()`` raise :class:`ChecksFailed` when any
    check failed, so the run stops at the notebook that broke. A ``timing=True`` check (wall time,
    which depends on how busy the machine is) never fails: missing its bound records a warning.
    Every notebook ends with one; introduced in notebooks/00_quickstart.ipynb.

    >>> c = Checks("99_demo", results_dir=None)
    >>> _ = c.at_least("recall", 0.8, 0.5, "recall of gold passages")
    >>> c.passed, [r.name for r in c.results]
    (True, ['recall'])
    """

    def __init__(self, notebook_id: str, *, results_dir: str | os.PathLike | None = "build/checks",
                 strict: bool = False):
        if not notebook_id:
            raise ValueError("notebook_id must be a non-empty string")
        self.notebook_id = notebook_id
        self.results_dir = results_dir
        self.strict = strict
        self.results: list[Result] = []
        self.started = time.perf_counter()

    def _add(self, name, passed, value, bound, op, message, timing=False, **paired) -> Result:
        if any(r.name == name for r in self.results):
            raise ValueError(f"check {name!r} recorded twice in {self.notebook_id}")
        warning = ""
        if timing and not passed:
            warning = f"{_fmt(_num(value))} is not {op} {_fmt(_num(bound))} (timing: a warning, not a failure)"
            passed = True
        r = Result(name, bool(passed), _num(value), _num(bound), op, message, timing, warning, **paired)
        self.results.append(r)
        return r

    def check(self, name: str, condition: bool, message: str = "", *, value=None) -> Result:
        """A yes/no claim (``condition``), with an optional measured ``value`` for the record.

        >>> Checks("99_demo", results_dir=None).check("sorted", [1, 2] == sorted([2, 1]), value=2).passed
        True
        """
        return self._add(name, condition, value, None, "is true", message)

    def at_least(self, name: str, value: float, bound: float, message: str = "", *, timing: bool = False) -> Result:
        """``value >= bound`` (NaN or None fails); ``timing=True`` as in :meth:`at_most`.
        Taught in notebooks/00_quickstart.ipynb.

        >>> c = Checks("99_demo", results_dir=None)
        >>> c.at_least("recall", 0.9, 0.95).passed, c.at_least("nan", float("nan"), 0.0).passed
        (False, False)
        """
        ok = value is not None and not math.isnan(float(value)) and float(value) >= float(bound)
        return self._add(name, ok, value, bound, ">=", message, timing)

    def at_most(self, name: str, value: float, bound: float, message: str = "", *, timing: bool = False) -> Result:
        """``value <= bound`` (NaN or None fails). ``timing=True`` marks a value derived from wall time (it
        varies between identical runs): missing the bound is then a warning, not a failure.
        Taught in notebooks/03_leiden_communities.ipynb.

        >>> c = Checks("99_demo", results_dir=None)
        >>> r = c.at_most("latency_ms", 12.0, 10.0, timing=True)
        >>> r.passed, r.warning
        (True, '12 is not <= 10 (timing: a warning, not a failure)')
        """
        ok = value is not None and not math.isnan(float(value)) and float(value) <= float(bound)
        return self._add(name, ok, value, bound, "<=", message, timing)

    def close(self, name: str, value: float, target: float, tol: float, message: str = "", *,
              timing: bool = False) -> Result:
        """``|value - target| <= tol`` (NaN fails); the recorded value is the difference; ``timing=True`` as in
        :meth:`at_most` (a fitted slope of wall times, say: missing the bound is a warning).

        >>> r = Checks("99_demo", results_dir=None).close("mean", 0.52, 0.5, tol=0.05)
        >>> r.passed, round(r.value, 2)
        (True, 0.02)
        >>> Checks("99_demo", results_dir=None).close("slope", 0.6, 1.0, tol=0.2, timing=True).status
        'WARN'
        """
        diff = abs(float(value) - float(target))
        return self._add(name, diff <= tol, diff, tol, "|diff| <=", message, timing)

    def equal(self, name: str, a, b, message: str = "") -> Result:
        """``a == b``; the record keeps the first 80 characters of each ``repr``.
        Taught in notebooks/03_leiden_communities.ipynb.

        >>> r = Checks("99_demo", results_dir=None).equal("same", [1, 2], [1, 2])
        >>> r.passed, r.value
        (True, '[1, 2]')
        """
        return self._add(name, a == b, repr(a)[:80], repr(b)[:80], "==", message)

    def better(self, name: str, a, b, margin: float = 0.0, message: str = "", *, labels=("A", "B"),
               unit: str = "questions", n_boot: int = 10_000, ci: float = 0.95, seed: int = 0) -> Result:
        """A beats baseline B: per-question scores ``a`` and ``b`` (same questions, same order).

        Passes only when the lower bound of the paired-bootstrap CI of mean(a − b) exceeds ``margin``.
        Taught in notebooks/00_quickstart.ipynb.

        >>> c = Checks("99_demo", results_dir=None)
        >>> r = c.better("ppr_wins", [1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 0], labels=("PPR", "BM25"), n_boot=500)
        >>> r.passed, r.conclusion
        (True, 'PPR better over 6 questions')
        """
        r = stats.paired_bootstrap(a, b, n_boot=n_boot, ci=ci, seed=seed)
        return self._add(name, r.significant(margin), r.mean_diff, margin, "CI low >", message,
                         **_paired_fields(r, labels, unit, least=0))

    def compare(self, name: str, a, b, message: str = "", *, labels=("A", "B"), unit: str = "questions",
                n_boot: int = 10_000, ci: float = 0.95, seed: int = 0, hypothesis: bool = False,
                caveat: str = "", clusters=None) -> Result:
        """Record what the data say about A vs B (effect, CI, conclusion, both means, the minimum detectable
        effect) without claiming either is better.

        Always passes: "no significant difference" is a finding to state, not a failure. Its conclusion is
        descriptive ("A better", "no significant difference", "identical on every one of the n questions", "too few
        to decide" under ``stats.MIN_QUESTIONS``); ``hypothesis=True`` marks the comparison that decides one of the
        series' lessons (harness/verdicts.py): its conclusion is a verdict (*supported*, *contradicted*, *not
        significant*, *identical on every unit*; *by construction* when ``caveat`` starts so). ``caveat``: what it
        cannot show ("by construction: …", "floor: …"). ``clusters`` (a label per unit) resamples whole clusters
        (:func:`cookbook.stats.cluster_bootstrap`). Taught in notebooks/00_quickstart.ipynb.

        >>> r = Checks("99_demo", results_dir=None).compare("a_vs_b", [0, 1, 0], [1, 0, 0], n_boot=500)
        >>> r.passed, r.conclusion, r.wins, r.losses, r.ties
        (True, 'too few to decide over 3 questions', 1, 1, 1)
        >>> Checks("99_demo", results_dir=None).compare("v", [1, 1, 0], [1, 1, 0], hypothesis=True).conclusion
        'identical on every unit (3 questions)'
        """
        r = (stats.paired_bootstrap(a, b, n_boot=n_boot, ci=ci, seed=seed) if clusters is None else
             stats.cluster_bootstrap(a, b, clusters, n_boot=n_boot, ci=ci, seed=seed))
        if not isinstance(caveat, str):
            raise TypeError(f"caveat must be a string, got {type(caveat).__name__}")
        fields = _paired_fields(r, labels, unit)
        if hypothesis:
            fixed = stats.construction(caveat)
            word = stats.hypothesis_verdict(r.ci_low, r.ci_high, r.identical, r.clusters or r.n, fixed)
            fields["conclusion"] = f"{word} ({r.n} {unit})"
        return self._add(name, True, r.mean_diff, None, "compare", message, **fields, hypothesis=bool(hypothesis),
                         caveat=caveat)

    def runtime(self, budget_s: float = 60.0) -> Result:
        """Seconds since this object was made, against a budget of ``budget_s``: over budget is a
        warning (shown in the table, the JSON record and the run's index), not a failed check.
        Every notebook ends with it; taught in notebooks/00_quickstart.ipynb.

        >>> r = Checks("99_demo", results_dir=None).runtime(budget_s=60)
        >>> r.name, r.passed, r.timing
        ('runtime_s', True, True)
        """
        return self.at_most("runtime_s", round(time.perf_counter() - self.started, 2), budget_s,
                            f"notebook body runs within {budget_s:g} s", timing=True)

    @property
    def passed(self) -> bool:
        """Whether every check so far passed (a timing warning counts as passed; no checks pass vacuously).

        >>> c = Checks("99_demo", results_dir=None)
        >>> _ = c.check("holds", True)
        >>> c.passed
        True
        """
        return all(r.passed for r in self.results)

    def failures(self) -> list[Result]:
        """The checks that failed, in the order recorded.

        >>> c = Checks("99_demo", results_dir=None)
        >>> _ = c.check("holds", True), c.check("breaks", False)
        >>> [r.name for r in c.failures()]
        ['breaks']
        """
        return [r for r in self.results if not r.passed]

    def warnings(self) -> list[Result]:
        """The timing checks that missed their bound (recorded as passed, with a warning).

        >>> c = Checks("99_demo", results_dir=None)
        >>> _ = c.at_most("seconds", 5.0, 1.0, timing=True)
        >>> [r.name for r in c.warnings()], c.passed
        (['seconds'], True)
        """
        return [r for r in self.results if r.warning]

    def table(self) -> str:
        """The checks as an aligned text table: name, PASS/FAIL/WARN, value, bound, message.

        >>> c = Checks("99_demo", results_dir=None)
        >>> _ = c.at_least("recall", 0.75, 0.5, "gold recall")
        >>> print(c.table())
        check   ok    value  bound   message
        recall  PASS  0.75   >= 0.5  gold recall
        """
        rows = [("check", "ok", "value", "bound", "message")]
        for r in self.results:
            bound = "" if r.bound is None else f"{r.op} {_fmt(r.bound)}"
            value, message = _fmt(r.value), r.message
            if r.ci_low is not None and r.ties == r.n:
                value = "identical on every unit"
            elif r.ci_low is not None:
                value = f"{_signed(r.value)} [{_signed(r.ci_low)}, {_signed(r.ci_high)}]"
                message = (f"{message} ({r.conclusion}; {_count(r.wins, 'win')}, {_count(r.losses, 'loss')}, "
                           f"{_count(r.ties, 'tie')})").lstrip()
            rows.append((r.name, r.status, value, bound, message))
        widths = [max(len(str(row[i])) for row in rows) for i in range(4)]
        return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4]
                         for row in rows)

    def summary(self) -> None:
        """Print the checks table with a pass count (``table()`` returns it as a string).
        Every notebook prints it; taught in notebooks/00_quickstart.ipynb.

        >>> c = Checks("99_demo", results_dir=None)
        >>> _ = c.check("holds", True, "a claim")
        >>> c.summary()
        check  ok    value  bound  message
        holds  PASS                a claim
        1/1 checks passed
        """
        print(f"{self.table()}\n{sum(r.passed for r in self.results)}/{len(self.results)} checks passed")

    def save(self) -> Path | None:
        """Write the JSON record (unless ``results_dir`` is None); raise in strict mode on failure.
        :func:`read` reads the record back.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     c = Checks("99_demo", results_dir=d)
        ...     _ = c.check("holds", True)
        ...     c.save().name
        '99_demo.json'
        """
        path = None
        if self.results_dir is not None:
            path = Path(self.results_dir) / f"{self.notebook_id}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            record = {"notebook": self.notebook_id, "passed": self.passed,
                      "checks": [asdict(r) for r in self.results]}
            path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
        if self.strict and not self.passed:
            names = ", ".join(r.name for r in self.failures())
            raise ChecksFailed(f"{self.notebook_id}: failed checks: {names}\n{self.table()}")
        return path


@dataclass
class Record:
    """A saved checks file read back: the ``notebook`` id, whether every check ``passed``, the ``checks``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     c = Checks("99_demo", results_dir=d)
    ...     _ = c.check("holds", True)
    ...     record = read(c.save())
    >>> record.notebook, record.passed, len(record.checks)
    ('99_demo', True, 1)
    """

    notebook: str
    passed: bool
    checks: list[Result]


def read(path: str | os.PathLike) -> Record:
    """The record :meth:`Checks.save` wrote at ``path``, its checks as :class:`Result` objects.

    >>> import tempfile
    >>> c = Checks("99_demo", results_dir=tempfile.mkdtemp())
    >>> _ = c.at_most("errors", 0, 0, "no errors")
    >>> read(c.save()).checks[0].name
    'errors'
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Record(raw["notebook"], raw["passed"], [Result(**c) for c in raw["checks"]])
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a checks record: {type(e).__name__}: {e}") from None


def _paired_fields(r: stats.PairedResult, labels, unit: str = "questions", least: int = stats.MIN_QUESTIONS) -> dict:
    """The Result fields of a paired comparison; the conclusion names the better side only when the CI excludes 0
    over ``least`` units or more (a claim's own margin decides ``better``). ``unit``: questions, seeds, queries."""
    if len(labels) != 2 or not all(isinstance(x, str) and x for x in labels):
        raise ValueError(f"labels must be two non-empty names (A, B), got {labels!r}")
    if not isinstance(unit, str) or not unit:
        raise ValueError(f"unit must be a non-empty name such as 'questions' or 'seeds', got {unit!r}")
    mde = None if math.isnan(r.mde) else r.mde
    return {"ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n, "wins": r.wins, "losses": r.losses, "ties": r.ties,
            "conclusion": r.reading(labels, unit, least), "mean_a": r.mean_a, "mean_b": r.mean_b, "mde": mde}


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.0f}" if 1e4 <= abs(v) < 1e15 else f"{v:.4g}"  # 53170, not 5.317e+04
    return "" if v is None else str(v)


def _signed(x: float) -> str:
    """A signed difference to 3 significant digits, a large one whole (-1612, not -1.61e+03).

    >>> _signed(0.07123), _signed(-1612.4)
    ('+0.0712', '-1612')
    """
    return f"{x:+.0f}" if 1e3 <= abs(x) < 1e15 else f"{x:+.3g}"


def _count(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless one.

    >>> _count(1, "win"), _count(3, "loss"), _count(0, "tie")
    ('1 win', '3 losses', '0 ties')
    """
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"
