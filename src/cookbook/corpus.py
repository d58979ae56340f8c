"""One corpus type for every notebook: the generated world and the CIA World Factbook.

A :class:`Corpus` has the attribute names notebooks already use on a :class:`~cookbook.datasets.World`
(``documents``, ``entities``, ``facts``, ``mentions``, ``questions``, ``global_questions``,
``entity_index``, ``doc_index``, ``gazetteer()``, ``stats()``), so switching a notebook from
``datasets.load_world(SCALE)`` to ``load_corpus(CORPUS, SCALE)`` needs few other edits. Entities and
documents keep the world's records; ``group`` is an index into ``group_names`` (the world's planted
groups, the Factbook's regions).

>>> c = load_corpus("world", "ci")
>>> c.name, len(c.documents) == len(datasets.make_world(scale="tiny").documents), c.has_mention_gold
('world', True, True)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import datasets
from .datasets import Document, Entity, Fact, GlobalQuestion, Mention

__all__ = ["CORPORA", "Corpus", "MultiHopQuestion", "from_world", "load_corpus"]

CORPORA = ("factbook", "world")


@dataclass(frozen=True)
class MultiHopQuestion:
    """A multi-hop question. ``path`` is an entity chain of ``hops + 1`` ids whose consecutive pairs are
    facts with ``predicates[i]``; ``path[-1]`` is one of the ``answers`` (all gold entity ids, sorted);
    ``supporting[i]`` is the passage stating hop ``i``. Every hop but the last follows the subject's
    *first* fact with that predicate (the Factbook lists export partners largest first); the last hop
    reaches every object, which are the answers. Every notebook loads them; introduced in
    notebooks/00_quickstart.ipynb and walked hop by hop in notebooks/06_personalized_pagerank.ipynb.

    >>> q = from_world(datasets.make_world(scale="tiny")).questions[0]
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
    use: every type on the world, countries only on the Factbook, whose organisation and industry lists
    would swamp the regional signal (notebook 03 measures it). Every notebook
    loads one; introduced in notebooks/00_quickstart.ipynb.

    >>> c = from_world(datasets.make_world(scale="tiny"))
    >>> c.name, len(c.entities), len(c.documents), c.themes[:2]
    ('world', 44, 75, ['astronomy', 'shipbuilding'])
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

    def gazetteer(self) -> dict[str, list[str]]:
        """Surface form → entity ids it may refer to (more than one when ambiguous).
        Taught in notebooks/01_entity_cooccurrence.ipynb.

        >>> g = from_world(datasets.make_world(scale="tiny")).gazetteer()
        >>> g["Beacon"], g["Beacon X2"]  # a name and an alias of one entity
        (['E00032'], ['E00032'])
        """
        return datasets.build_gazetteer((e.id, (e.name, *e.aliases)) for e in self.entities)

    def stats(self) -> dict[str, int]:
        """Counts for data cards: the world's keys plus per entity type, predicate and hop count.
        Taught in notebooks/00_quickstart.ipynb.

        >>> s = from_world(datasets.make_world(scale="tiny")).stats()
        >>> s["entities"], s["documents"], s["questions"], s["ambiguous_aliases"]
        (44, 75, 24, 1)
        """
        folded: dict[str, set[str]] = {}
        for surface, ids in self.gazetteer().items():
            folded.setdefault(surface.lower(), set()).update(ids)
        out = {
            "entities": len(self.entities), "groups": len(self.group_names), "facts": len(self.facts),
            "documents": len(self.documents), "mentions": len(self.mentions),
            "ambiguous_aliases": sum(1 for ids in folded.values() if len(ids) > 1),
            "questions": len(self.questions), "global_questions": len(self.global_questions),
        }
        for key, values in (("entities", [e.type for e in self.entities]),
                            ("facts", [f.predicate for f in self.facts]),
                            ("questions", [f"{q.hops}hop" for q in self.questions])):
            out.update({f"{key}.{k}": n for k, n in sorted(Counter(values).items())})
        return out


def from_world(world: datasets.World) -> Corpus:
    """The generated world as a :class:`Corpus`; every record is kept (questions gain ``answers`` =
    ``(answer,)`` and the ``predicates`` of their path, looked up in the world's facts).

    >>> w = datasets.make_world(scale="tiny")
    >>> c = from_world(w)
    >>> len(c.questions) == len(w.questions), c.questions[0].answers == (w.questions[0].answer,)
    (True, True)
    """
    pred = {(f.subject, f.object): f.predicate for f in world.facts}
    questions = []
    for q in world.questions:
        hops = tuple(zip(q.path, q.path[1:]))
        missing = [h for h in hops if h not in pred]
        if missing:
            raise ValueError(f"world question {q.id}: path step {missing[0]} is not a fact")
        questions.append(MultiHopQuestion(q.id, q.text, (q.answer,), q.hops, q.path,
                                          tuple(pred[h] for h in hops), q.supporting))
    names = [f"{t} ({r})" for t, r in zip(world.group_themes, world.group_regions)]
    return Corpus("world", world.scale, world.seed, names, sorted(set(world.group_themes)),
                  list(world.entities), list(world.facts), list(world.documents), list(world.mentions),
                  questions, list(world.global_questions), has_mention_gold=True,
                  community_types=tuple(sorted(datasets.ENTITY_TYPES)))


def load_corpus(name: str, scale: str = "class", seed: int = datasets.DEFAULT_SEED) -> Corpus:
    """The corpus ``name`` (``"world"`` or ``"factbook"``) at ``scale`` (``"ci"`` or ``"class"``; the
    world also has ``"large"``). Same arguments → identical corpus. Every notebook starts with it;
    introduced in notebooks/00_quickstart.ipynb.

    >>> c = load_corpus("world", "tiny", seed=1)
    >>> c.name, c.seed, c == load_corpus("world", "tiny", seed=1)
    ('world', 1, True)
    >>> load_corpus("wiki")
    Traceback (most recent call last):
    ...
    ValueError: unknown corpus 'wiki'; expected one of ['factbook', 'world']
    """
    if name == "world":
        return from_world(datasets.load_world(scale, seed=seed))
    if name == "factbook":
        from .factbook import build_factbook

        return build_factbook(scale, seed)
    raise ValueError(f"unknown corpus {name!r}; expected one of {list(CORPORA)}")
