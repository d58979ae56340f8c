"""The series' five lessons and what each corpus's evidence says of them, read from the saved checks.

Each lesson is one recorded comparison (:meth:`cookbook.harness.checks.Checks.compare`) a notebook saves under
a fixed name: the method the lesson is about against the strongest baseline at equal cost, a paired mean
difference over the test questions with its 95 % CI. Its verdict follows from the CI alone: *supported* when
it lies above zero, *contradicted* when below, *not significant* when it spans zero; a lesson whose check is
missing (the notebook did not run on that corpus) is *not measured*. Notebook 00 shows the table of the last
build; ``python -m cookbook verdicts`` prints it for the README.

>>> row = Verdict("global_search", "world", verdict_of(0.03, 0.21), 24, 0.12, 0.03, 0.21, "map-reduce vs flat")
>>> markdown_table([row]).splitlines()[2].split(" | ")[1:]
['world', 'supported', '24', '+0.120', '[+0.030, +0.210]', 'map-reduce vs flat |']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .checks import read

__all__ = ["CORPORA", "LESSONS", "Verdict", "backend_table", "markdown_table", "verdict_of", "verdicts"]

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
}


@dataclass(frozen=True)
class Verdict:
    """One lesson on one corpus: its ``verdict`` and the comparison behind it (``n`` questions, the mean paired
    ``difference`` and its CI, and what was ``compared``, the check's own labels).

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


def verdict_of(ci_low: float | None, ci_high: float | None) -> str:
    """The verdict a 95 % CI of a paired difference gives.

    >>> verdict_of(0.01, 0.2), verdict_of(-0.3, -0.02), verdict_of(-0.1, 0.1), verdict_of(None, None)
    ('supported', 'contradicted', 'not significant', 'not measured')
    """
    if ci_low is None or ci_high is None:
        return "not measured"
    if not ci_low <= ci_high:
        raise ValueError(f"a CI runs from low to high, got [{ci_low}, {ci_high}]")
    return "supported" if ci_low > 0 else "contradicted" if ci_high < 0 else "not significant"


CORPORA = ("world", "factbook")


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
    >>> [(r.lesson, r.verdict, r.n) for r in rows if r.lesson == "seeds"]
    [('seeds', 'not significant', 4)]
    """
    if isinstance(checks, Mapping):
        files = {corpus: (Path(folder), "{stem}.json") for corpus, folder in checks.items()}
    elif isinstance(checks, (str, os.PathLike)):
        files = {corpus: (Path(checks), "{stem}." + corpus + ".json") for corpus in CORPORA}
    else:
        raise TypeError(f"checks must be a build's checks folder or map a corpus to its checks folder, got "
                        f"{type(checks).__name__}")
    out = []
    for lesson, (_, stem, check) in LESSONS.items():
        for corpus, (folder, pattern) in files.items():
            path = folder / pattern.format(stem=stem)
            if not path.exists():
                out.append(Verdict(lesson, corpus, "not measured", 0, None, None, None, ""))
                continue
            found = [r for r in read(path).checks if r.name == check]
            if not found:
                raise ValueError(f"{path} has no check {check!r}: the lesson {lesson!r} cannot be read from it")
            r = found[0]
            out.append(Verdict(lesson, corpus, verdict_of(r.ci_low, r.ci_high), r.n or 0, r.value, r.ci_low,
                               r.ci_high, r.message))
    return out


def _signed(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def markdown_table(rows: list[Verdict]) -> str:
    """The verdicts as a markdown table (see the module's example).

    >>> markdown_table([]).splitlines()[0]
    '| lesson | corpus | verdict | n | difference | 95 % CI | compared |'
    """
    bad = next((r for r in rows if not isinstance(r, Verdict)), None)
    if bad is not None:
        raise TypeError(f"rows must be Verdicts, got {type(bad).__name__}")
    lines = ["| lesson | corpus | verdict | n | difference | 95 % CI | compared |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = "—" if r.ci_low is None else f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]"
        lines.append(f"| {LESSONS[r.lesson][0]} | {r.corpus} | {r.verdict} | {r.n or '—'} | {_signed(r.difference)} "
                     f"| {ci} | {r.compared} |")
    return "\n".join(lines)


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
