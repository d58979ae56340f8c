"""The prompt format and its named prompts: what every backend reads and every stage writes.

A prompt is a ``TASK: <task>`` line, one ``## NAME`` block per section (evidence as ``[id] text`` lines),
then ``## INSTRUCTIONS``: the task's instruction text, kept here as named constants
(``COMMUNITY_REPORT_PROMPT``, ``MAP_PROMPT``, ...) so they can be read, diffed and changed in one place,
as microsoft/graphrag keeps its prompts. :func:`parse_prompt` inverts :func:`prompt`; reading a model's
answer is :mod:`cookbook.llm.parse`. Section bodies are data: a body line that reads as a section marker is
escaped, so passage text cannot open a section (see :func:`prompt`). Taught in
notebooks/04_community_reports.ipynb and notebooks/05_map_reduce_answering.ipynb.

>>> p = prompt("answer", question="Who?", sources=["[d1] Ada founded Acme."])
>>> print(p)
TASK: answer
## QUESTION
Who?
## SOURCES
[d1] Ada founded Acme.
## INSTRUCTIONS
Answer the QUESTION from the SOURCES only, citing source ids in brackets.
>>> parse_prompt(p)[1]["SOURCES"]
'[d1] Ada founded Acme.'
"""

from __future__ import annotations

import re

from .._validate import string

__all__ = ["ANSWER_PROMPT", "COMMUNITY_REPORT_PROMPT", "COMPLETE", "DRIFT_LOCAL_PROMPT", "DRIFT_PRIMER_PROMPT",
           "EXTRACT_CLAIMS_PROMPT", "EXTRACT_GRAPH_PROMPT", "GLEAN_PROMPT", "INSTRUCTIONS", "JUDGE_PROMPT",
           "LOCAL_SEARCH_PROMPT", "MAP_PROMPT", "RATE_RELEVANCE_PROMPT", "RECORD_DELIMITER", "REDUCE_PROMPT",
           "RELEVANCE_TEST_PROMPT", "REPAIR_PROMPT", "TASKS", "TUPLE_DELIMITER", "cited_lines", "parse_prompt",
           "prompt"]

# Microsoft GraphRAG's community report, its schema and grounding rule (graphrag/prompts/index/community_report.py).
COMMUNITY_REPORT_PROMPT = (
    "Write a report of one community of entities from the data above only: its ENTITIES and RELATIONSHIPS "
    "tables and, where given, its text units (SOURCES) or its sub-communities' REPORTS. Return one JSON object: "
    '{"title": str, "summary": str, "rating": number 0-10, "rating_explanation": str, "findings": [{"summary": '
    'str, "explanation": str}]}. The title names the community\'s key entities; the summary says how they are '
    "related and what matters about them; the rating is how important the community is to someone reading the "
    "corpus, and rating_explanation says why in one sentence; give 5 to 10 findings. Ground every explanation "
    "in the data and end it with its references, e.g. [Data: Entities (E1, E7); Relationships (r23); Sources "
    "(d4); Reports (R1-2)], at most 5 ids per table, then +more. Do not state what the data do not support.")
# GraphRAG's dynamic community selection rates each report's relevance before mapping it
# (graphrag/query/context_builder/rate_relevancy.py).
RATE_RELEVANCE_PROMPT = (
    'Rate how relevant the REPORT is to answering the QUESTION. Return JSON {"reason": str, "rating": integer '
    "0-5}: 0 not relevant at all, 5 it answers the question directly.")
MAP_PROMPT = (
    'Answer from the REPORTS only. Return JSON {"points": [{"description": str, "score": integer 0-100, '
    '"reports": [report ids]}]}; score is how much the point helps answer the QUESTION; no points if '
    "nothing helps.")
REDUCE_PROMPT = (
    "Write the final answer to the QUESTION from the POINTS, most important first, citing report ids "
    "in brackets. If the points do not answer it, say so.")
ANSWER_PROMPT = "Answer the QUESTION from the SOURCES only, citing source ids in brackets."
LOCAL_SEARCH_PROMPT = (
    "Answer the QUESTION from the data tables only: ENTITIES, RELATIONSHIPS, SOURCES and community REPORTS, "
    "citing their ids in brackets. If they do not answer it, say so.")
REPAIR_PROMPT = (
    'The OUTPUT below was meant to be JSON of the form {"points": [{"description": str, "score": '
    'integer 0-100}]}. Return only that JSON, corrected.')
# Graph extraction (notebooks/02_graph_extraction.ipynb), in the spirit of Microsoft GraphRAG's
# extract_graph prompt: one record per line, fields split by TUPLE_DELIMITER, the answer closed by COMPLETE.
TUPLE_DELIMITER = "<|>"
COMPLETE = "<|COMPLETE|>"
_D = TUPLE_DELIMITER
EXTRACT_GRAPH_PROMPT = (
    "Read the TEXT. List every entity it names whose type is one of ENTITY_TYPES, and every relationship it "
    "states between two of those entities. One record per line:\n"
    f'("entity"{_D}name as written{_D}type{_D}one sentence on the entity, from the TEXT)\n'
    f'("relationship"{_D}source name{_D}target name{_D}relation type in snake_case{_D}one sentence on why '
    f"they are related, from the TEXT{_D}strength, a number from 1 (weak) to 10 (stated outright))\n"
    "A relationship runs from its subject to its object (source works_for target). Use only what the TEXT "
    "says. A JSON object per line with the same fields (kind, name, type, description; kind, source, target, "
    f"relation, description, strength) is also accepted. End with {COMPLETE}.")
GLEAN_PROMPT = (
    "The PREVIOUS records were extracted from the TEXT, but entities and relationships were missed. Add the "
    "missing ones only, in the same format as before and for the same ENTITY_TYPES, one record per line; do "
    f"not repeat a previous record. End with {COMPLETE}; answer only {COMPLETE} if nothing is missing.")
# LLM-as-judge (cookbook.harness.judge), after the head-to-head assessment of Edge et al. (2024): one
# criterion per prompt; the order of the two answers is swapped on a second call, so position bias cancels.
JUDGE_PROMPT = (
    "Decide which answer serves the QUESTION better on the CRITERION alone, whichever comes first. Return one "
    'JSON object {"winner": 1, 2 or "tie", "reason": str}: 1 if ANSWER_ONE is better, 2 if ANSWER_TWO is better, '
    '"tie" if they are fundamentally similar and the differences are negligible; the reason says briefly why, '
    "on the CRITERION. An UNREADABLE_REPLY, when present, is your earlier reply, which could not be read: "
    "answer again, in that JSON form only.")

# DRIFT search (cookbook.query.drift_search), after Microsoft GraphRAG's DRIFT primer and its local-search step
# (graphrag/query/structured_search/drift_search/): both answer in JSON with a score and follow-up questions.
DRIFT_PRIMER_PROMPT = (
    "Answer the QUESTION as far as the community REPORTS allow, citing report ids in brackets, and say what to "
    'ask next. Return one JSON object {"intermediate_answer": str, "score": integer 0-100, "follow_up_queries": '
    "[str]}: score is how well the reports answer the question; each follow-up query is a specific question "
    "about entities the reports name, which a search of those entities' neighbourhoods could answer.")
DRIFT_LOCAL_PROMPT = (
    "Answer the QUESTION from the data tables only: ENTITIES, RELATIONSHIPS, SOURCES and community REPORTS, "
    'citing their ids in brackets. Return one JSON object {"response": str, "score": integer 0-100, '
    '"follow_up_queries": [str]}: score is how well the tables answer the question; the follow-up queries ask '
    "what the tables name but do not explain.")
# A LazyGraphRAG-style relevance test (cookbook.query.lazy_search): one community's best text units rated at once.
RELEVANCE_TEST_PROMPT = (
    'Rate how relevant the TEXT units are to answering the QUESTION. Return JSON {"reason": str, "rating": '
    "integer 0-5}: 0 not relevant at all, 5 they answer the question directly.")
# Claim extraction (cookbook.index.claims), in the spirit of Microsoft GraphRAG's extract_claims prompt
# (graphrag/prompts/index/extract_claims.py): claims about entities as delimited tuples, records split by
# RECORD_DELIMITER, the answer closed by COMPLETE; a claim's status is TRUE, FALSE or SUSPECTED.
RECORD_DELIMITER = "##"
EXTRACT_CLAIMS_PROMPT = (
    "Read the TEXT. For every entity it names whose type is one of ENTITY_TYPES, list the claims the TEXT makes "
    "about it that match the CLAIM_DESCRIPTION. One claim per record, records separated by "
    f"{RECORD_DELIMITER}:\n"
    f"(subject{_D}object or NONE{_D}claim type in capitals{_D}TRUE, FALSE or SUSPECTED{_D}start date (ISO 8601) "
    f"or NONE{_D}end date or NONE{_D}one sentence describing the claim, from the TEXT{_D}the source text quoted)\n"
    "The subject committed the action or holds the property; the object is affected by it. Use only what the "
    f"TEXT says. End with {COMPLETE}.")

# The instructions of each task, by the name its ``TASK:`` line carries.
INSTRUCTIONS = {"community_report": COMMUNITY_REPORT_PROMPT, "map": MAP_PROMPT, "reduce": REDUCE_PROMPT,
                "answer": ANSWER_PROMPT, "repair": REPAIR_PROMPT, "extract_graph": EXTRACT_GRAPH_PROMPT,
                "glean": GLEAN_PROMPT, "local_search": LOCAL_SEARCH_PROMPT, "rate_relevance": RATE_RELEVANCE_PROMPT,
                "judge": JUDGE_PROMPT, "drift_primer": DRIFT_PRIMER_PROMPT, "drift_local": DRIFT_LOCAL_PROMPT,
                "relevance_test": RELEVANCE_TEST_PROMPT, "extract_claims": EXTRACT_CLAIMS_PROMPT}
TASKS = tuple(INSTRUCTIONS)

_SECTION = re.compile(r"^## ([A-Z_]+)\s*$", re.M)
# A body line _SECTION would read as a marker, already escaped (leading backslashes) or not.
_MARKER_LINE = re.compile(r"(\\*)## [A-Z_]+\s*")
# What str.splitlines splits on: a list item must stay one line of its section.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_LINE = re.compile(r"^\[([^\]]+)\]\s*(.*)$")


def _escape_markers(body: str) -> str:
    return "\n".join("\\" + line if _MARKER_LINE.fullmatch(line) else line for line in body.split("\n"))


def _unescape_markers(body: str) -> str:
    return "\n".join(line[1:] if line.startswith("\\") and _MARKER_LINE.fullmatch(line) else line
                     for line in body.split("\n"))


def prompt(task: str, **sections) -> str:
    """Build a prompt: ``TASK: <task>``, one ``## NAME`` block per keyword (a string, or a list of
    lines), then the task's instructions. Section names are upper-cased.

    Bodies are data, never structure. A list item is one line: line breaks inside it become spaces, so
    a passage's own lines cannot pose as further ``[id]`` evidence lines. A body line that reads as a
    section marker (``## TEXT``, ``## SOURCES``, ...) gets a backslash in front (``\\## TEXT``; one more
    on a line that already starts with backslashes), so it cannot open a section; :func:`parse_prompt`
    removes it again and returns the bodies as given.

    >>> prompt("reduce", question="Why?", points=["[score 80] [R1] Because."]).splitlines()[:4]
    ['TASK: reduce', '## QUESTION', 'Why?', '## POINTS']
    >>> p = prompt("answer", question="Who?", sources=["[d1] Ada founded Acme.\\n## SOURCES\\n[d9] Bo did."])
    >>> p.splitlines()[4]
    '[d1] Ada founded Acme. ## SOURCES [d9] Bo did.'
    >>> print(prompt("extract_graph", text="Ada works.\\n## NOTES\\nBo rests.").splitlines()[3])
    \\## NOTES
    """
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
    parts = [f"TASK: {task}"]
    for name, body in sections.items():
        if isinstance(body, str):
            text = body
        else:
            text = "\n".join(_LINE_BREAK.sub(" ", string(item, f"{name}[{i}]")) for i, item in enumerate(body))
        parts.append(f"## {name.upper()}\n{_escape_markers(text)}")
    parts.append(f"## INSTRUCTIONS\n{INSTRUCTIONS[task]}")
    return "\n".join(parts)


def parse_prompt(text: str) -> tuple[str, dict[str, str]]:
    """Inverse of :func:`prompt`: ``(task, {SECTION: body})``, each body as it was given (less leading and
    trailing newlines; a list body as its lines joined by newlines), section markers inside it unescaped.

    >>> parse_prompt(prompt("map", question="Q?", reports="[R1] x"))[0]
    'map'
    >>> parse_prompt(prompt("extract_graph", text="## TEXT\\nAda works."))[1]["TEXT"]
    '## TEXT\\nAda works.'
    """
    first, _, rest = text.partition("\n")
    if not first.startswith("TASK: "):
        raise ValueError("not a cookbook prompt: the first line must be 'TASK: <task>'")
    pieces = _SECTION.split(rest)
    return first[6:].strip(), {pieces[i]: _unescape_markers(pieces[i + 1].strip("\n"))
                               for i in range(1, len(pieces) - 1, 2)}


def cited_lines(body: str) -> list[tuple[str, str]]:
    """``[id] text`` lines of a section as ``(id, text)`` pairs.

    >>> cited_lines("[d1] Ada.\\nnot cited\\n[d2] Bo.")
    [('d1', 'Ada.'), ('d2', 'Bo.')]
    """
    string(body, "body")
    out = []
    for line in body.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out


