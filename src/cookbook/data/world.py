"""The generated world: a seeded, fictional corpus built so that every pipeline stage can be scored.

>>> w = make_world(seed=0, scale="tiny")
>>> len(w.documents) <= 100 and w.mentions[0].entity_id in w.entity_index
True

:func:`make_world` runs named steps in a fixed order — entities, facts, fact documents, news
documents, questions — all drawing from one seeded ``random.Random``, so the order of the draws is
the world: ``tests/test_datasets.py`` checks the committed ``data/world-class`` byte for byte. Which
phrasing set states each fact comes from a second seeded stream, so it moves no other draw; so do the
trade and region entities (named, not drawn) and the documents stating their facts, written last from a
third stream. The questions are asked by :mod:`cookbook.data.questions`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from .._validate import seed as check_seed
from .questions import global_questions, multi_hop_questions
from .records import (
    DEFAULT_SEED,
    ENTITY_TYPES,
    PHRASINGS,
    SCALES,
    Document,
    Entity,
    Fact,
    Mention,
    World,
    resolve_scale,
)

__all__ = ["REGIONS", "THEMES", "THEME_WORDS", "make_world"]

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
# As the text writes them; the region entity is named without the article ("Northern Reach").
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
# Namesakes: a non-entity whose name contains an entity's alias (per entity type; trades and regions have
# none); the gazetteer matches the alias, so each is a false mention.
_NAMESAKE = {
    "person": "A visitor named {first} {alias} asked about the schedule.",
    "org": "Traffic on {alias} Street was slow on {day}.",
    "place": "The {alias} Cup drew a large crowd on {day}.",
    "product": "Guests filled the {alias} Inn on {day}.",
}
# Each relation in two disjoint sets of two wordings ({s} the subject, {o} the object). Set "A" is what the
# offline extraction stand-in is built from (cookbook.llm.extractive_graph.PHRASES matches exactly its text
# between the two names); set "B" it has never seen, and shares no word with set A or with the questions'
# paraphrases. Fact.phrasing records the set; notebook 02 scores extraction on each set separately. The i-th
# wordings of A and B name the two ends in the same order, so the draws (aliases are drawn per mention, in text
# order) are the same.
_FACT_TEMPLATES = {
    "headquartered_in": {"A": ("{s} is headquartered in {o}.", "The offices of {s} stand in {o}."),
                         "B": ("{s} runs its operations from {o}.", "{s} keeps its main premises in {o}.")},
    "makes": {"A": ("{s} makes the {o}.", "The {o} is manufactured by {s}."),
              "B": ("{s} produces the {o}.", "The {o} comes off the assembly lines of {s}.")},
    "works_for": {"A": ("{s} works for {o}.", "{s} is employed by {o}."),
                  "B": ("{s} draws a salary from {o}.", "{s} is on the payroll of {o}.")},
    "lives_in": {"A": ("{s} lives in {o}.", "{s} has a home in {o}."),
                 "B": ("{s} rents rooms in {o}.", "{s} dwells in {o}.")},
    "knows": {"A": ("{s} is a longtime friend of {o}.", "{s} often meets {o}."),
              "B": ("{s} grew up alongside {o}.", "{s} stays in touch with {o}.")},
    # Last, so that the phrasing stream shuffles the other predicates' facts as before.
    "in_trade": {"A": ("{s} is part of the {o}.", "The {o} counts {s} among its members."),
                 "B": ("{s} belongs to the {o}.", "The {o} includes {s}.")},
    "located_in": {"A": ("{s} lies in the {o}.", "The {o} contains {s}."),
                   "B": ("{s} is situated in the {o}.", "The {o} encompasses {s}.")},
}
# Written by name, with no draw: their sentences were plain text before they were entities (a draw moves the world).
_BY_NAME = ("trade", "region")
# News sentences; a number is a slot for an entity: 0 and 1 people, 2 a place, 3 an organisation.
_EVENT_TEMPLATES = (
    [0, " and ", 1, " discussed new {w} at a meeting."],
    ["At ", 2, ", ", 0, " presented work on {w}."],
    [0, " joined ", 1, " to inspect the {w}."],
    ["Analysts say ", 3, " depends on {w} from ", 2, "."],
)
# A filler that uses a product word in lower case: case-insensitive alias matching will misfire on it.
_LOWERCASE_TRAP = "Fishermen said the old {word} near the pier needed repairs."


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
    Taught in notebooks/03_leiden_communities.ipynb (a noisier world via ``mixing``).

    >>> w = make_world(seed=0, scale="tiny")
    >>> len(w.entities), len(w.group_themes), w.facts == make_world(seed=0, scale="tiny").facts
    (51, 4, True)
    >>> make_world(seed=0, scale="tiny", mixing=0.6, bridging=0.5)
    Traceback (most recent call last):
    ValueError: mixing + bridging must be below 1, got 0.6 + 0.5
    """
    seed = check_seed(seed)
    _check_knobs(mixing, bridging, namesakes, paraphrase, skew)
    scale = resolve_scale(scale)
    p = SCALES[scale]
    rng = random.Random(f"cookbook-world-{seed}-{scale}")
    names = _Names(rng)
    n_groups = p["n_groups"]
    # Large worlds have more groups than themes: themes repeat, so a theme may span several groups.
    themes = [THEMES[g % len(THEMES)] for g in range(n_groups)]
    regions = [REGIONS[g % len(REGIONS)] for g in range(n_groups)]
    entities, by_group = _make_entities(rng, names, p)
    member_facts = _trades_and_regions(entities, by_group, themes, regions)
    raw_facts = _plan_facts(rng, by_group)
    draft = _Draft(rng, names, entities, by_group, regions, namesakes)
    # The phrasing sets come from a stream of their own, so the main stream (and everything else) is as before.
    phrasings = _assign_phrasings(random.Random(f"cookbook-phrasing-{seed}-{scale}"), raw_facts + member_facts)
    facts = _write_fact_documents(draft, raw_facts, phrasings[:len(raw_facts)])
    _write_news_documents(draft, p["news_docs"], themes, mixing, bridging, skew)
    # Their documents last, from a stream of their own: all else is as in a world without them, draw for draw.
    draft.rng = draft.names.rng = random.Random(f"cookbook-membership-{seed}-{scale}")
    facts += _write_fact_documents(draft, member_facts, phrasings[len(raw_facts):])
    questions = multi_hop_questions(rng, facts, draft.ent, p["questions_per_type"], paraphrase)
    global_qs = global_questions(themes, regions, entities, facts, per_family=p["questions_per_type"])
    return World(seed, scale, mixing, themes, regions, entities, facts, draft.docs, draft.mentions, questions,
                 global_qs, bridging, namesakes, paraphrase, skew)


def _check_knobs(mixing, bridging, namesakes, paraphrase, skew) -> None:
    for knob, value in (("mixing", mixing), ("bridging", bridging), ("namesakes", namesakes),
                        ("paraphrase", paraphrase)):
        if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
            raise ValueError(f"{knob} must be in [0, 1), got {value!r}")
    if not isinstance(skew, (int, float)) or not 0.0 <= skew <= 10.0:
        raise ValueError(f"skew must be in [0, 10], got {skew!r}")
    if mixing + bridging >= 1.0:
        raise ValueError(f"mixing + bridging must be below 1, got {mixing} + {bridging}")


def _make_entities(rng: random.Random, names: _Names, p: dict) -> tuple[list[Entity], list[dict[str, list[Entity]]]]:
    """People, organisations, places and products, group by group; ``by_group[g][type]`` lists them."""
    entities: list[Entity] = []
    by_group: list[dict[str, list[Entity]]] = []
    surnames: list[str] = []

    def add(etype: str, name: str, aliases: tuple[str, ...], g: int) -> None:
        e = Entity(f"E{len(entities):05d}", etype, name, aliases, g)
        entities.append(e)
        by_group[g][etype].append(e)

    product_pool = list(_PRODUCT_WORDS)
    for g in range(p["n_groups"]):
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
    return entities, by_group


def _trades_and_regions(entities: list[Entity], by_group, themes, regions) -> list[tuple[str, str, str, int]]:
    """Add one trade entity per theme ("textiles trade", alias "textiles") and one region entity per region
    ("Northern Reach"; the text writes "the Northern Reach") after all others, trades first, each in order of its
    first group (its ``group``); ``by_group[g]["trade"]`` / ``["region"]`` hold group ``g``'s. Returns the facts
    tying each organisation to its group's trade and each place to its region (as :func:`_plan_facts`). No draw."""
    named = {"trade": [f"{t} trade" for t in themes], "region": [r.removeprefix("the ") for r in regions]}
    for etype, names in named.items():
        made: dict[str, Entity] = {}
        for g, name in enumerate(names):
            if name not in made:
                made[name] = Entity(f"E{len(entities):05d}", etype, name, (themes[g],) if etype == "trade" else (), g)
                entities.append(made[name])
            by_group[g][etype].append(made[name])
    return [fact for g, grp in enumerate(by_group)
            for fact in [(org.id, "in_trade", grp["trade"][0].id, g) for org in grp["org"]]
            + [(place.id, "located_in", grp["region"][0].id, g) for place in grp["place"]]]


def _plan_facts(rng: random.Random, by_group) -> list[tuple[str, str, str, int]]:
    """Relation facts within each group (the planted structure) as ``(subject, predicate, object, group)``;
    the documents stating them are written later."""
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
    return raw_facts


@dataclass
class _Draft:
    """The world while documents are written: the shared RNG and names, and the documents and gold
    mentions so far (document ids are their positions)."""

    rng: random.Random
    names: _Names
    entities: list[Entity]
    by_group: list[dict[str, list[Entity]]]
    regions: list[str]
    namesakes: float
    docs: list[Document] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    ent: dict[str, Entity] = field(init=False)
    namesake_of: list[Entity] = field(init=False)  # the entities a namesake may share an alias with

    def __post_init__(self):
        self.ent = {e.id: e for e in self.entities}
        self.namesake_of = [e for e in self.entities if e.type in _NAMESAKE]


def _write_doc(d: _Draft, g: int, parts: list[list]) -> str:
    """``parts``: sentences as lists of str / entity ids (ids starting with 'E' and in ``d.ent``)."""
    doc_id = f"D{len(d.docs):05d}"
    text, spans, seen = "", [], set()
    for sent in parts:
        start = len(text) + (1 if text else 0)
        text += " " if text else ""
        for piece in sent:
            if piece in d.ent:
                e = d.ent[piece]
                # First mention in a document is usually the full name; later ones an alias.
                if e.type not in _BY_NAME and (piece in seen or d.rng.random() < 0.25):
                    surface = d.rng.choice(e.aliases)
                else:
                    surface = e.name
                seen.add(piece)
                d.mentions.append(Mention(doc_id, len(text), len(text) + len(surface), e.id, surface))
                text += surface
            else:
                text += piece
        spans.append((start, len(text)))
    d.docs.append(Document(doc_id, text, tuple(spans), g))
    return doc_id


def _fact_sentence(rng: random.Random, s: str, pred: str, o: str, phrasing: str) -> list:
    """The pieces of a sentence stating ``s --pred--> o`` in one of the ``phrasing`` set's wordings."""
    template = rng.choice(_FACT_TEMPLATES[pred][phrasing])
    return [{"{s}": s, "{o}": o}.get(piece, piece) for piece in re.split(r"(\{[so]\})", template) if piece]


def _with_namesake(d: _Draft, sents: list) -> list:
    if d.rng.random() < d.namesakes:
        at = d.rng.randrange(len(sents) + 1)  # drawn before the namesake: the order of draws is the world
        e = d.rng.choice(d.namesake_of)
        line = _NAMESAKE[e.type].format(first=d.names.word(2), alias=e.aliases[0], day=d.rng.choice(_WEEKDAYS))
        sents.insert(at, [line])
    return sents


def _region(d: _Draft, g: int) -> list:
    """Group ``g``'s region as the text writes it: "the ", then the region entity."""
    return [d.regions[g].removesuffix(d.by_group[g]["region"][0].name), d.by_group[g]["region"][0].id]


def _filler(d: _Draft, g: int) -> list:
    common = [e for e in d.by_group[g]["product"] if e.aliases[0] in _PRODUCT_WORDS]
    if common and d.rng.random() < 0.04:
        return [_LOWERCASE_TRAP.format(word=d.rng.choice(common).aliases[0].lower())]
    template = d.rng.choice(_FILLERS)
    before, after = template.format(day=d.rng.choice(_WEEKDAYS), region="{region}").split("{region}")
    return [before, *_region(d, g), after]


def _assign_phrasings(rng: random.Random, raw_facts) -> list[str]:
    """The phrasing set (``"A"`` or ``"B"``) of each planned fact: per predicate, the facts in an order shuffled
    by ``rng`` take A and B in turn, so each predicate's facts are split half and half (A gets the odd one)."""
    out = [""] * len(raw_facts)
    for pred in _FACT_TEMPLATES:
        idx = [i for i, f in enumerate(raw_facts) if f[1] == pred]
        rng.shuffle(idx)
        for k, i in enumerate(idx):
            out[i] = PHRASINGS[k % 2]
    return out


def _write_fact_documents(d: _Draft, raw_facts, phrasings: list[str]) -> list[Fact]:
    """Fact documents: each fact stated exactly once, in a wording of its phrasing set, one or two facts per
    document."""
    order = list(range(len(raw_facts)))
    d.rng.shuffle(order)
    by_group_facts: dict[int, list[int]] = {}
    for i in order:
        by_group_facts.setdefault(raw_facts[i][3], []).append(i)
    facts: list[Fact] = []
    for g in sorted(by_group_facts):
        pending = by_group_facts[g]
        while pending:
            take = pending[:d.rng.choice((1, 2))]
            pending = pending[len(take):]
            sents = [_fact_sentence(d.rng, *raw_facts[i][:3], phrasings[i]) for i in take]
            if d.rng.random() < 0.5:
                sents.append(_filler(d, g))
            doc_id = _write_doc(d, g, _with_namesake(d, sents))
            facts.extend(Fact(*raw_facts[i][:3], doc_id, phrasings[i]) for i in take)
    return facts


def _write_news_documents(d: _Draft, n_docs: int, themes, mixing: float, bridging: float, skew: float) -> None:
    """News documents: co-mentions within a group (with cross-group mixing) and the group's theme."""
    n_groups = len(d.by_group)
    for _ in range(n_docs):
        g = d.rng.randrange(n_groups)
        sents = []
        for _ in range(d.rng.choice((1, 2, 2, 3))):
            tmpl = d.rng.choice(_EVENT_TEMPLATES)
            slots = _fill_slots(d, tmpl, g, mixing, bridging, skew)
            word = d.rng.choice(THEME_WORDS[themes[g]])
            sents.append([slots[x] if isinstance(x, int) else x.format(w=word) for x in tmpl])
        theme_line = ["The ", d.by_group[g]["trade"][0].id, " is central to life in ", *_region(d, g), "."]
        sents.insert(d.rng.randrange(len(sents) + 1), theme_line)
        if d.rng.random() < 0.3:
            sents.append(_filler(d, g))
        _write_doc(d, g, _with_namesake(d, sents))


def _fill_slots(d: _Draft, tmpl, g: int, mixing: float, bridging: float, skew: float) -> dict[int, str]:
    """An entity id per numbered slot of an event template: from group ``g``, a neighbour (``bridging``)
    or any group (``mixing``); within the group the i-th member has weight (i + 1) ** -skew."""
    n_groups = len(d.by_group)
    slots: dict[int, str] = {}
    for piece in tmpl:
        if isinstance(piece, int) and piece not in slots:
            r = d.rng.random()
            if r < mixing:
                src = d.rng.randrange(n_groups)
            elif r < mixing + bridging:
                src = (g + d.rng.choice((-1, 1))) % n_groups
            else:
                src = g
            kind = "person" if piece in (0, 1) else ("org" if piece == 3 else "place")
            members = d.by_group[src][kind]
            pool = [i for i, e in enumerate(members) if e.id not in slots.values()] or range(len(members))
            pick = d.rng.choices(pool, weights=[(i + 1) ** -skew for i in pool])[0]
            slots[piece] = members[pick].id
    return slots
