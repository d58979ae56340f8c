"""The build folder a run writes (``--out``): what a run owns there, and how it never loses anyone's work.

One rule: a run deletes or replaces only files a run wrote, and :data:`MARKER` records them, path by path
(:func:`owned_files`). A file of the same name that no run wrote (a user's ``index.html``, ``summary.json``,
``notebooks/x.ipynb``) is never replaced: the run is refused before any kernel starts
(:func:`check_unowned`), and :func:`commit` checks again before it moves anything. An ``--out`` that holds
``notebooks/``, ``html/`` or ``checks/`` without the marker is refused outright (a thesis folder, the repository
itself), and so are an empty ``--out`` and the series' own notebooks folder. One run
writes to a folder at a time (:class:`BuildLock`); a run stages everything in ``<out>/.run-<time>-<pid>``
(marked inside with :data:`STAGE_MARK`) and swaps it in only when it has finished (:func:`commit`), so an
interrupted run leaves the previous build as it was; :func:`remove_stale_stages` removes only such marked
folders of dead runs, never a folder of the user's that merely looks like one.

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

import json
import os
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path, PurePosixPath

from .lock import LOCK, BuildLock  # noqa: F401 — one run per build folder: the lock lives beside the build

__all__ = ["BUILD_ENTRIES", "LOCK", "MARKER", "STAGE_MARK", "BuildLock", "check_unowned", "commit", "copy_kept",
           "owned_files", "prepare_out", "previous_rows", "remove_stale_stages", "row_files", "start_stage"]

# Where a run writes under --out; anything else there (bench/, screenshots) is never touched.
BUILD_ENTRIES = ("notebooks", "checks", "graphs", "html", "summary.json", "index.html")
# Folders whose presence without the marker beside them says the folder is not a build: refused.
OWNED_FOLDERS = ("notebooks", "html", "checks")
MARKER = ".cookbook-build"
STAGE_MARK = ".cookbook-stage"  # inside a run's own stage folder: what remove_stale_stages may remove
_STAGE_NAME = re.compile(r"\.(?:run|old)-\d{8}-\d{6}-(\d+)")
# The files a build row may have, by its files stem (:attr:`cookbook.run.runner.NotebookResult.files`): the GraphML
# file only when the notebook wrote one (:func:`cookbook.harness.graph_view.graphml_path`), then the HTML pages.
ROW_FILES = ("notebooks/{}.ipynb", "checks/{}.json", "graphs/{}.graphml", "html/{}.html", "html/checks/{}.html",
             "html/thumbs/{}.png")
_NOT_HTML = 3  # how many of ROW_FILES a build without its HTML pages may have
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
# The type of each field of a summary row (:class:`cookbook.run.runner.NotebookResult`) a kept row must have.
_ROW_TYPES = {"notebook": str, "status": str, "seconds": (int, float), "checks_passed": int, "checks_total": int,
              "failed_checks": list, "error": str, "failing_cell": (int, type(None)), "warnings": list,
              "budget_s": (int, float, type(None)), "finished_at": str, "scale": str, "corpus": str, "files": str}


def row_files(stem: str, *, html: bool = True) -> list[str]:
    """The paths (relative to ``--out``) of the files a build row named ``stem`` may have; a ``ValueError`` when
    ``stem`` is not a plain file name (a tampered summary's ``"../../victim"`` must never name a path outside).

    >>> row_files("06_personalized_pagerank.world", html=False)  # doctest: +NORMALIZE_WHITESPACE
    ['notebooks/06_personalized_pagerank.world.ipynb', 'checks/06_personalized_pagerank.world.json',
     'graphs/06_personalized_pagerank.world.graphml']
    >>> row_files("../../victim")
    Traceback (most recent call last):
    ...
    ValueError: '../../victim' is not a build file name (letters, digits, '_', '.', '-', not starting with '.')
    """
    if not isinstance(stem, str) or not _PLAIN_NAME.fullmatch(stem) or ".." in stem:
        raise ValueError(f"{stem!r} is not a build file name (letters, digits, '_', '.', '-', not starting with '.')")
    return [f.format(stem) for f in (ROW_FILES if html else ROW_FILES[:_NOT_HTML])]


def _safe_relative(rel) -> bool:
    """Whether ``rel`` (from a marker, which anyone can edit) names a file inside a build entry of ``--out``."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel:
        return False
    parts = PurePosixPath(rel).parts
    return (not PurePosixPath(rel).is_absolute() and parts[0] in BUILD_ENTRIES
            and all(p not in ("", ".", "..") and not p.startswith(".") for p in parts))


def _read_regular(path: Path) -> str:
    """The text of ``path`` when it is a regular file (a FIFO or a device would block or never end), else an
    ``OSError``."""
    if not path.is_file():
        raise OSError(f"{path} is not a regular file")
    return path.read_text(encoding="utf-8")


def owned_files(out: Path) -> set[str]:
    """The files (paths relative to ``out``, ``/``-separated) that runs wrote in ``out``: those :data:`MARKER`
    lists. A build marked before markers listed files, or written before builds carried a marker, owns the files
    its summary's rows name (:func:`row_files`) and its ``summary.json`` and ``index.html``. Entries that do not
    name a file inside a build entry are ignored: nothing outside is ever a run's.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / MARKER).write_text('{"files": ["index.html", "../../etc/passwd", ".ssh/id"]}')
    ...     sorted(owned_files(Path(d)))
    ['index.html']
    """
    try:
        marker = json.loads(_read_regular(out / MARKER))
    except (OSError, ValueError, RecursionError):
        marker = None
    if isinstance(marker, dict) and isinstance(marker.get("files"), list):
        return {rel for rel in marker["files"] if _safe_relative(rel)}
    if marker is None and not _older_build(out):
        return set()
    try:
        rows = json.loads(_read_regular(out / "summary.json"))
    except (OSError, ValueError, RecursionError):
        rows = []
    owned = {"summary.json", "index.html"}
    for row in rows if isinstance(rows, list) else []:
        try:
            owned.update(row_files(row.get("files") or row.get("notebook")))
        except (ValueError, AttributeError):
            pass
    return owned


def check_unowned(out: Path, planned) -> None:
    """A ``ValueError`` naming the first of ``planned`` (paths relative to ``out``) that exists in ``out`` (a file,
    a folder or a link, even a dangling one) but that no run wrote (:func:`owned_files`): a run would replace it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "index.html").write_text("<h1>mine</h1>")
    ...     check_unowned(Path(d), ["summary.json", "index.html"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../index.html was not written by a run (not in .../.cookbook-build): refusing to replace it; ...
    """
    owned = owned_files(out)
    for rel in planned:
        if rel not in owned and os.path.lexists(out / rel):
            raise ValueError(f"{out / rel} was not written by a run (not in {out / MARKER}): refusing to replace "
                             "it; move it away or choose another --out")
        for folder in (out / p for p in PurePosixPath(rel).parents if str(p) != "."):
            if folder.is_symlink():  # a run writes inside --out only, never through a link to elsewhere
                raise ValueError(f"{folder} is a symbolic link: a run never writes through one; move it away or "
                                 "choose another --out")
            if os.path.lexists(folder) and not folder.is_dir():
                raise ValueError(f"{folder} is not a folder, and a run would write {rel} there; move it away or "
                                 "choose another --out")


def prepare_out(out: str | Path, *, sources: Path | None = None) -> Path:
    """``out`` resolved and created, or a ``ValueError`` saying why it cannot hold a build: empty, not a folder,
    not writable, holding ``notebooks/``, ``html/`` or ``checks/`` that no run made (no :data:`MARKER`), or
    being the folder the notebooks are read from (``sources``), or holding it as ``notebooks/``, or being the
    filesystem's root, or inside the package or the series' data (:func:`_series_folders`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     prepare_out(Path(d) / "build").name
    'build'
    >>> prepare_out("")
    Traceback (most recent call last):
    ...
    ValueError: --out is empty: name the folder the build goes to (default: build)
    """
    if not str(out).strip():
        raise ValueError("--out is empty: name the folder the build goes to (default: build)")
    path = Path(out).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"output folder {path} exists and is not a folder")
    if path == Path(path.anchor):
        raise ValueError(f"--out {path} is the filesystem's root: choose another --out")
    for folder in _series_folders():
        if path == folder or folder in path.parents:
            raise ValueError(f"--out {path} is inside {folder}, the series' own package or data: choose another --out")
    if sources is not None:
        own = Path(sources).expanduser().resolve()
        if own in (path, (path / "notebooks").resolve()):
            raise ValueError(f"--out {path} would write into the series' own notebooks ({sources}); "
                             "choose another --out")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output folder {path} cannot be created: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"output folder {path} is not writable")
    if os.path.lexists(path / MARKER) and ((path / MARKER).is_symlink() or not (path / MARKER).is_file()):
        raise ValueError(f"{path / MARKER} is not a build marker (a folder or a link): refusing to use {path}")
    if not (path / MARKER).is_file() and not _older_build(path):
        foreign = [path / name for name in OWNED_FOLDERS if os.path.lexists(path / name)]
        if foreign:
            raise ValueError(f"{foreign[0]} is not a build of this series (no {MARKER} marker in {path}): refusing "
                             "to replace it; choose another --out")
    return path


def _series_folders() -> list[Path]:
    """Folders no build goes in, nor in any folder inside them: the package (and its data) and the series' data
    (the committed worlds)."""
    from ..paths import shipped

    found = [Path(__file__).resolve().parents[1]]
    try:
        found.append(shipped("data").resolve())
    except FileNotFoundError:
        pass
    return found


def _older_build(path: Path) -> bool:
    """Whether ``path`` holds a build written before builds carried the marker: its ``summary.json`` is a
    list of this runner's rows (each with a notebook and a status)."""
    try:
        rows = json.loads(_read_regular(path / "summary.json"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(rows, list) and bool(rows) and all(isinstance(r, dict) and {"notebook", "status"} <= r.keys()
                                                         for r in rows)


def previous_rows(out: Path, ran: set[str]) -> list[dict]:
    """The summary rows of the build in ``out`` for notebooks other than those in ``ran`` (an ``--only`` run
    keeps them), or a ``ValueError`` when the summary cannot be read, or a row names its files with anything but
    a plain file name (:func:`row_files`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "summary.json").write_text('[{"notebook": "00_quickstart"}, {"notebook": "01_x"}]')
    ...     previous_rows(Path(d), {"01_x"})
    [{'notebook': '00_quickstart'}]
    """
    summary = out / "summary.json"
    if not os.path.lexists(summary):
        return []
    try:
        rows = json.loads(_read_regular(summary))
        for row in rows:
            row_files(row["notebook"])
            row_files(row.get("files") or row["notebook"])
            bad = next((k for k, v in row.items() if k in _ROW_TYPES
                        and (isinstance(v, bool) or not isinstance(v, _ROW_TYPES[k]))), None)
            if bad is not None:
                raise ValueError(f"row {row['notebook']!r} has {bad} = {row[bad]!r}")
        return [row for row in rows if row["notebook"] not in ran]
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        raise ValueError(f"{summary} is not a build summary ({e}); remove it or run without --only") from None


def start_stage(out: Path) -> Path:
    """A new stage folder ``<out>/.run-<time>-<pid>``, marked inside with :data:`STAGE_MARK` (only a marked stage
    of a dead run is ever removed), or a ``ValueError`` when ``out`` is not writable.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in start_stage(Path(d)).iterdir()]
    ['.cookbook-stage']
    """
    stage = out / f".run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    try:
        stage.mkdir()
        (stage / STAGE_MARK).write_text(f"pid {os.getpid()}\n", encoding="utf-8")
    except OSError as e:
        raise ValueError(f"output folder {out} is not writable: {e.strerror}") from None
    return stage


def remove_stale_stages(out: Path) -> None:
    """Stage folders of earlier runs that were killed before they could clean up: named
    ``.run-<date>-<time>-<pid>`` or ``.old-…`` with no such process alive, and marked inside with
    :data:`STAGE_MARK`. A folder of the user's merely named like one (``.run-logs-99999``, ``.old-thesis-2019``,
    or one without the mark) stays.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     dead = Path(d) / f".run-20240101-000000-{2**22 + 1}"  # no such process
    ...     dead.mkdir(); _ = (dead / STAGE_MARK).write_text("")
    ...     (Path(d) / ".run-logs-99999").mkdir()
    ...     remove_stale_stages(Path(d))
    ...     [p.name for p in Path(d).iterdir()]
    ['.run-logs-99999']
    """
    for stage in out.iterdir():
        name = _STAGE_NAME.fullmatch(stage.name)
        if not name or stage.is_symlink() or not (stage / STAGE_MARK).is_file() or (stage / STAGE_MARK).is_symlink():
            continue
        try:
            os.kill(int(name.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(stage, ignore_errors=True)
        except (OverflowError, PermissionError):  # not a pid, or another user's live process
            pass


def _stage_files(stage: Path) -> set[str]:
    """The files a stage holds under its build entries, relative to it."""
    found = set()
    for entry in BUILD_ENTRIES:
        top = stage / entry
        if top.is_file():
            found.add(entry)
        elif top.is_dir():
            found.update(p.relative_to(stage).as_posix() for p in top.rglob("*") if p.is_file())
    return found


def _write_marker(out: Path, files: set[str]) -> None:
    """:data:`MARKER` listing ``files``, written beside it under a fresh name and renamed into place."""
    fd, tmp = tempfile.mkstemp(dir=out, prefix=f"{MARKER}.", suffix=".part")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps({"made_by": "graphrag-cookbook", "files": sorted(files)}, indent=0) + "\n")
    os.replace(tmp, out / MARKER)


def commit(stage: Path, out: Path) -> None:
    """Swap the stage's files into ``out``: the files the previous runs wrote (:func:`owned_files`) move away, the
    stage's move in, and :data:`MARKER` lists the new build's files; SIGINT/SIGTERM are held off for the few
    renames so a build is never half old, half new. A stage file whose place in ``out`` holds something no run wrote
    is a ``ValueError`` before anything moves; nothing else in ``out`` is touched, nor anything reached through a
    link or inside a folder the marker claims (:func:`_in_place`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = Path(d); stage = out / ".run-1-1"; (stage / "checks").mkdir(parents=True)
    ...     _ = (stage / "checks" / "01_x.world.json").write_text("{}")
    ...     _ = (out / "notes.txt").write_text("mine")
    ...     commit(stage, out)
    ...     sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()), sorted(owned_files(out))
    (['.cookbook-build', 'checks/01_x.world.json', 'notes.txt'], ['checks/01_x.world.json'])
    """
    new, old_files = _stage_files(stage), {rel for rel in owned_files(out) if _in_place(out, rel)}
    check_unowned(out, sorted(new))
    old = stage.with_name(stage.name.replace(".run-", ".old-", 1))
    old.mkdir()
    (old / STAGE_MARK).write_text(f"pid {os.getpid()}\n", encoding="utf-8")
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        _write_marker(out, old_files | new)  # a kill in between leaves every file a run may have placed claimed
        for rel in sorted(old_files):
            if os.path.lexists(out / rel):
                (old / rel).parent.mkdir(parents=True, exist_ok=True)
                (out / rel).rename(old / rel)
        for rel in sorted(new):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / rel).rename(out / rel)
        _write_marker(out, new)
        _remove_emptied(out, old_files - new)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    shutil.rmtree(old)


def _in_place(out: Path, rel: str) -> bool:
    """Whether ``out / rel`` may be moved away or copied as a file a run wrote: every folder on its way is a folder of
    ``out`` (not a link, which would lead outside) and it is not a folder itself (a marker, which anyone can
    edit, that claims ``html`` must not take a user's files in it along).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     (Path(d) / "html").mkdir(); (Path(d) / "notebooks").symlink_to(tempfile.gettempdir())
    ...     _in_place(Path(d), "html/x.html"), _in_place(Path(d), "html"), _in_place(Path(d), "notebooks/x.ipynb")
    (True, False, False)
    """
    for folder in (out / p for p in PurePosixPath(rel).parents if str(p) != "."):
        if folder.is_symlink() or not folder.is_dir():
            return False
    return (out / rel).is_symlink() or not (out / rel).is_dir()


def _remove_emptied(out: Path, gone: set[str]) -> None:
    """The folders of ``out`` that held only files of the previous build that the new one no longer has."""
    folders = {parent for rel in gone for parent in PurePosixPath(rel).parents if parent != PurePosixPath(".")}
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        path = out / folder
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()


def copy_kept(out: Path, stage: Path, kept: list, subs) -> None:
    """The files under ``subs`` (``notebooks``, ``checks``, ``graphs``, ``html``) of the rows an ``--only`` run keeps
    (``kept``: rows with ``.files``, :class:`cookbook.run.runner.NotebookResult`), from ``out`` into ``stage``, those
    a run wrote only (:func:`owned_files`), never through a link: the checks before any notebook runs (a notebook
    that reads the build sees them), the rest with the build.

    >>> import tempfile, types
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out, stage = Path(d) / "out", Path(d) / "stage"; (out / "graphs").mkdir(parents=True)
    ...     _ = (out / "graphs" / "12_x.world.graphml").write_text("<graphml/>")
    ...     _ = (out / MARKER).write_text('{"files": ["graphs/12_x.world.graphml"]}')
    ...     copy_kept(out, stage, [types.SimpleNamespace(files="12_x.world")], ("graphs",))
    ...     [p.relative_to(stage).as_posix() for p in stage.rglob("*.graphml")]
    ['graphs/12_x.world.graphml']
    """
    owned = {rel for rel in owned_files(out) if _in_place(out, rel) and not (out / rel).is_symlink()}
    for r in kept:
        for rel in row_files(r.files):
            if rel.split("/")[0] in subs and rel in owned and (out / rel).is_file():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(out / rel, stage / rel)
