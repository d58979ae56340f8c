"""Where the series' files are: the repository checkout, or the bundle a built wheel carries.

One place answers "where are the notebooks / the data" for every module (the runner, storage, colab):
:func:`shipped`; :func:`list_notebooks` names the series' notebooks in order.

>>> shipped("notebooks").name
'notebooks'
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["copy_notebooks", "list_notebooks", "notebooks_dir", "place_files", "repo_root", "rewrite_text",
           "shipped"]


def repo_root() -> Path:
    """The checkout this package runs from (``src/cookbook`` → two levels up); an installed wheel has none
    (``FileNotFoundError``).

    >>> (repo_root() / "src" / "cookbook" / "paths.py").is_file()
    True
    """
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise FileNotFoundError(f"not running from a checkout of the repository (no pyproject.toml in {root})")
    return root


def shipped(name: str) -> Path:
    """The series' top-level ``notebooks`` or ``data`` folder: the checkout's when running from one
    (editable install), else the copy a built wheel carries in ``cookbook/_bundle/`` (see setup.py).

    >>> shipped("data").name
    'data'
    >>> shipped("secrets")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileNotFoundError: no secrets/ folder at ...: the package was installed without its bundle
    """
    try:
        d = repo_root() / name
    except FileNotFoundError:
        d = Path(__file__).resolve().parent / "_bundle" / name
    if not d.is_dir():
        raise FileNotFoundError(f"no {name}/ folder at {d}: the package was installed without its bundle")
    return d


def notebooks_dir() -> Path:
    """The series' ``notebooks/`` folder (see :func:`shipped`).

    >>> (notebooks_dir() / "00_quickstart.ipynb").is_file()
    True
    """
    return shipped("notebooks")


def list_notebooks(directory: str | Path | None = None, only: list[str] | None = None) -> list[Path]:
    """Notebooks named ``NN_slug.ipynb`` in order; ``only`` keeps those whose prefix or stem matches.

    >>> [p.name for p in list_notebooks(only=["6", "09_benchmark"])]
    ['06_personalized_pagerank.ipynb', '09_benchmark.ipynb']
    >>> list_notebooks(only=["99"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: no notebook matches --only 99 in ...
    """
    d = Path(directory) if directory else notebooks_dir()
    nbs = sorted(p for p in d.glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = [str(o) for o in only]
        if any(not o.strip() for o in wanted):  # '' would match notebook 00 ('' zero-filled is '00')
            raise ValueError(f"--only {' '.join(repr(o) for o in wanted)}: an empty notebook name")
        nbs = [p for p in nbs if any(p.stem == o or p.stem.split("_")[0] == o.zfill(2) for o in wanted)]
        if not nbs:
            raise ValueError(f"no notebook matches --only {' '.join(wanted)} in {d}")
    return nbs


def place_files(files: dict[str, bytes], to: str | Path, *, force: bool = False) -> list[Path]:
    """Write each of ``files`` (file name → bytes) into the folder ``to`` (created if missing); return the paths.
    Refuses with a ``ValueError``, before writing anything, when ``to`` is empty or blank, when a name is taken
    there (by a file, a folder or a link, a dangling one too) unless ``force``; never writes through a link: with
    ``force`` a link is replaced by the file (its target is left alone), and a folder is never replaced. Each file
    is written beside its place and renamed into it, so an interrupted write leaves the old file or the new one,
    never half of one.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.symlink(Path(d) / "elsewhere.txt", Path(d) / "a.txt")  # a dangling link
    ...     place_files({"a.txt": b"new"}, d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../a.txt exists (1 of the 1 files do); pass --force to overwrite
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.symlink(Path(d) / "elsewhere.txt", Path(d) / "a.txt")
    ...     _ = place_files({"a.txt": b"new"}, d, force=True)
    ...     (Path(d) / "a.txt").is_symlink(), (Path(d) / "elsewhere.txt").exists()
    (False, False)
    """
    if not str(to).strip():  # Path("") is the working folder, and " " a folder named by a blank
        raise ValueError("the destination folder is empty: name the folder to write to")
    to = Path(to)
    if os.path.lexists(to) and not to.is_dir():
        raise ValueError(f"{to} exists and is not a directory")
    for name in files:
        if not name or name != Path(name).name or name in (".", ".."):
            raise ValueError(f"{name!r} is not a file name")
    clash = [to / name for name in files if os.path.lexists(to / name)]
    folders = [p for p in clash if p.is_dir() and not p.is_symlink()]
    if folders:
        raise ValueError(f"{folders[0]} is a folder: refusing to replace it with a file")
    if clash and not force:
        raise ValueError(f"{clash[0]} exists ({len(clash)} of the {len(files)} files do); pass --force to overwrite")
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        to.mkdir(parents=True, exist_ok=True)
        written = []
        for name, data in files.items():
            fd, tmp = tempfile.mkstemp(dir=to, prefix=f".{name}.", suffix=".part")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, 0o666 & ~umask)  # as open() would make it (mkstemp makes it private)
                if force:
                    os.replace(tmp, to / name)  # replaces a link itself, never its target
                else:
                    os.link(tmp, to / name)  # fails if the name was taken meanwhile, a dangling link too
            finally:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
            written.append(to / name)
        return written
    except FileExistsError as e:
        raise ValueError(f"{e.filename2 or e.filename} appeared while writing; pass --force to overwrite") from None
    except OSError as e:
        raise ValueError(f"cannot write to {to}: {e.strerror or e}") from None


def copy_notebooks(to: str | Path, *, force: bool = False) -> list[Path]:
    """Copy the series' notebooks into ``to`` (created if missing) for editing; return the copies.
    Refuses, before copying anything, when a copy would overwrite a file (or a link, even a dangling one),
    unless ``force``, and always when ``to`` is the series' own notebooks folder; never writes through a link
    (:func:`place_files`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = copy_notebooks(d)
    ...     again = copy_notebooks(d, force=True)
    ...     copy_notebooks(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...00_quickstart.ipynb exists (... of the ... files do); pass --force to overwrite
    """
    if not str(to).strip():
        raise ValueError("--to is empty: name the folder to copy the notebooks into")
    srcs = list_notebooks()
    if Path(to).expanduser().resolve() == notebooks_dir().resolve():
        raise ValueError(f"{to} is the series' own notebooks folder: copy them somewhere else")
    return place_files({p.name: p.read_bytes() for p in srcs}, Path(to).expanduser(), force=force)


def rewrite_text(path, change) -> None:
    """``path``'s text replaced by ``change(text)``, written beside it and renamed into place (a full disk or a
    signal leaves the old file whole, never half of it); a link's target is the file rewritten, and a FIFO or a
    device is refused, never read. ``cookbook verdicts --readme`` renders the README's table through it.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "notes.md"
    >>> _ = p.write_text("draft")
    >>> rewrite_text(p, str.upper); p.read_text()
    'DRAFT'
    >>> rewrite_text(p.parent, str.upper)
    Traceback (most recent call last):
    ValueError: not a regular file
    """
    target = Path(path).resolve()
    if not target.is_file():
        raise ValueError(f"{'not a regular file' if target.exists() else 'no such file'}")
    new = change(target.read_text(encoding="utf-8"))
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new)
        os.chmod(tmp, target.stat().st_mode & 0o7777)
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
