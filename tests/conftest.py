import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import settings

from cookbook import data as datasets

# Reproducible property tests: the same examples on every run and machine (CI included).
settings.register_profile("cookbook", derandomize=True, database=None)
settings.load_profile("cookbook")
# derandomize alone no longer gives that: Hypothesis (6.1xx) also draws the literal constants of every local module
# imported so far (providers._get_local_constants), and under pytest-xdist which modules a worker has imported
# depends on which tests it was handed (a fresh clone's run drew a 3-node case no local run had). So no local
# constants: the pool as it is before any module is scanned (empty; reading the sources here would be slow, and
# Hypothesis warns). If a Hypothesis release drops these names, there is nothing to freeze.
try:
    from hypothesis.internal.conjecture import providers as _providers

    _frozen = _providers._local_constants
    _providers._get_local_constants = lambda: _frozen
except (ImportError, AttributeError):
    pass

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def tiny_world():
    return datasets.make_world(scale="tiny")


@pytest.fixture(scope="session")
def class_world():
    return datasets.load_world("class")


@pytest.fixture(scope="session")
def tiny_pipeline(tiny_world):
    """The tiny world's mentions, entity graph and community hierarchy (max 6 members per community)."""
    from cookbook.index import extract, graph, hierarchy

    ms = extract.gazetteer_mentions(tiny_world.documents, tiny_world.gazetteer())
    g = graph.cooccurrence_graph(ms, tiny_world.documents, tiny_world.entities)
    return tiny_world, ms, g, hierarchy.hierarchical_leiden(g, max_cluster_size=6, seed=7)


def pytest_collection_modifyitems(session, config, items):
    """Tests that read work started with the session (a ``ci_series`` build, a ``background`` run) go last, in
    their order: the tests that need nothing run first, while that work proceeds beside them."""
    waits = [any(item.get_closest_marker(m) for m in ("ci_series", "background")) for item in items]
    items[:] = [i for i, w in zip(items, waits) if not w] + [i for i, w in zip(items, waits) if w]



def pytest_configure(config):
    """Register the series' Jupyter kernel once, before any test or xdist worker starts one: workers and builds
    starting side by side would otherwise race to write the same kernelspec."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    try:
        from cookbook.run.kernels import ensure_kernel
    except ImportError:  # the notebooks extra is absent: no test here starts a kernel anyway
        return
    ensure_kernel()


def series_command(out: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "cookbook", "run", "--scale", "ci", "--out", str(out), "--quiet", *extra]


def run_series(out: Path, *extra, env: dict | None = None) -> subprocess.CompletedProcess:
    """``cookbook run --scale ci --out OUT --quiet EXTRA…`` in a process of its own (``env`` replaces the
    environment when given)."""
    return subprocess.run(series_command(out, *extra), cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=1800)


def series_args(corpus: str) -> list[str]:
    """The arguments of a test build on ``corpus`` alone (a run covers both corpora unless told): no HTML."""
    return ["--no-html", "--corpus", corpus]


class BackgroundRun:
    """A subprocess started now and read later: ``result()`` waits for it and returns its ``CompletedProcess``
    (stdout and stderr go to files in ``folder``: a pipe nobody reads would fill and block it); ``stop()`` ends
    it. ``on_exit`` runs once, after the process ended (a fake server's shutdown); ``server`` is kept for the
    test to read. Once it ended, ``folder/done.json`` holds its exit code and what ``server`` received, so that
    a test in another process (an xdist worker) reads it as :class:`FinishedRun`."""

    def __init__(self, argv, folder: Path, *, env=None, on_exit=None, server=None):
        self.folder, self.on_exit, self.server, self.cpu_s = folder, on_exit, server, None
        self.started = time.time()
        with open(folder / "stdout.txt", "w") as so, open(folder / "stderr.txt", "w") as se:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=so, stderr=se, env=env, text=True)

    def _exited(self, error: str = ""):
        on_exit, self.on_exit = self.on_exit, None
        try:
            if on_exit is not None:
                on_exit()
        except BaseException as e:
            error = error or f"after it ended: {type(e).__name__}: {e}"
            raise
        finally:
            if not (self.folder / "done.json").exists():
                server = self.server and {"url": self.server.url, "n": self.server.n,
                                          "requests": self.server.requests}
                _write_done(self.folder, {"argv": self.proc.args, "returncode": self.proc.returncode,
                                          "cpu_s": self.cpu_s, "started": self.started,
                                          "seconds": round(time.time() - self.started, 1), "server": server,
                                          "error": error})

    def _wait(self, timeout: float = 1800):
        """Wait for the process and keep the CPU seconds (user + system) of its whole tree, kernels included,
        for ``done.json``'s ``cpu_s``."""
        give_up = time.monotonic() + timeout
        while self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by a poll() in another thread: Popen knows its exit code
                self.proc.wait()
                break
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_s = round(usage.ru_utime + usage.ru_stime, 1)
            elif time.monotonic() > give_up:
                raise subprocess.TimeoutExpired(self.proc.args, timeout)
            else:
                time.sleep(0.1)

    def result(self) -> subprocess.CompletedProcess:
        self._wait()
        self._exited()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode,
                                           (self.folder / "stdout.txt").read_text(),
                                           (self.folder / "stderr.txt").read_text())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
            self._exited("stopped: the test session that started it ended first")
        self._exited()


def _write_done(folder: Path, record: dict) -> None:
    tmp = folder / "done.json.tmp"
    tmp.write_text(json.dumps(record))
    tmp.replace(folder / "done.json")  # whole or absent for a reader in another process


class FinishedRun:
    """A :class:`BackgroundRun` that ended, read from its folder in any process: ``folder``, ``result()`` (the
    ``CompletedProcess``), ``server`` (``url``, ``n`` and ``requests`` of its fake server, or None)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.record = json.loads((folder / "done.json").read_text())
        if self.record["error"] and self.record.get("argv") is None:
            raise RuntimeError(f"{folder.name} did not start: {self.record['error']}")
        self.server = SimpleNamespace(**self.record["server"]) if self.record["server"] else None

    def result(self) -> subprocess.CompletedProcess:
        if self.record["error"]:
            raise RuntimeError(f"{self.folder.name}: {self.record['error']}")
        return subprocess.CompletedProcess(self.record["argv"], self.record["returncode"],
                                           (self.folder / "stdout.txt").read_text(),
                                           (self.folder / "stderr.txt").read_text())


# Runs a test may read the result of, started side by side with the session (``background(name)`` mark): name →
# start(folder) → BackgroundRun. A slow subprocess whose result only its test reads belongs here; a test module
# may add its own at import (collection comes before the session starts them). A start function may wait for
# another run first with ``finished(name)`` (its ``after`` attribute names them, so that no worker waits idle for
# them: a run is taken up once those it comes after have finished). A start function whose ``first`` attribute is
# true is taken up before the others: a long run of one process, which the other runs' kernels go beside.
def _bench_quick(out: Path) -> BackgroundRun:
    return BackgroundRun([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick", "--out", str(out)], out)


_bench_quick.first = True  # one process, the longest run of the session: the builds' kernels go beside it
BACKGROUND = {"bench-quick": _bench_quick}


def _ci_build(corpus: str, hashseed: int, stems: set[str | None]):
    """The start of a build of the series at SCALE="ci" on ``corpus`` into ``folder/build``: the notebooks named
    (all of them when None is among ``stems``), no HTML, PYTHONHASHSEED in the kernels, ``--jobs`` every core."""
    only = [] if None in stems else ["--only", *sorted(stems)]

    def start(folder: Path) -> BackgroundRun:
        return BackgroundRun(series_command(folder / "build", *series_args(corpus), *only), folder,
                             env={**os.environ, "PYTHONHASHSEED": str(hashseed)})
    return start


class SharedRuns:
    """Slow runs started with the session and read by its tests, each run once whatever the number of xdist
    workers: every worker's threads take the runs in ``starts``' order, each claiming one by creating its folder
    under ``root`` (a folder all workers share), and a test waits for ``done.json`` there, whichever worker
    started it. ``threads`` runs at most at once in this process."""

    _session: "SharedRuns | None" = None

    def __init__(self, root: Path, starts: dict, threads: int):
        self.root, self.starts = root, starts
        root.mkdir(exist_ok=True)
        self.lock, self.mine, self.stopping = threading.Lock(), [], False
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="shared-runs")
        for _ in range(threads if starts else 0):
            self.pool.submit(self._work)
        SharedRuns._session = self

    def _ready(self, name) -> bool:
        return all((self.root / a / "done.json").exists() for a in getattr(self.starts[name], "after", ()))

    def _claim(self):
        """The next run nobody took whose predecessors finished, claimed; None when every run is taken."""
        while True:
            waiting = False
            for name in self.starts:
                if (self.root / name).exists():
                    continue
                if not self._ready(name):
                    waiting = True
                    continue
                try:
                    (self.root / name).mkdir()
                except FileExistsError:  # another worker or thread took it first
                    continue
                return name
            if not waiting:
                return None
            time.sleep(0.2)

    def _work(self):
        while not self.stopping:
            name = self._claim()
            if name is None:
                return
            folder = self.root / name
            with self.lock:
                try:
                    if self.stopping:
                        raise RuntimeError("the test session ended first")
                    run = self.starts[name](folder)
                except BaseException as e:  # a reader in any worker must learn it, not wait for it
                    _write_done(folder, {"argv": None, "returncode": None, "server": None,
                                         "error": f"{type(e).__name__}: {e}"})
                    continue
                self.mine.append(run)
            try:
                run.result()
            except BaseException:
                run.stop()

    def finished(self, name: str, timeout: float = 1800) -> FinishedRun:
        """The run ``name`` once it ended (waiting for it)."""
        done = self.root / name / "done.json"
        give_up = time.monotonic() + timeout
        while not done.exists():
            if time.monotonic() > give_up:
                raise TimeoutError(f"{name} did not finish within {timeout:.0f} s")
            time.sleep(0.2)
        return FinishedRun(self.root / name)

    def close(self, wait: bool):
        """Take no more runs; let those this process started finish (``wait``: tests in other workers may read
        them) or stop them."""
        with self.lock:
            self.stopping = True
        for run in self.mine:
            if wait:
                try:
                    run.result()
                except BaseException:
                    run.stop()
            else:
                run.stop()
        self.pool.shutdown(wait=True)
        SharedRuns._session = None


def finished(name: str) -> FinishedRun:
    """The session's shared run ``name`` once it ended: for a start function that needs another run's result."""
    return SharedRuns._session.finished(name)


def _wanted_builds(items) -> dict[tuple[str, int], set[str | None]]:
    wanted: dict[tuple[str, int], set[str | None]] = {}
    for item in items:
        for mark in item.iter_markers("ci_series"):
            key = (mark.args[0], mark.kwargs.get("hashseed", 0))
            wanted.setdefault(key, set()).add(mark.args[1] if len(mark.args) > 1 else None)
    return wanted


@pytest.fixture(scope="session", autouse=True)
def _shared_runs(request, tmp_path_factory):
    """Every run the session's selected tests name, in a ``ci_series(corpus, stem, hashseed=0)`` mark (a build of
    the series at SCALE="ci", see :func:`_ci_build`) or a ``background(name)`` mark (a :data:`BACKGROUND` entry),
    started from the session's first test on so that they overlap the tests that need none: those marked
    ``first`` (the quick benchmarks), the builds (the world, whose tests run first, then the others; the rerun
    last), then the background runs in the order their tests run. Two run at once at most, whatever the number of
    xdist workers; each is run once (see :class:`SharedRuns`). A session that ends early stops those it started
    (SIGTERM: the runner stops its kernels); an xdist worker that ran out of tests lets them finish, for the
    others'."""
    items = request.session.items
    builds = _wanted_builds(items)
    starts = {f"ci-{corpus}-{seed}": _ci_build(corpus, seed, builds[corpus, seed])
              for corpus, seed in sorted(builds, key=lambda k: (k[1], k[0] != "world", k[0]))}
    for name in dict.fromkeys(m.args[0] for item in items for m in item.iter_markers("background")):
        starts[name] = BACKGROUND[name]
    starts = dict(sorted(starts.items(), key=lambda kv: not getattr(kv[1], "first", False)))  # stable
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    base = tmp_path_factory.getbasetemp()
    runs = SharedRuns((base.parent if worker else base) / "shared-runs", starts, threads=max(1, 2 // workers))
    yield runs
    session = request.session
    runs.close(wait=bool(worker) and not (session.shouldfail or session.shouldstop))


@pytest.fixture(scope="session")
def background(_shared_runs):
    """``background(name)`` → the :class:`FinishedRun` of that :data:`BACKGROUND` entry, waiting for it; the test
    must carry the matching ``background`` mark."""

    def get(name: str) -> FinishedRun:
        if name not in _shared_runs.starts:
            raise LookupError(f"{name!r} was not started: mark the test @pytest.mark.background({name!r})")
        return _shared_runs.finished(name)

    return get


@pytest.fixture(scope="session")
def ci_series(_shared_runs):
    """``ci_series(corpus, hashseed=0)`` → (build folder, finished ``cookbook run``) of the session's build
    (see ``_shared_runs``), waiting for it; the test must carry the matching ``ci_series`` mark."""

    def get(corpus: str, hashseed: int = 0):
        name = f"ci-{corpus}-{hashseed}"
        if name not in _shared_runs.starts:
            raise LookupError(f"no build of {corpus} with hash seed {hashseed}: mark the test "
                              f"@pytest.mark.ci_series({corpus!r}, hashseed={hashseed})")
        run = _shared_runs.finished(name)
        return run.folder / "build", run.result()

    return get
