"""The HTML build: a page per executed notebook (:func:`render_page`) and the index, written by :func:`render_html`.

Pages leave out the Colab setup and injected-parameters cells (by their tags) and show the parameters cell with
the values the run gave it (:func:`cookbook.run.parameters.as_run`), show no
local path (:func:`scrub_paths`) and fold long text outputs; the index has a row per notebook and corpus: a
one-line description (:func:`describe`), its corpus and scale, its checks (linked to a table of values, bounds,
effects and CIs), its runtime against its budget, a thumbnail of its first figure and a detail
(:func:`detail`): why it failed, or what its checks found.
"""

from __future__ import annotations

import html
import json
import re
import sys
import tempfile
from pathlib import Path

from ..harness import checks, verdicts
from ..paths import repo_root
from . import colab
from .parameters import as_run

__all__ = ["describe", "detail", "render_html", "render_page", "scrub_paths"]


# A text output longer than this shows its first PREVIEW_LINES lines and folds the rest into <details>.
LONG_OUTPUT_LINES = 30
PREVIEW_LINES = 10
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TEXT_TYPES = {"text/plain", "text/html", "text/markdown", "text/latex", "image/svg+xml", "application/json"}
GREEN, RED, AMBER = "#2e7d32", "#c62828", "#b26a00"
CSS = ("body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
       "td,th{padding:6px 10px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
       ".desc{color:#555;font-size:90%;max-width:20em}img.thumb{max-width:160px;border:1px solid #ddd}"
       ".detail{font-size:90%;width:18em;overflow-wrap:break-word}.detail div{margin-bottom:4px}")


def _local_paths(out: Path) -> list[str]:
    """Folders of this machine that a rendered page must not show, longest first: the build folder
    (and the run's stage inside it), the checkout, the virtual environment, the home and temp folders."""
    roots = [out, out.parent if out.name.startswith(".run-") else out, Path.home(), Path(tempfile.gettempdir())]
    try:
        roots.append(repo_root())
    except FileNotFoundError:  # an installed wheel has no checkout
        pass
    if sys.prefix != sys.base_prefix:  # a venv; a system Python's /usr is nobody's local path
        roots.append(Path(sys.prefix))
    found = {str(p) for r in roots for p in (r, r.resolve()) if len(p.parts) > 1}
    return sorted(found, key=len, reverse=True)


def scrub_paths(text: str, paths: list[str]) -> str:
    """``text`` with each of ``paths`` (a whole path component, not a prefix of one) replaced by "…".

    >>> scrub_paths("wrote /home/ann/b/x.json, not /home/annex", ["/home/ann"])
    'wrote …/b/x.json, not /home/annex'
    """
    for p in paths:
        text = re.sub(re.escape(p) + r"(?![\w-]|\.\w)", "…", text)
    return text


def _text_html(text: str, preview: int) -> str:
    """A long text output as HTML: its first ``preview`` lines, the rest folded; short lines (a column
    of numbers, say) flow into columns so a thousand of them fit on a screen. Monospaced, as text
    outputs are (nbconvert's theme sets an HTML output's <pre> in the body font)."""
    rows = _ANSI.sub("", text).splitlines()
    head, rest = "\n".join(rows[:preview]), "\n".join(rows[preview:])
    style = "font-family:monospace" + (";column-width:8em" if max(len(r) for r in rows) <= 12 else "")
    return (f'<pre style="font-family:monospace">{html.escape(head)}</pre><details><summary>{len(rows) - preview} '
            f'more lines ({len(rows)} in all)</summary><pre style="{style}">{html.escape(rest)}</pre></details>')


def _collapse(output: dict, lines: int = LONG_OUTPUT_LINES, preview: int = PREVIEW_LINES) -> dict:
    """A stream or plain-text output over ``lines`` lines as an HTML output that folds it; others as they are."""
    if output.get("output_type") == "stream":
        text = output["text"]
    elif output.get("output_type") in ("execute_result", "display_data") and set(output["data"]) == {"text/plain"}:
        text = output["data"]["text/plain"]
    else:
        return output
    if text.count("\n") < lines:
        return output
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": _text_html(text, preview), "text/plain": text}}


def _merge_streams(outputs: list) -> list:
    """Adjacent outputs of one stream as one, so a column printed line by line folds as a whole."""
    merged = []
    for o in outputs:
        last = merged[-1] if merged else {}
        if o.get("output_type") == "stream" == last.get("output_type") and o["name"] == last["name"]:
            merged[-1] = {**last, "text": last["text"] + o["text"]}
        else:
            merged.append(o)
    return merged


def _scrub_output(output: dict, paths: list[str]) -> dict:
    """``output`` with local paths scrubbed from its text (base64 images are left alone)."""
    out = dict(output)
    if "text" in out:
        out["text"] = scrub_paths(out["text"], paths)
    if "data" in out:
        out["data"] = {k: scrub_paths(v, paths) if isinstance(v, str) and k in _TEXT_TYPES else v
                       for k, v in out["data"].items()}
    if "traceback" in out:
        out["traceback"] = [scrub_paths(t, paths) for t in out["traceback"]]
        out["evalue"] = scrub_paths(out["evalue"], paths)
    return out


def _page_notebook(nb, paths: list[str]):
    """The executed notebook as a reader sees it: no Colab setup or injected-parameters cell, the parameters
    cell with the values the run gave it (:func:`.parameters.as_run`), no badge before the title, no local path
    in any output or parameter, long text outputs folded, the shown code cells numbered from ``In [1]`` (the
    hidden ones ran first)."""
    import nbformat

    hidden = {colab.SETUP_TAG, "injected-parameters"}
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a copy: the executed notebook stays as it ran
    injected = "".join(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    for c in nb.cells:
        if "parameters" in c.metadata.get("tags", []):
            c.source = scrub_paths(as_run(c.source, injected), paths) + "\n# (the values this run was given)"
    nb.cells = [c for c in nb.cells if not hidden & set(c.metadata.get("tags", []))]
    first_md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if first_md is not None:
        first_md.source = colab.without_badge(first_md.source)
    if _title(_first_markdown(nb)):
        nb.metadata["title"] = _title(_first_markdown(nb))  # the browser tab's title
    shown = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            if cell.get("execution_count") is not None:
                shown += 1
                cell.execution_count = shown
                for o in cell.outputs:
                    if "execution_count" in o:
                        o["execution_count"] = shown
            outputs = _merge_streams(cell.outputs)
            cell.outputs = [nbformat.from_dict(_collapse(_scrub_output(o, paths))) for o in outputs]
    return nb


def _first_markdown(nb) -> str:
    """The notebook's first markdown cell, not counting the banner papermill puts above a notebook that raised."""
    return next((c.source for c in nb.cells if c.cell_type == "markdown"
                 and "papermill-error-cell-tag" not in c.metadata.get("tags", [])), "")


def _title(markdown: str) -> str:
    """The text of the first ``# `` heading in ``markdown``, or ""."""
    return next((line[2:].strip() for line in markdown.splitlines() if line.startswith("# ")), "")


def describe(nb, limit: int = 160) -> str:
    """One line about a notebook: ``metadata.description`` if set, else its title and the first item of
    its "What you'll learn" (or "What you'll see") list, up to its first ";" and ``limit`` characters.

    >>> import nbformat
    >>> md = "# Personalized PageRank\\n\\n**What you'll learn**\\n- how a walk ranks passages; why it restarts"
    >>> describe(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)]))
    'Personalized PageRank — how a walk ranks passages'
    """
    if nb.metadata.get("description"):
        return str(nb.metadata["description"])
    md = _first_markdown(nb)
    m = re.search(r"\*\*What you'll (?:learn|see)\*\*[ \t]*\n?\s*(?:[-*]\s+)?((?:.+\n?)+?)(?:\s*\n[-*\n]|\s*$)", md)
    objective = " ".join(m.group(1).split()).split("; ")[0].rstrip(";,.") if m else ""
    if len(objective) > limit:
        objective = objective[:limit].rsplit(" ", 1)[0] + " …"
    return " — ".join(part for part in (_title(md), objective) if part)


def _inline_md(text: str) -> str:
    """Escaped ``text`` with markdown code spans as <code> and emphasis markers dropped."""
    text = re.sub(r"\*{1,2}([^*]+)\*{1,2}", r"\1", html.escape(text))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _first_figure(nb) -> bytes | None:
    """The PNG bytes of the notebook's first image output, if any."""
    import base64

    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if "image/png" in o.get("data", {}):
                return base64.b64decode(o["data"]["image/png"])
    return None


def _thumbnail(png: bytes, path: Path, width: int = 280) -> None:
    import io

    from PIL import Image  # matplotlib's own dependency

    (img := Image.open(io.BytesIO(png))).thumbnail((width, width))
    img.save(path, format="PNG")


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return "" if x is None else str(x)


def _checks_page(record: checks.Record, title: str, page: str) -> str:
    """A page listing each check of ``record``: result, value, bound, effect and CI, conclusion, message;
    ``page`` is the stem of the notebook's own page, which it links to."""
    rows = []
    for c in record.checks:
        result = c.status
        colour = {"WARN": AMBER, "FAIL": RED}.get(result, GREEN)
        effect = f"{c.value:+.3g} [{c.ci_low:+.3g}, {c.ci_high:+.3g}]" if c.ci_low is not None else ""
        note = c.warning or c.message
        rows.append(f"<tr><td>{html.escape(c.name)}</td><td style='color:{colour}'>{result}</td>"
                    f"<td>{html.escape(_fmt(c.value))}</td><td>{html.escape(f'{c.op} {_fmt(c.bound)}')}</td>"
                    f"<td>{html.escape(effect)}</td><td>{html.escape(c.conclusion or '')}</td>"
                    f"<td>{html.escape(note)}</td></tr>")
    passed = sum(c.passed for c in record.checks)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Checks · {html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body><p><a href='../../index.html'>← all notebooks</a> · "
            f"<a href='../{html.escape(page)}.html'>the notebook</a></p>"
            f"<h1>Checks · {html.escape(title)}</h1><p>{passed} of {len(record.checks)} passed</p>"
            "<table><tr><th>check</th><th>result</th><th>value</th><th>bound</th><th>effect [95% CI]</th>"
            "<th>conclusion</th><th>message</th></tr>" + "".join(rows) + "</table></body></html>")


# How many paired comparisons a row's detail names; the checks page lists them all.
DETAIL_COMPARISONS = 2
_NUMERIC_OPS = (">=", "<=", "|diff| <=")


def _effect(c: checks.Result) -> str:
    return f"{c.value:+.3g} [{c.ci_low:+.3g}, {c.ci_high:+.3g}]"


def _failure(c: checks.Result) -> str:
    """One failed check as a line: what was measured against what, and what it claims."""
    if c.ci_low is not None:
        measured = f"{_effect(c)}, {c.conclusion}"
    else:
        measured = f"{_fmt(c.value)}, wanted {c.op} {_fmt(c.bound)}"
    return f"{c.name}: {measured}" + (f" — {c.message}" if c.message else "")


def _closest_call(record: checks.Record) -> checks.Result | None:
    """The passed numeric check nearest its bound, relative to the bound (timing checks left out)."""
    def margin(c):
        return abs(float(c.value) - float(c.bound)) / max(abs(float(c.bound)), 1e-12)

    numeric = [c for c in record.checks if c.passed and not c.timing and c.op in _NUMERIC_OPS
               and isinstance(c.value, (int, float)) and isinstance(c.bound, (int, float)) and c.bound != 0]
    return min(numeric, key=margin, default=None)


_LESSON_CHECKS = {check: key for key, (_, _, check) in verdicts.LESSONS.items()}
UNDECIDED = ("no significant", "too few")


def _levels(c: checks.Result, n: bool = False) -> str:
    """' (0.5 vs 0.4)[ over n], MDE 0.1': both methods' levels, optionally n, and the MDE when recorded."""
    levels = "" if c.mean_a is None else f" ({c.mean_a:.3g} vs {c.mean_b:.3g})"
    return levels + (f" over {c.n}" if n else "") + ("" if c.mde is None else f", MDE {c.mde:.3g}")


def _comparison_line(c: checks.Result) -> str:
    """A recorded comparison as one line: its conclusion, effect and CI, both levels, MDE and caveat."""
    return f"{c.name}: {c.conclusion}, {_effect(c)}{_levels(c)}" + (f"; {c.caveat}" if c.caveat else "")


def _lesson_line(c: checks.Result, corpus: str = "") -> str:
    """The lesson a notebook decides, as one line: its verdict, effect and CI, n, MDE and caveat."""
    key = _LESSON_CHECKS.get(c.name)
    caveat = (verdicts.caveat_of(key, corpus, c.mean_a, c.mean_b, c.caveat or "") if key else c.caveat) or ""
    words = verdicts.verdict_of(c.ci_low, c.ci_high, c.ties is not None and c.ties == c.n, c.n, caveat)
    claim = verdicts.LESSONS[key][0] if key else c.message
    return f"lesson — {claim}: {words}, {_effect(c)}{_levels(c, n=True)}" + (f"; {caveat}" if caveat else "")


def detail(r, record: checks.Record | None, paths: list[str] = ()) -> list[str]:
    """The index's detail for row ``r`` (a :class:`cookbook.run.runner.NotebookResult`) with its checks
    ``record``, as lines of text: for a failure, the first failed check (value, bound, message) or the error
    and its cell; for a notebook that passed, the verdict of the lesson it decides (harness/verdicts.py: its
    words, effect and 95 % CI, n, minimum detectable effect and what it cannot show), else up to
    :data:`DETAIL_COMPARISONS` paired comparisons (the claims it made first, then the significant findings), and
    the check that came closest to its bound. Local ``paths`` are scrubbed from an error.

    >>> from cookbook.run.runner import NotebookResult
    >>> c = checks.Checks("01_x", results_dir=None)
    >>> _ = c.at_least("recall", 0.97, 0.95, "gazetteer recall"), c.at_least("precision", 0.99, 0.5)
    >>> _ = c.better("ppr_vs_bm25", [1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 0], labels=("PPR", "BM25"), n_boot=500)
    >>> record = checks.Record("01_x", c.passed, c.results)
    >>> for line in detail(NotebookResult("01_x", "ok", 1.0), record):
    ...     print(line)
    ppr_vs_bm25: PPR better over 6 questions, +0.667 [+0.333, +1] (0.833 vs 0.167), MDE 0.591
    closest to its bound: recall 0.97 (>= 0.95)
    >>> v = checks.Checks("07_x", results_dir=None)
    >>> _ = v.compare("verdict_seeds", [1, 1, 0, 1], [1, 0, 0, 1], hypothesis=True, n_boot=200)
    >>> detail(NotebookResult("07_x", "ok", 1.0), checks.Record("07_x", True, v.results))[0][:96]
    'lesson — overlap-aware seeds reach more supporting passages per node explored: too few to decide'
    >>> _ = c.at_least("f1", 0.4, 0.6, "theme F1")
    >>> detail(NotebookResult("01_x", "checks failed", 1.0), checks.Record("01_x", False, c.results))
    ['failed: f1: 0.4, wanted >= 0.6 — theme F1']
    """
    failed = [c for c in record.checks if not c.passed] if record is not None else []
    if failed:
        return [f"failed: {_failure(failed[0])}"] + ([f"and {len(failed) - 1} more failed"] if len(failed) > 1 else [])
    if r.error:
        where = f" (cell {r.failing_cell})" if r.failing_cell is not None else ""
        return [scrub_paths(r.error.splitlines()[0][:300], list(paths)) + where]
    if r.failed_checks:  # a row kept without its record
        return [f"failed checks: {', '.join(r.failed_checks)}"]
    if record is None:
        return []
    paired = [c for c in record.checks if c.ci_low is not None]
    lesson = next((c for c in paired if c.hypothesis or c.name in _LESSON_CHECKS), None)
    if lesson is not None:
        lines = [_lesson_line(lesson, getattr(r, "corpus", ""))]
    else:
        claims = sorted(paired, key=lambda c: (c.op != "CI low >", (c.conclusion or "").startswith(UNDECIDED)))
        lines = [_comparison_line(c) for c in claims[:DETAIL_COMPARISONS]]
        if len(paired) > DETAIL_COMPARISONS:
            more = len(paired) - DETAIL_COMPARISONS
            lines.append(f"and {more} more comparison{'s' if more > 1 else ''}")
    closest = _closest_call(record)
    if closest is not None:
        lines.append(f"closest to its bound: {closest.name} {_fmt(closest.value)} ({closest.op} {_fmt(closest.bound)})")
    return lines


def render_page(out: Path, files: str) -> Path | None:
    """``out/html/FILES.html`` (:func:`_page_notebook`) from ``out/notebooks/FILES.ipynb`` unless written; None without
    that notebook. The runner calls it as each notebook ends, beside those running; :func:`render_html` does the rest.

    >>> render_page(Path(tempfile.gettempdir()) / "no-such-build", "00_quickstart.world") is None
    True
    """
    import nbformat
    from nbconvert import HTMLExporter

    out = Path(out)
    executed, page = out / "notebooks" / f"{files}.ipynb", out / "html" / f"{files}.html"
    if page.exists() or not executed.exists():
        return page if page.exists() else None
    page.parent.mkdir(parents=True, exist_ok=True)
    body, _ = HTMLExporter().from_notebook_node(_page_notebook(nbformat.read(str(executed), 4), _local_paths(out)))
    page.write_text(body, encoding="utf-8")
    return page


def render_html(out: Path, results: list) -> Path:
    """HTML page per executed notebook (see :func:`_page_notebook`), a checks page per notebook and
    ``index.html``: per notebook a one-line description, status, checks passed (linking to its checks
    page), runtime against its budget (over budget is a warning, in amber), when, at which scale and on
    which corpus it ran, and a thumbnail of its first figure.

    ``results`` are :class:`cookbook.run.runner.NotebookResult` rows.

    >>> import tempfile
    >>> from cookbook.run.runner import NotebookResult
    >>> with tempfile.TemporaryDirectory() as d:
    ...     index = render_html(Path(d), [NotebookResult("06_personalized_pagerank", "error", 1.0, error="boom")])
    ...     "boom" in index.read_text(encoding="utf-8")
    True
    """
    import nbformat

    html_dir = out / "html"
    for sub in ("checks", "thumbs"):
        (html_dir / sub).mkdir(parents=True, exist_ok=True)
    paths = _local_paths(out)
    rows = []
    for r in results:
        executed = out / "notebooks" / f"{r.files}.ipynb"
        nb = nbformat.read(str(executed), as_version=4) if executed.exists() else None
        # rendered here unless the runner did, or a row kept from an earlier run brought its page
        page = render_page(out, r.files) or html_dir / f"{r.files}.html"
        name, files = html.escape(r.notebook), html.escape(r.files)
        link = f'<a href="html/{files}.html">{name}</a>' if page.exists() else name
        desc = f"<div class='desc'>{_inline_md(describe(nb))}</div>" if nb is not None else ""
        checks_cell = f"{r.checks_passed}/{r.checks_total}"
        record_path = out / "checks" / f"{r.files}.json"
        record = checks.read(record_path) if record_path.exists() else None
        if record is not None:
            title = (_title(_first_markdown(nb)) if nb is not None else "") or r.notebook
            (html_dir / "checks" / f"{r.files}.html").write_text(
                _checks_page(record, f"{title} ({r.corpus})" if r.corpus else title, r.files), encoding="utf-8")
            checks_cell = f'<a href="html/checks/{files}.html">{checks_cell}</a>'
        png = _first_figure(nb) if nb is not None else None
        thumb = ""
        if png is not None:
            _thumbnail(png, html_dir / "thumbs" / f"{r.files}.png")
            thumb = (f'<a href="html/{files}.html"><img class="thumb" src="html/thumbs/{files}.png" '
                     f'alt="first figure of {name} on {html.escape(r.corpus)}"></a>')
        budget = f" / {r.budget_s:g}" if r.budget_s is not None else ""
        about = "".join(f"<div>{html.escape(line)}</div>" for line in detail(r, record, paths))
        warn = "".join(f"<div style='color:{AMBER}'>warning: {html.escape(w)}</div>" for w in r.warnings)
        rows.append(f"<tr><td>{link}{desc}</td><td style='color:{GREEN if r.ok else RED}'>{r.status}</td>"
                    f"<td>{checks_cell}</td>"
                    f"<td style='color:{AMBER if r.warnings else 'inherit'}'>{r.seconds:.1f}{budget}</td>"
                    f"<td>{html.escape(r.scale)}</td><td>{html.escape(r.corpus)}</td><td>{thumb}</td>"
                    f"<td>{html.escape(r.finished_at)}</td><td class='detail'>{about}{warn}</td></tr>")
    corpora: dict[str, int] = {}
    for r in results:
        corpora[r.corpus or "no corpus"] = corpora.get(r.corpus or "no corpus", 0) + 1
    summary = " · ".join([f"{sum(r.ok for r in results)} of {len(results)} runs passed",
                          *(f"{html.escape(c)}: {n} notebook{'s' * (n != 1)}" for c, n in corpora.items())])
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>GraphRAG Cookbook — run</title>"
            f"<style>{CSS}</style></head><body><h1>GraphRAG Cookbook</h1><p>{summary}</p><table><tr><th>notebook</th>"
            "<th>status</th><th>checks</th><th>seconds / budget</th><th>scale</th><th>corpus</th>"
            "<th>first figure</th><th>finished (UTC)</th><th>detail</th></tr>" + "".join(rows)
            + "</table></body></html>")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
