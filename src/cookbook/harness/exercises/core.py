"""Self-checking exercises: ``check(exercise_id, answer)`` says what is wrong, not just "incorrect".

Every notebook ends with exercises of two kinds. A *code* exercise is a stub the student completes, then
``check("NN.name", fn)``: the checker runs the answer on cases with known results (hand-worked, brute
force, or the package's own tested implementation) and reports the first case that differs, with the
input, what came back, what was expected and a hint. A *prediction* (``"NN.predict_*"``) asks the student
to commit to a number or a choice before a cell reveals it: ``check("03.predict_resolution", "more")``
grades the answer and explains why. It never raises, so a notebook with untouched stubs still runs top to bottom.
Reference solutions live in ``solutions/`` at the repository root, outside the notebooks. This module is the
mechanism; each notebook's checkers are a module of their own beside it (``entity_cooccurrence`` for
notebook 01, ...), registered when :mod:`cookbook.harness.exercises` is imported.

>>> def npmi(c_ab, n_a, n_b, n):
...     raise NotImplementedError
>>> from cookbook.harness import exercises  # registers every notebook's checkers
>>> check("01.npmi", npmi, quiet=True).passed
False
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["EXERCISES", "Feedback", "Wrong", "check", "exercise", "expect_choice", "expect_close", "expect_equal"]


@dataclass
class Feedback:
    """What :func:`check` returns: which ``exercise``, whether it ``passed``, and the ``message`` printed.

    >>> str(Feedback("01.npmi", False, "npmi(1, 2, 2, 4) returned 0, expected 1.0"))
    '✗ 01.npmi: npmi(1, 2, 2, 4) returned 0, expected 1.0'
    """

    exercise: str
    passed: bool
    message: str

    def __str__(self) -> str:
        return f"{'✓' if self.passed else '✗'} {self.exercise}: {self.message}"


class Wrong(Exception):
    """A checker's finding: the message is shown to the student.

    >>> str(Wrong("got 2, expected 3"))
    'got 2, expected 3'
    """


EXERCISES: dict[str, tuple[str, Callable]] = {}


def exercise(ex_id: str, title: str):
    """Register the decorated checker as exercise ``ex_id`` ("NN.name") with a ``title``; :func:`check`
    looks it up by that id.

    >>> from cookbook.harness import exercises
    >>> "01.npmi" in EXERCISES
    True
    """
    def register(fn):
        EXERCISES[ex_id] = (title, fn)
        return fn
    return register


def check(ex_id: str, answer, *, quiet: bool = False) -> Feedback:
    """Run exercise ``ex_id``'s checker on ``answer``; print and return :class:`Feedback`. Never raises:
    an unknown id, an untouched stub or a crash in the answer is feedback too. Every notebook's exercises
    call it, from notebooks/01_entity_cooccurrence.ipynb on.

    >>> from cookbook.harness import exercises
    >>> check("03.predict_resolution", "more").passed  # doctest: +ELLIPSIS
    ✓ 03.predict_resolution: ...
    True
    >>> check("03.predict_resolution", ...).message
    ✗ 03.predict_resolution: not attempted yet: replace the placeholder with your answer
    'not attempted yet: replace the placeholder with your answer'
    """
    if ex_id not in EXERCISES:
        fb = Feedback(ex_id, False, f"no such exercise; known: {', '.join(sorted(EXERCISES))}")
    elif answer is None or answer is Ellipsis:
        fb = Feedback(ex_id, False, "not attempted yet: replace the placeholder with your answer")
    else:
        title, checker = EXERCISES[ex_id]
        try:
            msg = checker(answer)
            fb = Feedback(ex_id, True, msg or f"correct — {title}")
        except NotImplementedError:
            fb = Feedback(ex_id, False, "not attempted yet: the stub still raises NotImplementedError")
        except Wrong as e:
            fb = Feedback(ex_id, False, str(e))
        except Exception as e:  # the student's code crashed: say where
            where = traceback.extract_tb(e.__traceback__)[-1]
            fb = Feedback(ex_id, False, f"your code raised {type(e).__name__}: {e} (line {where.lineno})")
    if not quiet:
        print(fb)
    return fb


def expect_close(got, want, what: str, hint: str = "", tol: float = 1e-9):
    """Raise :class:`Wrong` unless ``got`` is a number within ``tol`` of ``want``.

    >>> expect_close(0.5, 0.5, "npmi(1, 2, 2, 4)")
    """
    if got is None:
        raise Wrong(f"{what}: your function returned None — did you forget `return`?")
    try:
        ok = math.isclose(float(got), float(want), rel_tol=tol, abs_tol=tol)
    except (TypeError, ValueError):
        raise Wrong(f"{what}: expected a number, got {type(got).__name__} {got!r}") from None
    if not ok:
        raise Wrong(f"{what}: got {float(got):.6g}, expected {float(want):.6g}. {hint}".strip())


def expect_choice(answer, want: str, options: tuple[str, ...], why: str) -> str:
    """Grade a multiple-choice prediction; the explanation comes with the verdict either way.

    >>> expect_choice("More", "more", ("more", "fewer"), "a higher resolution splits communities")
    "right, 'more': a higher resolution splits communities"
    """
    got = str(answer).strip().lower().strip('"\'')
    if got not in options:
        raise Wrong(f"answer one of {', '.join(map(repr, options))}, not {answer!r}")
    if got != want:
        raise Wrong(f"you predicted {got!r}; it is {want!r}: {why}")
    return f"right, {want!r}: {why}"


def expect_equal(got, want, what: str, hint: str = ""):
    """Raise :class:`Wrong` unless ``got == want``.

    >>> expect_equal([1], [1], "ids")
    """
    if got != want:
        raise Wrong(f"{what}: got {got!r}, expected {want!r}. {hint}".strip())


