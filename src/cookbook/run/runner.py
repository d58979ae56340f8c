"""Execute the notebook series with papermill, collect checks, render HTML.

``python -m cookbook run [--only 01 05] [--scale class] [--out build]`` executes each notebook with
its ``parameters`` cell overridden (``SCALE``, ``RESULTS_DIR``, ``STRICT``), in this interpreter's
kernel, and writes under ``--out``: ``notebooks/`` (executed copies), ``checks/`` (one JSON per
notebook), ``html/`` (rendered pages, ``html/checks/`` a checks table per notebook, ``html/thumbs/``
each notebook's first figure), ``index.html`` and ``summary.json``. The pages leave out the Colab setup,
parameters and injected-parameters cells (by their tags), show no local path and fold long text outputs.
A notebook that raises is reported with its failing cell and the rest still run; the exit status is
non-zero when any notebook raised or any check failed. ``--jobs N`` executes up to N notebooks at once
(one kernel each; default: the cores this process may use); results, table and index keep series order.

A run writes into a fresh ``<out>/.run-<time>-<pid>`` folder and moves its results into place only
when every notebook has finished, so an interrupted run (Ctrl-C, SIGTERM) leaves the previous build
as it was. ``--only`` keeps the other notebooks' rows (and files) of the previous build.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..harness import checks
from ..paths import list_notebooks, notebooks_dir
from .render import render_html

__all__ = ["KERNEL_NAME", "Interrupted", "NotebookResult", "copy_notebooks", "default_jobs", "ensure_kernel",
           "format_table", "run", "run_notebook"]

KERNEL_NAME = "graphrag-cookbook"
# What a run owns under --out; anything else there (bench/, screenshots) is never touched.
BUILD_ENTRIES = ("notebooks", "checks", "html", "summary.json", "index.html")
# The kernel logs a transport warning at every start and "KeyboardInterrupt caught in kernel" when
# jupyter_client interrupts it during an ordinary shutdown; errors in notebook code reach the
# executed notebook, not this log, so only critical kernel failures are worth printing.
KERNEL_ARGS = ["--IPKernelApp.log_level=CRITICAL"]
_LIBRARY_LOGGERS = ("traitlets", "papermill", "nbclient", "NotebookClient")


class Interrupted(Exception):
    """A run stopped by SIGINT or SIGTERM; its message says what was interrupted (the CLI prints it and
    exits 130).

    >>> raise Interrupted("interrupted by SIGINT while running 07_overlap_aware_seeds (6/10 finished)")
    Traceback (most recent call last):
    cookbook.run.runner.Interrupted: interrupted by SIGINT while running 07_overlap_aware_seeds (6/10 finished)
    """


def default_jobs() -> int:
    """How many notebooks a run executes at once unless told: the CPU cores this process may use.

    >>> default_jobs() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity masks
        return os.cpu_count() or 1


def copy_notebooks(to: str | Path, *, force: bool = False) -> list[Path]:
    """Copy the series' notebooks into ``to`` (created if missing) for editing; return the copies.
    Refuses, before copying anything, when a copy would overwrite a file, unless ``force``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = copy_notebooks(d)
    ...     again = copy_notebooks(d, force=True)
    ...     copy_notebooks(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...00_quickstart.ipynb exists (11 of the notebooks do); pass --force to overwrite
    """
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


def notebook_parameters(paths: list[Path]) -> dict[str, object]:
    """Each name assigned in the notebooks' ``parameters`` cells → its default (the first notebook
    that sets it wins; a default that is not a Python literal maps to None, meaning any type)."""
    import ast

    import nbformat

    defaults: dict[str, object] = {}
    for path in paths:
        cells = nbformat.read(str(path), as_version=4).cells
        for cell in cells:
            if cell.cell_type != "code" or "parameters" not in cell.metadata.get("tags", []):
                continue
            try:
                body = ast.parse(cell.source).body
            except SyntaxError as e:
                raise ValueError(f"{path.name}: parameters cell does not parse: {e.msg} (line {e.lineno})") from None
            for node in body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    target = node.target
                else:
                    continue
                if isinstance(target, ast.Name):
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        value = None
                    defaults.setdefault(target.id, value)
    return defaults


def _same_kind(value, default) -> bool:
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):  # bool is an int to isinstance
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def check_parameters(given: dict, defaults: dict) -> None:
    """Every name in ``given`` is a notebook parameter and its value has the type of the default."""
    for name, value in given.items():
        if name not in defaults:
            raise ValueError(f"unknown parameter {name!r}; the notebooks' parameters cells define "
                             f"{', '.join(sorted(defaults)) or 'nothing'}")
        default = defaults[name]
        if not _same_kind(value, default):
            raise ValueError(f"parameter {name} must be {type(default).__name__} (its default is {default!r}), "
                             f"got {value!r} ({type(value).__name__})")


def parse_parameters(items: list[str], defaults: dict) -> dict:
    """``NAME=VALUE`` texts → typed values, checked against ``defaults``. VALUE is read as a YAML
    literal, as papermill's ``-p`` does (``7`` an int, ``False`` a bool, ``[1, 2]`` a list), except
    that a string parameter takes the text as typed (``-p LLM=no`` is ``"no"``, not False)."""
    import yaml

    given = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"-p wants NAME=VALUE, got {item!r}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
        if isinstance(defaults.get(name), str) and not isinstance(value, str):
            value = text
        given[name] = value
    check_parameters(given, defaults)
    return given


def ensure_kernel() -> str:
    """Register a Jupyter kernel that runs *this* interpreter (inside its own prefix) and return its
    name, so papermill executes notebooks with the venv that has the package installed. Registering is a
    side effect on the environment, so there is no example; :func:`run` calls it.
    """
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
    """One notebook's row of a run: its ``status`` (``"ok"``, ``"checks failed"`` or ``"error"``), wall
    ``seconds``, the checks passed and failed, the error and the failing cell when it raised, timing
    ``warnings`` and the ``scale`` and ``corpus`` it ran at.

    >>> r = NotebookResult("06_personalized_pagerank", "checks failed", 12.5, 9, 10, ["recall@5"])
    >>> r.checks_total - r.checks_passed, r.failed_checks
    (1, ['recall@5'])
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

    @property
    def ok(self) -> bool:
        """Whether the notebook ran without error and passed every check.

        >>> NotebookResult("00_quickstart", "ok", 3.0).ok, NotebookResult("00_quickstart", "error", 1.0).ok
        (True, False)
        """
        return self.status == "ok"


def run_notebook(path: Path, out: Path, *, parameters: dict, kernel: str, timeout: int,
                 progress: bool = True) -> NotebookResult:
    """Execute one notebook; never raises for a failing notebook, reports it instead.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     r = run_notebook(Path(d) / "99_missing.ipynb", Path(d), parameters={"RESULTS_DIR": d},
    ...                      kernel=KERNEL_NAME, timeout=5, progress=False)
    >>> r.status, r.error.split(":")[0]
    ('error', 'FileNotFoundError')
    """
    import papermill as pm
    from traitlets.config import Config

    exec_dir = out / "notebooks"
    exec_dir.mkdir(parents=True, exist_ok=True)
    checks_file = Path(parameters["RESULTS_DIR"]) / f"{path.stem}.json"
    checks_file.unlink(missing_ok=True)
    # The kernel's connection file lives in `out` (the run's own folder), not the system temp dir,
    # so even a SIGKILLed run leaves nothing behind that the next run does not remove.
    config = Config({"KernelManager": {"connection_file": str(out / f".kernel-{path.stem}.json")}})
    # The kernel starts in exec_dir through nbclient's resources; papermill's cwd= would chdir this whole
    # process, which notebooks running side by side in threads share.
    t0 = time.perf_counter()
    error, cell = "", None
    try:
        pm.execute_notebook(str(path), str(exec_dir / path.name), parameters=parameters, kernel_name=kernel,
                            progress_bar=progress, execution_timeout=timeout, extra_arguments=KERNEL_ARGS,
                            config=config, resources={"metadata": {"path": str(exec_dir)}})
    except pm.PapermillExecutionError as e:
        error = f"{e.ename}: {e.evalue}".strip()[:2000]
        cell = _source_cell_index(path, e.source)
    except Exception as e:  # kernel death, timeout, unreadable notebook: report, keep going
        error = f"{type(e).__name__}: {e}"[:2000]
    seconds = round(time.perf_counter() - t0, 2)
    res = NotebookResult(path.stem, "ok", seconds, error=error, failing_cell=cell,
                         finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         scale=str(parameters.get("SCALE", "")), corpus=str(parameters.get("CORPUS", "world")))
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
            res.error = f"no {checks_file.name} written: the notebook never reached checks.save()"
    return res


def format_table(results: list[NotebookResult]) -> str:
    """The run's results as the plain-text table the command line prints, one row per notebook plus a
    ``↳`` line for its error, failed checks or warnings.

    >>> print(format_table([NotebookResult("06_personalized_pagerank", "checks failed", 12.5, 9, 10, ["recall"])]))
    notebook                         status          checks  seconds
    06_personalized_pagerank         checks failed    9/10      12.5
        ↳ failed checks: recall
    """
    lines = [f"{'notebook':32} {'status':14} {'checks':>7} {'seconds':>8}"]
    for r in results:
        lines.append(f"{r.notebook:32} {r.status:14} {r.checks_passed:>3}/{r.checks_total:<3} {r.seconds:>8.1f}")
        if r.error:
            where = f" (cell {r.failing_cell})" if r.failing_cell is not None else ""
            lines.append(f"    ↳ {r.error.splitlines()[0][:200]}{where}")
        elif r.failed_checks:
            lines.append(f"    ↳ failed checks: {', '.join(r.failed_checks)}")
        lines.extend(f"    ↳ warning: {w}" for w in r.warnings)
    return "\n".join(lines)


def _prepare_out(out: str | Path) -> Path:
    """``out`` resolved and created, or a ValueError saying why it cannot hold a build."""
    path = Path(out).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"output folder {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output folder {path} cannot be created: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"output folder {path} is not writable")
    return path


def _previous_rows(out: Path, ran: set[str]) -> list[NotebookResult]:
    """Rows of the build in ``out`` for notebooks other than those in ``ran``."""
    summary = out / "summary.json"
    if not summary.exists():
        return []
    try:
        rows = json.loads(summary.read_text(encoding="utf-8"))
        names = {f.name for f in fields(NotebookResult)}
        return [NotebookResult(**{k: v for k, v in row.items() if k in names}) for row in rows
                if row["notebook"] not in ran]
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"{summary} is not a build summary ({e}); remove it or run without --only") from None


def _remove_stale_stages(out: Path) -> None:
    """Folders of earlier runs that were killed before they could clean up (their pid is gone)."""
    for stage in [*out.glob(".run-*-*"), *out.glob(".old-*-*")]:
        try:
            os.kill(int(stage.name.rsplit("-", 1)[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(stage, ignore_errors=True)
        except (ValueError, PermissionError):  # not our naming, or another user's live process
            pass


def _commit(stage: Path, out: Path) -> None:
    """Swap the stage's build entries into ``out``, with SIGINT/SIGTERM held off for the few renames
    so a build is never half old, half new."""
    old = stage.with_name(stage.name.replace(".run-", ".old-", 1))
    old.mkdir()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        for name in BUILD_ENTRIES:
            if (out / name).exists():
                (out / name).rename(old / name)
            if (stage / name).exists():
                (stage / name).rename(out / name)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    shutil.rmtree(old)


def _stop_kernels(stage: Path) -> None:
    """Kernels started for this run that are still alive: an interrupt while a kernel starts up
    escapes nbclient's clean-up. They are found by their connection file, which lives in ``stage``."""
    import psutil

    kernels = []
    for child in psutil.Process().children(recursive=True):
        try:
            if str(stage) in " ".join(child.cmdline()):
                kernels.append(child)
                child.terminate()
        except psutil.NoSuchProcess:
            pass
    for k in psutil.wait_procs(kernels, timeout=5)[1]:
        k.kill()


def _interrupt_once():
    """A SIGINT/SIGTERM handler that raises KeyboardInterrupt the first time only: a second Ctrl-C while the
    run stops its kernels must not cut that clean-up short."""
    raised = []

    def handler(signum, frame):
        if not raised:
            raised.append(signum)
            raise KeyboardInterrupt(signal.Signals(signum).name)

    return handler


# Seconds an interrupted run waits for its notebooks' threads once their kernels are stopped.
_WORKER_GRACE_S = 15


def _execute_all(paths: list[Path], jobs: int, run_one, running: dict[int, str], stop_kernels,
                 on_done) -> list[NotebookResult]:
    """``run_one(path)`` for every path, ``jobs`` at a time in worker threads (each notebook has its own
    kernel process, so threads suffice); results in the order of ``paths``, ``on_done(result, finished)``
    called as each one finishes. ``running`` maps the index of each notebook in flight to its stem, for
    the caller's interrupt message (those cut short stay in it). However this returns (done, a signal, an
    error), the kernels of those still busy are stopped with ``stop_kernels()`` until their threads end, or for
    at most ``_WORKER_GRACE_S`` seconds: a thread still waiting then is a daemon and ends with the process."""
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for item in enumerate(paths):
        todo.put(item)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def work():
        while not stop.is_set():
            try:
                i, path = todo.get_nowait()
            except queue.Empty:
                return
            running[i] = path.stem
            try:
                r = run_one(path)
            except BaseException as e:  # run_notebook reports notebook failures; this is our bug: re-raise it
                r = e
            if not stop.is_set():  # once stopped, it stays named as one the interrupt cut short
                del running[i]
            done.put((i, r))

    workers = [threading.Thread(target=work, name=f"notebook-{k}", daemon=True) for k in range(jobs)]
    results: list[NotebookResult | None] = [None] * len(paths)
    try:
        for w in workers:
            w.start()
        for finished in range(1, len(paths) + 1):
            i, r = done.get()
            if isinstance(r, BaseException):
                raise r
            results[i] = r
            on_done(r, finished)
    finally:
        stop.set()
        # A kernel that dies ends its notebook within about a second; one stopped while it started up can
        # leave its client waiting for a reply that never comes (nbclient's start-up timeout, a minute), so
        # the wait is bounded: the kernels are stopped, and the daemon worker ends with the process.
        give_up = time.monotonic() + _WORKER_GRACE_S
        while any(w.is_alive() for w in workers) and time.monotonic() < give_up:
            stop_kernels()
            for w in workers:
                w.join(timeout=0.5)
    return results


def run(only: list[str] | None = None, *, scale: str = "class", out: str | Path = "build",
        notebooks: str | Path | None = None, timeout: int = 600, html_report: bool = True,
        progress: bool = True, extra_parameters: dict | None = None, jobs: int | None = None) -> list[NotebookResult]:
    """Execute the series (or ``only`` some notebooks), ``jobs`` at once (default :func:`default_jobs`), and
    write the build folder; see module doc.

    Everything that can be checked is checked before a kernel starts: the notebooks, the
    parameters (names and types against the parameters cells), the scale and the output folder.
    Raises :class:`Interrupted` on SIGINT/SIGTERM, after removing this run's partial folder. The
    example shows the checks that fail before a kernel starts:

    >>> run(scale="huge")
    Traceback (most recent call last):
    ValueError: unknown scale 'huge'; expected one of ['class', 'large', 'tiny', 'ci']
    >>> run(extra_parameters={"RESULTS_DIR": "elsewhere"})
    Traceback (most recent call last):
    ValueError: RESULTS_DIR is set by the runner (checks go to <out>/checks); choose --out instead
    >>> run(jobs=0)
    Traceback (most recent call last):
    ValueError: --jobs wants a positive number of notebooks to run at once, got 0
    """
    from tqdm.auto import tqdm

    from ..data.records import resolve_scale

    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"--jobs wants a positive number of notebooks to run at once, got {jobs!r}")
    paths = list_notebooks(notebooks, only)
    if not paths:
        raise ValueError(f"no notebooks named NN_name.ipynb in {notebooks or notebooks_dir()}")
    extra = dict(extra_parameters or {})
    if "RESULTS_DIR" in extra:
        raise ValueError("RESULTS_DIR is set by the runner (checks go to <out>/checks); choose --out instead")
    check_parameters(extra, notebook_parameters(paths))
    params = {"SCALE": scale, "STRICT": True, **extra}
    resolve_scale(params["SCALE"])  # fail early on a typo
    out = _prepare_out(out)
    kept = _previous_rows(out, {p.stem for p in paths}) if only else []
    _remove_stale_stages(out)
    kernel = ensure_kernel()

    stage = out / f".run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    try:
        stage.mkdir()
    except OSError as e:
        raise ValueError(f"output folder {out} is not writable: {e.strerror}") from None
    params["RESULTS_DIR"] = str(stage / "checks")
    main_thread = threading.current_thread() is threading.main_thread()
    # Our own handlers: SIGTERM stops the run as Ctrl-C does, in the main thread, which waits on the workers
    # (nbclient's asyncio runs in theirs); a second signal does not cut the kernels' clean-up short.
    handler = _interrupt_once()
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}
    # Kernel trouble is reported per notebook in the results; the libraries' own log lines (e.g. nbclient's
    # "Kernel died while waiting for execute reply" when an interrupt stops a kernel) would only add noise.
    quiet = {name: logging.getLogger(name).level for name in _LIBRARY_LOGGERS}
    for name in quiet:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    jobs = min(jobs or default_jobs(), len(paths))
    running: dict[int, str] = {}
    finished, doing = 0, "running"
    bar = tqdm(total=len(paths), desc="notebooks", unit="nb", disable=not progress)

    def report(r: NotebookResult, n: int) -> None:
        nonlocal finished
        finished = n
        bar.update(1)
        if progress and jobs > 1:  # they finish out of order: one line each says which
            bar.write(f"[{n}/{len(paths)}] {r.notebook} {r.status} in {r.seconds:.1f} s", file=sys.stderr)

    def run_one(path: Path) -> NotebookResult:
        # papermill's per-cell bar only when one notebook runs at a time: several would overwrite each other
        return run_notebook(path, stage, parameters=params, kernel=kernel, timeout=timeout,
                            progress=progress and jobs == 1)

    try:
        results = _execute_all(paths, jobs, run_one, running, lambda: _stop_kernels(stage), report)
        doing = "writing the build"
        for r in kept:  # an --only run carries the other notebooks' files over with their rows
            for sub, suffix in (("notebooks", ".ipynb"), ("checks", ".json"), ("html", ".html")):
                if (out / sub / f"{r.notebook}{suffix}").exists():
                    (stage / sub).mkdir(exist_ok=True)
                    shutil.copy2(out / sub / f"{r.notebook}{suffix}", stage / sub)
        rows = sorted(kept + results, key=lambda r: r.notebook)
        (stage / "summary.json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n",
                                            encoding="utf-8")
        if html_report:
            doing = "rendering HTML"
            render_html(stage, rows)
        _commit(stage, out)
    except KeyboardInterrupt as e:
        _stop_kernels(stage)
        if doing == "running":
            doing = "running " + (", ".join(running[i] for i in sorted(running)) or "the notebooks")
        raise Interrupted(f"interrupted by {str(e) or 'SIGINT'} while {doing} ({finished}/{len(paths)} notebooks "
                          f"finished); {out} keeps its previous build") from None
    finally:
        bar.close()
        shutil.rmtree(stage, ignore_errors=True)
        for sig, old in previous.items():
            signal.signal(sig, old)
        for name, level in quiet.items():
            logging.getLogger(name).setLevel(level)
    return results
