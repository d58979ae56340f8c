"""Where the series' files are: the repository checkout, or the bundle a built wheel carries.

One place answers "where are the notebooks / the data" for every module (the runner, storage, colab):
:func:`shipped`.

>>> shipped("notebooks").name
'notebooks'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["repo_root", "shipped"]


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
