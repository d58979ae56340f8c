"""Execute the notebook series with papermill, collect checks, render HTML.

``python -m cookbook run [--only 01 05] [--scale class] [--out build]`` executes each notebook with
its ``parameters`` cell overridden (``SCALE``, ``RESULTS_DIR``, ``STRICT``), in this interpreter's
kernel, and writes under ``--out``: ``notebooks/`` (executed copies), ``checks/`` (one JSON per
notebook), ``html/`` (rendered pages), ``index.html`` and ``summary.json``. A notebook that raises
is reported with its failing cell and the rest still run; the exit status is non-zero when any
notebook raised or any check failed.
"""

from __future__ import annotations

import html
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["KERNEL_NAME", "NotebookResult", "copy_notebooks", "ensure_kernel", "format_table", "list_notebooks",
           "notebooks_dir", "render_html", "repo_root", "run", "run_notebook", "shipped"]

KERNEL_NAME = "graphrag-cookbook"


def repo_root() -> Path:
    """The checkout this package runs from (``src/cookbook`` → two levels up); an installed wheel has none."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise FileNotFoundError(f"not running from a checkout of the repository (no pyproject.toml in {root})")
    return root


def shipped(name: str) -> Path:
    """The series' top-level ``notebooks`` or ``data`` folder: the checkout's when running from one
    (editable install), else the copy a built wheel carries in ``cookbook/_bundle/`` (see setup.py)."""
    try:
        d = repo_root() / name
    except FileNotFoundError:
        d = Path(__file__).resolve().parent / "_bundle" / name
    if not d.is_dir():
        raise FileNotFoundError(f"no {name}/ folder at {d}: the package was installed without its bundle")
    return d


def notebooks_dir() -> Path:
    return shipped("notebooks")


def list_notebooks(directory: str | Path | None = None, only: list[str] | None = None) -> list[Path]:
    """Notebooks named ``NN_slug.ipynb`` in order; ``only`` keeps those whose prefix or stem matches."""
    d = Path(directory) if directory else notebooks_dir()
    nbs = sorted(p for p in d.glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = [str(o) for o in only]
        nbs = [p for p in nbs if any(p.stem == o or p.stem.split("_")[0] == o.zfill(2) for o in wanted)]
        if not nbs:
            raise ValueError(f"no notebook matches --only {' '.join(wanted)} in {d}")
    return nbs


def copy_notebooks(to: str | Path, *, force: bool = False) -> list[Path]:
    """Copy the series' notebooks into ``to`` (created if missing) for editing; return the copies.
    Refuses, before copying anything, when a copy would overwrite a file, unless ``force``."""
    to = Path(to)
    if to.exists() and not to.is_dir():
        raise ValueError(f"{to} exists and is not a directory")
    srcs = list_notebooks()
    clash = [to / p.name for p in srcs if (to / p.name).exists()]
    if clash and not force:
        raise ValueError(f"{clash[0]} exists ({len(clash)} of the notebooks do); pass --force to overwrite")
    try:
        to.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copyfile(p, to / p.name)) for p in srcs]
    except OSError as e:
        raise ValueError(f"cannot write to {to}: {e.strerror}") from None


def ensure_kernel() -> str:
    """Register a Jupyter kernel that runs *this* interpreter (inside its own prefix) and return its
    name, so papermill executes notebooks with the venv that has the package installed."""
    from ipykernel.kernelspec import install
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
        if spec.argv and Path(spec.argv[0]).resolve() == Path(sys.executable).resolve():
            return KERNEL_NAME
    except NoSuchKernel:
        pass
    install(kernel_name=KERNEL_NAME, display_name="Python (graphrag-cookbook)", prefix=sys.prefix)
    return KERNEL_NAME


def _source_cell_index(path: Path, source: str) -> int | None:
    """Index (0-based, in the committed notebook) of the cell whose source raised."""
    import nbformat

    cells = nbformat.read(str(path), as_version=4).cells
    return next((i for i, c in enumerate(cells) if c.source == source), None)


@dataclass
class NotebookResult:
    notebook: str
    status: str  # "ok", "checks failed", "error"
    seconds: float
    checks_passed: int = 0
    checks_total: int = 0
    failed_checks: list[str] = field(default_factory=list)
    error: str = ""
    failing_cell: int | None = None  # 0-based index of the raising cell in the committed notebook

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def run_notebook(path: Path, out: Path, *, parameters: dict, kernel: str, timeout: int,
                 progress: bool = True) -> NotebookResult:
    """Execute one notebook; never raises for a failing notebook, reports it instead."""
    import papermill as pm

    exec_dir = out / "notebooks"
    exec_dir.mkdir(parents=True, exist_ok=True)
    checks_file = Path(parameters["RESULTS_DIR"]) / f"{path.stem}.json"
    checks_file.unlink(missing_ok=True)
    t0 = time.perf_counter()
    error, cell = "", None
    try:
        pm.execute_notebook(str(path), str(exec_dir / path.name), parameters=parameters, kernel_name=kernel,
                            progress_bar=progress, cwd=str(exec_dir), execution_timeout=timeout)
    except pm.PapermillExecutionError as e:
        error = f"{e.ename}: {e.evalue}".strip()[:2000]
        cell = _source_cell_index(path, e.source)
    except Exception as e:  # kernel death, timeout, unreadable notebook: report, keep going
        error = f"{type(e).__name__}: {e}"[:2000]
    seconds = round(time.perf_counter() - t0, 2)
    res = NotebookResult(path.stem, "ok", seconds, error=error, failing_cell=cell)
    if checks_file.exists():
        record = json.loads(checks_file.read_text(encoding="utf-8"))
        res.checks_total = len(record["checks"])
        res.checks_passed = sum(c["passed"] for c in record["checks"])
        res.failed_checks = [c["name"] for c in record["checks"] if not c["passed"]]
    if error:
        res.status = "error"
    elif res.failed_checks or not checks_file.exists():
        res.status = "checks failed"
        if not checks_file.exists():
            res.error = f"no checks file written at {checks_file}"
    return res


def render_html(out: Path, results: list[NotebookResult]) -> Path:
    """HTML page per executed notebook plus ``index.html`` with status, checks and runtime."""
    import nbformat
    from nbconvert import HTMLExporter

    html_dir = out / "html"
    html_dir.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    rows = []
    for r in results:
        executed = out / "notebooks" / f"{r.notebook}.ipynb"
        link = ""
        if executed.exists():
            body, _ = exporter.from_notebook_node(nbformat.read(str(executed), as_version=4))
            (html_dir / f"{r.notebook}.html").write_text(body, encoding="utf-8")
            link = f'<a href="html/{r.notebook}.html">{html.escape(r.notebook)}</a>'
        colour = "#2e7d32" if r.ok else "#c62828"
        detail = html.escape(r.error or ", ".join(r.failed_checks))
        rows.append(f"<tr><td>{link or html.escape(r.notebook)}</td><td style='color:{colour}'>{r.status}</td>"
                    f"<td>{r.checks_passed}/{r.checks_total}</td><td>{r.seconds:.1f}</td><td>{detail}</td></tr>")
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>GraphRAG Cookbook — run</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 12px;border-bottom:1px solid #ddd}"
            "</style></head><body><h1>GraphRAG Cookbook</h1><table><tr><th>notebook</th><th>status</th>"
            "<th>checks</th><th>seconds</th><th>detail</th></tr>" + "".join(rows) + "</table></body></html>")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def format_table(results: list[NotebookResult]) -> str:
    lines = [f"{'notebook':32} {'status':14} {'checks':>7} {'seconds':>8}"]
    for r in results:
        lines.append(f"{r.notebook:32} {r.status:14} {r.checks_passed:>3}/{r.checks_total:<3} {r.seconds:>8.1f}")
        if r.error:
            where = f" (cell {r.failing_cell})" if r.failing_cell is not None else ""
            lines.append(f"    ↳ {r.error.splitlines()[0][:200]}{where}")
        elif r.failed_checks:
            lines.append(f"    ↳ failed checks: {', '.join(r.failed_checks)}")
    return "\n".join(lines)


def run(only: list[str] | None = None, *, scale: str = "class", out: str | Path = "build",
        notebooks: str | Path | None = None, timeout: int = 600, html_report: bool = True,
        progress: bool = True, extra_parameters: dict | None = None) -> list[NotebookResult]:
    """Execute the series (or ``only`` some notebooks) and write the build folder; see module doc."""
    from tqdm.auto import tqdm

    from .datasets import resolve_scale

    resolve_scale(scale)  # fail early on a typo
    out = Path(out).resolve()
    paths = list_notebooks(notebooks, only)
    kernel = ensure_kernel()
    params = {"SCALE": scale, "RESULTS_DIR": str(out / "checks"), "STRICT": True, **(extra_parameters or {})}
    results = []
    for path in tqdm(paths, desc="notebooks", unit="nb", disable=not progress):
        results.append(run_notebook(path, out, parameters=params, kernel=kernel, timeout=timeout,
                                    progress=progress))
    (out / "summary.json").write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n", encoding="utf-8")
    if html_report:
        render_html(out, results)
    return results
