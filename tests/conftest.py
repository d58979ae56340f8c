import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import settings

from cookbook import data as datasets

# Reproducible property tests: the same examples on every run and machine (CI included).
settings.register_profile("cookbook", derandomize=True, database=None)
settings.load_profile("cookbook")

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


def series_command(out: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "cookbook", "run", "--scale", "ci", "--out", str(out), "--quiet", *extra]


def run_series(out: Path, *extra, env: dict | None = None) -> subprocess.CompletedProcess:
    """``cookbook run --scale ci --out OUT --quiet EXTRA…`` in a process of its own (``env`` replaces the
    environment when given)."""
    return subprocess.run(series_command(out, *extra), cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=1800)


@pytest.fixture(scope="session", autouse=True)
def _ci_builds(request, tmp_path_factory):
    """(corpus, hash seed) → future of (build folder, finished run) for every build of the series at SCALE="ci"
    that the session's selected tests name in a ``ci_series(corpus, stem, hashseed=0)`` mark: the notebooks
    named (all of them for a mark without a stem), no HTML, PYTHONHASHSEED in the kernels. They run one after
    another in a background thread from the session's first test on, each with ``--jobs`` (every core), so
    they overlap the tests that need none; a session that ends early stops them (SIGTERM: the runner stops
    its kernels)."""
    wanted: dict[tuple[str, int], set[str | None]] = {}
    for item in request.session.items:
        for mark in item.iter_markers("ci_series"):
            key = (mark.args[0], mark.kwargs.get("hashseed", 0))
            wanted.setdefault(key, set()).add(mark.args[1] if len(mark.args) > 1 else None)
    lock, procs, stopping = threading.Lock(), [], []

    def build(key, out):
        corpus, hashseed = key
        only = [] if None in wanted[key] else ["--only", *sorted(wanted[key])]
        with lock:
            if stopping:
                raise RuntimeError("the test session ended first")
            proc = subprocess.Popen(series_command(out, *series_args(corpus), *only), cwd=ROOT, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env={**os.environ, "PYTHONHASHSEED": str(hashseed)})
            procs.append(proc)
        stdout, stderr = proc.communicate(timeout=1800)
        return out, subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ci-series")
    # the world first: the first notebook test reads it; the rerun last: only the determinism test does
    order = sorted(wanted, key=lambda k: (k[1], k[0] != "world", k[0]))
    futures = {key: pool.submit(build, key, tmp_path_factory.mktemp(f"ci-{key[0]}-{key[1]}")) for key in order}
    yield futures
    with lock:
        stopping.append(True)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    pool.shutdown(wait=True)


class BackgroundRun:
    """A subprocess started now and read later: ``result()`` waits for it and returns its ``CompletedProcess``
    (stdout and stderr go to files in ``folder``: a pipe nobody reads would fill and block it); ``stop()`` ends
    it. ``on_exit`` runs once, after the process ended (a fake server's shutdown); ``server`` is kept for the
    test to read."""

    def __init__(self, argv, folder: Path, *, env=None, on_exit=None, server=None):
        self.folder, self.on_exit, self.server = folder, on_exit, server
        with open(folder / "stdout.txt", "w") as so, open(folder / "stderr.txt", "w") as se:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=so, stderr=se, env=env, text=True)

    def _exited(self):
        if self.on_exit is not None:
            self.on_exit()
            self.on_exit = None

    def result(self) -> subprocess.CompletedProcess:
        self.proc.wait(timeout=1800)
        self._exited()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode,
                                           (self.folder / "stdout.txt").read_text(),
                                           (self.folder / "stderr.txt").read_text())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        self._exited()


# Runs a test may read the result of, started side by side with the session (``background(name)`` mark): name →
# start(folder) → BackgroundRun. A slow subprocess whose result only its test reads belongs here; a test module
# may add its own at import (collection comes before the session starts them).
BACKGROUND = {
    "bench-quick": lambda out: BackgroundRun([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick",
                                              "--out", str(out)], out),
}


@pytest.fixture(scope="session", autouse=True)
def _background(request, tmp_path_factory):
    """name → future of the finished :class:`BackgroundRun` for every :data:`BACKGROUND` run that the session's
    selected tests name in a ``background(name)`` mark. They run one after another in a thread of their own from
    the session's first test on (beside the ci builds' thread: two background runs at most, whatever their
    number), so that they overlap the tests that need none; a session that ends first stops them."""
    # in the order the tests that read them run
    names = list(dict.fromkeys(m.args[0] for item in request.session.items for m in item.iter_markers("background")))
    lock, started, stopping = threading.Lock(), [], []

    def run(name, folder):
        with lock:
            if stopping:
                raise RuntimeError("the test session ended first")
            started.append(BACKGROUND[name](folder))
        started[-1].result()
        return started[-1]

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background")
    futures = {name: pool.submit(run, name, tmp_path_factory.mktemp(name)) for name in names}
    yield futures
    with lock:
        stopping.append(True)
    pool.shutdown(wait=False, cancel_futures=True)
    for r in started:
        r.stop()
    pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def background(_background):
    """``background(name)`` → the finished :class:`BackgroundRun` of that :data:`BACKGROUND` entry, waiting for
    it; the test must carry the matching ``background`` mark."""

    def get(name: str) -> BackgroundRun:
        if name not in _background:
            raise LookupError(f"{name!r} was not started: mark the test @pytest.mark.background({name!r})")
        return _background[name].result()

    return get


def series_args(corpus: str) -> list[str]:
    """The arguments of a test build on ``corpus`` alone (a run covers both corpora unless told): no HTML."""
    return ["--no-html", "--corpus", corpus]


@pytest.fixture(scope="session")
def ci_series(_ci_builds):
    """``ci_series(corpus, hashseed=0)`` → (build folder, finished ``cookbook run``) of the session's build
    (see ``_ci_builds``), waiting for it; the test must carry the matching ``ci_series`` mark."""

    def get(corpus: str, hashseed: int = 0):
        if (corpus, hashseed) not in _ci_builds:
            raise LookupError(f"no build of {corpus} with hash seed {hashseed}: mark the test "
                              f"@pytest.mark.ci_series({corpus!r}, hashseed={hashseed})")
        return _ci_builds[corpus, hashseed].result()

    return get
