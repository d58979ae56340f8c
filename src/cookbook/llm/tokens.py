"""Token arithmetic: counting, cutting at a limit, packing lines into a budget (what a backend's calls cost is
:mod:`cookbook.llm.ledger`).

:func:`count_tokens` uses tiktoken's ``cl100k_base`` when it is installed and available offline, otherwise
one token per four characters. Taught in notebooks/04_community_reports.ipynb (packing a context).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache

from .._validate import integer, string

__all__ = ["count_tokens", "pack_lines", "truncate"]


def count_tokens(text: str) -> int:
    """Tokens in ``text``: tiktoken's ``cl100k_base`` when installed *and* its encoding is available
    offline; otherwise the documented estimate of one token per four characters (OpenAI's rule of
    thumb for English), rounded up.

    >>> count_tokens("") == 0 and count_tokens("Ada founded Acme.") >= 1
    True
    """
    string(text, "text")
    enc = _encoding()
    if enc is not None:
        return len(enc.encode(text))
    return math.ceil(len(text) / 4)


@cache
def _encoding():
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # not installed, or its encoding file cannot be fetched offline
        return None


def truncate(text: str, max_tokens: int) -> tuple[str, bool]:
    """Cut ``text`` to about ``max_tokens`` tokens (as an API stops at its limit); returns (text, was_cut).

    >>> truncate("short", 100)
    ('short', False)
    >>> cut, was_cut = truncate("word " * 400, 10)
    >>> was_cut, count_tokens(cut) <= 10
    (True, True)
    """
    integer(max_tokens, "max_tokens")
    if count_tokens(text) <= max_tokens:
        return text, False
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix within the limit
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo], True


def pack_lines(lines: Iterable[str], budget: int, used: int = 0) -> tuple[list[str], int, bool]:
    """Take ``lines`` in order while ``used`` plus each line's tokens (+1 for its newline) stays within
    ``budget``; stop at the first that does not fit. Returns ``(kept, used, all_fitted)``.

    >>> kept, used, all_fitted = pack_lines(["a" * 40, "b" * 40, "c" * 40], budget=25)
    >>> len(kept), all_fitted
    (2, False)
    """
    integer(budget, "budget", what="a positive number of tokens")
    out = []
    for line in lines:
        cost = count_tokens(line) + 1
        if used + cost > budget:
            return out, used, False
        out.append(line)
        used += cost
    return out, used, True


