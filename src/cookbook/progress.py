"""Progress bars for long steps (:func:`bar`): tqdm's, which draw in Colab and Jupyter (a widget where
ipywidgets is installed, else text), in a terminal and in papermill's log. A step done within ``delay``
seconds draws nothing, so the offline stand-in's quick loops leave no trace in a notebook's output;
``COOKBOOK_PROGRESS=0`` turns every bar off (``cookbook run`` sets it for its kernels, so a build's pages hold
no bars; papermill run by hand shows them in its log). ``cookbook compare`` ignores their lines.
"""

from __future__ import annotations

import os
import sys

__all__ = ["bar"]


def bar(iterable=None, *, desc: str, total: int | None = None, unit: str = "it", delay: float = 1.0,
        disable: bool = False):
    """``iterable`` wrapped in a tqdm progress bar labelled ``desc`` (``total`` defaults to its length; with
    no iterable, a bar to ``update`` by hand), shown only after ``delay`` seconds; ``disable`` hides it.

    >>> [x * x for x in bar(range(4), desc="squares")]
    [0, 1, 4, 9]
    >>> with bar(desc="calls", total=3) as b:
    ...     b.update(3)
    ...     b.n
    3
    """
    try:
        import ipywidgets  # noqa: F401  tqdm.auto draws a widget with it, and warns without it
        from tqdm.auto import tqdm
    except ImportError:
        from tqdm.std import tqdm
    return tqdm(iterable, desc=desc, total=total, unit=unit, delay=delay, file=sys.stderr, dynamic_ncols=True,
                disable=disable or os.environ.get("COOKBOOK_PROGRESS") == "0")
