"""The generated world's questions, asked of its planted structure: multi-hop questions that follow chains of
facts (:func:`multi_hop_questions`) and global questions over many documents (:func:`global_questions`).
:func:`~cookbook.data.world.make_world` calls both; the rules are stated in data/README.md.

>>> from cookbook.data.world import make_world
>>> w = make_world(seed=0, scale="tiny")
>>> w.global_questions[0].family, {q.hops for q in w.questions}
('corpus/trades', {1, 2, 3})
"""

from __future__ import annotations

import random

from .records import Entity, Fact, GlobalQuestion, Question

__all__ = ["global_questions", "multi_hop_questions", "scoped_questions"]

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


def multi_hop_questions(rng: random.Random, facts: list[Fact], ent: dict[str, Entity], per_type: int,
                        paraphrase: float) -> list[Question]:
    """Up to ``per_type`` questions per hop count (1–3), sampled with ``rng`` from every chain of ``facts``
    that follows functional relations (one object per subject) without revisiting an entity; each hop is
    worded with the fact sentences' own words, or with probability ``paraphrase`` without them. ``ent`` maps
    entity ids to entities. Only the predicates of ``_HOP_PHRASES`` are followed: ``in_trade`` and
    ``located_in`` end in a world's handful of trades and regions, which global questions ask about (and the
    world's multi-hop questions stay what they were before those facts existed). Called by
    :func:`~cookbook.data.world.make_world` (its draws come last).

    >>> es = {e.id: e for e in (Entity("E1", "person", "Ada Selel", (), 0), Entity("E2", "org", "Acme", (), 0))}
    >>> [q.text for q in multi_hop_questions(random.Random(0), [Fact("E1", "works_for", "E2", "D1", "A")], es, 5, 0.0)]
    ['What is the organisation Ada Selel works for?']
    """
    objects: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        if f.predicate in _HOP_PHRASES:
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


# Global questions, by scope and ask (family "<scope>/<ask>"). An ask names a predicate whose facts' two ends
# are the gold entities ("trades": in_trade, the scope's organisations and their trades); {trades} and {each} ask
# for the trades as well when the scope holds more than one.
_GLOBAL_SCOPES = {"corpus": "Across this world", "region": "In {region}", "theme": "In the {theme} trade"}
_GLOBAL_ASKS = {
    "makes": "{scope}, which organisations make which products{trades}?",
    "works_for": "{scope}, who works for which organisation{trades}?",
    "headquartered_in": "{scope}, where are the organisations{each} based?",
    "lives_in": "{scope}, where do the people{each} live?",
}
_TRADES_ASK = {"corpus": "What are the main trades across this world, and which organisations drive them?",
               "region": "Which trades shape {region}, and which organisations drive them?"}
# Scopes of two: every pair of themes and every pair of regions (family "themes/<ask>", "regions/<ask>"), asked
# after the single scopes, so that a global lesson has enough questions for its test half (data/README.md).
_PAIR_SCOPES = {"themes": "In the {a} and {b} trades", "regions": "In {a} and in {b}"}
_PAIR_TRADES_ASK = "{scope}, which organisations drive which trade?"
_PAIR_ASKS = {**_GLOBAL_ASKS, "knows": "{scope}, which people know each other, and in which trades?"}


def global_questions(themes: list[str], regions: list[str], entities: list[Entity], facts: list[Fact],
                     per_family: int | None = None) -> list[GlobalQuestion]:
    """Questions over many documents, gold from the planted structure only: per scope (the whole world, each
    region, each theme), the scope's themes and, per ask of ``_GLOBAL_ASKS``, the two ends of the scope's facts
    with that predicate (a fact is in scope when its subject's group is); the world and each region also ask for
    their trades (gold: the two ends of their ``in_trade`` facts, their organisations and trade entities). A
    question with the same gold as an earlier one is left out (a region of one group is that group's theme). Then
    the same five asks (the trades ask worded for two) and a sixth, ``knows`` (both ends of the scope's
    ``knows`` facts), for every pair of themes and every pair of regions, their groups the union of the two.
    ``themes[g]`` and ``regions[g]`` are group ``g``'s. Last, the questions that do not name their themes
    (:func:`scoped_questions`, at most ``per_family`` per entity-scoped family). Called by
    :func:`~cookbook.data.world.make_world`.

    >>> es = [Entity("E1", "person", "Ada Selel", (), 0), Entity("E2", "org", "Acme", (), 0),
    ...       Entity("E3", "trade", "mining trade", ("mining",), 0)]
    >>> facts = [Fact("E1", "works_for", "E2", "D1", "A"), Fact("E2", "in_trade", "E3", "D2", "A")]
    >>> [(q.family, q.entities) for q in global_questions(["mining"], ["the Amber Coast"], es, facts)]
    [('corpus/trades', ('E2', 'E3')), ('corpus/works_for', ('E1', 'E2'))]
    """
    scopes = [("corpus", {}, tuple(range(len(themes))))]
    for scope, of in (("region", regions), ("theme", themes)):
        scopes += [(scope, {scope: x}, tuple(g for g, y in enumerate(of) if y == x)) for x in sorted(set(of))]
    group_of = {e.id: e.group for e in entities}
    out, seen = [], set()

    def add(text, gold_themes, gold_entities, groups, family):
        key = (gold_themes, gold_entities)
        if gold_entities and key not in seen:
            seen.add(key)
            out.append(GlobalQuestion(f"G{len(out):03d}", text, gold_themes, gold_entities, groups, family))

    def ends(pred, groups):  # both ends of the facts with ``pred`` whose subject is in ``groups``
        return tuple(sorted({x for f in facts if f.predicate == pred and group_of[f.subject] in groups
                             for x in (f.subject, f.object)}))

    for scope, names, groups in scopes:
        gold_themes = tuple(sorted({themes[g] for g in groups}))
        several = len(gold_themes) > 1
        if scope in _TRADES_ASK:
            add(_TRADES_ASK[scope].format(**names), gold_themes, ends("in_trade", groups), groups, f"{scope}/trades")
        for pred, template in _GLOBAL_ASKS.items():
            text = template.format(scope=_GLOBAL_SCOPES[scope].format(**names),
                                   trades=", and in which trades" if several else "",
                                   each=" of each trade" if several else "")
            add(text, gold_themes, ends(pred, groups), groups, f"{scope}/{pred}")
    for scope, of in (("themes", themes), ("regions", regions)):
        names = sorted(set(of))
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                groups = tuple(g for g, y in enumerate(of) if y in (a, b))
                gold_themes = tuple(sorted({themes[g] for g in groups}))
                where = _PAIR_SCOPES[scope].format(a=a, b=b)
                add(_PAIR_TRADES_ASK.format(scope=where), gold_themes, ends("in_trade", groups), groups,
                    f"{scope}/trades")
                for pred, template in _PAIR_ASKS.items():
                    text = template.format(scope=where, trades=", and in which trades", each=" of each trade")
                    add(text, gold_themes, ends(pred, groups), groups, f"{scope}/{pred}")
    for text, gold_themes, gold_entities, groups, family in scoped_questions(regions, entities, facts, per_family):
        add(text, gold_themes, gold_entities, groups, family)
    return out


# Questions that do not name their themes (family "<scope>/<ask>"): scoped by a region (or two), a place, an
# organisation or a person, each asks what the people or organisations around its scope work in. Gold follows the
# facts: a region's places (located_in), a place's organisations (headquartered_in) or residents (lives_in), an
# organisation's staff (works_for), a person's friends (knows, either way) or neighbours (lives_in); then people's
# employers (works_for) and organisations' trades (in_trade), each as the theme word its trade entity is named by.
_SCOPED_ASKS = {
    "based": "What do the organisations based in {x} work in?",
    "residents": "What do the people who live in {x} do for a living?",
    "staff_friends": "What lines of work are the friends of the people at {x} in?",
    "friends": "What do {x}'s friends do for a living?",
    "neighbours": "What do {x}'s neighbours do for a living?",
}
# A region's residents are its works_for facts' two ends, the gold of region/works_for: not asked again.
_SCOPED_FAMILIES = (("region", "based"), ("regions", "based"), ("place", "based"), ("place", "residents"),
                    ("org", "staff_friends"), ("person", "friends"), ("person", "neighbours"))


def scoped_questions(regions: list[str], entities: list[Entity], facts: list[Fact],
                     per_family: int | None = None) -> list[tuple[str, tuple, tuple, tuple, str]]:
    """Global questions that name none of their gold themes, as ``(text, themes, entities, groups, family)``:
    per family of ``_SCOPED_FAMILIES``, per scope (each region and each pair of regions, by name; each place,
    organisation and person, in id order; at most ``per_family`` of them, evenly spaced, when given), what the
    organisations based there or the people around it work in. Gold entities: the organisations (``based``), or
    the people around the scope and their employers; gold themes: the trades (``in_trade``) of those
    organisations, as their trade entities' theme words (alias). ``regions`` are the regions as the text writes
    them ("the Amber Coast"). Every step follows the facts, never a group, so a scope's gold is what its facts
    reach; in a generated world each fact lies within one group, so an entity's scope has one theme (its
    group's). Questions with no gold are left out. Called by :func:`global_questions`, last.

    >>> es = [Entity("E1", "person", "Ada Selel", (), 0), Entity("E2", "org", "Acme", (), 0),
    ...       Entity("E3", "trade", "mining trade", ("mining",), 0), Entity("E4", "place", "Port Lo", (), 0)]
    >>> facts = [Fact("E1", "works_for", "E2", "D1", "A"), Fact("E2", "in_trade", "E3", "D2", "A"),
    ...          Fact("E1", "lives_in", "E4", "D3", "A")]
    >>> [(text, themes, family) for text, themes, _, _, family in scoped_questions([], es, facts)]
    [('What do the people who live in Port Lo do for a living?', ('mining',), 'place/residents')]
    """
    ent = {e.id: e for e in entities}
    fwd: dict[str, dict[str, set[str]]] = {}
    inv: dict[str, dict[str, set[str]]] = {}
    for f in facts:
        fwd.setdefault(f.predicate, {}).setdefault(f.subject, set()).add(f.object)
        inv.setdefault(f.predicate, {}).setdefault(f.object, set()).add(f.subject)

    def step(table, pred, xs):  # every end the facts with ``pred`` reach from ``xs``
        return {y for x in xs for y in table.get(pred, {}).get(x, ())}

    def around(kind, scope):  # the people or organisations a scope (a set of ids) asks about
        if kind in ("region", "regions"):
            scope = step(inv, "located_in", scope)
        if kind == "org":
            return step(fwd, "knows", step(inv, "works_for", scope)) | step(inv, "knows", step(inv, "works_for", scope))
        if kind == "person":
            return step(fwd, "knows", scope) | step(inv, "knows", scope)
        return scope

    def gold(kind, ask, scope):
        if ask == "based":
            orgs = step(inv, "headquartered_in", around(kind, scope))
            who = orgs
        else:
            if ask == "neighbours":
                people = step(inv, "lives_in", step(fwd, "lives_in", scope)) - scope
            elif ask == "residents":
                people = step(inv, "lives_in", around(kind, scope))
            else:
                people = around(kind, scope)
            orgs = step(fwd, "works_for", people)
            who = people | orgs
        themes = {ent[t].aliases[0] for t in step(fwd, "in_trade", orgs)}
        return tuple(sorted(themes)), tuple(sorted(who))

    by_type: dict[str, list[Entity]] = {}
    for e in entities:
        by_type.setdefault(e.type, []).append(e)
    said = {r.removeprefix("the "): r for r in regions}
    named_regions = sorted((said.get(e.name, e.name), e.id) for e in by_type.get("region", ()))
    scopes = {"region": [(text, {eid}) for text, eid in named_regions],
              "regions": [(f"{a} and in {b}", {x, y}) for i, (a, x) in enumerate(named_regions)
                          for b, y in named_regions[i + 1:]]}
    for kind in ("place", "org", "person"):
        scopes[kind] = [(e.name, {e.id}) for e in sorted(by_type.get(kind, ()), key=lambda e: e.id)]
    out = []
    for kind, ask in _SCOPED_FAMILIES:
        chosen = scopes[kind]
        if per_family is not None and len(chosen) > per_family:
            chosen = [chosen[i * len(chosen) // per_family] for i in range(per_family)]
        for text, scope in chosen:
            themes, who = gold(kind, ask, scope)
            if themes and who:
                groups = tuple(sorted({ent[x].group for x in who}))
                out.append((_SCOPED_ASKS[ask].format(x=text), themes, who, groups, f"{kind}/{ask}"))
    return out
