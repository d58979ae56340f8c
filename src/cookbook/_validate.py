"""Argument checks shared by every module, so that the same mistake gets the same message everywhere.

Private: the public functions call these at their boundary. Messages name the argument and quote the bad
value (``"k must be a positive integer, got True"``). Integers accept Python and numpy ints and reject
``bool`` (``True`` is an ``int`` to Python but never a count); numbers reject ``bool``, NaN and inf. The same
rule makes a random seed (:func:`seed`: ``7.0`` is no seed either) and a node index (:func:`node_indices`:
``True`` is not node 1).

>>> integer(np.int64(5), "k")
5
>>> integer(True, "k")
Traceback (most recent call last):
...
ValueError: k must be a positive integer, got True
>>> number(0.0, "restart λ", low=0, high=1, low_open=True)
Traceback (most recent call last):
...
ValueError: restart λ must be in (0, 1], got 0.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["bool_mask", "community_label", "distribution", "finite_array", "identifier", "integer", "labels",
           "node_indices", "number",
           "one_of", "probability", "seed", "square_csr", "string", "string_collection", "strings", "summable"]


def integer(value, name: str, *, at_least: int = 1, what: str | None = None, at_most: int | None = None,
            limit: str = "") -> int:
    """``value`` as an ``int`` when it is an integer (not a bool) ``>= at_least``; else ``ValueError``.
    ``what`` replaces the default description ("a positive integer", "an integer >= 0", ...). With ``at_most``, a
    larger value is a ``ValueError`` naming the limit and why it is there (``limit``): checked before any work, so
    ``n_depth=10**6`` fails at once instead of running for hours.

    >>> integer(0, "depth", at_least=0), integer(np.int32(3), "k")
    (0, 3)
    >>> integer(10**6, "n_depth", at_most=10, limit="DRIFT's MAX_DEPTH")
    Traceback (most recent call last):
    ...
    ValueError: n_depth must be at most 10 (DRIFT's MAX_DEPTH), got 1000000
    """
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < at_least:
        if what is None:
            what = "a positive integer" if at_least == 1 else f"an integer >= {at_least}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    if at_most is not None and value > at_most:
        raise ValueError(f"{name} must be at most {at_most}" + (f" ({limit})" if limit else "") + f", got {value!r}")
    return int(value)


MAX_SEED = 2**63 - 1  # the largest seed C code (a signed 64-bit integer) takes


def seed(value, name: str = "seed") -> int:
    """``value`` as an ``int`` when it is a Python or numpy integer in ``[0, 2**63 - 1]`` (what
    ``numpy.random.default_rng``, ``random.Random`` and igraph's and leidenalg's C code all take); a bool or a
    float, even ``7.0``, is a ``TypeError`` and a negative or larger one a ``ValueError``. Every function taking
    a seed checks it here, so a seed is refused or accepted the same way whatever the scale or the function.

    >>> seed(np.int64(7)), type(seed(np.int64(7))).__name__
    (7, 'int')
    >>> seed(7.0)
    Traceback (most recent call last):
    ...
    TypeError: seed must be an int (a Python or numpy integer, not a bool or a float), got 7.0
    """
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int (a Python or numpy integer, not a bool or a float), got {value!r}")
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"{name} must be an integer in [0, 2**63 - 1], got {value!r}")
    return int(value)


def one_of(value, name: str, options: Sequence, *, listing: str = "; expected one of"):
    """``value`` when it equals one of ``options``; else ``ValueError`` ``"unknown <name> <value>; expected one of
    [...]"`` (``listing`` replaces the words before the list). Compared by type and value (``True`` is not ``1``);
    a value of any other type, unhashable ones included, is simply not one of them: the message, not a
    ``TypeError`` from a lookup, says what is allowed.

    >>> one_of("ci", "scale", ["ci", "class"])
    'ci'
    >>> one_of(["ci"], "scale", ["ci", "class"])
    Traceback (most recent call last):
    ...
    ValueError: unknown scale ['ci']; expected one of ['ci', 'class']
    """
    if not any(isinstance(value, type(o)) and isinstance(value, bool) == isinstance(o, bool) and value == o
               for o in options):
        raise ValueError(f"unknown {name} {value!r}{listing} {list(options)}")
    return value


def string_collection(values, name: str, *, what: str = "entity ids") -> list[str]:
    """``values`` (a list, tuple, set or other collection of strings) as a list; ``TypeError`` naming ``name``
    for one string where a collection is expected (iterating ``"E1"`` would give ``'E'`` and ``'1'``), a
    mapping or non-iterable, or an item that is not a string. ``what`` names the items in the messages; empty
    is allowed (the caller decides).

    >>> string_collection({"E2"}, "ids")
    ['E2']
    >>> string_collection("E1", "gazetteer['Ada']")
    Traceback (most recent call last):
    ...
    TypeError: gazetteer['Ada'] must be a collection of entity ids, got the string 'E1' (write ['E1'])
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a collection of {what}, got the string {values!r} (write [{values!r}])")
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a collection of {what}, got {type(values).__name__}")
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} must hold {what} (strings), got {v!r} ({type(v).__name__})")
    return out


def node_indices(values, n: int, name: str, *, unknown: str = "node") -> np.ndarray:
    """``values`` as a 1-D ``intp`` array of node indices of a graph with ``n`` nodes; else an error naming
    ``name``: ``TypeError`` for bools (``True`` is not node 1) and for floats (``1.5`` would silently be node
    1), ``ValueError`` for more than one dimension, ``KeyError`` ``"unknown <unknown> <i> (graph has n nodes)"``
    for an index outside ``0..n-1``. Empty is allowed (the caller decides). Cheap: one dtype check, and a
    scan for bools only when ``values`` is not already an array.

    >>> node_indices([2, np.int64(0)], 3, "seeds").tolist()
    [2, 0]
    >>> node_indices([True], 3, "seeds")
    Traceback (most recent call last):
    ...
    TypeError: seeds must be node indices (integers), got True (bool)
    """
    if not isinstance(values, np.ndarray):
        values = list(values) if isinstance(values, Iterable) and not isinstance(values, (str, bytes)) else values
        if not isinstance(values, list):
            raise TypeError(f"{name} must be a sequence of node indices (integers), got {type(values).__name__}")
        for v in values:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name} must be node indices (integers), got {v!r} ({type(v).__name__})")
        a = np.asarray(values, dtype=np.intp)
    else:
        if values.size and values.dtype.kind not in "iu":
            raise TypeError(f"{name} must be node indices (integers), got an array of {values.dtype}")
        a = values.astype(np.intp, copy=False)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of node indices, got shape {a.shape}")
    bad = (a < 0) | (a >= n)
    if np.count_nonzero(bad):
        raise KeyError(f"unknown {unknown} {a[bad][0]} (graph has {n} nodes)")
    return a


def number(value, name: str, *, low: float = -np.inf, high: float = np.inf, low_open: bool = False,
           high_open: bool = False, what: str | None = None) -> float:
    """``value`` as a ``float`` when it is a finite real number (not a bool) within ``low``..``high``
    (``*_open`` excludes that end); else ``ValueError`` naming the interval or ``what``.

    >>> number(2, "penalty", low=0)
    2.0
    >>> number(float("nan"), "penalty", low=0)
    Traceback (most recent call last):
    ...
    ValueError: penalty must be >= 0, got nan
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ok = ok and bool(np.isfinite(value))
    if ok:
        ok = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if not ok:
        if what is None:
            if np.isinf(high):
                what = f"> {low:g}" if low_open else f">= {low:g}"
            else:
                what = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return float(value)


def probability(value, name: str, *, zero_ok: bool = True, one_ok: bool = True, what: str | None = None) -> float:
    """:func:`number` in ``[0, 1]``, the ends excluded when ``zero_ok`` / ``one_ok`` is False.

    >>> probability(0.15, "restart")
    0.15
    >>> probability(1, "ci", one_ok=False)
    Traceback (most recent call last):
    ...
    ValueError: ci must be in [0, 1), got 1
    """
    return number(value, name, low=0, high=1, low_open=not zero_ok, high_open=not one_ok, what=what)


def string(value, name: str) -> str:
    """``value`` when it is a ``str``; else ``TypeError`` naming its type.

    >>> string(b"x", "text")
    Traceback (most recent call last):
    ...
    TypeError: text must be a string, got bytes
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def identifier(value, name: str) -> str:
    """``value`` when it is a name something is stored under (a graph, a file): a non-empty ``str`` without
    surrounding whitespace or control characters (a newline); else ``TypeError`` / ``ValueError`` quoting it.

    >>> identifier("cookbook_10_world", "name")
    'cookbook_10_world'
    >>> identifier("world\\n", "name")
    Traceback (most recent call last):
    ...
    ValueError: name must be a non-empty name without surrounding spaces or control characters, got 'world\\n'
    """
    string(value, name)
    if not value or value != value.strip() or not value.isprintable():
        raise ValueError(f"{name} must be a non-empty name without surrounding spaces or control characters, "
                         f"got {value!r}")
    return value


def strings(values, name: str) -> list[str]:
    """``values`` as a non-empty list of strings; ``TypeError`` for one string or a non-string item,
    ``ValueError`` when empty.

    >>> strings(("a", "b"), "texts")
    ['a', 'b']
    >>> strings(["a", 1], "texts")
    Traceback (most recent call last):
    ...
    TypeError: texts[1] must be str, got int
    """
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of strings, got {type(values).__name__}")
    if len(values) == 0:
        raise ValueError(f"empty corpus: {name} is empty")
    for i, t in enumerate(values):
        if not isinstance(t, str):
            raise TypeError(f"{name}[{i}] must be str, got {type(t).__name__}")
    return list(values)


def finite_array(values, name: str, *, dtype=float) -> np.ndarray:
    """``values`` as an array of ``dtype`` with no NaN or inf; else ``ValueError``.

    >>> finite_array([1, 2], "scores").tolist()
    [1.0, 2.0]
    >>> finite_array([1, np.inf], "scores")
    Traceback (most recent call last):
    ...
    ValueError: scores contains NaN or inf
    """
    a = np.asarray(values, dtype=dtype)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def summable(values, name: str, *, what: str = "values") -> np.ndarray:
    """``values`` (finite numbers) as a float array when the sum of their magnitudes is finite too; else
    ``ValueError`` asking to rescale: weights or scores of 1e308 are finite one by one, but a sum, a mean or a
    normalisation over them overflows to inf and turns the answer into zeros or NaN with only a warning.

    >>> summable([1.0, 2.0], "weights").tolist()
    [1.0, 2.0]
    >>> summable([1e308, 1e308], "weights", what="edge weights")
    Traceback (most recent call last):
    ...
    ValueError: weights: edge weights this large overflow when summed (largest 1e+308); rescale them
    """
    v = finite_array(values, name)
    with np.errstate(over="ignore"):
        total = np.abs(v).sum()
    if not np.isfinite(total):
        raise ValueError(f"{name}: {what} this large overflow when summed (largest {np.abs(v).max():g}); rescale them")
    return v


def bool_mask(values, n: int, name: str) -> np.ndarray:
    """``values`` when it is a boolean array of shape ``(n,)``; else ``ValueError``.

    >>> bool_mask([0, 1], 2, "dangling")
    Traceback (most recent call last):
    ...
    ValueError: dangling must be a boolean mask of length 2, got int64 (2,)
    """
    d = np.asarray(values)
    if d.dtype != bool or d.shape != (n,):
        raise ValueError(f"{name} must be a boolean mask of length {n}, got {d.dtype} {d.shape}")
    return d


def square_csr(M, name: str, *, dtype=float, csc_ok: bool = True) -> sp.csr_matrix | sp.csc_matrix:
    """``M`` (dense or sparse) as a square, non-empty CSR matrix of ``dtype`` (``None``: keep its dtype);
    else ``ValueError``.

    A CSR (or, with ``csc_ok``, CSC) of that dtype is returned as it is: re-wrapping validates it, O(nnz),
    and the solvers call this on every query.

    >>> square_csr([[0, 1], [1, 0]], "A").format
    'csr'
    >>> square_csr(np.ones((2, 3)), "A")
    Traceback (most recent call last):
    ...
    ValueError: A must be square, got shape (2, 3)
    """
    if not sp.issparse(M):
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {M.ndim} dimensions")
    formats = ("csr", "csc") if csc_ok else ("csr",)
    if not (sp.issparse(M) and M.format in formats and (dtype is None or M.dtype == dtype)):
        M = sp.csr_matrix(M, dtype=dtype)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square, got shape {M.shape}")
    if M.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 nodes)")
    return M


def labels(values, name: str, *, n: int | None = None) -> np.ndarray:
    """``values``, a flat sequence of community labels, as ``int`` codes ``0 … k−1`` numbered by first appearance.
    A label is only a name: any hashable value is one (ints, strings, floats, tuples), so ``[0.2, 0.2, 0.7]`` is
    two communities, as ``["a", "a", "b"]`` is, and equal values are one label (Python's ``==``, so ``1`` and
    ``1.0`` are the same). ``n`` (when given) is the length required. ``TypeError`` for one string, a mapping or
    a non-sequence, and for an unhashable label; ``ValueError`` for a missing label (None, NaN), more than one
    dimension, or the wrong length. Empty is allowed (the caller decides).

    >>> labels([0.2, 0.2, 0.7], "membership").tolist(), labels(["b", "a", "b"], "membership").tolist()
    ([0, 0, 1], [0, 1, 0])
    >>> labels([0, float("nan")], "membership")
    Traceback (most recent call last):
    ...
    ValueError: membership has a missing label (nan) at position 1: every item needs a label
    """
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be a flat sequence of labels, got shape {values.shape}")
        items = values.tolist()
    elif isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of labels (one per node), got {type(values).__name__}")
    else:
        items = list(values)
    if n is not None and len(items) != n:
        raise ValueError(f"{name} has length {len(items)}, graph has {n} nodes")
    codes: dict = {}
    out = np.empty(len(items), dtype=np.intp)
    for i, v in enumerate(items):
        if v is None or (isinstance(v, (float, np.floating)) and v != v):
            raise ValueError(f"{name} has a missing label ({v!r}) at position {i}: every item needs a label")
        if isinstance(v, (list, np.ndarray)):
            raise ValueError(f"{name} must be a flat sequence of labels, got {type(v).__name__} at position {i}")
        try:
            out[i] = codes.setdefault(v, len(codes))
        except TypeError:
            raise TypeError(f"{name}[{i}] must be a hashable label, got {type(v).__name__}") from None
    return out


def community_label(value, name: str) -> int | str:
    """``value``, one community's label as a drawing shows it: an ``int`` (numpy's too; not a bool) or a non-empty
    string, returned as a plain ``int`` or ``str``; ``TypeError`` naming ``name`` for anything else (a float, None,
    a bool), ``ValueError`` for an empty string. Unlike :func:`labels` (labels only compared), the label is shown
    and sorted (ints first, ascending, then strings), so it must be one of the two.

    >>> community_label(np.int64(3), "community"), community_label("north", "community")
    (3, 'north')
    >>> community_label(1.5, "nodes[0]['community']")
    Traceback (most recent call last):
    ...
    TypeError: nodes[0]['community'] must be a community label, an int or a string, got float 1.5
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"{name} is an empty string: a community label needs a name")
        return str(value)
    raise TypeError(f"{name} must be a community label, an int or a string, got {type(value).__name__} {value!r}")


def distribution(values, name: str) -> np.ndarray:
    """``values`` (non-negative weights, shape ``(n,)``, or ``(n, m)`` for one column per query) scaled to sum to
    1 per column, without overflow: divided by the column's largest entry first, so ``[1e308, 1e308, 0]`` is
    ``[0.5, 0.5, 0]``, not the zeros of ``inf / inf``. ``ValueError`` for NaN or inf, a negative entry, or a
    column that is all zeros.

    >>> distribution([1e308, 1e308, 0], "v0").tolist()
    [0.5, 0.5, 0.0]
    >>> distribution([0, 0], "v0")
    Traceback (most recent call last):
    ...
    ValueError: v0 is all zeros: no seed to restart from
    """
    v = finite_array(values, name)
    if np.any(v < 0):
        raise ValueError(f"{name} has negative entries")
    top = v.max(axis=0) if v.size else np.zeros(v.shape[1:])
    if np.any(top <= 0):
        raise ValueError(f"{name} is all zeros: no seed to restart from")
    v = v / top
    return v / v.sum(axis=0)
