"""Two recorded runs of real language models doing GraphRAG's indexing, committed under ``data/`` (third-party,
MIT; data/README.md is their data card): what a real model writes, offline.

- ``"christmas-carol"``: Dickens's *A Christmas Carol* as nano-graphrag cut it (42 windows of 1,200 tokens, 100
  overlapping; the Project Gutenberg header and licence stripped, which leaves 39 text units) and GPT-4o's answers
  recorded by nano-graphrag's test fixture: per text unit its extraction answer and its gleaning answer (GraphRAG's
  tuple format, raw), 101 community reports (GraphRAG's JSON schema), one description summary, one global answer.
- ``"dulce"``: Microsoft GraphRAG's own example index of *Operation Dulce* (v3 output schema): 5 text units, the
  entities, relationships, communities, reports and claims the model wrote about them
  (:class:`~cookbook.data.graphrag_index.GraphRAGIndex`, read from JSON lines; the parquet original is beside it).

A silver reference, not gold: one model, one run (see :mod:`cookbook.index.silver`).

>>> cc = load_recorded("christmas-carol")
>>> len(cc.documents), len(cc.answers_of("CC03")), cc.answers_of("CC03")[0].step
(39, 2, 'extract_graph')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .._validate import one_of
from ..text import sentence_spans
from .graphrag_index import GraphRAGIndex, read_index_json
from .records import Document
from .storage import DataError, data_dir, read_json_lines, read_text

__all__ = ["RECORDED", "RecordedAnswer", "RecordedCorpus", "load_recorded"]

RECORDED = ("christmas-carol", "dulce")
_SOURCES = {
    "christmas-carol": ("A Christmas Carol (Charles Dickens, public domain) with GPT-4o's answers recorded by "
                        "nano-graphrag's test fixture (gusye1234/nano-graphrag @ 01f429e8, MIT)"),
    "dulce": ("Operation Dulce (an AI-generated novella) indexed by Microsoft GraphRAG v3.1.2's example notebook "
              "(microsoft/graphrag @ 6dad6d2b, MIT)"),
}


@dataclass(frozen=True)
class RecordedAnswer:
    """One answer a model wrote: ``step`` (``extract_graph``, ``glean``, ``community_report``,
    ``summarize_descriptions``, ``global_search``), the text ``unit`` it is about (``None`` for steps over many),
    the ``model``, the raw ``text`` and the recording's ``key`` (nano-graphrag's cache key).

    >>> RecordedAnswer("glean", "CC03", "gpt-4o", "(...)", "ab12").unit
    'CC03'
    """

    step: str
    unit: str | None
    model: str
    text: str
    key: str = ""


@dataclass
class RecordedCorpus:
    """A recorded run: ``documents`` are its text units (:class:`~cookbook.data.records.Document`, ``group`` 0),
    ``answers`` the raw answers recorded (:class:`RecordedAnswer`), ``index`` the GraphRAG tables when the
    recording is an index (Dulce), ``source`` its attribution and ``licence`` the licence file.

    >>> d = load_recorded("dulce")
    >>> len(d.documents), len(d.index.entities), d.licence.name
    (5, 39, 'LICENSE')
    """

    name: str
    source: str
    licence: Path
    documents: list[Document]
    answers: list[RecordedAnswer]
    index: GraphRAGIndex | None = None
    doc_index: dict[str, Document] = field(init=False, repr=False)

    def __post_init__(self):
        self.doc_index = {d.id: d for d in self.documents}

    def answers_of(self, unit: str, step: str | None = None) -> list[RecordedAnswer]:
        """The answers about text unit ``unit`` (of ``step`` when given), in the order they were written.

        >>> [a.step for a in load_recorded("christmas-carol").answers_of("CC00")]
        ['extract_graph', 'glean']
        """
        if unit not in self.doc_index:
            raise ValueError(f"unknown text unit {unit!r} of recording {self.name!r}")
        return [a for a in self.answers if a.unit == unit and (step is None or a.step == step)]

    def step(self, step: str) -> list[RecordedAnswer]:
        """Every answer of ``step``, in recorded order.

        >>> len(load_recorded("christmas-carol").step("community_report"))
        101
        """
        return [a for a in self.answers if a.step == step]


def _folder(name: str) -> Path:
    d = data_dir()
    if d is None or not (d / name).is_dir():
        raise DataError(f"recording {name!r}: no data/{name}/ folder (found data at {d}); it is committed in the "
                        "repository and carried in the wheel")
    return d / name


def _christmas_carol(folder: Path) -> RecordedCorpus:
    try:
        return _read_christmas_carol(folder)
    except (KeyError, TypeError, AttributeError) as e:  # a row without a field, or a field of the wrong type
        raise DataError(f"corrupt recording in {folder}: a row lacks a field or has the wrong type "
                        f"({type(e).__name__}: {e})") from None


def _read_christmas_carol(folder: Path) -> RecordedCorpus:
    book = read_text(folder / "book.txt")
    units = read_json_lines(folder / "units.jsonl")
    docs = []
    for u in units:
        if not 0 <= u["start"] < u["end"] <= len(book):
            raise DataError(f"{folder / 'units.jsonl'}: unit {u['id']} spans [{u['start']}, {u['end']}) outside "
                            f"book.txt ({len(book)} characters)")
        text = book[u["start"]:u["end"]]
        docs.append(Document(u["id"], text, tuple(sentence_spans(text)), 0))
    answers = [RecordedAnswer(a["step"], a["unit"], a["model"], a["text"], a["cache_key"])
               for a in read_json_lines(folder / "answers.jsonl")]
    known = {d.id for d in docs}
    stray = next((a for a in answers if a.unit is not None and a.unit not in known), None)
    if stray is not None:
        raise DataError(f"{folder / 'answers.jsonl'}: an answer about unit {stray.unit!r}, not in units.jsonl")
    return RecordedCorpus("christmas-carol", _SOURCES["christmas-carol"], folder / "LICENSE", docs, answers)


def _dulce(folder: Path) -> RecordedCorpus:
    index = read_index_json(folder / "index")
    answers = [RecordedAnswer("community_report", None, "", r.full_content, r.id) for r in index.reports]
    return RecordedCorpus("dulce", _SOURCES["dulce"], folder / "LICENSE", list(index.text_units), answers, index)


def load_recorded(name: str) -> RecordedCorpus:
    """The recorded run ``name`` (one of :data:`RECORDED`), read from ``data/<name>/`` (no network, no
    ``pyarrow``). Also ``load_corpus(name)``. Taught in notebooks/02_graph_extraction.ipynb.

    >>> load_recorded("dulce").index.reports[0].rank
    8.5
    >>> load_recorded("carol")
    Traceback (most recent call last):
    ...
    ValueError: unknown recording 'carol'; expected one of ['christmas-carol', 'dulce']
    """
    one_of(name, "recording", RECORDED)
    folder = _folder(name)
    return _christmas_carol(folder) if name == "christmas-carol" else _dulce(folder)
