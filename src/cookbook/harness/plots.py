"""Benchmark plots shared by the notebooks (07, 09) and ``benchmarks/``: each takes plain rows or arrays and an
optional matplotlib ``ax``, and returns the ``ax``."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .bench import loglog_slope

__all__ = ["bar_table", "context_assembly", "latency_distributions", "ordered_subgraph", "overlap_scatter",
           "restart_sweep", "scaling", "tradeoff"]


def _ax(ax, size=(6, 4)):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=size)
    return ax


def latency_distributions(rows: Sequence[dict], *, ax=None, title: str = ""):
    """Box plot of per-call latency (ms, log scale) for each method in ``rows``. Drawn by benchmarks/retrieval.py;
    notebook 09 draws its own, with a dot per call.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> rows = [{"method": m, "latency_s": s} for m, s in [("ppr", 0.002), ("ppr", 0.003), ("bm25", 0.001)]]
    >>> ax = latency_distributions(rows, ax=ax)
    >>> ax.get_title(), [t.get_text() for t in ax.get_xticklabels()]
    ('latency per query', ['ppr', 'bm25'])
    """
    ax = _ax(ax)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    data = [[r["latency_s"] * 1e3 for r in rows if r["method"] == m] for m in methods]
    ax.boxplot(data, tick_labels=methods, showfliers=True)
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms)")
    ax.set_title(title or "latency per query")
    return ax


def overlap_scatter(rows: Sequence[dict], *, x: str = "two-step", y: str = "fused", top_k: int = 10, depth: int = 0,
                    ax=None, title: str = ""):
    """Per query, method ``y``'s seed overlap against method ``x``'s, with the equal-overlap diagonal.
    Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> rows = [{"method": m, "query": q, "top_k": 10, "depth": 0, "seed_overlap": v}
    ...         for m, q, v in [("two-step", 0, 0.5), ("fused", 0, 0.2), ("two-step", 1, 0.4), ("fused", 1, 0.4)]]
    >>> ax = overlap_scatter(rows, ax=ax)
    >>> ax.get_title(), ax.collections[0].get_offsets().tolist()
    ('topK = 10, per query', [[0.5, 0.2], [0.4, 0.4]])
    """
    ax = _ax(ax, (4.5, 4.5))
    sel = {m: {r["query"]: r["seed_overlap"] for r in rows
               if r["method"] == m and r["top_k"] == top_k and r["depth"] == depth} for m in (x, y)}
    qs = sorted(set(sel[x]) & set(sel[y]))
    xs, ys = [sel[x][q] for q in qs], [sel[y][q] for q in qs]
    ax.scatter(xs, ys, s=15)
    hi = max(xs + ys + [1e-3])
    ax.plot([0, hi], [0, hi], ls=":", c="grey", label="equal overlap")
    ax.set_xlabel(f"{x} seed overlap")
    ax.set_ylabel(f"{y} seed overlap")
    ax.set_title(title or f"topK = {top_k}, per query")
    ax.legend()
    return ax


def tradeoff(points: Sequence[dict], *, x: str, y: str, group: str, label: str, ax=None, title: str = ""):
    """Curves of ``y`` against ``x``, one per value of ``group``, each point annotated with ``label``.
    Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> points = [{"overlap": o, "recall": r, "oversample": 2, "penalty": p}
    ...           for o, r, p in [(0.5, 0.8, 0.0), (0.3, 0.75, 0.5)]]
    >>> ax = tradeoff(points, x="overlap", y="recall", group="oversample", label="penalty", ax=ax, title="sweep")
    >>> ax.get_title(), [line.get_label() for line in ax.get_lines()]
    ('sweep', ['oversample 2'])
    """
    ax = _ax(ax)
    for g in dict.fromkeys(p[group] for p in points):
        pts = [p for p in points if p[group] == g]
        ax.plot([p[x] for p in pts], [p[y] for p in pts], "o-", label=f"{group} {g}")
        for p in pts:
            ax.annotate(f"{p[label]}", (p[x], p[y]), fontsize=7)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title)
    ax.legend()
    return ax


def scaling(curves: dict[str, tuple[Sequence[float], Sequence[float]]], *, ax=None, title: str = "scaling",
            ylabel: str = "seconds"):
    """Log-log time (or any cost, named by ``ylabel``) against edges, one curve per name, labelled with its
    fitted slope. Taught in notebooks/09_benchmark.ipynb.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> ax = scaling({"ppr": ([1e3, 1e4, 1e5], [0.001, 0.01, 0.1])}, ax=ax)
    >>> ax.get_lines()[0].get_label(), ax.get_xscale(), ax.get_ylabel()
    ('ppr (slope 1.00)', 'log', 'seconds')
    """
    ax = _ax(ax)
    for name, (sizes, secs) in curves.items():
        ax.loglog(sizes, secs, "o-", label=f"{name} (slope {loglog_slope(sizes, secs):.2f})")
    ax.set_xlabel("edges")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def restart_sweep(points: Sequence[dict], *, ax=None, title: str = ""):
    """Recall against PPR's restart probability λ, one line per hop count, from the points of
    :func:`cookbook.harness.experiments.restart_sweep` (keys ``restart`` and ``recall@<k>_<h>hop``).
    Taught in notebooks/09_benchmark.ipynb.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> pts = [{"restart": 0.15, "recall@5_1hop": 0.9, "recall@5_2hop": 0.5},
    ...        {"restart": 0.5, "recall@5_1hop": 0.8, "recall@5_2hop": 0.6}]
    >>> ax = restart_sweep(pts, ax=ax)
    >>> [line.get_label() for line in ax.get_lines()], ax.get_ylabel()
    (['1-hop', '2-hop'], 'recall@5 of the supporting passages')
    """
    ax = _ax(ax)
    keys = [k for k in points[0] if k.startswith("recall@")]
    for key in keys:
        ax.plot([p["restart"] for p in points], [p[key] for p in points], "o-",
                label=key.rsplit("_", 1)[1][:-3] + "-hop")
    ax.set_xlabel("restart probability λ")
    ax.set_ylabel(f"{keys[0].split('_')[0]} of the supporting passages")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(title="questions")
    return ax


def bar_table(values: dict[str, float], *, ax=None, ylabel: str = "", title: str = ""):
    """One bar per name (``benchmarks/`` draws its summaries with it).

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> ax = Figure().subplots()
    >>> ax = bar_table({"leiden": 0.42, "louvain": 0.40}, ax=ax, ylabel="modularity", title="quality")
    >>> ax.get_title(), [float(b.get_height()) for b in ax.patches]
    ('quality', [0.42, 0.4])
    """
    ax = _ax(ax)
    ax.bar(list(values), list(values.values()))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=20)
    return ax


def _label(line: str, width: int = 30) -> str:
    """``[id] Name (type, …): text`` → ``Name``, cut to ``width`` characters."""
    text = line.split("] ", 1)[-1].split(" (", 1)[0]
    return text if len(text) <= width else text[: width - 1] + "…"


def context_assembly(ctx, *, matched: Sequence[str] = (), named: Sequence[str] = (), supporting: Sequence[str] = (),
                     show: int = 8, ax=None, title: str = ""):
    """A drawn diagram of how local search assembled one question's context (a
    :class:`cookbook.query.local_search.LocalContext`): the question, then one column per section in the order
    it is built — entities (``named`` by the gazetteer, else ``matched`` by description similarity, else
    neighbours), the relationships ranked from them, the text units that state them (gold ``supporting``
    passages marked) and the reports of their communities — each headed by its tokens against its share of the
    budget; at most ``show`` boxes a column, then "+n more". Below, the budget as one bar: each share, and how
    much of it the packed lines fill. Taught in notebooks/08_local_search.ipynb.

    >>> from matplotlib.figure import Figure  # no window: a figure without pyplot
    >>> from cookbook.query.local_search import LocalContext
    >>> ctx = LocalContext("Who employs Ada?", ["[E1] Ada (person): An engineer.", "[E2] Acme (org): A firm."],
    ...                    ["[r0] Ada -> Acme (works_for, weight 1): Ada works for Acme."], ["[d1] Ada works."], [],
    ...                    ["E1", "E2"], ["r0"], ["d1"], [], {"entities": 14, "relationships": 13, "sources": 5,
    ...                    "reports": 0}, 100, {"graph": 40, "sources": 50, "reports": 10})
    >>> ax = context_assembly(ctx, matched=["E1"], named=["E1"], supporting=["d1"], ax=Figure().subplots())
    >>> [t.get_text().splitlines() for t in ax.texts if t.get_text().startswith(("entities", "text units"))]
    [['entities', '27 of 40 tokens (shared)'], ['text units', '5 of 50 tokens']]
    >>> sorted({t.get_text() for t in ax.texts} & {"Ada", "Acme", "Ada -> Acme", "d1"})
    ['Acme', 'Ada', 'Ada -> Acme', 'd1']
    >>> [t.get_text() for t in ax.get_legend().get_texts()]  # no entity matched by similarity: not listed
    ['entity the question names (gazetteer)', 'neighbour of a matched entity', 'gold supporting passage']
    """
    from matplotlib.patches import FancyBboxPatch, Patch

    ax = _ax(ax, (14, 6.5))
    named, matched, supporting = set(named), set(matched), set(supporting)
    graph = ctx.tokens["entities"] + ctx.tokens["relationships"]
    columns = [
        ("entities", f"{graph} of {ctx.shares['graph']} tokens (shared)", "named or similar, then neighbours",
         [(_label(line), "tab:green" if e in named else "tab:olive" if e in matched else "lightgrey", False)
          for e, line in zip(ctx.entity_ids, ctx.entities)]),
        ("relationships", "within the entities' share", "between matched first, by weight",
         [(_label(line), "tab:cyan", False) for line in ctx.relationships]),
        ("text units", f"{ctx.tokens['sources']} of {ctx.shares['sources']} tokens",
         "stating them, most supported first",
         [(d, "gold" if d in supporting else "lightsteelblue", d in supporting) for d in ctx.source_ids]),
        ("reports", f"{ctx.tokens['reports']} of {ctx.shares['reports']} tokens",
         "of the matched entities' communities",
         [(r, "plum", False) for r in ctx.report_ids])]
    width, top = 0.17, 0.86
    step = 0.6 / show
    ax.text(0.055, top + 0.03, "question", ha="center", va="bottom", fontsize=9, weight="bold")
    ax.text(0.055, top - 0.01, "\n".join(textwrap.wrap(ctx.question, 20)[:6]), ha="center", va="top", fontsize=8,
            bbox={"boxstyle": "round", "fc": "white", "ec": "k"})
    for j, (name, tokens, rule, boxes) in enumerate(columns):
        x = 0.16 + j * 0.215
        ax.text(x + width / 2, top + 0.03, f"{name}\n{tokens}", ha="center", va="bottom", fontsize=9, weight="bold")
        ax.text(x + width / 2, top + 0.005, rule, ha="center", va="bottom", fontsize=7, style="italic", color="dimgrey")
        for i, (label, colour, _) in enumerate(boxes[:show]):
            y = top - (i + 1) * step
            ax.add_patch(FancyBboxPatch((x, y), width, step * 0.75, boxstyle="round,pad=0.004", fc=colour,
                                        ec="grey", lw=0.5))
            ax.text(x + width / 2, y + step * 0.375, label, ha="center", va="center", fontsize=7)
        if len(boxes) > show:
            gold = sum(g for _, _, g in boxes[show:])
            ax.text(x + width / 2, top - (show + 0.7) * step, f"+{len(boxes) - show} more"
                    + (f" ({gold} gold)" if gold else ""), ha="center", fontsize=8)
        if not boxes:
            ax.text(x + width / 2, top - step, "(none)", ha="center", fontsize=8, color="grey")
        ax.annotate("", xy=(x - 0.005, top - 0.6 * step), xytext=(x - 0.045, top - 0.6 * step),
                    arrowprops={"arrowstyle": "-|>", "color": "k"})
    # The budget, split before packing: each share's width, its filled part solid.
    left = 0.0
    for share, parts, colour in (("graph", ("entities", "relationships"), "tab:green"),
                                 ("sources", ("sources",), "lightsteelblue"), ("reports", ("reports",), "plum")):
        w = ctx.shares[share] / ctx.budget
        used = sum(ctx.tokens[p] for p in parts)
        ax.barh(0.08, w, left=left, height=0.06, color="white", edgecolor="k")
        ax.barh(0.08, used / ctx.budget, left=left, height=0.06, color=colour, edgecolor="k")
        if w > 0:  # a narrow share is labelled below its bar
            ax.text(left + w / 2, 0.08 if w >= 0.2 else 0.025, f"{share}: {used} of {ctx.shares[share]}",
                    ha="center", va="center", fontsize=8)
        left += w
    ax.text(0.0, 0.125, f"the budget, split before packing: {ctx.total_tokens} of {ctx.budget} tokens used "
            "(solid: the packed lines)", fontsize=9, va="bottom")
    drawn = {colour for _, _, _, boxes in columns for _, colour, _ in boxes[:show]}
    keys = [("tab:green", "entity the question names (gazetteer)"),
            ("tab:olive", "entity matched by description similarity"),
            ("lightgrey", "neighbour of a matched entity"), ("gold", "gold supporting passage")]
    handles = [Patch(fc=c, label=text) for c, text in keys if c in drawn]  # only what the figure draws
    if handles:
        ax.legend(handles=handles, loc="upper center", fontsize=8, ncol=len(handles), bbox_to_anchor=(0.5, 0.0),
                  frameon=False)
    ax.set_xlim(-0.01, 1.03)
    ax.set_ylim(-0.03, 1.0)
    ax.axis("off")
    ax.set_title(title)
    return ax


def ordered_subgraph(G, nodes):
    """A copy of networkx graph ``G`` on ``nodes``, nodes and edges in sorted order, for drawing.

    ``G.subgraph(nodes)`` iterates a set, whose order changes from one Python process to the next
    (hash randomisation); a layout follows node order even with a fixed seed, so the same notebook
    would draw a different picture on every run.
    Taught in notebooks/01_entity_cooccurrence.ipynb and 04_community_reports.ipynb.

    >>> import networkx as nx
    >>> G = nx.Graph([("b", "c", {"weight": 2}), ("a", "b", {"weight": 1}), ("c", "d")])
    >>> H = ordered_subgraph(G, {"c", "b", "a"})
    >>> list(H.nodes), list(H.edges(data="weight"))
    (['a', 'b', 'c'], [('a', 'b', 1), ('b', 'c', 2)])
    """
    import networkx as nx

    keep = sorted(set(nodes))
    H = nx.Graph()
    H.add_nodes_from((n, G.nodes[n]) for n in keep)
    H.add_edges_from(sorted((min(u, v), max(u, v), d) for u, v, d in G.subgraph(keep).edges(data=True)))
    return H
