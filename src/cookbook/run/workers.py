"""A run's notebooks executed side by side, and stopped cleanly: worker threads (each notebook has a kernel
process of its own, so threads suffice), a signal handler that interrupts once, and the kernels found and
stopped by their connection files when a run is cut short. :func:`cookbook.run.runner.run` uses them.

>>> execute_all(["a", "b", "c"], 2, str.upper, {}, lambda: None, lambda result, finished: None)
['A', 'B', 'C']
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["WORKER_GRACE_S", "execute_all", "interrupt_once", "stop_kernels"]

# Seconds an interrupted run waits for its notebooks' threads once their kernels are stopped.
WORKER_GRACE_S = 15


def stop_kernels(stage: Path) -> None:
    """Stop the kernels started for this run that are still alive (an interrupt while a kernel starts up
    escapes nbclient's clean-up): the child processes whose command line names ``stage``, where their
    connection files live; terminated, then killed after 5 s.

    >>> stop_kernels(Path("/no/such/stage"))  # no kernel of that stage: nothing to stop
    """
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


def interrupt_once() -> Callable:
    """A SIGINT/SIGTERM handler that raises KeyboardInterrupt the first time only: a second Ctrl-C while the
    run stops its kernels must not cut that clean-up short.

    >>> handler = interrupt_once()
    >>> try:
    ...     handler(signal.SIGTERM, None)
    ... except KeyboardInterrupt as e:
    ...     print("raised", e)
    raised SIGTERM
    >>> handler(signal.SIGINT, None)  # the second signal is ignored
    """
    raised = []

    def handler(signum, frame):
        if not raised:
            raised.append(signum)
            raise KeyboardInterrupt(signal.Signals(signum).name)

    return handler


def execute_all(items: list, jobs: int, run_one: Callable, running: dict[int, str], stop: Callable,
                on_done: Callable) -> list:
    """``run_one(item)`` for every one of ``items``, ``jobs`` at a time in worker threads; results in the order
    of ``items``, ``on_done(result, finished)`` called as each one finishes. ``running`` maps the index of each
    item in flight to its name (``item.name``, or the item), for the caller's interrupt message (those cut short
    stay in it). However this returns (done, a signal, an error raised by ``run_one``, which is re-raised), the
    kernels of those still busy are stopped with ``stop()`` until their threads end, or for at most
    :data:`WORKER_GRACE_S` seconds: a thread still waiting then is a daemon and ends with the process.

    >>> finished = []
    >>> execute_all([3, 1, 2], 3, lambda n: time.sleep(n / 20) or n, {}, lambda: None,
    ...             lambda result, n: finished.append(result))
    [3, 1, 2]
    >>> finished  # in the order they finished
    [1, 2, 3]
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:  # no worker would take the items
        raise ValueError(f"jobs wants a positive number of items to run at once, got {jobs!r}")
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for entry in enumerate(items):
        todo.put(entry)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stopping = threading.Event()

    def work():
        while not stopping.is_set():
            try:
                i, item = todo.get_nowait()
            except queue.Empty:
                return
            running[i] = str(getattr(item, "name", item))
            try:
                r = run_one(item)
            except BaseException as e:  # run_notebook reports notebook failures; this is our bug: re-raise it
                r = e
            if not stopping.is_set():  # once stopped, it stays named as one the interrupt cut short
                del running[i]
            done.put((i, r))

    workers = [threading.Thread(target=work, name=f"notebook-{k}", daemon=True) for k in range(jobs)]
    results: list = [None] * len(items)
    try:
        for w in workers:
            w.start()
        for finished in range(1, len(items) + 1):
            i, r = done.get()
            if isinstance(r, BaseException):
                raise r
            results[i] = r
            on_done(r, finished)
    finally:
        stopping.set()
        # A kernel that dies ends its notebook within about a second; one stopped while it started up can
        # leave its client waiting for a reply that never comes (nbclient's start-up timeout, a minute), so
        # the wait is bounded: the kernels are stopped, and the daemon worker ends with the process.
        give_up = time.monotonic() + WORKER_GRACE_S
        while any(w.is_alive() for w in workers) and time.monotonic() < give_up:
            stop()
            for w in workers:
                w.join(timeout=0.5)
    return results
