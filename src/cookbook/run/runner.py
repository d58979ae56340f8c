"""Execute the notebook series with papermill, collect checks, render HTML.

``python -m cookbook run [--only 01 05] [--scale class] [--corpus world|factbook|all] [--out build]`` executes
each notebook on each corpus (:mod:`cookbook.run.plan`: by default both, world then Factbook) with its
``parameters`` cell overridden (``SCALE``, ``CORPUS``, ``RESULTS_DIR``, ``STRICT``), in this interpreter's
kernel, and writes under ``--out``, one file per notebook and corpus named ``<notebook>.<corpus>``:
``notebooks/`` (executed copies), ``checks/`` (one JSON each), ``html/`` (rendered pages, ``html/checks/`` a
checks table each, ``html/thumbs/`` each one's first figure), ``index.html`` and ``summary.json``. The pages
leave out the Colab setup, parameters and injected-parameters cells (by their tags), show no local path and
fold long text outputs. A notebook that raises is reported with its failing cell and the rest still run; the
exit status is non-zero when any notebook raised or any check failed. ``--jobs N`` executes up to N notebooks
at once (one kernel each, :mod:`cookbook.run.workers`; default: the cores this process may use); results,
table and index keep series order.

A run writes into a fresh ``<out>/.run-<time>-<pid>`` folder and moves its results into place only
when every notebook has finished, so an interrupted run (Ctrl-C, SIGTERM) leaves the previous build
as it was. ``--only`` keeps the previous build's other rows (and files), of every corpus; a run of one corpus
replaces that corpus's rows of its notebooks only.

A notebook whose parameters cell sets ``BUILD_CHECKS`` reads the build (notebook 00's verdict table): it runs
after every other notebook of the run, with ``BUILD_CHECKS`` pointing at this run's checks (and the checks of
the rows an ``--only`` run keeps), so its table is the build it is part of.
"""

from __future__ import annotations

import json
import logging
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..harness import checks
from ..harness.graph_view import graphml_path
from ..paths import list_notebooks, notebooks_dir
from .build import (
    BuildLock,
    check_unowned,
    commit,
    copy_kept,
    owned_files,
    prepare_out,
    previous_rows,
    remove_stale_stages,
    row_files,
    start_stage,
)
from .kernels import KERNEL_ARGS, KERNEL_NAME, default_jobs, ensure_kernel, kernel_env, kernel_manager
from .parameters import _injected_paths_final, check_parameters, notebook_parameters
from .plan import READS_BUILD, Job, plan, row_key, row_order
from .render import render_html, render_page
from .workers import execute_all, interrupt_once, stop_kernels

__all__ = ["KERNEL_NAME", "Interrupted", "NotebookResult", "default_jobs", "ensure_kernel",
           "format_table", "run", "run_notebook"]

_LIBRARY_LOGGERS = ("traitlets", "papermill", "nbclient", "NotebookClient")
# Signals the command line took before the run's own handlers (``python -m cookbook`` shares its list here): a
# KeyboardInterrupt raised inside a library's bare ``except:`` (an optional import) is lost, so :func:`run` checks
# this before any kernel starts, and a Ctrl-C at start-up never becomes a whole run that exits 0.
_received: list[str] = []


class Interrupted(Exception):
    """A run stopped by SIGINT or SIGTERM; its message says what was interrupted (the CLI prints it and
    exits 130).

    >>> raise Interrupted("interrupted by SIGINT while running 07_overlap_aware_seeds (6/10 finished)")
    Traceback (most recent call last):
    cookbook.run.runner.Interrupted: interrupted by SIGINT while running 07_overlap_aware_seeds (6/10 finished)
    """


def _source_cell_index(path: Path, source: str) -> int | None:
    """Index (0-based, in the committed notebook) of the cell whose source raised."""
    import nbformat

    cells = nbformat.read(str(path), as_version=4).cells
    return next((i for i, c in enumerate(cells) if c.source == source), None)


def _started_last(path: Path, executed: Path) -> int | None:
    """Index (0-based, in ``path``) of the last cell papermill started in ``executed``: the one a timeout stopped."""
    import nbformat

    try:
        cells = nbformat.read(str(executed), as_version=4).cells
    except (OSError, ValueError):
        return None
    started = [c for c in cells if c.cell_type == "code" and c.metadata.get("papermill", {}).get("start_time")]
    return _source_cell_index(path, started[-1].source) if started else None


@dataclass
class NotebookResult:
    """One notebook's row of a run: its ``status`` (``"ok"``, ``"checks failed"`` or ``"error"``), wall
    ``seconds``, the checks passed and failed, the error and the failing cell when it raised, timing
    ``warnings``, the ``scale`` and ``corpus`` it ran at, and ``files``, the stem of its files in the build
    (``<notebook>.<corpus>``, :attr:`cookbook.run.plan.Job.name`; rows of builds made before both corpora, and
    rows made by hand, name the notebook).

    >>> r = NotebookResult("06_personalized_pagerank", "checks failed", 12.5, 9, 10, ["recall@5"])
    >>> r.checks_total - r.checks_passed, r.failed_checks, r.files
    (1, ['recall@5'], '06_personalized_pagerank')
    """

    notebook: str
    status: str  # "ok", "checks failed", "error"
    seconds: float
    checks_passed: int = 0
    checks_total: int = 0
    failed_checks: list[str] = field(default_factory=list)
    error: str = ""
    failing_cell: int | None = None  # 0-based index of the raising cell in the committed notebook
    warnings: list[str] = field(default_factory=list)  # timing checks over their bound: shown, never failing
    budget_s: float | None = None  # the notebook's runtime_s budget, when it records one
    finished_at: str = ""  # UTC, ISO 8601: rows kept by --only runs carry their own date
    scale: str = ""
    corpus: str = ""
    files: str = ""  # notebooks/<files>.ipynb, checks/<files>.json, html/<files>.html

    def __post_init__(self):
        self.files = self.files or self.notebook

    @property
    def ok(self) -> bool:
        """Whether the notebook ran without error and passed every check.

        >>> NotebookResult("00_quickstart", "ok", 3.0).ok, NotebookResult("00_quickstart", "error", 1.0).ok
        (True, False)
        """
        return self.status == "ok"


def run_notebook(path: Path, out: Path, *, parameters: dict, kernel: str, timeout: int,
                 progress: bool = True, files: str | None = None, env: dict | None = None) -> NotebookResult:
    """Execute one notebook into ``out/notebooks/<files>.ipynb`` (``files`` defaults to
    ``<stem>.<corpus>``, the corpus being ``parameters["CORPUS"]`` or the world) and move the checks JSON it
    writes in ``RESULTS_DIR`` to ``out/checks/<files>.json`` (and a GraphML file it writes there,
    :func:`cookbook.harness.graph_view.graphml_path`, to ``out/graphs/<files>.graphml``); never raises for a
    failing notebook, reports it instead. ``env`` (:func:`cookbook.run.kernels.kernel_env`) goes to the kernel's
    process only, over this process's environment, which is never changed.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     r = run_notebook(Path(d) / "99_missing.ipynb", Path(d), parameters={"RESULTS_DIR": d},
    ...                      kernel=KERNEL_NAME, timeout=5, progress=False)
    >>> r.status, r.error.split(":")[0], r.files
    ('error', 'FileNotFoundError', '99_missing.world')
    """
    import papermill as pm
    from traitlets.config import Config

    corpus = str(parameters.get("CORPUS", "world"))
    files = files or f"{path.stem}.{corpus}"
    exec_dir = out / "notebooks"
    exec_dir.mkdir(parents=True, exist_ok=True)
    written = Path(parameters["RESULTS_DIR"]) / f"{path.stem}.json"  # where the notebook's Checks.save() writes
    checks_file = out / "checks" / f"{files}.json"
    # a GraphML file the notebook writes beside its checks goes to graphs/, listed in the build marker as its own
    graph, graph_file = graphml_path(parameters["RESULTS_DIR"], path.stem), out / "graphs" / f"{files}.graphml"
    for stale in (written, checks_file, graph_file):
        stale.unlink(missing_ok=True)
    # The kernel's connection file lives in `out` (the run's own folder), not the system temp dir,
    # so even a SIGKILLed run leaves nothing behind that the next run does not remove.
    config = Config({"KernelManager": {"connection_file": str(out / f".kernel-{files}.json")}})
    manager, env_config = kernel_manager(env or {})
    config.merge(env_config)
    # The kernel starts in exec_dir through nbclient's resources; papermill's cwd= would chdir this whole
    # process, which notebooks running side by side in threads share.
    t0 = time.perf_counter()
    error, cell = "", None
    try:
        for attempt in (1, 2):
            try:
                pm.execute_notebook(str(path), str(exec_dir / f"{files}.ipynb"), parameters=parameters,
                                    kernel_name=kernel, progress_bar=progress, execution_timeout=timeout,
                                    extra_arguments=KERNEL_ARGS, config=config, kernel_manager_class=manager,
                                    resources={"metadata": {"path": str(exec_dir)}})
                break
            except RuntimeError as e:  # kernels started side by side can race for a port: the kernel never
                if attempt == 2 or "before replying to kernel_info" not in str(e):  # ran a cell, so start it again
                    raise
    except pm.PapermillExecutionError as e:
        error = f"{e.ename}: {e.evalue}".strip()[:2000]
        cell = _source_cell_index(path, e.source)
    except Exception as e:  # kernel death, timeout, unreadable notebook: report, keep going
        error = f"{type(e).__name__}: {e}"[:2000]
        if isinstance(e, TimeoutError):  # nbclient's CellTimeoutError: the cell it stopped is the last one started
            cell = _started_last(path, exec_dir / f"{files}.ipynb")
    seconds = round(time.perf_counter() - t0, 2)
    _injected_paths_final(exec_dir / f"{files}.ipynb", out)
    for made, kept in ((written, checks_file), (graph, graph_file)):  # a link is never moved, only a file
        if made.is_file() and not made.is_symlink():
            kept.parent.mkdir(parents=True, exist_ok=True)
            made.replace(kept)
    res = NotebookResult(path.stem, "ok", seconds, error=error, failing_cell=cell,
                         finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         scale=str(parameters.get("SCALE", "")), corpus=corpus, files=files)
    if checks_file.exists():
        record = checks.read(checks_file).checks
        res.checks_total = len(record)
        res.checks_passed = sum(c.passed for c in record)
        res.failed_checks = [c.name for c in record if not c.passed]
        res.warnings = [f"{c.name}: {c.warning}" for c in record if c.warning]
        res.budget_s = next((c.bound for c in record if c.name == "runtime_s"), None)
    if error:
        res.status = "error"
    elif res.failed_checks or not checks_file.exists():
        res.status = "checks failed"
        if not checks_file.exists():
            res.error = f"no {written.name} written: the notebook never reached checks.save()"
    return res


def format_table(results: list[NotebookResult]) -> str:
    """The run's results as the plain-text table the command line prints, one row per notebook and corpus
    plus a ``↳`` line for its error, failed checks or warnings.

    >>> print(format_table([NotebookResult("06_personalized_pagerank", "checks failed", 12.5, 9, 10, ["recall"],
    ...                                    corpus="factbook")]))
    notebook                         corpus    status          checks  seconds
    06_personalized_pagerank         factbook  checks failed    9/10      12.5
        ↳ failed checks: recall
    """
    lines = [f"{'notebook':32} {'corpus':9} {'status':14} {'checks':>7} {'seconds':>8}"]
    for r in results:
        lines.append(f"{r.notebook:32} {r.corpus:9} {r.status:14} {r.checks_passed:>3}/{r.checks_total:<3} "
                     f"{r.seconds:>8.1f}")
        if r.error:
            where = f" (cell {r.failing_cell})" if r.failing_cell is not None else ""
            lines.append(f"    ↳ {r.error.splitlines()[0][:200]}{where}")
        elif r.failed_checks:
            lines.append(f"    ↳ failed checks: {', '.join(r.failed_checks)}")
        lines.extend(f"    ↳ warning: {w}" for w in r.warnings)
    return "\n".join(lines)


def run(only: list[str] | None = None, *, scale: str | None = None, out: str | Path = "build",
        notebooks: str | Path | None = None, timeout: int = 600, html_report: bool = True,
        progress: bool = True, extra_parameters: dict | None = None, jobs: int | None = None,
        wait: bool = False, corpora: list[str] | None = None) -> list[NotebookResult]:
    """Execute the series (or ``only`` some notebooks) on ``corpora`` (default: every corpus that has the
    scale; :func:`cookbook.run.plan.plan`), ``jobs`` notebooks at once (default :func:`default_jobs`), and
    write the build folder; see module doc.

    Everything that can be checked is checked before a kernel starts: the notebooks, the parameters (names
    and types against the parameters cells, values as the notebooks check them, ``scale`` and ``SCALE`` agreeing;
    ``scale`` defaults to ``SCALE`` or ``"class"``), the corpora, the scale and the output folder
    (:func:`cookbook.run.build.prepare_out`: a folder no run made is never replaced; no file a run would write
    exists there unless a run wrote it, :func:`cookbook.run.build.check_unowned`), and that no other run is
    writing there (or, with ``wait``, until none is). Raises :class:`Interrupted` on
    SIGINT/SIGTERM, after removing this run's partial folder. The example shows checks that fail before a
    kernel starts:

    >>> run(scale="huge")
    Traceback (most recent call last):
    ValueError: unknown world scale 'huge': corpus 'world' has ['ci', 'class', 'large', 'tiny']
    >>> run(extra_parameters={"RESULTS_DIR": "elsewhere"})
    Traceback (most recent call last):
    ValueError: RESULTS_DIR is set by the runner (checks go to <out>/checks); choose --out instead
    >>> run(jobs=0)
    Traceback (most recent call last):
    ValueError: --jobs wants a positive number of notebooks to run at once, got 0
    """
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"--jobs wants a positive number of notebooks to run at once, got {jobs!r}")
    source = Path(notebooks) if notebooks else notebooks_dir()
    paths = list_notebooks(notebooks, only)
    if not paths:
        raise ValueError(f"no notebooks named NN_name.ipynb in {source}")
    extra = dict(extra_parameters or {})
    for name, why in (("RESULTS_DIR", "checks go to <out>/checks"), (READS_BUILD, "it reads the run's checks")):
        if name in extra:
            raise ValueError(f"{name} is set by the runner ({why}); choose --out instead")
    check_parameters(extra, notebook_parameters(paths))
    if "SCALE" in extra and scale is not None and extra["SCALE"] != scale:
        raise ValueError(f"--scale {scale} and -p SCALE={extra['SCALE']} disagree; give one of them")
    params = {"SCALE": scale or "class", "STRICT": True, **extra}
    work = plan(paths, params, corpora)
    out = prepare_out(out, sources=source)
    with BuildLock(out, wait=wait):
        ran = {(job.path.stem, job.corpus) for job in work}
        ours = only and "summary.json" in owned_files(out)  # a summary.json no run wrote is not read, nor kept
        kept = [NotebookResult(**{k: v for k, v in row.items() if k in _FIELDS})
                for row in previous_rows(out, set()) if row_key(row) not in ran] if ours else []
        # Nothing a run did not write is replaced: every file this run may write, checked before any kernel.
        check_unowned(out, ["summary.json", *(["index.html"] if html_report else []),
                            *(f for name in [*(job.name for job in work), *(r.files for r in kept)]
                              for f in row_files(name, html=html_report))])
        remove_stale_stages(out)
        stage = start_stage(out)
        try:
            kernel = ensure_kernel()
            if _received:  # taken, then swallowed on its way (see _received): honoured before any kernel starts
                raise KeyboardInterrupt(_received[0])
            return _run_staged(work, stage, out, kept, {k: v for k, v in params.items() if k != "CORPUS"},
                               kernel=kernel, jobs=min(jobs or default_jobs(), len(work)),
                               timeout=timeout, html_report=html_report, progress=progress)
        finally:
            shutil.rmtree(stage, ignore_errors=True)


_FIELDS = {f.name for f in fields(NotebookResult)}


def _run_staged(work, stage, out, kept, params, *, kernel, jobs, timeout, html_report, progress):
    """Execute the jobs of ``work`` into ``stage``, then write the build there and swap it into ``out``; on
    SIGINT or SIGTERM stop the kernels and raise :class:`Interrupted` (the caller removes the stage)."""
    from tqdm.auto import tqdm

    main_thread = threading.current_thread() is threading.main_thread()
    # Our own handlers: SIGTERM stops the run as Ctrl-C does, in the main thread, which waits on the workers
    # (nbclient's asyncio runs in theirs); a second signal does not cut the kernels' clean-up short.
    handler = interrupt_once()
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}
    # Kernel trouble is reported per notebook in the results; the libraries' own log lines (e.g. nbclient's
    # "Kernel died while waiting for execute reply" when an interrupt stops a kernel) would only add noise.
    quiet = {name: logging.getLogger(name).level for name in _LIBRARY_LOGGERS}
    for name in quiet:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    running: dict[int, str] = {}
    finished, doing = 0, "running"
    env = kernel_env(jobs, default_jobs())  # the kernels' own: this process's environment is never changed
    bar = tqdm(total=len(work), desc="notebooks", unit="nb", disable=not progress)

    def report(r: NotebookResult, n: int) -> None:
        nonlocal finished
        finished = n
        bar.update(1)
        if progress and jobs > 1:  # they finish out of order: one line each says which
            bar.write(f"[{n}/{len(work)}] {r.files} {r.status} in {r.seconds:.1f} s", file=sys.stderr)

    def run_one(job: Job) -> NotebookResult:
        # Each corpus's notebooks write their checks in a folder of its own: the same notebook may run on two
        # corpora at once. papermill's per-cell bar only when one notebook runs at a time (several would
        # overwrite each other).
        given = {**params, "RESULTS_DIR": str(stage / "checks" / job.corpus)}
        if job.reads_build:
            given.setdefault(READS_BUILD, str(stage / "checks"))
        result = run_notebook(job.path, stage, parameters=job.parameters(given), kernel=kernel, timeout=timeout,
                              progress=progress and jobs == 1, files=job.name, env=env)
        if html_report:  # its page now, beside the notebooks still running, not all at the end (~0.6 s each)
            render_page(stage, job.name)
        return result

    def run_batch(batch: list[int], done_before: int) -> list[NotebookResult]:
        return execute_all([work[i] for i in batch], min(jobs, len(batch)), run_one, running,
                           lambda: stop_kernels(stage), lambda r, n: report(r, done_before + n))

    # Those that read the build run once the others have finished; the kept rows' checks are there from the start.
    batches = [[i for i, job in enumerate(work) if job.reads_build == last] for last in (False, True)]
    try:
        copy_kept(out, stage, kept, ("checks",))
        results: list = [None] * len(work)
        for batch in (b for b in batches if b):
            for i, r in zip(batch, run_batch(batch, sum(r is not None for r in results))):
                results[i] = r
        doing = "writing the build"
        _write_build(stage, out, kept, results, html_report)
        commit(stage, out)
    except KeyboardInterrupt as e:
        stop_kernels(stage)
        if doing == "running":
            doing = "running " + (", ".join(running[i] for i in sorted(running)) or "the notebooks")
        raise Interrupted(f"interrupted by {str(e) or 'SIGINT'} while {doing} ({finished}/{len(work)} notebooks "
                          f"finished); {out} keeps its previous build") from None
    finally:
        bar.close()
        for sig, old in previous.items():
            signal.signal(sig, old)
        for name, level in quiet.items():
            logging.getLogger(name).setLevel(level)
    return results


def _write_build(stage: Path, out: Path, kept: list[NotebookResult], results: list[NotebookResult],
                 html_report: bool) -> None:
    """The stage's summary and pages: this run's rows, and those an ``--only`` run keeps with their files."""
    for folder in (stage / "checks").glob("*"):  # the corpora's RESULTS_DIRs, emptied by run_notebook
        if folder.is_dir():
            shutil.rmtree(folder)
    copy_kept(out, stage, kept, ("notebooks", "graphs", "html"))  # their checks were copied before the run
    rows = sorted(kept + results, key=lambda r: row_order(r.notebook, r.corpus))
    (stage / "summary.json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n", encoding="utf-8")
    if html_report:
        render_html(stage, rows)
