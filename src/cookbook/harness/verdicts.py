"""The series' six lessons and what each corpus's evidence says of them, read from the saved checks.

Each lesson is one recorded comparison (:meth:`cookbook.harness.checks.Checks.compare` with
``hypothesis=True``) a notebook saves under a fixed name: the method the lesson is about against the strongest
baseline within the method's cost, a paired mean difference over the test questions with its 95 % CI. Its
verdict follows from the CI alone: *supported* when it lies above zero, *contradicted* when below, *not
significant* when it spans zero, *identical on every unit* when every difference is 0; a lesson whose check is
missing (the notebook did not run on that corpus) is *not measured*.

A row also says what it can show: both methods' absolute levels, the minimum detectable effect at its n
(:func:`cookbook.stats.minimum_detectable_effect`: a *not significant* row rules out only differences of about
that size or more), and a caveat when the result holds by construction or sits at a floor
(:data:`DESIGN_CAVEATS`, the check's own ``caveat``, and :data:`FLOOR`: both levels of a [0, 1] score below it).
Notebook 00 shows the table of the last build; ``python -m cookbook verdicts`` prints it and
``--readme README.md`` renders it into the README between its verdict markers.

>>> row = Verdict("global_search", "world", verdict_of(0.03, 0.21), 24, 0.12, 0.03, 0.21, "map-reduce vs flat",
...               method_level=0.5, baseline_level=0.38, mde=0.1)
>>> markdown_table([row]).splitlines()[2].split(" | ")[1:7]
['world', 'supported', '24', '0.500', '0.380', '+0.120 [+0.030, +0.210]']
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .._validate import finite_array
from ..stats import MIN_QUESTIONS, construction, hypothesis_verdict
from .checks import read

__all__ = ["COLUMNS", "CORPORA", "DESIGN_CAVEATS", "FLOOR", "LESSONS", "MIN_QUESTIONS", "Verdict", "backend_table",
           "floor_of",
           "caveat_of", "markdown_table", "render_readme", "verdict_of", "verdicts"]

# lesson -> (what it claims, notebook stem, the check that decides it)
LESSONS = {
    "extraction": ("extraction by prompt builds a more precise graph than co-occurrence", "02_graph_extraction",
                   "verdict_extraction"),
    "global_search": ("global search answers global questions better than flat retrieval",
                      "05_map_reduce_answering", "verdict_global_search"),
    "ppr": ("PPR over the passage graph retrieves multi-hop evidence better than the strongest retriever",
            "06_personalized_pagerank", "verdict_ppr"),
    "seeds": ("overlap-aware seeds reach more supporting passages per node explored", "07_overlap_aware_seeds",
              "verdict_seeds"),
    "local_search": ("local search finds multi-hop evidence better than the strongest retriever at equal tokens",
                     "08_local_search", "verdict_local_search"),
    "drift": ("DRIFT search finds multi-hop evidence better than the strongest retriever given DRIFT's tokens",
              "11_drift_and_lazy_search", "verdict_drift"),
}

# What the design guarantees whatever the run measures, per (lesson, corpus): results that hold by construction
# of the offline stand-in and the gold, so a reader does not take them for evidence about the method.
DESIGN_CAVEATS = {
    ("extraction", "world"): "by construction: these units are written only in phrasing set A, the wordings the "
                             "stand-in is built from; on set B, which it never saw, it extracts (almost) nothing "
                             "(the floor, extraction_on_unseen_phrasing)",
    ("extraction", "factbook"): "partly by construction: the gold is parsed from the same labelled lists the "
                                "stand-in's list cues read",
}
FLOOR = 0.2  # both methods' mean score below this on a [0, 1] metric: a floor, where neither method works


@dataclass(frozen=True)
class Verdict:
    """One lesson on one corpus: its ``verdict`` and the comparison behind it (``n`` questions, the mean paired
    ``difference`` and its CI, and what was ``compared``, the check's own labels); ``method_level`` and
    ``baseline_level`` the two methods' own means, ``mde`` the minimum detectable effect at ``n``, ``caveat``
    what the row cannot show (:func:`caveat_of`).

    >>> Verdict("seeds", "factbook", "not measured", 0, None, None, None, "").verdict
    'not measured'
    """

    lesson: str
    corpus: str
    verdict: str
    n: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    compared: str
    method_level: float | None = None
    baseline_level: float | None = None
    mde: float | None = None
    caveat: str = ""


def verdict_of(ci_low: float | None, ci_high: float | None, identical: bool = False, n: int | None = None,
               caveat: str = "") -> str:
    """The verdict a 95 % CI of a lesson's paired difference gives over ``n`` questions
    (:func:`cookbook.stats.hypothesis_verdict`: below :data:`MIN_QUESTIONS`, "too few to decide"; "by
    construction" when the row's ``caveat``, :func:`caveat_of`, starts so).
    For a lesson only: any other comparison reads :meth:`cookbook.stats.PairedResult.reading`.

    >>> verdict_of(0.01, 0.2), verdict_of(-0.3, -0.02), verdict_of(-0.1, 0.1), verdict_of(None, None)
    ('supported', 'contradicted', 'not significant', 'not measured')
    >>> verdict_of(0.01, 0.2, n=18), verdict_of(0.3, 0.5, n=30, caveat="by construction: set A only")
    ('too few to decide', 'by construction')
    """
    return hypothesis_verdict(ci_low, ci_high, identical, n, construction(caveat))


def floor_of(a, b) -> str:
    """The floor caveat of a comparison on a [0, 1] metric from its two sides' scores (per-question arrays, or
    one mean each): "floor: both methods score below FLOOR" when both means lie below :data:`FLOOR` (neither
    method works, so the difference is no result), else "". The one rule :func:`caveat_of` and the notebooks'
    own comparisons (04, 08, 11) apply.

    >>> floor_of([0.1, 0.05], [0.0, 0.1]), floor_of([0.5, 0.3], [0.1])
    ('floor: both methods score below 0.2', '')
    """
    means = []
    for name, x in (("a", a), ("b", b)):
        scores = finite_array(x, name).ravel()
        if scores.size == 0:
            raise ValueError(f"{name} is empty: no score to place against the floor")
        means.append(float(scores.mean()))
    return f"floor: both methods score below {FLOOR:g}" if max(means) < FLOOR else ""


def caveat_of(lesson: str, corpus: str, method_level: float | None, baseline_level: float | None,
              recorded: str = "") -> str:
    """What a row cannot show: the check's own ``recorded`` caveat, or without one the design's
    (:data:`DESIGN_CAVEATS`, for records saved before notebooks recorded theirs), and a floor when both levels lie
    below :data:`FLOOR`; "" when none applies.

    >>> caveat_of("global_search", "factbook", 0.16, 0.12)
    'floor: both methods score below 0.2'
    >>> caveat_of("ppr", "world", 0.6, 0.6)
    ''
    """
    if not isinstance(recorded, str):
        raise TypeError(f"the recorded caveat must be a string, got {type(recorded).__name__}")
    parts = [recorded or DESIGN_CAVEATS.get((lesson, corpus), "")]  # the notebook's own word first
    levels = [x for x in (method_level, baseline_level) if x is not None and not math.isnan(x)]
    if len(levels) == 2 and not any(p.startswith("floor") for p in parts):
        parts.append(floor_of([levels[0]], [levels[1]]))
    parts = [p for p in parts if p]
    return "; ".join(parts)


CORPORA = ("world", "factbook")


def _record_files(checks) -> dict:
    if isinstance(checks, Mapping):
        return {corpus: (Path(folder), "{stem}.json") for corpus, folder in checks.items()}
    if isinstance(checks, (str, os.PathLike)):
        return {corpus: (Path(checks), "{stem}." + corpus + ".json") for corpus in CORPORA}
    raise TypeError(f"checks must be a build's checks folder or map a corpus to its checks folder, got "
                    f"{type(checks).__name__}")


def verdicts(checks: Mapping[str, str | os.PathLike] | str | os.PathLike) -> list[Verdict]:
    """Every lesson × corpus, in :data:`LESSONS` order then corpus order, from a build's ``checks`` folder
    (``cookbook run``'s ``<out>/checks``, holding ``<notebook>.<corpus>.json`` for the corpora of
    :data:`CORPORA`) or from one folder per corpus (``{corpus: folder of <notebook>.json}``, the notebooks'
    own ``RESULTS_DIR``). A checks file that exists but lacks the lesson's check is an error (the notebook
    changed its names): only a notebook that did not run is "not measured".

    >>> import tempfile
    >>> from cookbook.harness.checks import Checks
    >>> with tempfile.TemporaryDirectory() as d:
    ...     c = Checks("07_overlap_aware_seeds", results_dir=d)
    ...     _ = c.compare("verdict_seeds", [1, 1, 0, 1], [0, 0, 0, 1], labels=("fused", "two-step"), n_boot=200)
    ...     _ = c.save()
    ...     rows = verdicts({"world": d})
    >>> [(r.lesson, r.verdict, r.n, r.method_level) for r in rows if r.lesson == "seeds"]
    [('seeds', 'too few to decide', 4, 0.75)]
    """
    out = []
    for lesson, (_, stem, check) in LESSONS.items():
        for corpus, (folder, pattern) in _record_files(checks).items():
            path = folder / pattern.format(stem=stem)
            if not path.exists():
                out.append(Verdict(lesson, corpus, "not measured", 0, None, None, None, ""))
                continue
            found = [r for r in read(path).checks if r.name == check]
            if not found:
                raise ValueError(f"{path} has no check {check!r}: the lesson {lesson!r} cannot be read from it")
            r = found[0]
            identical = r.ties is not None and r.ties == r.n
            caveat = caveat_of(lesson, corpus, r.mean_a, r.mean_b, r.caveat)
            word = verdict_of(r.ci_low, r.ci_high, identical, r.n, caveat)
            out.append(Verdict(lesson, corpus, word, r.n or 0, r.value,
                               r.ci_low, r.ci_high, r.message, r.mean_a, r.mean_b, r.mde, caveat))
    return out


def _signed(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _level(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _difference(r: Verdict) -> str:
    if r.ci_low is None:
        return _signed(r.difference)
    if r.verdict == "identical on every unit":
        return "0 on every unit"
    return f"{_signed(r.difference)} [{_signed(r.ci_low)}, {_signed(r.ci_high)}]"


# The table's columns: (header, cell of a row). A new dimension (a backend, say) is one more entry here and one
# more Verdict field.
COLUMNS: tuple[tuple[str, Callable[[Verdict], str]], ...] = (
    ("lesson", lambda r: LESSONS[r.lesson][0]),
    ("corpus", lambda r: r.corpus),
    ("verdict", lambda r: r.verdict),
    ("n", lambda r: str(r.n or "—")),
    ("method", lambda r: _level(r.method_level)),
    ("baseline", lambda r: _level(r.baseline_level)),
    ("difference [95 % CI]", _difference),
    ("MDE", lambda r: "—" if r.mde is None or r.verdict == "identical on every unit" else f"{r.mde:.3f}"),
    ("what it cannot show", lambda r: r.caveat or "—"),
    ("compared", lambda r: r.compared),
)


def markdown_table(rows: list[Verdict]) -> str:
    """The verdicts as a markdown table, one column per :data:`COLUMNS` entry (see the module's example).

    >>> markdown_table([]).splitlines()[0].split(" | ")[:4]
    ['| lesson', 'corpus', 'verdict', 'n']
    """
    bad = next((r for r in rows if not isinstance(r, Verdict)), None)
    if bad is not None:
        raise TypeError(f"rows must be Verdicts, got {type(bad).__name__}")
    lines = ["| " + " | ".join(h for h, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell(r) for _, cell in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


_MARKERS = re.compile(r"(<!-- verdicts:start -->\n).*?(<!-- verdicts:end -->)", re.S)


def render_readme(text: str, rows: list[Verdict]) -> str:
    """``text`` (a README) with the table between its ``<!-- verdicts:start -->`` and ``<!-- verdicts:end -->``
    markers replaced by :func:`markdown_table` of ``rows``; a text without the markers is an error.

    >>> render_readme("a\\n<!-- verdicts:start -->\\nold\\n<!-- verdicts:end -->\\nb", []).splitlines()[2][:9]
    '| lesson '
    """
    if not _MARKERS.search(text):
        raise ValueError("the README has no <!-- verdicts:start --> ... <!-- verdicts:end --> block to render into")
    return _MARKERS.sub(lambda m: m.group(1) + markdown_table(rows) + "\n" + m.group(2), text, count=1)


def backend_table(tables: Mapping[str, list[Verdict]]) -> str:
    """Each lesson's verdict per backend, side by side: ``tables`` maps a backend's label to its
    :func:`verdicts` rows (``{"stand-in": verdicts("build/checks"), "recorded model": verdicts(...)}``), the
    first label's rows giving the lessons and corpora; a row another backend lacks reads "not measured".

    >>> row = Verdict("seeds", "world", "not significant", 90, 0.002, -0.015, 0.019, "")
    >>> table = backend_table({"stand-in": [row], "llama3.2 (recorded)": []}).splitlines()
    >>> table[0]
    '| lesson | corpus | stand-in | llama3.2 (recorded) |'
    >>> table[2].split(" | ")[2:]
    ['not significant, +0.002 [-0.015, +0.019], n 90', 'not measured |']
    """
    if not isinstance(tables, Mapping) or not tables:
        raise ValueError("tables must map at least one backend's label to its verdicts")
    labels = list(tables)
    by = {label: {(r.lesson, r.corpus): r for r in rows} for label, rows in tables.items()}

    def cell(r: Verdict | None) -> str:
        if r is None or r.verdict == "not measured":
            return "not measured"
        return f"{r.verdict}, {_signed(r.difference)} [{_signed(r.ci_low)}, {_signed(r.ci_high)}], n {r.n}"

    lines = ["| lesson | corpus | " + " | ".join(labels) + " |", "|---|---|" + "---|" * len(labels)]
    for r in tables[labels[0]]:
        cells = " | ".join(cell(by[label].get((r.lesson, r.corpus))) for label in labels)
        lines.append(f"| {LESSONS[r.lesson][0]} | {r.corpus} | {cells} |")
    return "\n".join(lines)
