"""A graph to look at: an interactive view of a graph and its communities as one self-contained HTML fragment,
and a GraphML file for Gephi.

:func:`graph_html` draws the nodes at a seeded force layout (Fruchterman-Reingold, as networkx's) as inline SVG,
coloured by community (the largest in a qualitative palette by size rank, single-entity communities grey, a
legend of the largest beside the graph); the mouse wheel zooms, dragging pans, hovering a node shows its
name and description (an SVG ``<title>``, which needs no script), and clicking a node shows its community's report
beside the graph and fades every other community. Everything
is inline: no script, style or font is fetched, so the view works offline in JupyterLab, in Colab and in the HTML
build (nbconvert keeps HTML outputs). Without scripts (an untrusted notebook) the drawing and the hover still work.
The script marks its container ``data-ready="1"`` once it has bound its handlers, which is what the
headless-Chromium test reads. :func:`write_graphml` writes the same graph for Gephi (``networkx.write_graphml``) and
never overwrites a file it did not write. Taught in notebooks/12_claims_resolution_updates.ipynb.

>>> html = graph_html([{"id": "E1", "label": "Ada", "community": 0, "description": "An engineer."},
...                    {"id": "E2", "label": "Acme", "community": 0, "description": "A firm."}],
...                   [("E1", "E2", 1.0)], {0: ("Ada and Acme", "Ada works for Acme.")})
>>> html.count("<circle"), "http" in html.replace("http://www.w3.org/2000/svg", "")
(2, False)
"""

from __future__ import annotations

import hashlib
import html as _html
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._validate import community_label
from ..paths import place_files

__all__ = ["GENERATOR", "LEGEND", "SINGLETON", "graph_html", "graph_view", "graphml_path", "write_graphml"]

GENERATOR = "graphrag-cookbook graph_view"  # written into every GraphML file, checked before overwriting one
# Tableau's qualitative palette (tab10, then tab20's light companions), greys left out: grey is the singletons'.
_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
            "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]
SINGLETON = "#c7c7c7"  # a community of one entity: grey, not a hue of its own
LEGEND = 10  # the legend lists this many of the largest communities

_SCRIPT = """
(function () {
  var root = document.getElementById("%(id)s");
  if (!root || root.dataset.ready) { return; }
  var svg = root.querySelector("svg"), panel = root.querySelector(".cb-report");
  var reports = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  var box = svg.getAttribute("viewBox").split(" ").map(Number), start = null;
  function show() { svg.setAttribute("viewBox", box.join(" ")); }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), f = ev.deltaY > 0 ? 1.2 : 1 / 1.2;
    var mx = box[0] + box[2] * (ev.clientX - r.left) / r.width, my = box[1] + box[3] * (ev.clientY - r.top) / r.height;
    box = [mx - (mx - box[0]) * f, my - (my - box[1]) * f, box[2] * f, box[3] * f];
    show();
  }, {passive: false});
  svg.addEventListener("mousedown", function (ev) { start = [ev.clientX, ev.clientY, box[0], box[1]]; });
  window.addEventListener("mouseup", function () { start = null; });
  svg.addEventListener("mousemove", function (ev) {
    if (!start) { return; }
    var r = svg.getBoundingClientRect();
    box[0] = start[2] - (ev.clientX - start[0]) * box[2] / r.width;
    box[1] = start[3] - (ev.clientY - start[1]) * box[3] / r.height;
    show();
  });
  svg.querySelectorAll("circle").forEach(function (c) {
    c.addEventListener("click", function () {
      var rep = reports[c.dataset.community] || ["Community " + c.dataset.community, "(no report)"];
      panel.textContent = "";
      var h = document.createElement("b"); h.textContent = rep[0];
      var p = document.createElement("p"); p.textContent = rep[1];
      panel.appendChild(h); panel.appendChild(p);
      root.dataset.clicked = c.dataset.community;
      svg.querySelectorAll("circle").forEach(function (o) {  // the clicked community stands out, the rest fade
        o.setAttribute("fill-opacity", o.dataset.community === c.dataset.community ? "1" : "0.15");
      });
    });
  });
  root.dataset.ready = "1";
})();
"""


def _layout(nodes, edges, seed: int, iterations: int = 60) -> dict:
    """Fruchterman-Reingold force layout (as networkx's dense ``spring_layout``), vectorised, from positions drawn
    with ``seed``: the same graph and seed give the same drawing."""
    ids = [n["id"] for n in nodes]
    at = {x: i for i, x in enumerate(ids)}
    n = len(ids)
    A = np.zeros((n, n))
    for s, t, w in edges:
        A[at[s], at[t]] = A[at[t], at[s]] = A[at[s], at[t]] + float(w)
    A /= A.max() or 1.0
    pos = np.random.default_rng(seed).random((n, 2))
    k, step = 1.0 / np.sqrt(max(n, 1)), 0.1
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.linalg.norm(delta, axis=-1), 0.01)
        disp = np.einsum("ijk,ij->ik", delta, k * k / dist ** 2 - A * dist / k)
        length = np.maximum(np.linalg.norm(disp, axis=-1), 0.01)
        pos += disp * (step / length)[:, None]
        step -= 0.1 / (iterations + 1)
    return {x: pos[i] for i, x in enumerate(ids)}


def _labels(nodes: Sequence[Mapping], communities: Mapping | None) -> tuple[list, dict]:
    """Each node's community label (:func:`~cookbook._validate.community_label`: an int or a string, 0 when
    missing) and the reports keyed by label; two labels the page would show alike (``1`` and ``"1"``) are a
    ``ValueError``, since a click could not tell them apart."""
    labels = [community_label(n.get("community", 0), f"nodes[{i}]['community']") for i, n in enumerate(nodes)]
    reports = {community_label(k, f"communities key {k!r}"): v for k, v in (communities or {}).items()}
    shown: dict[str, object] = {}
    for c in [*labels, *reports]:
        if shown.setdefault(str(c), c) != c:
            raise ValueError(f"community labels {shown[str(c)]!r} and {c!r} read alike on the page: use one type")
    return labels, reports


def _colours(communities: Sequence, size: Mapping) -> dict:
    """A colour per community, by size rank (largest first, ties in the order of ``communities``): the qualitative
    palette for the largest, so the communities a reader looks at get well-separated hues; past it, golden-angle
    hues in two lightnesses (still no two alike); a community of one entity (``size`` 1) grey."""
    ranked = sorted((c for c in communities if size[c] > 1), key=lambda c: -size[c])
    colour = {c: SINGLETON for c in communities if size[c] <= 1}
    for i, c in enumerate(ranked):
        j = i - len(_PALETTE)
        colour[c] = _PALETTE[i] if j < 0 else f"hsl({round(137.508 * j) % 360}, 65%, {40 if j % 2 else 60}%)"
    return colour


def _legend(colour: Mapping, size: Mapping, titles: Mapping) -> str:
    """The legend: the :data:`LEGEND` largest communities (swatch, report title, size), how many others, and the
    grey of the singletons."""
    ranked = sorted((c for c in colour if size[c] > 1), key=lambda c: -size[c])
    rows = [f'<div><span style="display:inline-block;width:10px;height:10px;background:{colour[c]};'
            f'margin-right:4px"></span>{_html.escape(str(titles.get(c, f"community {c}")))} ({size[c]})</div>'
            for c in ranked[:LEGEND]]
    if len(ranked) > LEGEND:
        rows.append(f"<div>… {len(ranked) - LEGEND} smaller communities</div>")
    singles = sum(size[c] <= 1 for c in colour)
    if singles:
        rows.append(f'<div><span style="display:inline-block;width:10px;height:10px;background:{SINGLETON};'
                    f'margin-right:4px"></span>{singles} single-entity communities</div>')
    return ('<div class="cb-legend" style="margin:6px 0"><b>Largest communities</b> (entities)' + "".join(rows)
            + "</div>")


def graph_html(nodes: Sequence[Mapping], edges: Sequence[tuple], communities: Mapping | None = None, *,
               width: int = 900, height: int = 560, seed: int = 0, title: str = "") -> str:
    """The interactive view (see the module docstring) of ``nodes`` (dicts with ``id``, ``label``,
    ``community`` and ``description``) and ``edges`` ``(source id, target id, weight)``; ``communities`` maps a
    community to its report as ``(title, text)``, shown on click. A community label is an int or a string
    (:func:`~cookbook._validate.community_label`; colours go by size, largest first, ties to the ints ascending, then
    the strings; a community of one node is grey): a float,
    None or a bool is a ``TypeError`` naming the node. The layout is a force layout seeded
    with ``seed``, so the same graph draws the same page. Returns an HTML string (display it with
    ``IPython.display.HTML``).

    >>> page = graph_html([{"id": "a", "label": "A", "community": 1, "description": "x"}], [], {1: ("T", "R.")})
    >>> 'data-community="1"' in page, page == graph_html([{"id": "a", "label": "A", "community": 1,
    ...                                                   "description": "x"}], [], {1: ("T", "R.")})
    (True, True)
    """
    ids = [n["id"] for n in nodes]
    if len(set(ids)) != len(ids):
        raise ValueError("nodes must have distinct ids")
    unknown = sorted({x for s, t, _ in edges for x in (s, t)} - set(ids))
    if unknown:
        raise ValueError(f"edges name nodes not in nodes: {unknown[:3]}")
    labels, communities = _labels(nodes, communities)
    pos = _layout(nodes, edges, seed)
    xs = [pos[i][0] for i in ids] or [0.0]
    ys = [pos[i][1] for i in ids] or [0.0]
    pad = 0.05

    def sx(x):
        return round((x - min(xs)) / ((max(xs) - min(xs)) or 1) * (1 - 2 * pad) * width + pad * width, 1)

    def sy(y):
        return round((y - min(ys)) / ((max(ys) - min(ys)) or 1) * (1 - 2 * pad) * height + pad * height, 1)

    top = max((float(w) for *_, w in edges), default=1.0) or 1.0
    lines = [f'<line x1="{sx(pos[s][0])}" y1="{sy(pos[s][1])}" x2="{sx(pos[t][0])}" y2="{sy(pos[t][1])}" '
             f'stroke="#999" stroke-opacity="0.5" stroke-width="{0.5 + 2 * float(w) / top:.2f}"/>' for s, t, w in edges]
    size: dict = {}
    for c in labels:
        size[c] = size.get(c, 0) + 1
    colour = _colours(sorted(size, key=lambda c: (isinstance(c, str), c)), size)
    circles = []
    for n, c in zip(nodes, labels):
        tip = _html.escape(f"{n.get('label', n['id'])} [{n['id']}], community {c}: {n.get('description', '')}")
        circles.append(f'<circle cx="{sx(pos[n["id"]][0])}" cy="{sy(pos[n["id"]][1])}" r="5" '
                       f'fill="{colour[c]}" stroke="#333" stroke-width="0.5" '
                       f'data-community="{_html.escape(str(c))}" style="cursor:pointer"><title>{tip}</title></circle>')
    reports = {str(k): [str(v[0]), str(v[1])] for k, v in communities.items()}
    # no "<" at all: "<!--<script>" in a report would otherwise keep the script element open (HTML5 double escape)
    payload = json.dumps(reports, sort_keys=True).replace("<", "\\u003c")
    body = "\n".join(lines + circles)
    uid = "cbgv-" + hashlib.sha1((body + payload).encode()).hexdigest()[:12]
    return (f'<div id="{uid}" class="cb-graph-view" style="display:flex;gap:12px;font-family:sans-serif">'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" style="border:1px solid #ccc;background:#fff;flex:none">{body}</svg>'
            f'<div style="max-width:320px;font-size:13px"><div><b>{_html.escape(title)}</b></div>'
            f'{_legend(colour, size, {k: v[0] for k, v in communities.items()})}'
            f'<div class="cb-report">Hover a node for its description; click it for its community\'s report. '
            f'Wheel: zoom; drag: pan.</div></div>'
            f'<script type="application/json">{payload}</script><script>{_SCRIPT % {"id": uid}}</script></div>')


def graph_view(extracted, hierarchy, reports: Mapping[int, Sequence], *, level: int = 0, seed: int = 0,
               **kwargs) -> str:
    """:func:`graph_html` of a typed graph (:class:`~cookbook.index.graph_extraction.ExtractedGraph`), coloured by
    its communities at ``level`` of ``hierarchy`` (made on its
    :func:`~cookbook.index.graph_extraction.to_entity_graph`), each community's report (``reports[level]``) shown
    on click.

    >>> import numpy as np
    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
    >>> from cookbook.index.hierarchy import Hierarchy
    >>> from cookbook.index.reports import Report
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "A firm.", ("d1",))],
    ...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 9.0, ("d1",))])
    >>> h = Hierarchy([np.array([0, 0])], [np.array([-1])], 10)
    >>> r = Report("R0-0", 0, 0, "Ada and Acme", "Ada works for Acme.", [], 5.0, ["E1", "E2"], [], 10)
    >>> "Ada and Acme" in graph_view(g, h, {0: [r]})
    True
    """
    membership = hierarchy.levels[level]
    if len(membership) != len(extracted.entities):
        raise ValueError(f"the hierarchy has {len(membership)} nodes, the graph {len(extracted.entities)} entities")
    nodes = [{"id": e.id, "label": e.name, "community": int(c), "description": f"({e.type}) {e.description}"}
             for e, c in zip(extracted.entities, membership)]
    weights: dict[tuple[str, str], float] = {}
    for r in extracted.relationships:
        key = tuple(sorted((r.source, r.target)))
        weights[key] = weights.get(key, 0.0) + r.weight
    edges = [(s, t, w) for (s, t), w in sorted(weights.items())]
    communities = {r.community: (r.title, r.summary + " " + " ".join(f.summary for f in r.findings))
                   for r in reports.get(level, [])}
    return graph_html(nodes, edges, communities, seed=seed, **kwargs)


def _written_here(path: Path) -> bool:
    """Whether ``path`` is a GraphML file that :func:`write_graphml` wrote: a ``<graphml`` document whose graph's
    ``generator`` data is :data:`GENERATOR` (a file that merely mentions the name is not one)."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return False
    return "<graphml" in head and f">{GENERATOR}</data>" in head


def graphml_path(results_dir: str | os.PathLike, notebook: str) -> Path:
    """Where notebook ``notebook`` writes its GraphML file: beside its checks, ``<results_dir>/<notebook>.graphml``.
    ``cookbook run`` moves that file to ``<out>/graphs/<notebook>.<corpus>.graphml`` as it moves the checks, and its
    build marker lists it (a file a run owns: replaced by the next run, never a user's).

    >>> graphml_path("build/checks", "12_claims_resolution_updates").as_posix()
    'build/checks/12_claims_resolution_updates.graphml'
    """
    if not isinstance(notebook, str) or not notebook or Path(notebook).name != notebook:
        raise ValueError(f"notebook must be a notebook's file stem, got {notebook!r}")
    return Path(results_dir) / f"{notebook}.graphml"


def write_graphml(nodes: Sequence[Mapping], edges: Sequence[tuple], path: str | os.PathLike) -> Path:
    """Write ``nodes`` (dicts: ``id`` and any str/int/float attributes) and ``edges`` ``(source, target, weight)``
    as GraphML for Gephi (``networkx.write_graphml``), the graph attribute ``generator`` set to :data:`GENERATOR`.
    An existing file is replaced only when it is a GraphML file whose graph carries that generator (one this
    function wrote); anything else — another file, a link, a folder — is refused, never overwritten, and a graph
    GraphML cannot hold (a list as a value) fails before anything is written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_graphml([{"id": "E1", "label": "Ada"}], [], Path(d) / "g.graphml")
    ...     import networkx as nx
    ...     sorted(nx.read_graphml(p).nodes(data=True))
    [('E1', {'label': 'Ada'})]
    """
    import networkx as nx

    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise ValueError(f"{path} is a folder: name the GraphML file to write, e.g. {path / 'graph.graphml'}")
    if path.is_symlink():  # a link, dangling or not, is the user's: never written through nor replaced
        raise FileExistsError(f"{path} is a link: refusing to write through or replace it")
    ours = os.path.lexists(path) and _written_here(path)
    if os.path.lexists(path) and not ours:
        raise FileExistsError(f"{path} exists and was not written by write_graphml: refusing to overwrite it")
    ids = [n["id"] for n in nodes]
    unknown = sorted({str(x) for s, t, _ in edges for x in (s, t)} - {str(i) for i in ids})
    if len(set(ids)) != len(ids) or unknown:
        raise ValueError("nodes must have distinct ids" if len(set(ids)) != len(ids)
                         else f"edges name nodes not in nodes: {unknown[:3]}")
    g = nx.Graph(generator=GENERATOR)
    for n in nodes:
        g.add_node(n["id"], **{k: v for k, v in n.items() if k != "id"})
    g.add_weighted_edges_from((s, t, float(w)) for s, t, w in edges)
    # the whole file is made first (a value GraphML cannot hold fails here), then renamed into place
    buffer = io.BytesIO()
    try:
        nx.write_graphml(g, buffer)
    except nx.NetworkXError as e:  # a value GraphML cannot hold
        raise ValueError(f"cannot write {path} as GraphML: {e}") from None
    data = buffer.getvalue()
    place_files({path.name: data}, path.parent, force=ours)
    return path
