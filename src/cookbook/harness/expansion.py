"""Seeds measured downstream (notebook 07): how many of a question's supporting passages the expanded subgraph
reaches for the nodes it explores, fused (overlap-aware) seeds against the two-step top-k at equal budgets.

A retrieval's *expansion order* is its BFS from the seeds in :func:`cookbook.query.seeds.bfs`'s order (hop, then
the score of the best seed that reached the node, ties by node id), run as deep as the budget needs. The first
``B`` nodes of that order are what a reader with a budget of ``B`` nodes explores — passages and entities alike —
and the recall at ``B`` is the share of the question's supporting passages among them. Lower seed overlap is what
the selector minimises, so it is true by construction; this is the measurement that can go either way.

>>> BUDGETS, TWO_STEP_TOP_KS, FUSED_TOP_KS  # the settings notebook 07 tunes on its dev half
((10, 20, 50, 100), (5, 10, 20, 50, 100), (5, 10, 20, 50, 100))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import stats
from .._validate import integer, square_csr
from .._validate import seed as check_seed
from ..query import seeds
from ..query.hipporag import HippoRetriever
from ..stats import dev_test_split
from .tradeoff import seed_picks

__all__ = ["BFS_SHARE", "BUDGETS", "FUSED_OVERSAMPLES", "FUSED_PENALTIES", "FUSED_TOP_KS", "ROLES", "TWO_STEP_TOP_KS",
           "ExpansionComparison", "Setting", "budgeted_recall", "expansion_comparison", "expansion_order",
           "expansion_recalls", "expansion_scores", "grid_edges", "question_sample"]

BUDGETS = (10, 20, 50, 100)
# The tuned roles choose topK < budget only (where the budget allows one): with topK ≥ budget the expansion is the
# top-budget hits themselves, no BFS runs, and a lesson about seeds *for an expansion* would be decided without it.
TWO_STEP_TOP_KS = (5, 10, 20, 50, 100)
# The same topK grid for the fused seeds: tuned alike, neither side has a setting the other lacks (fused capped at
# 10 had made the two-step baseline win at B = 20 by having more seeds to spend, not by picking them better).
FUSED_TOP_KS = TWO_STEP_TOP_KS
FUSED_OVERSAMPLES = (2, 5)
FUSED_PENALTIES = (0.1, 0.3, 0.5)
# A tuned setting counts at a budget only where its BFS adds at least one passage (beyond the seeds) within the
# budget on this share of the dev questions. The passage graph is bipartite: from k seeds the first hop holds only
# entities, so at a budget no larger than the seeds plus their entities the expansion reads no passage the top-k
# hits did not, and a lesson about the expansion would really compare two top-k lists.
BFS_SHARE = 0.9


class Setting(NamedTuple):
    """One retrieval: ``top_k`` seeds; ``penalty`` None is the two-step top-k (``oversample`` 1), a number the
    fused selector's overlap penalty over ``oversample · top_k`` candidates (:func:`cookbook.query.seeds.retrieve`).

    >>> str(Setting(5)), str(Setting(10, 5, 0.3))
    ('two-step topK 5', 'fused topK 10, oversample 5×, penalty 0.3')
    """

    top_k: int
    oversample: int = 1
    penalty: float | None = None

    @property
    def fused(self) -> bool:
        """Whether this is the overlap-aware selector (else the two-step top-k).

        >>> Setting(5).fused, Setting(5, 2, 0.1).fused
        (False, True)
        """
        return self.penalty is not None

    def __str__(self) -> str:
        if not self.fused:
            return f"two-step topK {self.top_k}"
        return f"fused topK {self.top_k}, oversample {self.oversample}×, penalty {self.penalty:g}"


def expansion_order(adjacency, seed_nodes: Sequence[int], seed_scores: Sequence[float],
                    budget: int) -> seeds.BFSResult:
    """The first ``budget`` nodes a BFS from ``seed_nodes`` reaches, in :func:`cookbook.query.seeds.bfs`'s order
    (hop, then −score, then id), going one hop deeper until it has ``budget`` nodes or reaches no new node
    (then fewer). The order of the first nodes never depends on how deep the search went: a deeper hop only
    appends.

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]))  # path 0-1-2-3
    >>> expansion_order(A, [3, 0], [0.5, 0.9], budget=3).nodes.tolist()  # hop 0 by score, then 0's neighbour
    [0, 3, 1]
    >>> len(expansion_order(A, [0], [0.9], budget=10))  # the whole component, 4 nodes
    4
    """
    budget = integer(budget, "budget")
    A = square_csr(adjacency, "adjacency", dtype=None, csc_ok=False)
    seed_nodes = np.asarray(seed_nodes, dtype=np.intp)
    # Depth 1 reaches at most the seeds and their edges: when even that is short of the budget, start deeper.
    # (Unknown seeds start at depth 0, and bfs names them.)
    known = seed_nodes.size > 0 and seed_nodes.min() >= 0 and seed_nodes.max() < A.shape[0]
    n_seeds = len(np.unique(seed_nodes))
    depth = (0 if not known or n_seeds >= budget else
             1 if n_seeds + np.diff(A.indptr)[seed_nodes].sum() >= budget else 2)
    r = seeds.bfs(A, seed_nodes, depth, seed_scores)
    while len(r) < budget:
        deeper = seeds.bfs(A, seed_nodes, depth + 1, seed_scores)
        if len(deeper) == len(r):  # the seeds' components are exhausted
            break
        depth, r = depth + 1, deeper
    return seeds.BFSResult(r.nodes[:budget], r.hops[:budget], r.scores[:budget])


def budgeted_recall(order: Sequence[int], gold: Sequence[int], budgets: Sequence[int]) -> np.ndarray:
    """Share of the ``gold`` nodes (a question's supporting passages as graph nodes) among the first ``B`` nodes
    of ``order``, for each ``B`` in ``budgets``: a float array of shape ``(len(budgets),)``. An order shorter
    than ``B`` counts what it has.

    >>> budgeted_recall([4, 7, 1, 9, 2], gold=[1, 2], budgets=[2, 3, 5, 10]).tolist()
    [0.0, 0.5, 1.0, 1.0]
    """
    gold = np.unique(np.asarray(gold, dtype=int))
    if gold.size == 0:
        raise ValueError("gold is empty: recall of nothing is undefined")
    b = np.array([integer(x, "budget") for x in budgets], dtype=int)
    order = np.asarray(order, dtype=int)
    hit = (order[:, None] == gold[None, :]).any(axis=1)  # a question has a few gold passages: cheaper than isin
    found = np.r_[0, np.cumsum(hit)]
    return found[np.minimum(b, len(found) - 1)] / gold.size


def expansion_scores(index, adjacency, query_vec, gold: Sequence[int], settings: Sequence[Setting],
                     budgets: Sequence[int] = BUDGETS, n_passages: int | None = None) -> dict[Setting, tuple]:
    """Per setting, ``(recall, added)``: :func:`budgeted_recall` of one query's expansion at each budget, shape
    ``(len(budgets),)``, and how many passages the BFS adds within each budget beyond the seeds (nodes past hop 0
    below ``n_passages``; None counts every node past hop 0), an int array of the same shape.

    >>> import scipy.sparse as sp
    >>> from cookbook.embed import CosineIndex
    >>> A = sp.csr_matrix(np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]]))  # passages 0, 1 share entity 2
    >>> out = expansion_scores(CosineIndex([[1, 0], [0, 1], [1, 1]]), A, np.array([1.0, 0]), [1], [Setting(1)],
    ...                        [1, 2, 3], n_passages=2)
    >>> [a.tolist() for a in out[Setting(1)]]  # the entity comes first, then passage 1, the BFS's one passage
    [[0.0, 0.0, 1.0], [0, 0, 1]]
    """
    budgets = tuple(integer(b, "budget") for b in budgets)
    if not budgets:
        raise ValueError("budgets is empty: no number of nodes to score")
    widest = max(budgets)
    out, by_seeds = {}, {}
    n = len(index)
    hits = index.search(query_vec, max(min(seeds.n_candidates(s.top_k, s.oversample, 100), n) for s in settings))
    for k in dict.fromkeys(s.top_k for s in settings):
        group = [s for s in settings if s.top_k == k]
        cand, ann, _, picks = seed_picks(index, adjacency, query_vec, k, [(s.oversample, s.penalty) for s in group],
                                         jaccard=False, hits=hits)
        for s in group:
            at = picks[s.oversample, s.penalty]
            key = tuple(cand[at].tolist())  # a seed's score is its ANN score: the seeds fix the expansion
            if key not in by_seeds:
                r = expansion_order(adjacency, cand[at], ann[at], widest)
                bfs_passage = (r.hops > 0) & (r.nodes < (n_passages if n_passages is not None else np.inf))
                found = np.r_[0, np.cumsum(bfs_passage)]
                by_seeds[key] = (budgeted_recall(r.nodes, gold, budgets),
                                 found[np.minimum(budgets, len(found) - 1)].astype(int))
            out[s] = by_seeds[key]
    return out


def expansion_recalls(index, adjacency, query_vec, gold: Sequence[int], settings: Sequence[Setting],
                      budgets: Sequence[int] = BUDGETS) -> dict[Setting, np.ndarray]:
    """:func:`budgeted_recall` of one query's expansion under every setting, ``{setting: (len(budgets),)}``.

    The seeds are what :func:`cookbook.query.seeds.retrieve` (fused) and
    :func:`~cookbook.query.seeds.two_step_retrieve` pick, with their default ``max_candidates`` of 100: one
    search serves every setting and one Jaccard matrix every topK (:func:`cookbook.harness.tradeoff.seed_picks`),
    and settings that pick the same seeds share one expansion.

    Candidates 0 and 1 are near-duplicates around node 3; the fused seeds take 2 instead, whose neighbour 4
    is a supporting passage:

    >>> import scipy.sparse as sp
    >>> from cookbook.embed import CosineIndex
    >>> A = sp.csr_matrix(np.array([[0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1],
    ...                             [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]]))
    >>> index = CosineIndex([[1, 0], [1, 0.1], [1, 0.8], [0, 1], [-1, 1]])
    >>> out = expansion_recalls(index, A, np.array([1.0, 0.0]), [4], [Setting(2), Setting(2, 2, 0.5)], [3, 4])
    >>> {str(s): r.tolist() for s, r in out.items()}
    {'two-step topK 2': [0.0, 0.0], 'fused topK 2, oversample 2×, penalty 0.5': [0.0, 1.0]}
    """
    return {s: r for s, (r, _) in expansion_scores(index, adjacency, query_vec, gold, settings, budgets).items()}


def grid_edges(setting: Setting, oversamples: Sequence[int] = FUSED_OVERSAMPLES,
               penalties: Sequence[float] = FUSED_PENALTIES) -> str:
    """Which of a fused setting's tuned knobs sit at the edge of their grid, as a note to print beside the choice
    ("" for a two-step setting or none at an edge): a choice at an edge may be an optimum the grid cut off.

    >>> grid_edges(Setting(5, 2, 0.1))
    "the grid's edge: oversample 2× and penalty 0.1 are the smallest tried"
    >>> grid_edges(Setting(5, 5, 0.3)), grid_edges(Setting(5))
    ("the grid's edge: oversample 5× is the largest tried", '')
    """
    if not isinstance(setting, Setting):
        raise TypeError(f"setting must be a Setting, got {type(setting).__name__}")
    if not setting.fused:
        return ""
    low, high = [], []
    for what, value, grid in (("oversample", f"{setting.oversample}×", oversamples),
                              ("penalty", f"{setting.penalty:g}", penalties)):
        v = setting.oversample if what == "oversample" else setting.penalty
        if len(grid) > 1 and v == min(grid):
            low.append(f"{what} {value}")
        elif len(grid) > 1 and v == max(grid):
            high.append(f"{what} {value}")
    parts = [f"{' and '.join(xs)} {'are' if len(xs) > 1 else 'is'} the {word} tried"
             for xs, word in ((low, "smallest"), (high, "largest")) if xs]
    return f"the grid's edge: {'; '.join(parts)}" if parts else ""


ROLES = ("two-step", "fused", "two-step, tuned topK", "fused, tuned topK")


@dataclass(frozen=True)
class ExpansionComparison:
    """Fused against two-step seeds by the supporting-passage recall of their expansion at each budget, on a
    corpus's questions. Every setting was chosen on the ``dev`` questions (``dev_means``: each setting's mean dev
    recall per budget); every per-question array is over the disjoint ``test`` questions, in that order (both are
    positions in ``corpus.questions``).

    ``chosen[role]`` holds one :class:`Setting` per budget and ``recall[role]`` its test recall, shape
    ``(len(test), len(budgets))``, for the four roles: ``"two-step"`` and ``"fused"`` at the fixed ``top_k``
    (the fused penalty and oversample tuned), ``"two-step, tuned topK"`` (the strongest two-step at that budget
    whose BFS runs: topK < budget) and ``"fused, tuned topK"`` (likewise, its penalty always > 0).
    ``same_top_k`` and ``tuned`` are the paired fused − two-step differences per budget (> 0: the fused seeds
    reach more). ``added[role]`` (same shape as ``recall[role]``) counts the passages the BFS adds within each
    budget beyond the seeds, and ``dev_bfs_share[setting]`` is, per budget, the share of dev questions where that
    setting's BFS adds at least one: a tuned role counts a setting only where it is at least :data:`BFS_SHARE`.
    Built by
    :func:`expansion_comparison`; taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> ROLES
    ('two-step', 'fused', 'two-step, tuned topK', 'fused, tuned topK')
    """

    corpus: str
    budgets: tuple[int, ...]
    top_k: int
    dev: tuple[int, ...]
    test: tuple[int, ...]
    hops: np.ndarray
    dev_means: dict
    chosen: dict
    recall: dict
    same_top_k: tuple[stats.PairedResult, ...]
    tuned: tuple[stats.PairedResult, ...]
    added: dict = field(default_factory=dict)
    dev_bfs_share: dict = field(default_factory=dict)

    def bfs_share(self, role: str, j: int) -> float:
        """Share of the test questions where ``role``'s BFS adds at least one passage within budget column ``j``
        (nan when ``added`` was not recorded).

        >>> import numpy as np
        >>> r = stats.paired_bootstrap([0.5, 1.0], [0.5, 0.5], n_boot=100)
        >>> tr = ExpansionComparison("toy", (10,), 5, (0,), (1, 2), np.array([1, 2]), {}, {}, {}, (r,), (r,),
        ...                          added={"fused": np.array([[0], [3]])})
        >>> tr.bfs_share("fused", 0)
        0.5
        """
        if role not in self.added:
            return float("nan")
        return float(np.mean(self.added[role][:, j] >= 1))

    def table(self) -> str:
        """The comparison as plain text: per budget, each role's mean test recall and setting, and both
        differences with their CIs.

        >>> import numpy as np, types
        >>> r = stats.paired_bootstrap([0.5, 1.0], [0.5, 0.5], n_boot=100)
        >>> s = {role: (Setting(5),) for role in ROLES}
        >>> tr = ExpansionComparison("toy", (10,), 5, (0,), (1, 2), np.array([1, 2]), {}, s,
        ...                          {role: np.array([[0.5], [1.0]]) for role in ROLES}, (r,), (r,))
        >>> print(tr.table().splitlines()[0])
        toy: supporting-passage recall of the expansion's first B nodes, 2 test questions (settings chosen on 1 dev)
        """
        lines = [f"{self.corpus}: supporting-passage recall of the expansion's first B nodes, {len(self.test)} test "
                 f"questions (settings chosen on {len(self.dev)} dev)"]
        for j, b in enumerate(self.budgets):
            lines.append(f"  B = {b}")
            for role in ROLES:
                bfs = (f"; BFS adds a passage on {self.bfs_share(role, j):.0%} of questions" if role in self.added
                       else "")
                lines.append(f"    {role:21} {self.recall[role][:, j].mean():.3f}  ({self.chosen[role][j]}{bfs})")
            lines.append(f"    fused − two-step, topK {self.top_k}:      {self.same_top_k[j]}")
            lines.append(f"    fused − two-step, both tuned: {self.tuned[j]}")
        return "\n".join(lines)


def _best(settings: Sequence[Setting], means: dict, j: int, bfs_share: dict | None = None) -> Setting:
    """The setting with the best mean dev recall at budget column ``j``; ties go to the cheaper one (fewer seeds,
    then fewer candidates, then the smaller penalty). ``bfs_share``: only settings whose BFS adds a passage within
    the budget on at least :data:`BFS_SHARE` of the dev questions, or the fewest seeds when none does."""
    if bfs_share is not None:
        fewest = min(s.top_k for s in settings)
        settings = ([s for s in settings if bfs_share[s][j] >= BFS_SHARE]
                    or [s for s in settings if s.top_k == fewest])
    return min(settings, key=lambda s: (-means[s][j], s.top_k, s.oversample, s.penalty or 0.0))


def question_sample(hops: Sequence[int], n: int | None, seed: int = 7) -> np.ndarray:
    """Positions of at most ``n`` questions (all when ``n`` is None or at least their number), drawn with ``seed``
    in equal shares per hop count (as near as ``n`` allows; the smaller hop counts get the remainder), sorted.

    >>> question_sample([1, 1, 1, 2, 2, 2, 3, 3, 3], 6, seed=0).tolist()  # two of each hop count
    [0, 2, 4, 5, 6, 8]
    >>> question_sample([1, 2], None).tolist()
    [0, 1]
    """
    hops = np.asarray(hops)
    if hops.ndim != 1 or hops.size == 0:
        raise ValueError(f"hops must be a non-empty sequence of hop counts (one per question), got shape {hops.shape}")
    if n is None or integer(n, "n_questions") >= len(hops):
        return np.arange(len(hops))
    rng = np.random.default_rng(check_seed(seed))
    strata = np.unique(hops)
    share = np.full(len(strata), n // len(strata)) + (np.arange(len(strata)) < n % len(strata))
    out = []
    for h, m in zip(strata, share):
        idx = np.flatnonzero(hops == h)
        out += rng.permutation(idx)[:m].tolist()
    return np.sort(np.array(out, dtype=int))


def expansion_comparison(corpus, retriever: HippoRetriever, *, budgets: Sequence[int] = BUDGETS, top_k: int = 5,
                         seed: int = 7, n_questions: int | None = None,
                         two_step_top_ks: Sequence[int] = TWO_STEP_TOP_KS, fused_top_ks: Sequence[int] = FUSED_TOP_KS,
                         oversamples: Sequence[int] = FUSED_OVERSAMPLES, penalties: Sequence[float] = FUSED_PENALTIES,
                         n_boot: int = 10_000) -> ExpansionComparison:
    """Fused vs two-step seeds on ``corpus``'s questions (a :class:`~cookbook.data.records.Corpus`) by the
    supporting-passage recall of the expansion at each budget, over ``retriever``'s passage graph and index.

    ``n_questions`` caps the questions used (:func:`question_sample`: equal shares per hop count, seeded; the
    graph and the index stay whole). Tuned on the dev half (:func:`dev_test_split`, stratified by hop count), per
    budget, by the best mean recall (ties: fewer seeds, candidates, penalty): the fused penalty × oversample at
    ``top_k`` seeds; and, for the strongest baselines at equal cost, the two-step topK among ``two_step_top_ks``
    and the fused topK × oversample × penalty, each among the settings whose BFS adds a passage within the budget
    on at least :data:`BFS_SHARE` of the dev questions (the expansion is part of what is compared; at a budget
    where none does, the fewest seeds). TopK values larger than the index are left out, and so are fused
    settings with no more candidates than seeds (they are the two-step). Reported on the test half: each role's
    recall per question and the paired bootstrap CIs (``seed`` also seeds the sample and the bootstrap).

    >>> from cookbook.data.corpus import from_world
    >>> from cookbook.data.world import make_world
    >>> world = make_world(seed=0, scale="tiny")
    >>> cmp = expansion_comparison(from_world(world), HippoRetriever.from_world(world), budgets=(10, 20), n_boot=500)
    >>> len(cmp.dev), len(cmp.test), cmp.tuned[0].n, [str(s) for s in cmp.chosen["two-step, tuned topK"]]
    (12, 12, 12, ['two-step topK 5', 'two-step topK 5'])
    >>> round(cmp.bfs_share("two-step, tuned topK", 1), 2)  # at B = 20, 10 seeds and their entities would fill it
    0.92
    """
    top_k = integer(top_k, "top_k")
    budgets = tuple(integer(b, "budget") for b in budgets)
    if not budgets:
        raise ValueError("budgets is empty: nothing to compare")
    qs = corpus.questions
    sample = question_sample([q.hops for q in qs], n_questions, seed)
    if len(sample) < 4:
        raise ValueError(f"expansion_comparison needs at least 4 questions to split into dev and test, "
                         f"got {len(sample)}")
    index, A, pg = retriever.index, retriever.graph.adjacency, retriever.graph
    n = len(index)
    if top_k > n:
        raise ValueError(f"top_k={top_k} is larger than the {n} indexed passages")
    two_step = [Setting(k) for k in dict.fromkeys([top_k, *two_step_top_ks]) if k <= n]
    fused = [Setting(k, o, float(p)) for k in dict.fromkeys([top_k, *fused_top_ks]) if k <= n
             for o in oversamples for p in penalties if min(seeds.n_candidates(k, o, 100), n) > k]
    if not any(s.top_k == top_k for s in fused):
        raise ValueError(f"no fused setting draws more candidates than top_k={top_k}: raise an oversample")
    qvec = dict(zip(sample.tolist(), retriever.embedder.transform([qs[i].text for i in sample])))
    gold = {i: [pg.node(p) for p in qs[i].supporting] for i in sample.tolist()}
    dev, test = (tuple(sample[list(half)].tolist()) for half in dev_test_split([qs[i].hops for i in sample], seed))

    def scores(positions, settings):
        per = [expansion_scores(index, A, qvec[i], gold[i], settings, budgets, pg.n_passages) for i in positions]
        return ({s: np.array([r[s][0] for r in per]) for s in settings},
                {s: np.array([r[s][1] for r in per]) for s in settings})

    dev_recall, dev_added = scores(dev, two_step + fused)
    dev_means = {s: r.mean(axis=0) for s, r in dev_recall.items()}
    dev_bfs = {s: (a >= 1).mean(axis=0) for s, a in dev_added.items()}
    same = [s for s in fused if s.top_k == top_k]
    chosen = {"two-step": (Setting(top_k),) * len(budgets),
              "fused": tuple(_best(same, dev_means, j) for j in range(len(budgets))),
              "two-step, tuned topK": tuple(_best(two_step, dev_means, j, dev_bfs) for j in range(len(budgets))),
              "fused, tuned topK": tuple(_best(fused, dev_means, j, dev_bfs) for j in range(len(budgets)))}
    on_test, added_test = scores(test, list(dict.fromkeys(s for role in ROLES for s in chosen[role])))
    recall = {role: np.column_stack([on_test[s][:, j] for j, s in enumerate(chosen[role])]) for role in ROLES}
    added = {role: np.column_stack([added_test[s][:, j] for j, s in enumerate(chosen[role])]) for role in ROLES}

    def diffs(a, b):
        return tuple(stats.paired_bootstrap(recall[a][:, j], recall[b][:, j], n_boot=n_boot, seed=seed)
                     for j in range(len(budgets)))

    return ExpansionComparison(corpus.name, budgets, top_k, dev, test, np.array([qs[i].hops for i in test]),
                               dev_means, chosen, recall, diffs("fused", "two-step"),
                               diffs("fused, tuned topK", "two-step, tuned topK"), added, dev_bfs)
