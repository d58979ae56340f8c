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

from ..._validate import integer
from ..._validate import seed as check_seed
from ...stats import hypothesis_verdict, paired_bootstrap

__all__ = ["EXERCISES", "HINTS", "VERDICTS", "Feedback", "Wrong", "best_setting", "check", "check_redecision",
           "crash_message", "decide", "exercise", "expect_choice", "expect_close", "expect_equal", "hint",
           "verdict_cases"]


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





VERDICTS = ("supported", "contradicted", "not significant", "identical on every unit",
            "the same difference on every unit", "too few to decide", "not measured")


def decide(a, b) -> str:
    """The series' verdict on paired scores ``a`` (the method) and ``b`` (its baseline) over the test half, as a
    lesson's check decides it: :func:`cookbook.stats.paired_bootstrap` (10,000 resamples, seed 0) read by
    :func:`cookbook.stats.hypothesis_verdict` with the interval, whether every pair tied, and n. The reference
    every re-decision exercise (``NN.redecide``) is checked against.

    >>> decide([1, 1, 0], [1, 1, 0]), decide([0.6] * 30, [0.5] * 30), decide([0.6, 0.7] * 6, [0.5] * 12)
    ('identical on every unit', 'the same difference on every unit', 'too few to decide')
    >>> decide([0.6, 0.7, 0.6, 0.8, 0.6] * 6, [0.5] * 30)
    'supported'
    """
    r = paired_bootstrap(a, b, seed=0)
    return hypothesis_verdict(r.ci_low, r.ci_high, r.identical, n=r.n)


def _plural(k: int, word: str) -> str:
    """``k`` and ``word``, plural unless one: ``1 loss``, ``2 losses``."""
    return f"{k} {word}" if k == 1 else f"{k} {word}{'es' if word.endswith('s') else 's'}"


def _interval(a, b) -> str:
    """The paired difference that decides ``decide(a, b)``, in numbers."""
    r = paired_bootstrap(a, b, seed=0)
    return (f"the paired difference is {r.mean_diff:+.3f} [95 % CI {r.ci_low:+.3f}, {r.ci_high:+.3f}] over {r.n} "
            f"questions ({_plural(r.wins, 'win')}, {_plural(r.losses, 'loss')}, {_plural(r.ties, 'tie')})")


def verdict_cases(n: int = 30, seed: int = 0) -> list[tuple[str, list[float], list[float]]]:
    """The paired test-half scores every re-decision exercise is checked on, ``(what, method, baseline)`` over ``n``
    questions, scores in [0, 1] to two decimals: identical scores; a constant gain (an interval of width 0 away
    from 0); a lone win among ties (an interval touching 0); a clear loss; a noisy draw; a large mean gain from a
    few huge wins among many small losses (its interval holds 0) and a small gain on every question, varying a
    little (its interval excludes 0) — the last two tell the interval from a threshold on the mean — and a clear
    gain over too few questions (half of ``n``, under :data:`cookbook.stats.MIN_QUESTIONS` at the default).

    >>> [what for what, _, _ in verdict_cases(n=30)][:3]
    ['identical scores', 'a constant gain', 'a lone win among ties']
    >>> [len(a) for _, a, _ in verdict_cases(n=30)][-1]
    15
    """
    import numpy as np  # the mechanism's module stays light; only the checkers that use cases pay for numpy

    integer(n, "n", at_least=4, what="questions (a lone win and too few need at least 4)")
    rng = np.random.default_rng(check_seed(seed))

    def two(x):
        return [round(float(v), 2) for v in x]

    base = two(rng.integers(1, 5, n) * 0.2)  # 0.2 … 0.8: room for ±0.2 on either side
    one_win = list(base)
    one_win[n // 2] = round(one_win[n // 2] + 0.2, 2)
    swing = rng.permutation([0.2] * (n // 3) + [-0.2] * (n // 3) + [0.0] * (n - 2 * (n // 3)))
    noisy = two(np.array(base) + swing)  # as many +0.2 as −0.2: a mean difference of exactly 0
    wins = set(rng.choice(n, max(1, n // 10), replace=False).tolist())
    lumpy_b = [0.0 if i in wins else round(x + 0.1, 2) for i, x in enumerate(base)]
    lumpy_a = [1.0 if i in wins else round(x - 0.03, 2) for i, x in enumerate(lumpy_b)]
    steady = [round(x + 0.02 + 0.01 * (i % 2), 2) for i, x in enumerate(base)]
    half = n // 2
    few_b = base[:half]
    return [("identical scores", list(base), list(base)), ("a constant gain", two(np.array(base) + 0.1), list(base)),
            ("a lone win among ties", one_win, list(base)),
            ("a clear loss", list(base), [round(min(1.0, x + 0.15 + 0.1 * (i % 2)), 2) for i, x in enumerate(base)]),
            ("a noisy draw", noisy, list(base)),
            ("a few huge wins among small losses", lumpy_a, lumpy_b), ("a small steady gain", steady, list(base)),
            (f"a clear gain over {half} questions", [round(x + 0.1 + 0.1 * (i % 2), 2) for i, x in enumerate(few_b)],
             few_b)]


def _full(x) -> str:
    """An argument as the feedback shows it: in full, on one line; a list of one value repeated as ``[v] * n``.

    >>> _full({"test": [1.0, 1.0, 1.0], "dev": 0.5})
    "{'test': [1.0] * 3, 'dev': 0.5}"
    """
    if isinstance(x, dict):
        return "{" + ", ".join(f"{_full(k)}: {_full(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list) and len(x) > 2 and all(type(v) is type(x[0]) and v == x[0] for v in x):
        return f"[{_full(x[0])}] * {len(x)}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(map(_full, x)) + ("," if isinstance(x, tuple) and len(x) == 1 else "")
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return " ".join(repr(x).split())


def check_redecision(fn, name: str, cases, reference, parts: tuple[str, ...]) -> None:
    """Run a student's re-decision function ``fn`` (its notebook calls it ``name``) on ``cases`` — ``(what, args)``,
    the lesson's data as that notebook holds it — against ``reference(*args)``, which returns the expected answer
    (a tuple: the verdict, one of :data:`VERDICTS`, then the choices named by ``parts``) and the paired test scores
    ``(a, b)`` that decide it (None when nothing is compared). Raises :class:`Wrong` at the first case whose answer
    differs, with the input in full, what came back, what was expected and, when only the verdict differs, the
    interval that decides it.

    >>> def ref(a, b):
    ...     return (decide(a, b),), (a, b)
    >>> check_redecision(lambda a, b: (decide(a, b),), "redecide", [("two ties", ([1, 0], [1, 0]))], ref, ())
    """
    import copy

    for what, args in cases:
        want, pair = reference(*copy.deepcopy(args))
        called = f"{name}({', '.join(_full(a) for a in args)})"
        got = fn(*copy.deepcopy(args))
        if not isinstance(got, tuple) or len(got) != len(want):
            raise Wrong(f"{called} returned {got!r}: return a tuple ({', '.join(('verdict', *parts))})")
        if got[0] not in VERDICTS:
            raise Wrong(f"{called} returned {got!r}: the verdict must be one of {', '.join(map(repr, VERDICTS))}")
        for part, g, w in zip(parts, got[1:], want[1:]):
            if g != w:
                raise Wrong(f"{what}: {called} chose {part} {g!r}, expected {w!r} (it returned {got!r})")
        if got[0] != want[0]:
            raise Wrong(f"{what}: {called} returned the verdict {got[0]!r}, expected {want[0]!r}"
                        + (f": {_interval(*pair)}" if pair else ""))


def best_setting(options: dict, allowed=None, tie=None):
    """The key of ``options`` (``{name: {"dev": dev-half mean, ...}}``) with the highest dev mean among those
    ``allowed(name, option)`` keeps, ties by ``tie(name, option)`` then by order; None when none is allowed.
    The re-decision checkers' reference choice.

    >>> best_setting({"a": {"dev": 0.5}, "b": {"dev": 0.5}, "c": {"dev": 0.9}}, allowed=lambda k, o: k != "c")
    'a'
    """
    keys = [k for k, o in options.items() if allowed is None or allowed(k, o)]
    if not keys:
        return None
    order = {k: i for i, k in enumerate(options)}
    return min(keys, key=lambda k: (-options[k]["dev"], tie(k, options[k]) if tie else 0, order[k]))
