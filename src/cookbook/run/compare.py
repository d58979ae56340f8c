"""Compare two build folders written by ``python -m cookbook run``: did a change alter any result?

Every checks JSON must be identical except the records marked ``"timing": true`` (their value and
pass/fail are wall times); every executed notebook must have the same cells and the same outputs,
except wall-time numbers (a number followed by ms, s, seconds, µs, queries/s, …; numbers under a
"latency ms"-style label; every number of a cell that fits scaling slopes), the rows of timing checks in
the printed checks table, a strict-mode error raised by timing checks alone, execution metadata, and in
cells that time something the images (their plots show latencies) and the order of lines. ``cookbook compare A B``
prints one line per notebook and exits 0 when everything matches, 1 with the differing lines otherwise.

>>> mask_timings("p50 0.42 ms, 3 docs, 12.5 queries/s, took 2.1s")
'p50 <t> ms, 3 docs, <t> queries/s, took <t>s'
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import asdict
from pathlib import Path

from ..harness import checks
from .build import owned_files

__all__ = ["compare_builds", "mask_timings", "notebook_lines", "readable"]

# A number directly followed by a time unit (or a rate): the only numbers a rerun may change.
_TIMING = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(\s*)"
                     r"(ms|µs|us|ns|s|sec|secs|seconds|queries/s|q/s|calls/s|×)(?![\w/])")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
# A column or label of wall times with no number of its own ("latency ms", "p50 ms:"): numbers at or
# right of its start column, on its line and the lines below it, are timings.
_UNIT_LABEL = re.compile(r"(?:[A-Za-z]\w*\s)?(?:ms|µs|seconds)\b(?!/)")
# Cells whose source measures wall time: their images plot latencies, their lines may come in speed order.
_TIMES_SOMETHING = re.compile(r"perf_counter|time_calls|best_of|run_manifest|latenc|scaling|runtime|timeit|%time")
# Cells whose every number derives from wall times (fitted scaling slopes).
_ONLY_TIMINGS = re.compile(r"scaling_curves|loglog_slope")


def mask_timings(text: str) -> str:
    """``text`` with every number that carries a time unit replaced by ``<t>``, the spaces padding it to a
    column width collapsed (the width follows the number's digits).

    >>> mask_timings("3 hops in 40 µs; 2 s per 1,000 calls")
    '3 hops in <t> µs; <t> s per 1,000 calls'
    >>> mask_timings("Louvain    99.1 ms") == mask_timings("Louvain   100.2 ms")
    True
    """
    return re.sub(r"(?<=\S) {2,}<t>", " <t>", _TIMING.sub(lambda m: f"<t>{m.group(1)}{m.group(2)}", text))


def _mask_columns(lines: list[str]) -> list[str]:
    """Mask the numbers at or right of a wall-time label's column ("latency ms", "p50 ms"), on its line
    and below; then collapse runs of spaces (column widths follow the numbers)."""
    out, col = [], None
    for line in lines:
        for m in _UNIT_LABEL.finditer(line):
            if not line[:m.start()].rstrip().endswith("<t>"):  # a label, not a number's unit
                col = m.start() if col is None else min(col, m.start())
                break
        if col is not None:  # a number reaching into the column is in it
            line = _NUMBER.sub(lambda m, c=col: "<t>" if m.end() > c else m.group(0), line)
        out.append(" ".join(line.split()))
    return out


def _checks_lines(path: Path) -> list[str]:
    """The checks record as lines, timing records reduced to what does not vary (name, op, bound, message)."""
    record = checks.read(path)
    lines = []
    for r in record.checks:
        c = asdict(r)
        if r.timing:
            c = {k: v for k, v in c.items() if k not in ("value", "passed", "warning")}
        lines.append(json.dumps(c, sort_keys=True, default=str))
    # "passed" is implied by the per-check records, and a slow run may fail only a timing check
    return [json.dumps({"notebook": record.notebook}), *lines]


def _timing_checks(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {r.name for r in checks.read(path).checks if r.timing}


# A tqdm progress bar (cookbook.progress): "desc:  45%|####5     | 1340/2962 [00:01<00:02, 700.1unit/s]"
# as text, or a Jupyter widget; how far it had drawn depends on the machine's speed, so it is not compared.
_PROGRESS = re.compile(r"\d+/\d+ \[\d+:\d\d|\d+ ?\w+ \[\d+:\d\d, ")


def _output_lines(out: dict, compare_images: bool, timing_checks: set[str]) -> list[str]:
    kind = out.get("output_type")
    if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
        return []  # a progress widget
    if kind == "error":
        failed = re.match(r"[^:]*: failed checks: (.*)", out.get("evalue", "").split("\n")[0])
        if out.get("ename") == "ChecksFailed" and failed and set(failed.group(1).split(", ")) <= timing_checks:
            return []  # only timing checks failed: a slow run, not a different result
        return [f"[error] {out.get('ename')}: {out.get('evalue')}"]
    texts = [("stream", out.get("text", ""))] if kind == "stream" else [
        (mime, data) for mime, data in sorted(out.get("data", {}).items()) if not mime.startswith("image/")]
    lines = [f"[{mime}] " + (hashlib.sha1(_joined(data).encode()).hexdigest() if compare_images else "<timings>")
             for mime, data in sorted(out.get("data", {}).items()) if mime.startswith("image/")]
    for mime, data in texts:
        for line in filter(str.strip, _text(data)):  # blank lines carry no result
            if kind == "stream" and _PROGRESS.search(line):
                continue
            line = mask_timings(line)
            name = line.split()[0] if line.split() else ""
            if name in timing_checks:  # a timing check's row in the checks table
                line = f"{name} <timing check>"
            line = re.sub(r"^\d+/(\d+) checks passed$", r"<n>/\1 checks passed", line)
            lines.append(f"[{mime}] {line}")
    return lines


def _joined(data) -> str:
    return "".join(data) if isinstance(data, list) else data if isinstance(data, str) else json.dumps(data)


def _text(data) -> list[str]:
    return _joined(data).splitlines()


def _merged_streams(outputs: list[dict]) -> list[dict]:
    """``outputs`` with each run of consecutive stream outputs to the same stream joined into one: where the
    kernel cut the text into messages depends on when it flushed, not on what the cell printed.

    >>> [o["text"] for o in _merged_streams([{"output_type": "stream", "name": "stdout", "text": "top:"},
    ...                                      {"output_type": "stream", "name": "stdout", "text": " [1, 2]\\n"}])]
    ['top: [1, 2]\\n']
    """
    merged: list[dict] = []
    for out in outputs:
        last = merged[-1] if merged else {}
        if out.get("output_type") == "stream" and last.get("output_type") == "stream" \
                and last.get("name") == out.get("name"):
            merged[-1] = {**last, "text": _joined(last.get("text", "")) + _joined(out.get("text", ""))}
        else:
            merged.append(out)
    return merged


def notebook_lines(path: Path, timing_checks: set[str] = frozenset()) -> list[str]:
    """Every code cell's outputs, normalised, one comparable line each (see the module doc).

    >>> import tempfile
    >>> cell = {"cell_type": "code", "source": "print(n)", "outputs": [
    ...     {"output_type": "stream", "name": "stdout", "text": "5 docs in 0.3 s"}]}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "nb.ipynb"
    ...     _ = path.write_text(json.dumps({"cells": [cell]}))
    ...     notebook_lines(path)
    ['--- code cell 0', '[stream] 5 docs in <t> s']
    """
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]  # papermill adds markdown on error
    for i, cell in enumerate(code):
        src = _joined(cell.get("source", ""))
        timed = bool(_TIMES_SOMETHING.search(src))
        cell_lines = [line for out in _merged_streams(cell.get("outputs", []))
                      for line in _output_lines(out, not timed, timing_checks)]
        if _ONLY_TIMINGS.search(src):
            cell_lines = [_NUMBER.sub("<t>", line) for line in cell_lines]
        elif timed:  # wall-time columns masked; lines may come in speed order
            cell_lines = sorted(_mask_columns(cell_lines))
        lines += [f"--- code cell {i}", *cell_lines]
    return lines


def readable(read, path: Path):
    """``read(path)``, or a ``ValueError`` naming the file when it is not what a build writes there, or not a
    regular file (a FIFO, a link to a device), which is never read (so a
    damaged build reads as "cannot compare", exit status 2, never as "DIFFERENT"; ``cookbook verdicts`` reads
    checks records through it too).

    >>> readable(json.loads, Path("/no/such/checks.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: /no/such/checks.json cannot be read as part of a build (TypeError: ...)
    >>> readable(lambda p: checks.read(p).notebook, Path("/no/such/checks.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: /no/such/checks.json cannot be read as part of a build (FileNotFoundError: ...)
    """
    if os.path.lexists(path) and not Path(path).is_file():  # a FIFO blocks, /dev/zero never ends
        raise ValueError(f"{path} cannot be read as part of a build: it is not a regular file")
    try:
        return read(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise ValueError(f"{path} cannot be read as part of a build ({type(e).__name__}: {e})") from None


def _diff(a: list[str], b: list[str], name: str, limit: int) -> list[str]:
    d = [line for line in difflib.unified_diff(a, b, f"A/{name}", f"B/{name}", n=0, lineterm="")]
    return d if len(d) <= limit else d[:limit] + [f"… {len(d) - limit} more diff lines"]


def _build_files(d: Path) -> set[str]:
    """The stems of a build's checks records and executed notebooks: those a run wrote, when its marker says which
    (:func:`cookbook.run.build.owned_files`), else every visible ``checks/*.json`` and ``notebooks/*.ipynb``. A
    reader's notes (``notes.txt``, ``checks/mine.json``) or an editor's ``.ipynb_checkpoints/`` and ``.DS_Store``
    are no result, and no difference between builds."""
    owned = owned_files(d)
    return {p.stem for sub, suffix in (("checks", ".json"), ("notebooks", ".ipynb"))
            for p in (d / sub).glob(f"*{suffix}")
            if p.is_file() and not p.name.startswith(".") and (not owned or f"{sub}/{p.name}" in owned)}


def compare_builds(build_a: str | Path, build_b: str | Path, *, limit: int = 40) -> tuple[bool, list[str]]:
    """``(identical, report lines)`` for two build folders; see the module doc for what may differ. Only the
    builds' own files are compared (:func:`_build_files`): a reader's notes or an editor's ``.ipynb_checkpoints/``
    beside them make no difference.
    ``python -m cookbook compare A B`` prints the report.

    >>> import tempfile
    >>> def build(root, recall):
    ...     c = checks.Checks("00_demo", results_dir=Path(root) / "checks")
    ...     _ = c.at_least("recall", recall, 0.5), c.runtime()
    ...     _ = c.save(), (Path(root) / "notebooks").mkdir()
    ...     _ = (Path(root) / "notebooks" / "00_demo.ipynb").write_text('{"cells": []}')
    >>> with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
    ...     _ = build(a, 0.9), build(b, 0.9)
    ...     same, report = compare_builds(a, b)
    >>> same, report
    (True, ['00_demo                          identical', 'identical'])
    """
    a, b = Path(build_a), Path(build_b)
    for d in (a, b):
        if not (d / "checks").is_dir() or not (d / "notebooks").is_dir():
            raise ValueError(f"{d} is not a build folder (no checks/ and notebooks/ in it)")
    report, same = [], True
    names = sorted(_build_files(a) | _build_files(b))
    for name in names:
        diffs = []
        timing = set().union(*(readable(lambda p: list(_timing_checks(p)), d / "checks" / f"{name}.json")
                               for d in (a, b)))
        for sub, suffix, read in (("checks", ".json", _checks_lines),
                                  ("notebooks", ".ipynb", lambda p, t=timing: notebook_lines(p, t))):
            pa, pb = a / sub / f"{name}{suffix}", b / sub / f"{name}{suffix}"
            missing = [str(p) for p in (pa, pb) if not p.exists()]
            if missing:
                diffs.append(f"missing: {', '.join(missing)}")
            else:
                diffs += _diff(readable(read, pa), readable(read, pb), f"{sub}/{name}{suffix}", limit)
        same = same and not diffs
        report.append(f"{name:32} {'identical' if not diffs else 'DIFFERENT'}")
        report += [f"    {line}" for line in diffs]
    if not names:
        raise ValueError(f"{a} and {b} hold no checks or notebooks to compare")
    report.append("identical" if same else "DIFFERENT")
    return same, report
