"""One corpus for every notebook: the generated world and the CIA World Factbook, as
:class:`~cookbook.data.records.Corpus`.

A ``Corpus`` has the attribute names notebooks already use on a :class:`~cookbook.data.records.World`
(``documents``, ``entities``, ``facts``, ``mentions``, ``questions``, ``global_questions``,
``entity_index``, ``doc_index``, ``gazetteer()``, ``stats()``), so switching a notebook from
``datasets.load_world(SCALE)`` to ``load_corpus(CORPUS, SCALE)`` needs few other edits. Entities and
documents keep the world's records; ``group`` is an index into ``group_names`` (the world's planted
groups, the Factbook's regions).

>>> from cookbook.data.world import make_world
>>> c = load_corpus("world", "ci")
>>> c.name, len(c.documents) == len(make_world(scale="tiny").documents), c.has_mention_gold
('world', True, True)
"""

from __future__ import annotations

from .._validate import one_of
from .._validate import seed as check_seed
from .factbook import SCALES as FACTBOOK_SCALES
from .factbook import build_factbook
from .recorded import RECORDED, RecordedCorpus, load_recorded
from .records import DEFAULT_SEED, ENTITY_TYPES, SCALE_ALIASES, SCALES, Corpus, MultiHopQuestion, World
from .storage import load_world

__all__ = ["CORPORA", "CORPUS_SCALES", "RECORDED_SCALES", "WORLD_COMMUNITY_TYPES", "check_corpus", "from_world",
           "load_corpus"]

CORPORA = ("factbook", "world")
# The scales each corpus has (a notebook's SCALE), aliases included.
CORPUS_SCALES = {"factbook": tuple(sorted(FACTBOOK_SCALES)), "world": tuple(sorted([*SCALES, *SCALE_ALIASES]))}
# A recorded run is one size: it answers to the two scales every notebook runs at (the same recording at both),
# and to no other: "large" or "tiny" ask for a size it does not have.
RECORDED_SCALES = ("ci", "class")
# The world's co-occurrence graph: every entity type but the region, which no planted group owns: named in every
# news document of its two or three groups, it is a bridge that merges groups of one region (measured in
# data/README.md), as the Factbook's organisation and industry lists swamp its regions.
WORLD_COMMUNITY_TYPES = tuple(sorted(t for t in ENTITY_TYPES if t != "region"))


def check_corpus(name, scale) -> None:
    """A ``ValueError`` naming the problem unless ``name`` is a corpus and ``scale`` one of its scales (what
    :func:`load_corpus` and the runner check before anything is built).

    >>> check_corpus("world", "large")
    >>> check_corpus("factbook", "large")
    Traceback (most recent call last):
    ...
    ValueError: unknown factbook scale 'large': corpus 'factbook' has ['ci', 'class']
    """
    one_of(name, "corpus", CORPORA)
    one_of(scale, f"{name} scale", CORPUS_SCALES[name], listing=f": corpus {name!r} has")


def from_world(world: World) -> Corpus:
    """The generated world as a :class:`Corpus`; every record is kept (questions gain ``answers`` =
    ``(answer,)`` and the ``predicates`` of their path, looked up in the world's facts).

    >>> from cookbook.data.world import make_world
    >>> w = make_world(scale="tiny")
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
                  community_types=WORLD_COMMUNITY_TYPES)


def load_corpus(name: str, scale: str = "class", seed: int = DEFAULT_SEED) -> Corpus | RecordedCorpus:
    """The corpus ``name`` (``"world"`` or ``"factbook"``) at ``scale`` (``"ci"`` or ``"class"``; the
    world also has ``"large"``). Same arguments → identical corpus. A recorded real-model run
    (``"christmas-carol"`` or ``"dulce"``, :data:`~cookbook.data.recorded.RECORDED`) is a
    :class:`~cookbook.data.recorded.RecordedCorpus` of one size, the same at ``"ci"`` and ``"class"``
    (:data:`RECORDED_SCALES`; any other scale is a ``ValueError``, ``seed`` is checked, not used).
    ``seed`` is a Python or numpy integer
    ``>= 0`` at every scale (a bool or a float such as ``7.0`` is a ``TypeError``). Every notebook starts
    with it; introduced in notebooks/00_quickstart.ipynb.

    >>> c = load_corpus("world", "tiny", seed=1)
    >>> c.name, c.seed, c == load_corpus("world", "tiny", seed=1)
    ('world', 1, True)
    >>> load_corpus("wiki")
    Traceback (most recent call last):
    ...
    ValueError: unknown corpus 'wiki' (nor a recording ['christmas-carol', 'dulce']); expected one of ['factbook', \
'world']
    >>> len(load_corpus("christmas-carol").documents)
    39
    >>> load_corpus("dulce", "large")
    Traceback (most recent call last):
    ...
    ValueError: unknown dulce scale 'large': recording 'dulce' is one size, loaded at ['ci', 'class']
    """
    if name in RECORDED:
        one_of(scale, f"{name} scale", RECORDED_SCALES, listing=f": recording {name!r} is one size, loaded at")
        check_seed(seed)
        return load_recorded(name)
    one_of(name, "corpus", CORPORA, listing=f" (nor a recording {list(RECORDED)}); expected one of")
    check_corpus(name, scale)
    seed = check_seed(seed)
    if name == "world":
        return from_world(load_world(scale, seed=seed))
    return build_factbook(scale, seed)
