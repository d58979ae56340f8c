"""GraphRAG's community hierarchy: Leiden on the whole graph, then Leiden again inside every community larger
than ``max_cluster_size``, level by level, as GraphRAG's ``hierarchical_leiden`` does. Each level is a
membership over the nodes with parent links to the level above. Taught in
notebooks/03_leiden_communities.ipynb; community reports are written per level (:mod:`cookbook.index.reports`).

>>> import igraph as ig
>>> h = hierarchical_leiden(ig.Graph.Famous("Zachary"), max_cluster_size=8, seed=0)
>>> all(s <= 8 for s in h.sizes(len(h.levels) - 1)) or bool(h.unsplittable)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import integer
from .._validate import seed as check_seed
from .communities import canonical, leiden, to_igraph

__all__ = ["Hierarchy", "hierarchical_leiden"]


@dataclass
class Hierarchy:
    """``levels[l]`` is a full membership at level ``l`` (0 = coarsest); ``parents[l][c]`` is the
    level ``l-1`` community that level-``l`` community ``c`` refines (``parents[0]`` is all -1).
    ``unsplittable`` lists the leaf-level (last level) communities above ``max_cluster_size`` that
    Leiden would not split (e.g. a clique); they are kept as leaves. Made by :func:`hierarchical_leiden`,
    taught in notebooks/03_leiden_communities.ipynb.

    >>> h = Hierarchy([np.array([0, 0, 0, 0]), np.array([0, 0, 1, 1])], [np.array([-1]), np.array([0, 0])], 2)
    >>> len(h.levels), h.parents[1].tolist()  # both level-1 communities refine level-0 community 0
    (2, [0, 0])
    """

    levels: list[np.ndarray]
    parents: list[np.ndarray]
    max_cluster_size: int
    unsplittable: list[int] = field(default_factory=list)

    def sizes(self, level: int) -> np.ndarray:
        """Members per community at ``level``, indexed by community. Taught in notebooks/03_leiden_communities.ipynb.

        >>> levels = [np.array([0, 0, 0, 1]), np.array([0, 0, 1, 2])]
        >>> h = Hierarchy(levels, [np.array([-1, -1]), np.array([0, 0, 1])], max_cluster_size=2)
        >>> h.sizes(0).tolist(), h.sizes(1).tolist()
        ([3, 1], [2, 1, 1])
        """
        return np.bincount(self.levels[level])


def hierarchical_leiden(graph, *, max_cluster_size: int = 10, seed: int = 0, resolution: float = 1.0,
                        max_levels: int = 10) -> Hierarchy:
    """Re-cluster every community larger than ``max_cluster_size`` on its induced subgraph,
    recursively (as microsoft/graphrag does), until none is too large or none can be split.

    Every level partitions the whole node set and refines its parent level: a community small
    enough is carried down unchanged. Taught in notebooks/03_leiden_communities.ipynb.

    >>> import igraph as ig
    >>> h = hierarchical_leiden(ig.Graph.Famous("Zachary"), max_cluster_size=8, seed=0)
    >>> len(h.levels) > 1, all(h.sizes(len(h.levels) - 1) <= 8), h.levels[0].shape
    (True, True, (34,))
    """
    integer(max_cluster_size, "max_cluster_size", at_least=2)
    seed = check_seed(seed)
    g = to_igraph(graph)
    top = leiden(g, resolution=resolution, seed=seed).membership
    levels, parents = [top], [np.full(top.max() + 1, -1)]
    stuck: set[tuple[int, ...]] = set()  # communities (by members) that Leiden would not split
    while len(levels) < max_levels:
        cur = levels[-1]
        big = [c for c, s in enumerate(np.bincount(cur)) if s > max_cluster_size]
        big = [c for c in big if tuple(np.flatnonzero(cur == c)) not in stuck]
        if not big:
            break
        nxt = cur.copy() * 0 - 1
        next_id, split_any = 0, False
        parent_of: list[int] = []
        for c in range(cur.max() + 1):
            members = np.flatnonzero(cur == c)
            sub_membership = np.zeros(len(members), dtype=int)
            if c in big:
                sub = g.induced_subgraph(members.tolist())
                if sub.ecount() > 0:
                    sub_membership = leiden(sub, resolution=resolution, seed=seed).membership
                if sub_membership.max() == 0:
                    stuck.add(tuple(members))
                else:
                    split_any = True
            for s in range(sub_membership.max() + 1):
                nxt[members[sub_membership == s]] = next_id
                parent_of.append(c)
                next_id += 1
        if not split_any:
            break
        # Keep canonical numbering within the level, and carry the parent links through it.
        canon = canonical(nxt)
        mapping = np.empty(next_id, dtype=int)
        mapping[nxt] = canon
        par = np.empty(next_id, dtype=int)
        par[mapping] = np.asarray(parent_of)
        levels.append(canon)
        parents.append(par)
    leaf = levels[-1]
    unsplittable = [c for c in range(leaf.max() + 1) if tuple(np.flatnonzero(leaf == c)) in stuck]
    return Hierarchy(levels, parents, int(max_cluster_size), unsplittable)
