"""The kernels a run executes its notebooks in: the Jupyter kernel of this interpreter (:func:`ensure_kernel`),
and the environment each one starts with, given to the kernel alone (:func:`kernel_env`, :func:`kernel_manager`):
a run never sets a variable in its own process, so a caller that runs the series in-process keeps its environment
as it was, even while the run is under way. :func:`cookbook.run.runner.run_notebook` uses them.

>>> env = kernel_env(4, 2, base={})
>>> env["COOKBOOK_PROGRESS"], env["OPENBLAS_NUM_THREADS"]
('0', '1')
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from .._validate import integer

__all__ = ["BLAS_THREAD_VARIABLES", "KERNEL_ARGS", "KERNEL_NAME", "default_jobs", "ensure_kernel", "kernel_env",
           "kernel_manager"]

KERNEL_NAME = "graphrag-cookbook"
# The kernel logs a transport warning at every start and "KeyboardInterrupt caught in kernel" when
# jupyter_client interrupts it during an ordinary shutdown; errors in notebook code reach the
# executed notebook, not this log, so only critical kernel failures are worth printing.
KERNEL_ARGS = ["--IPKernelApp.log_level=CRITICAL"]

# The thread counts numpy's BLAS (OpenBLAS, MKL) and OpenMP read when a kernel imports them.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def default_jobs() -> int:
    """How many notebooks a run executes at once unless told: the CPU cores this process may use.

    >>> default_jobs() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity masks
        return os.cpu_count() or 1


def ensure_kernel() -> str:
    """Register a Jupyter kernel that runs *this* interpreter (inside its own prefix) and return its
    name, so papermill executes notebooks with the venv that has the package installed. Registering is a
    side effect on the environment, so there is no example; :func:`cookbook.run.runner.run` calls it.
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


def kernel_env(jobs: int, cores: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a run's kernels start with, beyond ``base`` (default this process's environment, which is
    only read): ``COOKBOOK_PROGRESS=0`` (a build's pages carry results, not the steps' progress bars; the run
    has its own) and ``cores // jobs`` BLAS threads each (at least 1: ``jobs`` kernels side by side, each with a
    BLAS thread per core, would share the cores several times over; measured, a Factbook dense search 10.8 ms that
    way, 0.7 ms with one thread, on a loaded 2-core machine). A variable set in ``base`` is the user's and wins.

    >>> kernel_env(2, 8, base={"MKL_NUM_THREADS": "7", "COOKBOOK_PROGRESS": "1"})
    {'OPENBLAS_NUM_THREADS': '4', 'OMP_NUM_THREADS': '4'}
    """
    base = os.environ if base is None else base
    threads = str(max(1, integer(cores, "cores") // integer(jobs, "jobs")))
    ours = {"COOKBOOK_PROGRESS": "0", **dict.fromkeys(BLAS_THREAD_VARIABLES, threads)}
    return {k: v for k, v in ours.items() if k not in base}


@functools.cache
def _manager_class():
    """The kernel manager class, made once on first use (jupyter_client is the ``notebooks`` extra)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Dict

    class EnvKernelManager(AsyncKernelManager):
        """jupyter_client's kernel manager, starting its kernel with this process's environment and
        ``kernel_env`` (a configurable dict) over it; this process's own environment is never changed."""

        kernel_env = Dict(config=True, help="variables the kernel starts with, over this process's environment")

        async def start_kernel(self, **kw):
            kw["env"] = {**os.environ, **kw.get("env", {}), **self.kernel_env}
            return await super().start_kernel(**kw)

    return EnvKernelManager


def kernel_manager(env: Mapping[str, str]):
    """``(manager class, config)`` for papermill: its ``kernel_manager_class``, a jupyter_client
    ``AsyncKernelManager`` that starts the kernel with ``env`` over this process's environment (passed to the
    kernel's process, never set here), and the traitlets config section that gives it ``env`` (merge it into
    the run's config).

    >>> cls, config = kernel_manager({"COOKBOOK_PROGRESS": "0"})
    >>> cls.__name__, dict(config["EnvKernelManager"])
    ('EnvKernelManager', {'kernel_env': {'COOKBOOK_PROGRESS': '0'}})
    """
    from traitlets.config import Config

    return _manager_class(), Config({"EnvKernelManager": {"kernel_env": dict(env)}})
