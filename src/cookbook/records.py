"""The world's data types and scale presets: the plain records every stage reads.

>>> e = Entity("E00000", "person", "Ada Selel", ("Selel", "A. Selel"), 0)
>>> build_gazetteer([(e.id, (e.name, *e.aliases))])["Selel"]
['E00000']

Built by :func:`cookbook.world.make_world`, stored by :mod:`cookbook.storage`; no package imports, so
any module may use them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_SEED", "ENTITY_TYPES", "KNOBS", "ROW_TYPES", "SCALES", "SCALE_ALIASES", "Document", "Entity",
           "Fact", "GlobalQuestion", "Mention", "Question", "World", "build_gazetteer", "resolve_scale"]

ENTITY_TYPES = ("person", "org", "place", "product")
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
    """A relation ``subject --predicate--> object`` stated by exactly one document ``doc_id``.

    >>> Fact("E00000", "works_for", "E00004", "D00001").predicate
    'works_for'
    """

    subject: str
    predicate: str
    object: str
    doc_id: str


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
    """A question about the whole corpus; ``themes`` are the gold themes a good answer names.
    Taught in notebooks/05_map_reduce_answering.ipynb.

    >>> GlobalQuestion("G1", "What are the main themes?", ("shipping", "mining"), (0, 1)).themes
    ('shipping', 'mining')
    """

    id: str
    text: str
    themes: tuple[str, ...]
    groups: tuple[int, ...]


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

    def gazetteer(self) -> dict[str, list[str]]:
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


def build_gazetteer(entries) -> dict[str, list[str]]:
    """``[(entity_id, [surface, ...]), ...]`` → ``{surface: sorted entity ids}`` (case kept; the
    matcher decides whether case matters).

    >>> build_gazetteer([("E2", ["Selel", " "]), ("E1", ["Ada Selel", "Selel"])])
    {'Ada Selel': ['E1'], 'Selel': ['E1', 'E2']}
    """
    gaz: dict[str, set[str]] = {}
    for eid, surfaces in entries:
        for s in surfaces:
            if s.strip():
                gaz.setdefault(s, set()).add(eid)
    return {k: sorted(v) for k, v in sorted(gaz.items())}


def resolve_scale(scale: str) -> str:
    """Map a notebook ``SCALE`` (``"ci"``, ``"tiny"``, ``"class"``, ``"large"``) to a world preset.

    >>> resolve_scale("ci"), resolve_scale("class")
    ('tiny', 'class')
    >>> resolve_scale("huge")
    Traceback (most recent call last):
    ValueError: unknown scale 'huge'; expected one of ['class', 'large', 'tiny', 'ci']
    """
    name = SCALE_ALIASES.get(scale, scale)
    if name not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; expected one of {sorted(SCALES) + sorted(SCALE_ALIASES)}")
    return name
