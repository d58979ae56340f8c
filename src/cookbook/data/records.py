"""The data types and scale presets: the plain records every stage reads — the generated world's
(:class:`World` and its rows) and the one :class:`Corpus` type over the world and the Factbook.

>>> Entity("E00000", "person", "Ada Selel", ("Selel", "A. Selel"), 0).aliases
('Selel', 'A. Selel')

Built by :func:`cookbook.data.world.make_world`, stored by :mod:`cookbook.data.storage`; importing only the shared
layer. :func:`doc_pairs`/:func:`doc_ids` read every stage's documents argument (id → text, or :class:`Document`s).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter

from .._validate import one_of, string_collection

__all__ = ["DEFAULT_SEED", "ENTITY_TYPES", "KNOBS", "PHRASINGS", "PREDICATES", "ROW_TYPES", "SCALES", "SCALE_ALIASES",
           "Document", "Entity", "Corpus", "Fact", "Gazetteer", "GlobalQuestion", "Mention", "MultiHopQuestion",
           "Question", "World", "build_gazetteer", "doc_ids", "doc_pairs", "resolve_scale"]

# A world's entity types: each planted group's people, organisations, places and products, and the trade
# ("textiles trade") and region ("Northern Reach") it belongs to, named as a real extractor would name them.
ENTITY_TYPES = ("person", "org", "place", "product", "trade", "region")
# A world's relation predicates and the types of their (subject, object); in_trade and located_in tie an
# organisation to its group's trade and a place to its group's region.
PREDICATES = {"headquartered_in": ("org", "place"), "makes": ("org", "product"), "works_for": ("person", "org"),
              "lives_in": ("person", "place"), "knows": ("person", "person"), "in_trade": ("org", "trade"),
              "located_in": ("place", "region")}
# The two disjoint sets of wordings a generated world states its facts in: "A", the wordings the offline
# extraction stand-in is built from, and "B", wordings it has never seen (Fact.phrasing).
PHRASINGS = ("A", "B")
# make_world's knobs, recorded in World and world.json.
KNOBS = ("mixing", "bridging", "namesakes", "paraphrase", "skew")

# Scale presets. "ci" is the notebooks' test scale and uses the tiny world.
SCALES: dict[str, dict] = {
    "tiny": dict(n_groups=4, persons=4, orgs=3, places=2, products=2, news_docs=28, questions_per_type=8),
    "class": dict(n_groups=8, persons=8, orgs=3, places=2, products=2, news_docs=300, questions_per_type=200),
    "large": dict(n_groups=600, persons=6, orgs=3, places=2, products=2, news_docs=12000, questions_per_type=200),
}
SCALE_ALIASES = {"ci": "tiny"}
DEFAULT_SEED = 7


@dataclass(frozen=True)
class Entity:
    """A fictional entity: ``id`` like ``"E0012"``, ``type`` in :data:`ENTITY_TYPES`, ``group`` (planted).

    >>> Entity("E00000", "person", "Ada Selel", ("Selel",), group=0).aliases
    ('Selel',)
    """

    id: str
    type: str
    name: str
    aliases: tuple[str, ...]
    group: int


@dataclass(frozen=True)
class Fact:
    """A relation ``subject --predicate--> object`` stated by exactly one document ``doc_id``; ``phrasing``
    is the set of wordings that states it in a generated world (one of :data:`PHRASINGS`: ``"A"`` the
    extraction stand-in knows, ``"B"`` it has never seen), ``""`` in a corpus whose text no one wrote for it
    (the Factbook).

    >>> Fact("E00000", "works_for", "E00004", "D00001", "B").phrasing
    'B'
    """

    subject: str
    predicate: str
    object: str
    doc_id: str
    phrasing: str = ""


@dataclass(frozen=True)
class Document:
    """A short text with its sentence spans ``[(start, end), ...]`` (character offsets, end exclusive).

    >>> d = Document("D00001", "Ada wrote. Bo read.", ((0, 10), (11, 19)), group=0)
    >>> [d.text[a:b] for a, b in d.sentences]
    ['Ada wrote.', 'Bo read.']
    """

    id: str
    text: str
    sentences: tuple[tuple[int, int], ...]
    group: int


@dataclass(frozen=True)
class Mention:
    """Gold mention: ``text[doc][start:end] == surface`` refers to ``entity_id``.

    >>> m = Mention("D00001", 0, 3, "E00000", "Ada")
    >>> "Ada wrote."[m.start:m.end] == m.surface
    True
    """

    doc_id: str
    start: int
    end: int
    entity_id: str
    surface: str


@dataclass(frozen=True)
class Question:
    """A multi-hop question; ``path`` is the entity chain, ``supporting`` the docs stating each hop.
    Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> q = Question("Q1", "Where does Ada's employer sit?", "E00009", 2, ("E00000", "E00004", "E00009"),
    ...              ("D00001", "D00002"))
    >>> q.hops == len(q.path) - 1 == len(q.supporting)
    True
    """

    id: str
    text: str
    answer: str
    hops: int
    path: tuple[str, ...]
    supporting: tuple[str, ...]


@dataclass(frozen=True)
class GlobalQuestion:
    """A question that needs the whole corpus (or a large part of it): ``themes`` are the gold themes a good
    answer names (*what*), ``entities`` the ids of the gold entities it names (*who*), ``groups`` the planted
    groups (world) or regions (Factbook) it is about, ``family`` the rule that made it, ``"<scope>/<ask>"``
    (``"region/makes"``; listed in data/README.md). Taught in notebooks/05_map_reduce_answering.ipynb.

    >>> q = GlobalQuestion("G1", "Who makes what?", ("shipping", "mining"), ("E1", "E2"), (0, 1), "corpus/makes")
    >>> q.themes, q.entities
    (('shipping', 'mining'), ('E1', 'E2'))
    """

    id: str
    text: str
    themes: tuple[str, ...]
    entities: tuple[str, ...]
    groups: tuple[int, ...]
    family: str


@dataclass
class World:
    """The generated world: entities, facts, documents and gold. Build with :func:`make_world`, whose
    knobs (``mixing``, ``bridging``, ``namesakes``, ``paraphrase``) it records.

    >>> e = Entity("E00000", "person", "Ada Selel", ("Selel",), 0)
    >>> w = World(0, "tiny", 0.0, ["shipping"], ["north"], [e], [], [], [], [], [])
    >>> w.entity_index["E00000"].name
    'Ada Selel'
    """

    seed: int
    scale: str
    mixing: float
    group_themes: list[str]
    group_regions: list[str]
    entities: list[Entity]
    facts: list[Fact]
    documents: list[Document]
    mentions: list[Mention]
    questions: list[Question]
    global_questions: list[GlobalQuestion]
    bridging: float = 0.0
    namesakes: float = 0.0
    paraphrase: float = 0.0
    skew: float = 0.0
    entity_index: dict[str, Entity] = field(init=False, repr=False)
    doc_index: dict[str, Document] = field(init=False, repr=False)

    def __post_init__(self):
        self.entity_index = {e.id: e for e in self.entities}
        self.doc_index = {d.id: d for d in self.documents}

    def gazetteer(self) -> Gazetteer:
        """Surface form → entity ids it may refer to (more than one when ambiguous).

        >>> es = [Entity("E1", "person", "Ada Selel", ("Selel",), 0), Entity("E2", "org", "Selel", (), 0)]
        >>> World(0, "tiny", 0.0, [], [], es, [], [], [], [], []).gazetteer()["Selel"]
        ['E1', 'E2']
        """
        return build_gazetteer((e.id, (e.name, *e.aliases)) for e in self.entities)

    def stats(self) -> dict[str, int]:
        """Counts for data cards and closing notes.

        >>> es = [Entity("E1", "person", "Ada Selel", ("Selel",), 0), Entity("E2", "org", "Selel", (), 0)]
        >>> s = World(0, "tiny", 0.0, ["shipping"], [], es, [], [], [], [], []).stats()
        >>> s["entities"], s["groups"], s["ambiguous_aliases"]
        (2, 1, 1)
        """
        folded: dict[str, set[str]] = {}
        for surface, ids in self.gazetteer().items():
            folded.setdefault(surface.lower(), set()).update(ids)
        amb = sum(1 for ids in folded.values() if len(ids) > 1)
        return {
            "entities": len(self.entities), "groups": len(self.group_themes), "facts": len(self.facts),
            "documents": len(self.documents), "mentions": len(self.mentions),
            "ambiguous_aliases": amb, "questions": len(self.questions),
            "global_questions": len(self.global_questions),
        }


# The World's lists of records and the type of their rows (one JSONL file each in storage).
ROW_TYPES = {
    "entities": Entity, "facts": Fact, "documents": Document, "mentions": Mention,
    "questions": Question, "global_questions": GlobalQuestion,
}


def resolve_scale(scale: str) -> str:
    """Map a notebook ``SCALE`` (``"ci"``, ``"tiny"``, ``"class"``, ``"large"``) to a world preset.

    >>> resolve_scale("ci"), resolve_scale("class")
    ('tiny', 'class')
    >>> resolve_scale("huge")
    Traceback (most recent call last):
    ValueError: unknown scale 'huge'; expected one of ['class', 'large', 'tiny', 'ci']
    """
    one_of(scale, "scale", sorted(SCALES) + sorted(SCALE_ALIASES))
    return SCALE_ALIASES.get(scale, scale)


def doc_pairs(docs) -> list[tuple[str, str]]:
    """Normalise documents (a mapping ``{doc_id: text}``, or a sequence of objects with ``.id`` and
    ``.text``, or of ``(doc_id, text)`` pairs) to ``[(doc_id, text), ...]``; an empty corpus or a duplicate
    id is an error.

    >>> doc_pairs({"d1": "Ada.", "d2": "Bo."})
    [('d1', 'Ada.'), ('d2', 'Bo.')]
    """
    if isinstance(docs, Mapping):
        pairs = [(str(k), v) for k, v in docs.items()]
    elif isinstance(docs, Iterable) and not isinstance(docs, (str, bytes)):
        pairs = [(d.id, d.text) if hasattr(d, "text") else tuple(d) for d in docs]
    else:
        raise TypeError(f"docs must be a mapping id→text or a sequence of documents, got {type(docs).__name__}")
    if not pairs:
        raise ValueError("empty corpus: docs has no documents")
    seen = set()
    for doc_id, text in pairs:
        if not isinstance(text, str):
            raise TypeError(f"document {doc_id!r}: text must be str, got {type(text).__name__}")
        if doc_id in seen:
            raise ValueError(f"docs has a duplicate document id {doc_id!r}")
        seen.add(doc_id)
    return pairs


def doc_ids(docs) -> list[str]:
    """The document ids of :func:`doc_pairs`, in order, without reading the texts or building pairs (an
    incidence matrix needs only the ids; 21k pairs cost a third of a co-occurrence build). Anything unusual
    (pairs rather than objects, a duplicate id, an empty corpus) goes through :func:`doc_pairs`, which names
    the problem.

    >>> doc_ids({"d1": "Ada.", "d2": "Bo."}), doc_ids([("d1", "Ada.")])
    (['d1', 'd2'], ['d1'])
    """
    if isinstance(docs, Mapping):
        ids = list(map(str, docs))
    elif isinstance(docs, Iterable) and not isinstance(docs, (str, bytes)):
        docs = list(docs)
        try:
            ids = list(map(attrgetter("id"), docs))
        except AttributeError:
            ids = []
    else:
        ids = []
    if not ids or len(set(ids)) != len(ids):
        return [doc_id for doc_id, _ in doc_pairs(docs)]
    return ids


class Gazetteer(dict):
    """What :func:`build_gazetteer` returns: a ``{surface: sorted entity ids}`` dict whose ``names[surface]`` are the
    ids whose full name it is, so that the matcher (:func:`cookbook.data.gazetteer.compile_gazetteer`) lets a full
    name win over another entity's alias. A plain-dict copy (``dict(gaz)``) keeps the surfaces, not the names.

    >>> gaz = Gazetteer({"The Room": ["E1", "E2"]}, names={"The Room": ["E1"]})
    >>> gaz == {"The Room": ["E1", "E2"]}, gaz.names
    (True, {'The Room': ['E1']})
    """

    def __init__(self, surfaces=(), names: Mapping[str, list[str]] | None = None):
        super().__init__(surfaces)
        self.names = dict(names or {})


def build_gazetteer(entries) -> Gazetteer:
    """``[(entity_id, [name, alias, ...]), ...]`` → ``{surface: sorted entity ids}`` (case kept; the matcher
    decides whether case matters), a :class:`Gazetteer` whose ``names`` records each entry's first surface, its
    full name. Blank surfaces are skipped; a non-string id or one string for the surfaces is a ``TypeError``.

    >>> build_gazetteer([("E2", ["Selel", " "]), ("E1", ["Ada Selel", "Selel"])])
    {'Ada Selel': ['E1'], 'Selel': ['E1', 'E2']}
    >>> build_gazetteer([("E1", ["The Room"]), ("E2", ["The Room (film)", "The Room"])]).names
    {'The Room': ['E1'], 'The Room (film)': ['E2']}
    """
    gaz: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    for eid, surfaces in entries:
        if not isinstance(eid, str):
            raise TypeError(f"gazetteer entry id must be a string, got {eid!r} ({type(eid).__name__})")
        surfaces = string_collection(surfaces, f"the surfaces of {eid!r}", what="surfaces")
        for i, s in enumerate(surfaces):
            if s.strip():
                gaz.setdefault(s, set()).add(eid)
                if i == 0:
                    names.setdefault(s, set()).add(eid)
    return Gazetteer({k: sorted(v) for k, v in sorted(gaz.items())}, {k: sorted(v) for k, v in sorted(names.items())})


@dataclass(frozen=True)
class MultiHopQuestion:
    """A multi-hop question. ``path`` is an entity chain of ``hops + 1`` ids whose consecutive pairs are
    facts with ``predicates[i]``; ``path[-1]`` is one of the ``answers`` (all gold entity ids, sorted);
    ``supporting[i]`` is the passage stating hop ``i``. Every hop but the last follows the subject's
    *first* fact with that predicate (the Factbook lists export partners largest first); the last hop
    reaches every object, which are the answers. Every notebook loads them; introduced in
    notebooks/00_quickstart.ipynb and walked hop by hop in notebooks/06_personalized_pagerank.ipynb.

    >>> from cookbook.data import load_corpus
    >>> q = load_corpus("world", "ci").questions[0]
    >>> q.text, q.path, q.predicates, q.answers, q.supporting
    ('What is the product Paizedan Works makes?', ('E00004', 'E00009'), ('makes',), ('E00009',), ('D00000',))
    """

    id: str
    text: str
    answers: tuple[str, ...]
    hops: int
    path: tuple[str, ...]
    predicates: tuple[str, ...]
    supporting: tuple[str, ...]


@dataclass
class Corpus:
    """Documents, entities, facts and gold of one corpus; build with :func:`load_corpus`.

    ``has_mention_gold`` is False when ``mentions`` is empty because the corpus has no span gold (the
    Factbook); ``themes`` is the vocabulary of gold themes a global answer may name;
    ``community_types`` are the entity types whose co-occurrence graph the community notebooks (03-05, 09)
    use: every type but the region on the world (a region spans several planted groups and merges them),
    countries only on the Factbook, whose organisation and industry lists would swamp the regional signal
    (notebook 03 measures both; data/README.md states the numbers). Every notebook
    loads one; introduced in notebooks/00_quickstart.ipynb.

    >>> from cookbook.data import load_corpus
    >>> c = load_corpus("world", "ci")
    >>> c.name, len(c.entities), len(c.documents), c.themes[:2]
    ('world', 51, 90, ['astronomy', 'shipbuilding'])
    >>> c.doc_index["D00000"] is c.documents[0]
    True
    """

    name: str
    scale: str
    seed: int
    group_names: list[str]
    themes: list[str]
    entities: list[Entity]
    facts: list[Fact]
    documents: list[Document]
    mentions: list[Mention]
    questions: list[MultiHopQuestion]
    global_questions: list[GlobalQuestion]
    has_mention_gold: bool
    community_types: tuple[str, ...]
    entity_index: dict[str, Entity] = field(init=False, repr=False)
    doc_index: dict[str, Document] = field(init=False, repr=False)

    def __post_init__(self):
        self.entity_index = {e.id: e for e in self.entities}
        self.doc_index = {d.id: d for d in self.documents}
        if len(self.entity_index) != len(self.entities) or len(self.doc_index) != len(self.documents):
            raise ValueError(f"corpus {self.name!r} has duplicate entity or document ids")

    def gazetteer(self) -> Gazetteer:
        """Surface form → entity ids it may refer to (more than one when ambiguous).
        Taught in notebooks/01_entity_cooccurrence.ipynb.

        >>> from cookbook.data import load_corpus
        >>> g = load_corpus("world", "ci").gazetteer()
        >>> g["Beacon"], g["Beacon X2"]  # a name and an alias of one entity
        (['E00032'], ['E00032'])
        """
        return build_gazetteer((e.id, (e.name, *e.aliases)) for e in self.entities)

    def stats(self) -> dict[str, int | None]:
        """Counts for data cards: the world's keys plus per entity type, predicate and hop count (``mentions``: gold
        spans, ``None`` without span gold, where 0 would read "none found"). Taught in notebooks/00_quickstart.ipynb.

        >>> from cookbook.data import load_corpus
        >>> s = load_corpus("world", "ci").stats()
        >>> s["entities"], s["documents"], s["questions"], s["ambiguous_aliases"], s["mentions"] > 0
        (51, 90, 24, 1, True)
        """
        folded: dict[str, set[str]] = {}
        for surface, ids in self.gazetteer().items():
            folded.setdefault(surface.lower(), set()).update(ids)
        out = {"entities": len(self.entities), "groups": len(self.group_names), "facts": len(self.facts),
               "documents": len(self.documents),
               "mentions": len(self.mentions) if self.has_mention_gold else None,
               "ambiguous_aliases": sum(1 for ids in folded.values() if len(ids) > 1),
               "questions": len(self.questions), "global_questions": len(self.global_questions)}
        for key, values in (("entities", [e.type for e in self.entities]),
                            ("facts", [f.predicate for f in self.facts]),
                            ("questions", [f"{q.hops}hop" for q in self.questions])):
            out.update({f"{key}.{k}": n for k, n in sorted(Counter(values).items())})
        return out
