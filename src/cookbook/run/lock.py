"""One run writes to a build folder at a time: :class:`BuildLock`, an exclusive ``flock`` on ``<out>/`` :data:`LOCK`
(:mod:`cookbook.run.build` holds the rest of what a run owns there).

>>> LOCK
'.cookbook-build.lock'
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

__all__ = ["LOCK", "BuildLock"]

LOCK = ".cookbook-build.lock"


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
        try:  # never through a link, nor a FIFO or a hard link: the lock file is truncated and rewritten below
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as e:
            raise ValueError(f"{self.path} cannot be the lock of a build ({e.strerror}); move it away") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:  # a FIFO, or a user's file by a second name
            os.close(fd)
            why = "not a regular file" if not stat.S_ISREG(st.st_mode) else "another name of a file (a hard link)"
            raise ValueError(f"{self.path} cannot be the lock of a build ({why}); move it away")
        f = open(fd, "r+", encoding="utf-8")  # noqa: SIM115 — held open for as long as the lock
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
