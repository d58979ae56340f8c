"""The overlap-aware seed trade-off that ``make bench`` reports (benchmarks/sweeps.py): the selector's penalty ×
oversample tuned on a dev half (seed overlap against seed recall), the chosen setting against the two-step top-k on
the test half, with paired CIs and latencies. Seed overlap is what the selector minimises, so its cut holds by
construction. :func:`seed_picks`, one search and one Jaccard matrix behind every setting's seeds, also serves
notebook 07's downstream measurement (:mod:`cookbook.harness.expansion`) and its penalty sweep.

>>> TRADEOFF_PENALTIES, TRADEOFF_OVERSAMPLES  # the settings tried on the dev half
((0.05, 0.1, 0.2, 0.3, 0.5), (2, 3, 5))
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import stats
from .._validate import integer, number
from ..metrics import support_recall
from ..query import seeds
from ..query.hipporag import HippoRetriever
from ..stats import dev_test_split

__all__ = ["TRADEOFF_OVERSAMPLES", "TRADEOFF_PENALTIES", "SeedTradeoff", "seed_picks", "seed_selections",
           "seed_tradeoff"]


def seed_picks(index, adjacency, query_vec, top_k: int, settings, *, jaccard: bool = True, hits=None):
    """One query's candidates and the seeds every ``(oversample, penalty)`` in ``settings`` picks among them
    (penalty None: the two-step top-k), as :func:`cookbook.query.seeds.retrieve` and
    :func:`~cookbook.query.seeds.two_step_retrieve` pick them with their default ``max_candidates`` of 100.

    Returns ``(ids, scores, J, picks)``: the widest candidate list the settings need (best first), its Jaccard
    matrix (None when ``jaccard`` is False and no setting is fused) and ``{setting: positions of the seeds in
    ids}``, in pick order. One search serves every setting: a smaller oversample's candidates are a prefix of
    the larger one's (the index ranks by score, then row). ``hits``, when given, is ``index.search(query_vec, m)``
    made once for several calls, ``m`` at least the candidates these settings need.

    >>> import numpy as np, scipy.sparse as sp
    >>> from cookbook.embed import CosineIndex
    >>> index = CosineIndex(np.array([[1.0, 0.1], [0.95, 0.12], [0.8, 0.6], [0.0, 1.0]]))
    >>> A = sp.csr_matrix(np.array([[0, 0, 1, 0], [0, 0, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]], float))  # 0, 1: twins
    >>> ids, scores, J, picks = seed_picks(index, A, np.array([1.0, 0.0]), 2, [(1, None), (2, 1.0)])
    >>> ids.tolist(), {s: ids[at].tolist() for s, at in picks.items()}
    ([0, 1, 2, 3], {(1, None): [0, 1], (2, 1.0): [0, 2]})
    """
    top_k = integer(top_k, "top_k")
    settings = list(settings)
    if not settings:
        raise ValueError("settings is empty: no (oversample, penalty) to pick seeds for")
    if top_k > len(index):
        raise ValueError(f"top_k={top_k} is larger than the {len(index)} indexed vectors")
    widest = min(seeds.n_candidates(top_k, max(o for o, _ in settings), 100), len(index))
    if hits is None:
        cand, ann = index.search(query_vec, widest)
    elif len(hits[0]) < widest:
        raise ValueError(f"hits holds {len(hits[0])} candidates, these settings need {widest}")
    else:
        cand, ann = hits[0][:widest], hits[1][:widest]
    fused = any(p is not None for _, p in settings)
    N = seeds.neighbourhoods(adjacency, cand) if fused or jaccard else None
    J = seeds.jaccard_matrix(N) if N is not None else None
    picks, rows = {}, {}
    for o, p in settings:
        c = min(seeds.n_candidates(top_k, o, 100), len(index))
        if p is not None and c not in rows:  # a sparse slice costs more than the pick: one per candidate count
            rows[c] = N[:c]
        picks[o, p] = (np.arange(top_k) if p is None else
                       seeds.select_seeds(np.arange(c), ann[:c], rows[c], top_k, overlap_penalty=p, jaccard=J[:c, :c]))
    return cand, ann, J, picks


def seed_selections(index, adjacency, query_vec, top_k: int, settings) -> dict:
    """The seeds :func:`cookbook.query.seeds.retrieve` picks (depth 0) for one query under every ``(oversample,
    penalty)`` in ``settings`` (penalty None: the two-step top-k), as ``{setting: (seeds, overlap, mean ANN)}``.

    One search and one Jaccard matrix serve every setting (:func:`seed_picks`); the seeds' overlap is the mean of
    their block of that matrix (what :func:`cookbook.query.seeds.seed_overlap` computes afresh).

    >>> import numpy as np, scipy.sparse as sp
    >>> from cookbook.embed import CosineIndex
    >>> index = CosineIndex(np.array([[1.0, 0.1], [0.95, 0.12], [0.8, 0.6], [0.0, 1.0]]))
    >>> A = sp.csr_matrix(np.array([[0, 0, 1, 0], [0, 0, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0]], float))  # 0, 1: twins
    >>> out = seed_selections(index, A, np.array([1.0, 0.0]), 2, [(1, None), (2, 1.0)])
    >>> [(setting, out[setting][0].tolist(), round(out[setting][1], 3)) for setting in out]  # two-step vs fused
    [((1, None), [0, 1], 1.0), ((2, 1.0), [0, 2], 0.0)]
    """
    cand, ann, J, picks = seed_picks(index, adjacency, query_vec, top_k, settings)
    upper = np.triu_indices(top_k, 1)
    return {s: (cand[at], float(J[np.ix_(at, at)][upper].mean()) if top_k > 1 else 0.0, float(ann[at].mean()))
            for s, at in picks.items()}


TRADEOFF_PENALTIES = (0.05, 0.1, 0.2, 0.3, 0.5)


TRADEOFF_OVERSAMPLES = (2, 3, 5)


@dataclass(frozen=True)
class SeedTradeoff:
    """The overlap-aware selector against the two-step baseline on a corpus's multi-hop questions.

    ``penalty`` and ``oversample`` were chosen on the ``dev`` questions (``sweep`` holds every setting
    tried there); every per-query array below is over the disjoint ``test`` questions, in that order.
    Overlap is the seeds' mean pairwise neighbourhood Jaccard (:func:`cookbook.query.seeds.seed_overlap`); recall
    is seed recall@``top_k`` of the supporting passages; milliseconds are one call at depth 0.
    Built by :func:`seed_tradeoff`.

    >>> SeedTradeoff.quartiles([1, 2, 3, 4, 5])
    (2.0, 3.0, 4.0)
    """

    corpus: str
    top_k: int
    penalty: float
    oversample: int
    dev: tuple[int, ...]
    test: tuple[int, ...]
    sweep: list[dict]
    hops: np.ndarray
    overlap_two_step: np.ndarray
    overlap_fused: np.ndarray
    recall_two_step: np.ndarray
    recall_fused: np.ndarray
    ms_two_step: np.ndarray
    ms_fused: np.ndarray
    overlap_cut: stats.PairedResult  # two-step − fused overlap (> 0: the selector lowers it)
    recall_change: dict  # hop count (and "all") → fused − two-step recall (< 0: a recall cost)

    @staticmethod
    def quartiles(x) -> tuple[float, float, float]:
        """(25th percentile, median, 75th percentile).

        >>> SeedTradeoff.quartiles([0.0, 1.0])
        (0.25, 0.5, 0.75)
        """
        q1, med, q3 = np.quantile(np.asarray(x, dtype=float), [0.25, 0.5, 0.75])
        return float(q1), float(med), float(q3)

    @property
    def ratio_of_means(self) -> float:
        """Mean two-step overlap ÷ mean fused overlap: the old headline, dominated by a few queries."""
        return float(self.overlap_two_step.mean() / max(self.overlap_fused.mean(), 1e-12))

    @property
    def latency_ratio(self) -> float:
        """Median fused ms ÷ median two-step ms (wall time: it varies run to run; never a pass/fail check)."""
        return float(np.median(self.ms_fused) / np.median(self.ms_two_step))

    def table(self) -> str:
        """The trade-off as plain text, the same in every notebook that shows it."""
        def q(x):
            lo, med, hi = self.quartiles(x)
            return f"median {med:.4f} [quartiles {lo:.4f}, {hi:.4f}], mean {np.mean(x):.4f}"

        lines = [f"{self.corpus}: penalty {self.penalty:g}, oversample {self.oversample}× (chosen on "
                 f"{len(self.dev)} dev questions), topK = {self.top_k}; {len(self.test)} test questions",
                 f"  seed overlap  two-step: {q(self.overlap_two_step)}",
                 f"  seed overlap  fused:    {q(self.overlap_fused)}",
                 f"  overlap cut (two-step − fused): {self.overlap_cut}",
                 f"  ratio of means {self.ratio_of_means:.1f}× (a few queries dominate it: read the median)"]
        for h, r in self.recall_change.items():
            name = "all questions" if h == "all" else f"{h}-hop"
            sel = np.ones(len(self.hops), bool) if h == "all" else self.hops == h
            lines.append(f"  seed recall@{self.top_k} {name:13} two-step {self.recall_two_step[sel].mean():.3f}, "
                         f"fused {self.recall_fused[sel].mean():.3f}; fused − two-step {r}")
        lines.append(f"  latency: median {np.median(self.ms_two_step):.2f} ms two-step, "
                     f"{np.median(self.ms_fused):.2f} ms fused → {self.latency_ratio:.1f}× (wall time, this run)")
        return "\n".join(lines)


def seed_tradeoff(corpus, retriever: HippoRetriever, *, top_k: int = 5, seed: int = 7,
                  penalties: Sequence[float] = TRADEOFF_PENALTIES,
                  oversamples: Sequence[int] = TRADEOFF_OVERSAMPLES, max_recall_loss: float = 0.02,
                  n_boot: int = 10_000) -> SeedTradeoff:
    """Overlap-aware seeds vs two-step on ``corpus``'s multi-hop questions (a :class:`~cookbook.data.records.Corpus`),
    over ``retriever``'s passage graph and index (e.g. ``HippoRetriever.from_world(corpus)``).

    Tuning, on the dev half (:func:`dev_test_split`): among ``penalties`` × ``oversamples``, the setting with
    the lowest mean seed overlap whose mean seed recall is at most ``max_recall_loss`` below the two-step
    baseline's; when none is that cheap, the one with the best recall (ties: lower overlap, then lower
    penalty and oversample). Reported on the test half: per-query overlap and recall of both methods, their
    paired bootstrap CIs (``seed`` also seeds the bootstrap) and per-query latency.
    Run by benchmarks/sweeps.py. Seed overlap is what the selector minimises, so its cut holds by construction;
    notebook 07 measures what a user wants instead, the supporting passages the expansion reaches
    (:mod:`cookbook.harness.expansion`).

    >>> from cookbook import data
    >>> from cookbook.data.corpus import from_world
    >>> from cookbook.data.world import make_world
    >>> world = make_world(seed=0, scale="tiny")
    >>> tr = seed_tradeoff(from_world(world), HippoRetriever.from_world(world), n_boot=1000)
    >>> len(tr.dev), len(tr.test), tr.overlap_cut.n
    (12, 12, 12)
    >>> print(tr.table().splitlines()[0])  # the rest: overlap quartiles, CIs, recall per hop, latency
    world: penalty 0.5, oversample 3× (chosen on 12 dev questions), topK = 5; 12 test questions
    >>> round(tr.ratio_of_means, 2), tr.latency_ratio > 0
    (1.81, True)
    """
    number(max_recall_loss, "max_recall_loss", low=0)
    integer(top_k, "top_k")
    qs = corpus.questions
    if len(qs) < 4:
        raise ValueError(f"seed_tradeoff needs at least 4 questions to split into dev and test, got {len(qs)}")
    index, A, pid = retriever.index, retriever.graph.adjacency, retriever.graph.passage_ids
    qvec = retriever.embedder.transform([q.text for q in qs])
    dev, test = dev_test_split([q.hops for q in qs], seed)

    def recall(i, picked):
        return support_recall([pid[n] for n in picked.tolist()], qs[i].supporting)

    settings = [(1, None)] + [(int(o), float(p)) for o in oversamples for p in penalties]
    per_setting = {s: [] for s in settings}
    for i in dev:
        for s, (picked, overlap, _) in seed_selections(index, A, qvec[i], top_k, settings).items():
            per_setting[s].append((overlap, recall(i, picked)))
    sweep = [{"oversample": o, "penalty": 0.0 if p is None else p, "baseline": p is None,
              "overlap": float(np.mean([v[0] for v in per_setting[o, p]])),
              "recall": float(np.mean([v[1] for v in per_setting[o, p]]))} for o, p in settings]
    tried = [p for p in sweep if not p["baseline"]]
    cheap = [p for p in tried if p["recall"] >= sweep[0]["recall"] - max_recall_loss]
    best = (min(cheap, key=lambda p: (p["overlap"], p["penalty"], p["oversample"])) if cheap else
            min(tried, key=lambda p: (-p["recall"], p["overlap"], p["penalty"], p["oversample"])))

    def two_step(i):
        return seeds.two_step_retrieve(index, A, qvec[i], top_k=top_k, depth=0)

    def fused(i):
        return seeds.retrieve(index, A, qvec[i], top_k=top_k, depth=0, oversample=best["oversample"],
                              overlap_penalty=best["penalty"])

    ov2, rec2, ovf, recf, ms2, msf = [], [], [], [], [], []
    for j, i in enumerate(test):  # interleaved in alternating order, so drift and warm caches favour neither
        for method, ms, ov, rec in ((two_step, ms2, ov2, rec2), (fused, msf, ovf, recf))[::1 if j % 2 else -1]:
            t0 = time.perf_counter()
            r = method(i)
            ms.append((time.perf_counter() - t0) * 1e3)
            ov.append(seeds.seed_overlap(A, r.seeds))
            rec.append(recall(i, r.seeds))
    hops = np.array([qs[i].hops for i in test])
    ov2, ovf, rec2, recf = map(np.array, (ov2, ovf, rec2, recf))
    change = {int(h): stats.paired_bootstrap(recf[hops == h], rec2[hops == h], n_boot=n_boot, seed=seed)
              for h in np.unique(hops)}
    change["all"] = stats.paired_bootstrap(recf, rec2, n_boot=n_boot, seed=seed)
    return SeedTradeoff(corpus.name, top_k, best["penalty"], best["oversample"], dev, test, sweep, hops,
                        ov2, ovf, rec2, recf, np.array(ms2), np.array(msf),
                        stats.paired_bootstrap(ov2, ovf, n_boot=n_boot, seed=seed), change)
