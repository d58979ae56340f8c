"""Self-checking exercises: ``check(exercise_id, answer)`` says what is wrong, not just "incorrect".

Every notebook ends with exercises of two kinds. A *code* exercise is a stub the student completes, then
``check("NN.name", fn)``: the checker runs the answer on cases with known results (hand-worked, brute
force, or the package's own tested implementation) and reports the first case that differs, with the
input, what came back, what was expected and a hint. A *prediction* (``"NN.predict_*"``) asks the student
to commit to a number or a choice before a cell reveals it: ``check("03.predict_resolution", "more")``
grades the answer and explains why. It never raises, so a notebook with untouched stubs still runs top to bottom.
When the student's code crashes, the feedback names the call that crashed (the function and its arguments,
abbreviated), the exception and the line of the student's code it came from: :func:`check` hands every checker
the answer wrapped so that whatever calls it, in any checker module, records the call an exception came out of.
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

import functools
import math
import reprlib
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..._validate import integer, number
from ..._validate import seed as check_seed
from ...stats import paired_bootstrap

__all__ = ["EXERCISES", "HINTS", "Feedback", "Wrong", "check", "crash_message", "exercise", "expect_choice",
           "check_redecide", "expect_close", "expect_equal", "hint", "redecide_cases", "series_verdict",
           "REDECIDE_HINTS"]


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
# Hints in tiers, per exercise: the first a nudge that never gives the answer away, the last the method.
HINTS: dict[str, tuple[str, ...]] = {}


def exercise(ex_id: str, title: str, hints: tuple[str, ...] = ()):
    """Register the decorated checker as exercise ``ex_id`` ("NN.name") with a ``title`` and optional ``hints`` in
    tiers (a nudge first, the method last; :func:`hint` shows one at a time); :func:`check` looks it up by that id.

    >>> from cookbook.harness import exercises
    >>> "01.npmi" in EXERCISES, len(HINTS["09.paired_ci"]) >= 2
    (True, True)
    """
    def register(fn):
        EXERCISES[ex_id] = (title, fn)
        if hints:
            HINTS[ex_id] = tuple(hints)
        return fn
    return register


def hint(ex_id: str, tier: int = 1, *, quiet: bool = False) -> str:
    """Hint ``tier`` (1 = a nudge, higher = closer to the method) of exercise ``ex_id``; printed unless ``quiet``.
    A failed :func:`check` of an exercise with hints says how to ask for them.

    >>> from cookbook.harness import exercises
    >>> hint("09.paired_ci", quiet=True).startswith("Hint 1 of ")
    True
    """
    tiers = HINTS.get(ex_id, ())
    if not tiers:
        text = f"{ex_id} has no tiered hints: its feedback says what to change"
    elif not isinstance(tier, int) or isinstance(tier, bool) or not 1 <= tier <= len(tiers):
        text = f"{ex_id} has hints 1 to {len(tiers)}, not {tier!r}"
    else:
        more = f" (more: exercises.hint({ex_id!r}, {tier + 1}))" if tier < len(tiers) else ""
        text = f"Hint {tier} of {len(tiers)}: {tiers[tier - 1]}{more}"
    if not quiet:
        print(text)
    return text


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
            msg = checker(_recording(answer) if callable(answer) else answer)
            fb = Feedback(ex_id, True, msg or f"correct — {title}")
        except NotImplementedError:
            fb = Feedback(ex_id, False, "not attempted yet: the stub still raises NotImplementedError")
        except Wrong as e:
            fb = Feedback(ex_id, False, str(e) + (f" — stuck? exercises.hint({ex_id!r}) gives a nudge"
                                                  if ex_id in HINTS else ""))
        except Exception as e:  # the student's code crashed, or what it returned could not be checked: say where
            fb = Feedback(ex_id, False, crash_message(e))
    if not quiet:
        print(fb)
    return fb


class _Short(reprlib.Repr):
    """Arguments as a crash message shows them: a few items of each container, long strings cut in the middle,
    a function by its name, an array of more than a few numbers by its shape, any other object on one line."""

    def __init__(self, level: int, items: int):
        super().__init__()
        self.maxlevel, self.maxdict, self.maxlist, self.maxtuple, self.maxset = level, items, items, items, items
        self.maxstring = self.maxother = 60

    def repr_function(self, x, level):
        return getattr(x, "__name__", "a function")

    def repr_ndarray(self, x, level):
        return " ".join(repr(x).split()) if x.size <= 8 else f"array(shape={x.shape}, dtype={x.dtype})"

    def repr_instance(self, x, level):
        try:
            text = " ".join(repr(x).split())
        except Exception:  # a student's object whose __repr__ fails still gets a name
            return f"<{type(x).__name__}>"
        if len(text) > self.maxother:
            head = (self.maxother - 3) // 2
            text = text[:head] + "..." + text[len(text) - (self.maxother - 3 - head):]
        return text


# More items and nesting first; fewer while the call does not fit in this many characters.
_CALL_CHARS = 160
_SHORTS = [_Short(level, items) for level, items in ((3, 6), (3, 3), (2, 2), (1, 2))]
_CALLED_AS = "_exercise_called_as"  # set on an exception that came out of the student's function


def _call_text(fn, args: tuple, kwargs: dict) -> str:
    """``name(arg, ..., key=value)`` with the arguments abbreviated to fit about :data:`_CALL_CHARS`."""
    for short in _SHORTS:
        text = ", ".join([*map(short.repr, args), *(f"{k}={short.repr(v)}" for k, v in kwargs.items())])
        if len(text) <= _CALL_CHARS:
            break
    return f"{getattr(fn, '__name__', 'your function')}({text})"


def _recording(fn: Callable) -> Callable:
    """``fn`` wrapped so that an exception it raises carries the call it came out of (name and arguments as
    they were passed in, before the student's code could change them); it is raised on unchanged, so a checker
    that expects an exception still gets it."""
    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        called_as = _call_text(fn, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not hasattr(e, _CALLED_AS):  # the innermost call: a function the checker passes on calls it too
                try:
                    setattr(e, _CALLED_AS, called_as)
                except (AttributeError, TypeError):  # an exception type without a __dict__
                    pass
            raise

    return recorded


_RECORDED = _recording(print).__code__
# Frames from these folders are the package's (the checkers) or a library's, never the student's code.
_NOT_STUDENTS = tuple(str(Path(p).resolve()) for p in {Path(__file__).resolve().parents[2],
                                                        *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib",
                                                                                             "purelib", "platlib"))})


def _students_frame(tb) -> tuple[int, str] | None:
    """``(line, function)`` of the last frame of the student's own code in traceback ``tb``: after the call the
    checker made through :func:`_recording`, leaving out the package's and libraries' frames."""
    frames = list(traceback.walk_tb(tb))
    start = next((i + 1 for i, (f, _) in enumerate(frames) if f.f_code is _RECORDED), 0)
    own = [(line, f.f_code.co_name) for f, line in frames[start:]
           if not f.f_code.co_filename.startswith("<frozen")
           and not str(Path(f.f_code.co_filename).resolve()).startswith(_NOT_STUDENTS)]
    return own[-1] if own else None


def crash_message(e: Exception) -> str:
    """The feedback for exception ``e`` raised while a checker ran: the call of the student's function it came
    out of (arguments abbreviated), the exception, and the line of the student's code; an exception raised
    outside the student's code is the checker failing on what the function returned.

    >>> from cookbook.harness import exercises
    >>> def npmi(c_ab, n_a, n_b, n):
    ...     return c_ab / (n_a - n_b)  # a slip: n_a == n_b in the first case
    >>> check("01.npmi", npmi, quiet=True).message
    'npmi(2, 4, 4, 10) raised ZeroDivisionError: division by zero (line 2)'
    """
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    error = type(e).__name__ + (f": {text[:150]}{'…' if len(text) > 150 else ''}" if text else "")
    called_as = getattr(e, _CALLED_AS, None)
    frame = _students_frame(e.__traceback__)
    name = called_as.split("(", 1)[0] if called_as else None
    where = f" (line {frame[0]}{'' if frame[1] == name else f', in {frame[1]}'})" if frame else ""
    if called_as:
        return f"{called_as} raised {error}{where}"
    if frame:
        return f"your code raised {error}{where}"
    return f"checking what your function returned raised {error}: does it return what the exercise asks for?"


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





_VERDICT_WORDS = ("supported", "contradicted", "not significant", "identical", "the same difference")


def series_verdict(a, b) -> tuple[str, object]:
    """The series' verdict on paired scores ``a`` (the method) and ``b`` (its baseline), as the notebooks decide it:
    :func:`cookbook.stats.paired_bootstrap` (10,000 resamples, seed 0), then *identical* when every pair scored the
    same, *the same difference* when every pair differed by the same non-zero amount (a CI of width 0 away from 0:
    one number repeated, :attr:`cookbook.stats.PairedResult.constant`), *supported* / *contradicted* when the 95 %
    CI lies above / below 0, *not significant* when it holds 0.

    >>> series_verdict([1, 1, 0], [1, 1, 0])[0], series_verdict([0.6] * 5, [0.5] * 5)[0]
    ('identical', 'the same difference')
    >>> series_verdict([0.6, 0.7, 0.6, 0.8, 0.6], [0.5] * 5)[0]
    'supported'
    """
    r = paired_bootstrap(a, b, seed=0)
    if r.wins == r.losses == 0:
        return "identical", r
    if r.constant:
        return "the same difference", r
    return ("supported" if r.ci_low > 0 else "contradicted" if r.ci_high < 0 else "not significant"), r


def _plural(k: int, word: str) -> str:
    """``k`` and ``word``, plural unless one: ``1 loss``, ``2 losses``."""
    return f"{k} {word}" if k == 1 else f"{k} {word}{'es' if word.endswith('s') else 's'}"


def check_redecide(fn, cases) -> None:
    """Run a student's ``redecide(a, b)`` (paired per-question scores → one of :data:`_VERDICT_WORDS`) on ``cases``
    (pairs of score lists, the lesson's edge cases) and raise :class:`Wrong` at the first verdict that differs from
    :func:`series_verdict`'s, with the case's scores in full and the interval that decides it.

    >>> check_redecide(lambda a, b: series_verdict(a, b)[0], [([1, 0], [1, 0])])
    """
    for a, b in cases:
        want, r = series_verdict(a, b)
        got = fn(list(a), list(b))
        what = f"redecide(a={list(a)}, b={list(b)})"
        if got not in _VERDICT_WORDS:
            raise Wrong(f"{what}: return one of {', '.join(map(repr, _VERDICT_WORDS))}, got {got!r}")
        if got != want:
            raise Wrong(f"{what}: got {got!r}, expected {want!r}: the paired difference is {r.mean_diff:+.3f} "
                        f"[95 % CI {r.ci_low:+.3f}, {r.ci_high:+.3f}] over {r.n} questions ({_plural(r.wins, 'win')}, "
                        f"{_plural(r.losses, 'loss')}, {_plural(r.ties, 'tie')}).")


REDECIDE_HINTS = (
    "the series never decides from two means: it decides from the 95 % interval of the paired difference, one "
    "difference per question, and two of its five words are for an interval of width 0.",
    "cookbook.stats.paired_bootstrap(a, b, seed=0) returns the interval (ci_low, ci_high) and the wins, losses and "
    "ties; an interval of width 0 says every question differed by one amount: at 0 (no win, no loss) that is no "
    "comparison, away from 0 it is one number repeated, which the series does not call a win.",
    "no win and no loss → 'identical'; else ci_low == ci_high → 'the same difference'; else ci_low > 0 → "
    "'supported', ci_high < 0 → 'contradicted', otherwise 'not significant' (width 0 up to rounding: the result's "
    ".constant).")


def redecide_cases(scale: float = 1.0, n: int = 30, seed: int = 0) -> list[tuple[list[float], list[float]]]:
    """The edge cases every lesson's re-decision exercise is checked on, scores in [0, ``scale``] over ``n``
    questions: identical scores, a constant gain (a zero-width interval that is not zero: "the same difference"),
    a single win in ``n`` (an interval touching 0), a clear loss, a noisy draw, a large mean gain from a few huge
    wins among many small losses (its interval holds 0) and a small gain on every question, varying a little (its
    interval excludes 0): the last two tell the interval from a threshold on the mean difference.

    >>> [len(a) for a, _ in redecide_cases(n=10)]
    [10, 10, 10, 10, 10, 10, 10]
    """
    import numpy as np  # the mechanism's module stays light; only the checkers that use cases pay for numpy

    number(scale, "scale", low=0, low_open=True)
    integer(n, "n", at_least=2, what="questions (one win among them needs at least 2)")
    rng = np.random.default_rng(check_seed(seed))
    base = (rng.integers(0, 5, n) / 5 * scale * 0.8).round(6).tolist()
    one_win = list(base)
    one_win[n // 2] = round(one_win[n // 2] + 0.2 * scale, 6)
    noisy = (np.clip(np.array(base) + rng.normal(0, 0.3 * scale, n), 0, scale)).round(6).tolist()
    # A few huge wins (0 → 0.9) among many small losses (−0.03): the mean gain exceeds 0.05 · scale, the CI holds 0.
    wins = set(rng.choice(n, max(1, n // 10), replace=False).tolist())
    lumpy_b = [0.0 if i in wins else round(x + 0.1 * scale, 6) for i, x in enumerate(base)]
    lumpy_a = [round(0.9 * scale, 6) if i in wins else round(x - 0.03 * scale, 6) for i, x in enumerate(lumpy_b)]
    # +0.02 · scale on every question, give or take 0.005: a mean gain under 0.05 · scale whose CI excludes 0.
    steady = [round(x + scale * (0.02 + 0.005 * (i % 3 - 1)), 6) for i, x in enumerate(base)]
    return [(list(base), list(base)), ([round(x + 0.1 * scale, 6) for x in base], list(base)), (one_win, list(base)),
            (list(base), [round(min(scale, x + 0.2 * scale), 6) for x in base]), (noisy, list(base)),
            (lumpy_a, lumpy_b), (steady, list(base))]
