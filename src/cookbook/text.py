"""Sentences of a text, as strings or as character spans: the one splitting rule every stage shares
(report writing, extraction, description merging, the offline stand-in).

>>> text = "Ada founded Acme.  It grew! e.g. this stays. R. Fubrus agreed."
>>> split_sentences(text)
['Ada founded Acme.', 'It grew! e.g. this stays.', 'R. Fubrus agreed.']
>>> [text[a:b] for a, b in sentence_spans(text)] == split_sentences(text)
True
"""

from __future__ import annotations

import re

from ._validate import string

__all__ = ["sentence_spans", "split_sentences"]

# A sentence ends at . ! ? followed by white space and a capital letter ("e.g. this" does not end one), except
# after an initial: a capital standing alone before its period ("R. Fubrus", "S. Korea"; not "A.D.", and not
# "I", which ends "World War I.").
_SENT = re.compile(r"(?<=[.!?])(?<![\s(][A-HJ-Z]\.)(?<!^[A-HJ-Z]\.)\s+(?=[A-Z])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` character spans (end exclusive) of the sentences of ``text``, white space
    around each sentence excluded; ``text[start:end]`` are exactly :func:`split_sentences`' strings.

    >>> sentence_spans(" Ada came. Bo left.\\n")
    [(1, 10), (11, 19)]
    """
    string(text, "text")
    spans, at = [], 0
    for cut in [*_SENT.finditer(text), None]:
        end = cut.start() if cut else len(text)
        piece = text[at:end]
        lead = len(piece) - len(piece.lstrip())
        stripped = piece.strip()
        if stripped:
            spans.append((at + lead, at + lead + len(stripped)))
        at = cut.end() if cut else end
    return spans


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? when white space and a capital letter follow, not after an
    initial (a lone capital other than I and its period).

    >>> split_sentences("Ada founded Acme. It grew! e.g. this stays.")
    ['Ada founded Acme.', 'It grew! e.g. this stays.']
    """
    return [text[a:b] for a, b in sentence_spans(text)]
