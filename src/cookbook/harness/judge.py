"""LLM-as-judge, the protocol of Edge et al. (2024, "From Local to Global", arXiv:2404.16130v2, section 3.3 and
appendices F-G): with no gold answers to sensemaking questions, a model compares two answers head to head on one
criterion at a time — comprehensiveness, diversity, empowerment, and directness, the control (the criterion
concise naive RAG should win; a method that wins everything, directness too, says more about the judge than the
method). The judge names a winner, or a tie when the answers are fundamentally similar.

How the judgements combine (:func:`judge_pair`). Each pair is judged in both orders, A shown first then B
shown first (the paper does not say it swaps them; models favour a position, and the swap cancels that),
``replicates`` times each. Every judgement scores A 1 (A better), 0.5 (tie) or 0 (B better), and A's score on
the question is their mean: the paper's scoring (100 win, 50 tie, 0 loss, averaged over its replicate runs;
appendix G), with the two orders as replicates. The verdict is the side of 0.5 that mean falls on: with one
judgement per order, A wins only if it wins both, or wins one and ties the other; a win in each order (position
bias) is a tie.

Unreadable judgements: output with no JSON object, no readable ``winner``, or a backend error is asked once
more (malformed output with the reply shown back, so a response cache cannot return the same text); if the
second answer is unreadable too the judgement counts as a tie (pulls towards "no difference", never towards a
side) and is counted in ``unreadable`` and the warnings. :class:`~cookbook.llm.base.LLMUnavailable` stops the
run — the offline stand-in (:class:`~cookbook.llm.ExtractiveLLM`) raises it: it cannot judge.

:func:`compare_methods` gives A's win rate over B per criterion (the mean of A's per-question scores) with a
paired bootstrap interval over questions (:func:`cookbook.stats.paired_bootstrap` of A's scores against B's,
``1 - score``). Runs in notebooks/05_map_reduce_answering.ipynb when ``LLM="openai"``; tested against
tests/fake_openai.py.

>>> class FirstIsBest:  # a judge that always prefers answer 1: pure position bias
...     def complete(self, prompt, *, max_tokens):
...         return '{"winner": 1, "reason": "it comes first"}'
>>> v = judge_pair("Which trades matter?", "Mining and fishing.", "Mining.", FirstIsBest())
>>> v["comprehensiveness"].winner, v["comprehensiveness"].score
('tie', 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .._validate import integer, probability, string, strings
from ..llm import LLM, LLMUnavailable, concurrency_of, ordered_map
from ..llm.base import stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt
from ..stats import PairedResult, paired_bootstrap

__all__ = ["CONTROL", "CRITERIA", "Comparison", "Judgement", "Verdict", "WinRate", "compare_methods", "judge_pair",
           "judge_prompt", "parse_judgement"]

# The paper's four criteria (section 3.3, appendix F), in our words; one prompt per criterion.
CRITERIA = {
    "comprehensiveness": "How much detail does the answer give to cover every aspect of the question? A "
                         "comprehensive answer is thorough and complete: it leaves out no important point, and "
                         "neither repeats itself nor strays from the question.",
    "diversity": "How varied and rich are the perspectives and insights the answer offers on the question? A "
                 "diverse answer looks at the question from several angles and draws on several sources, not one.",
    "empowerment": "How well does the answer help the reader understand the topic and make informed judgements "
                   "about it without being misled? It explains its reasoning and shows the sources behind its "
                   "claims.",
    "directness": "How specifically and clearly does the answer address the question? A direct answer says what "
                  "was asked concisely, without information the question did not ask for.",
}
CONTROL = "directness"  # the control criterion: the concise baseline should win it

_TIE_WORDS = {"0", "tie", "draw", "neither", "equal", "none"}


@dataclass(frozen=True)
class Judgement:
    """One judge call by position: ``winner`` 1 (the answer shown first), 2 (shown second) or 0 (tie), the
    judge's ``reason``, ``attempts`` (2 after a retry) and ``readable`` (False: unreadable twice, so a tie).

    >>> Judgement(1, "more detail").winner
    1
    """

    winner: int
    reason: str
    attempts: int = 1
    readable: bool = True


@dataclass(frozen=True)
class Verdict:
    """One criterion's verdict on one pair: ``winner`` "A", "B" or "tie", A's ``score`` in [0, 1] (mean of
    the judgements' 1 / 0.5 / 0), and the judgements with A shown first (``a_first``) and B shown first
    (``b_first``), one per replicate.

    >>> v = Verdict("diversity", "A", 0.75, (Judgement(1, "x"),), (Judgement(0, "y"),))
    >>> v.unreadable
    0
    """

    criterion: str
    winner: str
    score: float
    a_first: tuple[Judgement, ...]
    b_first: tuple[Judgement, ...]

    @property
    def unreadable(self) -> int:
        """Judgements unreadable twice, counted as ties.

        >>> Verdict("diversity", "tie", 0.5, (Judgement(0, "?", 2, False),), (Judgement(0, "y"),)).unreadable
        1
        """
        return sum(not j.readable for j in (*self.a_first, *self.b_first))


@dataclass(frozen=True)
class WinRate:
    """A's win rate over B on one criterion across ``n`` questions: ``win_rate`` (mean of A's per-question
    scores) with its ``ci`` interval [ci_low, ci_high]; ``paired`` is the paired bootstrap of A's scores
    against B's (``1 - score``), whose wins / losses / ties are the questions' verdicts; ``scores`` are A's
    per-question scores; ``unreadable`` counts judgements counted as ties.

    >>> r = paired_bootstrap([1.0, 0.5], [0.0, 0.5], n_boot=100)
    >>> print(WinRate("diversity", 2, 0.75, 0.5, 1.0, r, (1.0, 0.5), 0))
    diversity: A wins 0.750 [0.500, 1.000] over 2 questions (A 1, tie 1, B 0; 0 unreadable)
    """

    criterion: str
    n: int
    win_rate: float
    ci_low: float
    ci_high: float
    paired: PairedResult
    scores: tuple[float, ...]
    unreadable: int

    def __str__(self) -> str:
        p = self.paired
        return (f"{self.criterion}: A wins {self.win_rate:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] over {self.n} "
                f"questions (A {p.wins}, tie {p.ties}, B {p.losses}; {self.unreadable} unreadable)")


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_methods` returns: ``rates`` per criterion, the per-question ``verdicts``
    (one ``{criterion: Verdict}`` per question), ``warnings`` about unreadable judgements, and the two
    methods' ``names`` (A first).

    >>> r = paired_bootstrap([1.0], [0.0], n_boot=10)
    >>> c = Comparison({"directness": WinRate("directness", 1, 1.0, 1.0, 1.0, r, (1.0,), 0)}, (), (), ("flat", "mr"))
    >>> c.rates["directness"].win_rate, c.names
    (1.0, ('flat', 'mr'))
    """

    rates: dict[str, WinRate]
    verdicts: tuple[dict[str, Verdict], ...]
    warnings: tuple[str, ...]
    names: tuple[str, str] = ("A", "B")

    def table(self) -> str:
        """One row per criterion: A's win rate over B, its interval, the verdict counts (questions A won, tied,
        B won) and the unreadable judgements.

        >>> rate = WinRate("directness", 1, 1.0, 1.0, 1.0, paired_bootstrap([1.0], [0.0], n_boot=10), (1.0,), 0)
        >>> c = Comparison({"directness": rate}, (), (), ("flat", "mr"))
        >>> print(c.table())
        criterion          flat over mr  95% CI           flat   tie   mr  unreadable
        directness                1.000  [1.000, 1.000]      1     0    0           0
        """
        a, b = self.names
        head = f"{a} over {b}"
        w, wa, wb = max(8, len(head)), max(3, len(a)), max(3, len(b))
        lines = [f"{'criterion':18} {head:>{w}}  {'95% CI':16} {a:>{wa}} {'tie':>5}  {b:>{wb}}  unreadable"]
        for name, r in self.rates.items():
            interval = f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
            lines.append(f"{name:18} {r.win_rate:>{w}.3f}  {interval:16} {r.paired.wins:>{wa}} {r.paired.ties:>5} "
                         f" {r.paired.losses:>{wb}}  {r.unreadable:>10}")
        return "\n".join(lines)


def parse_judgement(text: str) -> Judgement:
    """A judge's answer read tolerantly: the JSON object in it (:func:`cookbook.llm.json_answers.parse_json`:
    code fences, prose around it and trailing commas are fine) with ``winner`` 1, 2 or a tie (``"tie"``, 0 as
    the paper writes it, "draw", "neither"; "Answer 1" and "one" read as 1) and a ``reason`` (or ``reasoning``;
    may be missing). Keys are read case-blind. ``ValueError`` naming the problem otherwise.

    >>> parse_judgement('```json\\n{"Winner": "Answer 2", "reasoning": "More sources."}\\n```')
    Judgement(winner=2, reason='More sources.', attempts=1, readable=True)
    >>> parse_judgement('{"winner": 0}').winner
    0
    >>> parse_judgement('{"winner": "both"}')
    Traceback (most recent call last):
    ...
    ValueError: winner must be 1, 2 or "tie", got 'both'
    """
    obj = {str(k).strip().lower(): v for k, v in parse_json(text).items()}
    if "winner" not in obj:
        raise ValueError(f"judge answer has no winner (keys: {sorted(obj)[:6]})")
    w = obj["winner"]
    winner = None
    if isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w in (0, 1, 2):
        winner = int(w)
    elif isinstance(w, str):
        word = w.strip().lower().removeprefix("answer").strip(" _-.")
        winner = {"1": 1, "one": 1, "2": 2, "two": 2}.get(word, 0 if word in _TIE_WORDS else None)
    if winner is None:
        raise ValueError(f'winner must be 1, 2 or "tie", got {str(w)[:40]!r}')
    reason = obj.get("reason", obj.get("reasoning", ""))
    return Judgement(winner, reason if isinstance(reason, str) else str(reason))


def judge_prompt(question: str, criterion: str, first: str, second: str, unreadable_reply: str | None = None) -> str:
    """The judge's prompt (task ``judge``, instructions :data:`cookbook.llm.prompts.JUDGE_PROMPT`): the
    QUESTION, the CRITERION with its definition from :data:`CRITERIA`, ANSWER_ONE (``first``) and ANSWER_TWO
    (``second``), and on a retry the UNREADABLE_REPLY.

    >>> from cookbook.llm.prompts import parse_prompt
    >>> p = judge_prompt("Who?", "directness", "Ada.", "Ada, an engineer.")
    >>> p.splitlines()[:4]
    ['TASK: judge', '## QUESTION', 'Who?', '## CRITERION']
    >>> parse_prompt(p)[1]["ANSWER_TWO"]
    'Ada, an engineer.'
    """
    for value, name in ((question, "question"), (first, "first"), (second, "second")):
        string(value, name)
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; expected one of {tuple(CRITERIA)}")
    sections = {"question": question, "criterion": f"{criterion}: {CRITERIA[criterion]}",
                "answer_one": first, "answer_two": second}
    if unreadable_reply is not None:
        sections["unreadable_reply"] = unreadable_reply
    return prompt("judge", **sections)


def _judge_once(llm: LLM, question: str, criterion: str, first: str, second: str, max_tokens: int
                ) -> tuple[Judgement, str | None]:
    """One judgement, asked once more when unreadable; a tie marked unreadable when the retry fails too. With it,
    the cause when both calls failed (the judge never answered), else None."""
    p = judge_prompt(question, criterion, first, second)
    try:
        raw = llm.complete(p, max_tokens=max_tokens)
    except LLMUnavailable:
        raise
    except Exception as e:  # a backend that gave up (timeouts, 5xx): the same prompt once more
        problem, retry = f"backend error {type(e).__name__}", p  # the type only: a message may echo secrets
    else:
        try:
            return parse_judgement(raw), None
        except ValueError as e:  # shown back, so the retry is a new prompt a cache has not answered
            problem = str(e)
            retry = judge_prompt(question, criterion, first, second, (raw or "").strip() or "(empty)")
    try:
        raw = llm.complete(retry, max_tokens=max_tokens)
    except LLMUnavailable:
        raise
    except Exception as e:
        again = f"backend error {type(e).__name__}"
    else:
        try:
            return replace(parse_judgement(raw), attempts=2), None
        except ValueError as e:
            again = str(e)
    never = again if problem.startswith("backend error") and again.startswith("backend error") else None
    return Judgement(0, f"unreadable twice ({problem}; then {again}): counted as a tie", 2, False), never


def _combine(criterion: str, a_first: Sequence[Judgement], b_first: Sequence[Judgement]) -> Verdict:
    """A's score (mean of 1 / 0.5 / 0 over all judgements) and its verdict, the side of 0.5 it falls on."""
    points = [(2 if j.winner == 1 else 0) if j.winner else 1 for j in a_first]  # in halves: exact sums
    points += [(2 if j.winner == 2 else 0) if j.winner else 1 for j in b_first]
    total, n = sum(points), len(points)
    winner = "A" if total > n else "B" if total < n else "tie"
    return Verdict(criterion, winner, total / (2 * n), tuple(a_first), tuple(b_first))


def _texts(values, name: str) -> list[str]:
    if isinstance(values, Sequence) and not isinstance(values, str) and len(values) == 0:
        raise ValueError(f"{name} is empty: nothing to judge")
    return strings(values, name)


def _criteria(criteria) -> tuple[str, ...]:
    names = tuple(_texts(criteria, "criteria"))
    unknown = [c for c in names if c not in CRITERIA]
    if unknown:
        raise ValueError(f"unknown criterion {unknown[0]!r}; expected some of {tuple(CRITERIA)}")
    if len(set(names)) != len(names):
        raise ValueError(f"criteria repeat a name: {names}")
    return names


def _judge_all(triples, llm, criteria, replicates, max_tokens, concurrency) -> list[dict[str, Verdict]]:
    """Verdicts for each ``(question, a, b)``: every judge call of every question in one bounded map."""
    if not hasattr(llm, "complete"):
        raise TypeError(f"llm must have complete(prompt, *, max_tokens), got {type(llm).__name__}")
    names = _criteria(criteria)
    replicates = integer(replicates, "replicates")
    max_tokens = integer(max_tokens, "max_tokens")
    jobs = [(i, c, a_first) for i in range(len(triples)) for c in names
            for _ in range(replicates) for a_first in (True, False)]

    def run(job):
        i, c, a_first = job
        q, a, b = triples[i]
        return _judge_once(llm, q, c, a if a_first else b, b if a_first else a, max_tokens)

    judged = ordered_map(run, jobs, concurrency=concurrency_of(llm, concurrency), desc="judging")
    failed = [cause for _, cause in judged if cause is not None]
    stop_if_all_failed(f"LLM judge ({len(jobs)} judgement(s))", len(failed), len(jobs), failed[-1] if failed else "")
    done = [j for j, _ in judged]
    out = [{} for _ in triples]
    for k in range(0, len(jobs), 2 * replicates):
        i, c, _ = jobs[k]
        chunk = done[k:k + 2 * replicates]
        out[i][c] = _combine(c, chunk[0::2], chunk[1::2])
    return out


def judge_pair(question: str, answer_a: str, answer_b: str, llm: LLM, *, criteria: Sequence[str] = tuple(CRITERIA),
               replicates: int = 1, max_tokens: int = 400, concurrency: int | None = None) -> dict[str, Verdict]:
    """``{criterion: Verdict}`` for answers A and B to ``question``: per criterion, ``2 × replicates`` judge
    calls (A first, then B first), combined as the module docstring says (a win in each order is a tie; A
    wins with a win and a tie). ``replicates`` > 1 averages repeated runs as the paper does, which helps only
    with a sampling model (temperature > 0) and no response cache. Calls run up to :func:`concurrency_of`
    at a time; LLMUnavailable (the offline stand-in among them) stops it.

    >>> from cookbook.llm.prompts import parse_prompt
    >>> class Longer:  # prefers the longer answer, whatever the criterion
    ...     def complete(self, prompt, *, max_tokens):
    ...         s = parse_prompt(prompt)[1]
    ...         one, two = len(s["ANSWER_ONE"]), len(s["ANSWER_TWO"])
    ...         return f'{{"winner": {1 if one > two else 2 if two > one else 0}, "reason": "longer"}}'
    >>> v = judge_pair("Which trades matter?", "Mining, fishing and glass.", "Mining.", Longer())
    >>> [(c, v[c].winner, v[c].score) for c in ("diversity", "directness")]
    [('diversity', 'A', 1.0), ('directness', 'A', 1.0)]
    """
    string(question, "question")
    string(answer_a, "answer_a")
    string(answer_b, "answer_b")
    return _judge_all([(question, answer_a, answer_b)], llm, criteria, replicates, max_tokens, concurrency)[0]


def compare_methods(questions: Sequence[str], answers_a: Sequence[str], answers_b: Sequence[str], llm: LLM, *,
                    criteria: Sequence[str] = tuple(CRITERIA), names: tuple[str, str] = ("A", "B"),
                    replicates: int = 1, max_tokens: int = 400, concurrency: int | None = None,
                    n_boot: int = 10_000, ci: float = 0.95, seed: int = 0) -> Comparison:
    """Method A against method B judged on every question (``answers_a[i]``, ``answers_b[i]`` answer
    ``questions[i]``): per criterion, A's win rate (mean of its per-question :func:`judge_pair` scores; 0.5 is
    no preference) with a paired percentile-bootstrap ``ci`` interval over questions (``n_boot`` resamples,
    ``seed``). The same answers and judge answers give the same result.

    >>> class FirstIsBest:  # position bias only
    ...     def complete(self, prompt, *, max_tokens):
    ...         return '{"winner": 1, "reason": "first"}'
    >>> c = compare_methods(["Q1?", "Q2?"], ["a1", "a2"], ["b1", "b2"], FirstIsBest(), criteria=["diversity"])
    >>> print(c.rates["diversity"])
    diversity: A wins 0.500 [0.500, 0.500] over 2 questions (A 0, tie 2, B 0; 0 unreadable)
    """
    questions = _texts(questions, "questions")
    answers_a, answers_b = _texts(answers_a, "answers_a"), _texts(answers_b, "answers_b")
    integer(n_boot, "n_boot")  # checked before any call is paid for
    probability(ci, "ci", zero_ok=False, one_ok=False, what="a confidence level in (0, 1)")
    if not len(questions) == len(answers_a) == len(answers_b):
        raise ValueError(f"one answer per question from each method: {len(questions)} question(s), "
                         f"{len(answers_a)} in answers_a, {len(answers_b)} in answers_b")
    if not (isinstance(names, tuple) and len(names) == 2 and all(isinstance(x, str) and x for x in names)):
        raise ValueError(f"names must be a tuple of two non-empty strings (A, B), got {names!r}")
    verdicts = _judge_all(list(zip(questions, answers_a, answers_b)), llm, criteria, replicates, max_tokens,
                          concurrency)
    rates, warnings = {}, []
    for c in _criteria(criteria):
        scores = [v[c].score for v in verdicts]
        paired = paired_bootstrap(scores, [1 - s for s in scores], n_boot=n_boot, ci=ci, seed=seed)
        rates[c] = WinRate(c, len(scores), sum(scores) / len(scores), (1 + paired.ci_low) / 2,
                           (1 + paired.ci_high) / 2, paired, tuple(scores), sum(v[c].unreadable for v in verdicts))
        for i, v in enumerate(verdicts):
            for order, js in (("A first", v[c].a_first), ("B first", v[c].b_first)):
                warnings += [f"question {i}, {c}, {order}: {j.reason}" for j in js if not j.readable]
    return Comparison(rates, tuple(verdicts), tuple(warnings), names)
