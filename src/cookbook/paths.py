"""Where the series' files are: the repository checkout, or the bundle a built wheel carries.

One place answers "where are the notebooks / the data" for every module (the runner, storage, colab):
:func:`shipped`; :func:`list_notebooks` names the series' notebooks in order.

>>> shipped("notebooks").name
'notebooks'
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["copy_notebooks", "list_notebooks", "notebooks_dir", "repo_root", "shipped"]


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
        nbs = [p for p in nbs if any(p.stem == o or p.stem.split("_")[0] == o.zfill(2) for o in wanted)]
        if not nbs:
            raise ValueError(f"no notebook matches --only {' '.join(wanted)} in {d}")
    return nbs


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
