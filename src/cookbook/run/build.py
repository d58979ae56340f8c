"""The build folder a run writes (``--out``): what a run owns there, and how it never loses anyone's work.

A run owns :data:`BUILD_ENTRIES` in ``--out`` and nothing else (``bench/``, screenshots, a user's files are
never touched). It marks a folder as a build with :data:`MARKER` when it first writes one, and refuses an
``--out`` that already holds ``notebooks/``, ``html/`` or ``checks/`` without that marker: those are someone
else's (a thesis folder, the repository itself), and replacing them would delete them. The series' own
``notebooks/`` folder can never be an output. One run writes to a folder at a time (:class:`BuildLock`); a
run stages everything in ``<out>/.run-<time>-<pid>`` and swaps it in only when it has finished
(:func:`commit`), so an interrupted run leaves the previous build as it was.

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as d:
...     (Path(d) / "notebooks").mkdir()
...     prepare_out(d)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: .../notebooks is not a build of this series (no .cookbook-build marker in ...): refusing to ...
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import time
from pathlib import Path

__all__ = ["BUILD_ENTRIES", "MARKER", "BuildLock", "commit", "prepare_out", "previous_rows", "remove_stale_stages"]

# What a run owns under --out; anything else there (bench/, screenshots) is never touched.
BUILD_ENTRIES = ("notebooks", "checks", "html", "summary.json", "index.html")
# Folders a run would replace: without the marker beside them they are not a build's, and stay.
OWNED_FOLDERS = ("notebooks", "html", "checks")
MARKER = ".cookbook-build"
LOCK = ".cookbook-build.lock"


def prepare_out(out: str | Path, *, sources: Path | None = None) -> Path:
    """``out`` resolved and created, or a ``ValueError`` saying why it cannot hold a build: not a folder, not
    writable, holding ``notebooks/``, ``html/`` or ``checks/`` that no run made (no :data:`MARKER`), or
    ``out/notebooks`` being the folder the notebooks are read from (``sources``).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     prepare_out(Path(d) / "build").name
    'build'
    """
    path = Path(out).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"output folder {path} exists and is not a folder")
    if sources is not None and (path / "notebooks").resolve() == Path(sources).resolve():
        raise ValueError(f"--out {path} would write over the series' own notebooks ({sources}); choose another --out")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output folder {path} cannot be created: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"output folder {path} is not writable")
    if not (path / MARKER).is_file() and not _older_build(path):
        foreign = [path / name for name in OWNED_FOLDERS if (path / name).exists()]
        if foreign:
            raise ValueError(f"{foreign[0]} is not a build of this series (no {MARKER} marker in {path}): refusing "
                             "to replace it; choose another --out")
    return path


def _older_build(path: Path) -> bool:
    """Whether ``path`` holds a build written before builds carried the marker: its ``summary.json`` is a
    list of this runner's rows (each with a notebook and a status)."""
    try:
        rows = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(rows, list) and bool(rows) and all(isinstance(r, dict) and {"notebook", "status"} <= r.keys()
                                                         for r in rows)


def previous_rows(out: Path, ran: set[str]) -> list[dict]:
    """The summary rows of the build in ``out`` for notebooks other than those in ``ran`` (an ``--only`` run
    keeps them), or a ``ValueError`` when the summary cannot be read.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "summary.json").write_text('[{"notebook": "00_quickstart"}, {"notebook": "01_x"}]')
    ...     previous_rows(Path(d), {"01_x"})
    [{'notebook': '00_quickstart'}]
    """
    summary = out / "summary.json"
    if not summary.exists():
        return []
    try:
        rows = json.loads(summary.read_text(encoding="utf-8"))
        return [row for row in rows if row["notebook"] not in ran]
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"{summary} is not a build summary ({e}); remove it or run without --only") from None


def remove_stale_stages(out: Path) -> None:
    """Folders of earlier runs that were killed before they could clean up (their pid is gone).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     (Path(d) / f".run-20240101-000000-{2**22 + 1}").mkdir()  # no such process
    ...     remove_stale_stages(Path(d))
    ...     list(Path(d).iterdir())
    []
    """
    for stage in [*out.glob(".run-*-*"), *out.glob(".old-*-*")]:
        try:
            os.kill(int(stage.name.rsplit("-", 1)[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(stage, ignore_errors=True)
        except (ValueError, PermissionError):  # not our naming, or another user's live process
            pass


def commit(stage: Path, out: Path) -> None:
    """Swap the stage's build entries into ``out`` and mark ``out`` as a build, with SIGINT/SIGTERM held off
    for the few renames so a build is never half old, half new.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = Path(d); stage = out / ".run-1-1"; (stage / "checks").mkdir(parents=True)
    ...     commit(stage, out)
    ...     sorted(p.name for p in out.iterdir())
    ['.cookbook-build', '.run-1-1', 'checks']
    """
    old = stage.with_name(stage.name.replace(".run-", ".old-", 1))
    old.mkdir()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        (out / MARKER).write_text(json.dumps({"made_by": "graphrag-cookbook", "entries": list(BUILD_ENTRIES)}) + "\n")
        for name in BUILD_ENTRIES:
            if (out / name).exists():
                (out / name).rename(old / name)
            if (stage / name).exists():
                (stage / name).rename(out / name)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    shutil.rmtree(old)


class BuildLock:
    """One run per build folder at a time: an exclusive ``flock`` on ``out/.cookbook-build.lock``, which
    the operating system releases when the process ends, however it ends. The holder writes its pid and start
    time into the file; a second run is refused with a ``ValueError`` naming them, or with ``wait=True``
    waits for its turn.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with BuildLock(Path(d)):
    ...         BuildLock(Path(d)).acquire()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: another run (pid ..., started ...) is writing to ...; wait for it to finish, or pass --wait
    """

    def __init__(self, out: Path, *, wait: bool = False):
        self.path, self.wait, self._file = Path(out) / LOCK, wait, None

    def acquire(self) -> BuildLock:
        """Take the lock (or wait for it with ``wait``); a ``ValueError`` names the run that holds it.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     lock = BuildLock(Path(d)).acquire()
        ...     lock.release()
        """
        f = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 — held open for as long as the lock
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "pid unknown, started at an unknown time"
            f.close()
            raise ValueError(f"another run ({holder}) is writing to {self.path.parent}; wait for it to finish, "
                             "or pass --wait") from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}")
        f.flush()
        self._file = f
        return self

    def release(self) -> None:
        """Let the folder go (closing the file releases the flock); releasing twice is harmless.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     lock = BuildLock(Path(d)).acquire()
        ...     lock.release(); lock.release()
        """
        if self._file is not None:
            self._file.close()  # closing releases the flock
            self._file = None

    def __enter__(self) -> BuildLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
