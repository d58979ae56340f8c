"""What a run executes: each notebook on each corpus it takes, and the name its files carry in the build.

A notebook whose parameters cell sets ``CORPUS`` runs once per corpus of the run: by default every corpus that
has the run's scale (the world, then the Factbook: ``make run`` builds both), or the one ``--corpus`` or
``-p CORPUS=…`` names. A notebook without that parameter runs once, on its own data, and its row says "world"
(the notebooks' default corpus). Each such run is a :class:`Job`; its executed notebook, checks JSON and pages
are named ``<notebook>.<corpus>`` (``06_personalized_pagerank.factbook.ipynb``), so one build holds both
corpora side by side and ``cookbook compare`` pairs two builds' files by name.

>>> from cookbook.paths import list_notebooks
>>> [job.name for job in plan(list_notebooks(only=["06"]), {"SCALE": "class"})]
['06_personalized_pagerank.world', '06_personalized_pagerank.factbook']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..data.corpus import CORPORA
from .parameters import check_parameters, check_values, notebook_parameters

__all__ = ["READS_BUILD", "SERIES_CORPORA", "Job", "plan", "row_key", "row_order"]

# The corpora a run covers unless told, in the order their rows come: the notebooks' default first.
SERIES_CORPORA = ("world", *sorted(set(CORPORA) - {"world"}))
READS_BUILD = "BUILD_CHECKS"  # a notebook that sets it in its parameters cell reads the build's checks


@dataclass(frozen=True)
class Job:
    """One notebook (``path``) on one ``corpus``; ``takes_corpus`` when its parameters cell has ``CORPUS``
    (the runner then sets it), ``reads_build`` when it has ``BUILD_CHECKS`` (:data:`READS_BUILD`: the runner runs it
    after the others and points it at the run's checks).

    >>> job = Job(Path("notebooks/06_personalized_pagerank.ipynb"), "factbook", True)
    >>> job.name, job.parameters({"SCALE": "ci"})
    ('06_personalized_pagerank.factbook', {'SCALE': 'ci', 'CORPUS': 'factbook'})
    """

    path: Path
    corpus: str
    takes_corpus: bool
    reads_build: bool = False

    @property
    def name(self) -> str:
        """The stem of the job's files in the build: ``notebooks/<name>.ipynb``, ``checks/<name>.json``,
        ``html/<name>.html``.

        >>> Job(Path("01_x.ipynb"), "world", False).name
        '01_x.world'
        """
        return f"{self.path.stem}.{self.corpus}"

    def parameters(self, params: dict) -> dict:
        """``params`` with ``CORPUS`` set to the job's corpus when the notebook takes it.

        >>> Job(Path("01_x.ipynb"), "world", False).parameters({"SCALE": "ci"})  # a notebook without CORPUS
        {'SCALE': 'ci'}
        """
        return {**params, "CORPUS": self.corpus} if self.takes_corpus else dict(params)


def _corpora(given: list[str] | None, params: dict) -> list[str]:
    """The run's corpora, each checked with the run's values (:func:`check_values`): ``given`` as it is, or
    every corpus of :data:`SERIES_CORPORA` that has the scale (a ``ValueError`` when none has)."""
    if given is not None:
        for corpus in given:
            check_values({**params, "CORPUS": corpus})
        return list(dict.fromkeys(given))
    chosen, errors = [], []
    for corpus in SERIES_CORPORA:
        try:
            check_values({**params, "CORPUS": corpus})
            chosen.append(corpus)
        except ValueError as e:
            errors.append(e)
    if not chosen:
        raise errors[0]
    return chosen


def plan(paths: list[Path], params: dict, corpora: list[str] | None = None) -> list[Job]:
    """The jobs of a run over ``paths`` with parameters ``params``, in series order (each notebook's corpora
    in the order given, by default :data:`SERIES_CORPORA`'s). ``params["CORPUS"]`` (``-p CORPUS=…``) names the
    one corpus, as ``corpora`` does; both, disagreeing, are a ``ValueError``, and so is a corpus named for
    notebooks none of which takes ``CORPUS``. Every value is checked before any kernel starts.

    >>> from cookbook.paths import list_notebooks
    >>> [job.name for job in plan(list_notebooks(only=["00"]), {"SCALE": "large"})]  # the Factbook has no large
    ['00_quickstart.world']
    >>> plan(list_notebooks(only=["00"]), {"SCALE": "large"}, ["factbook"])
    Traceback (most recent call last):
    ...
    ValueError: unknown factbook scale 'large': corpus 'factbook' has ['ci', 'class']
    """
    if corpora is not None and (isinstance(corpora, str) or not corpora):
        raise ValueError(f"corpora wants a list of one or more corpus names, got {corpora!r}")
    params = dict(params)
    if "CORPUS" in params:
        named = params.pop("CORPUS")
        if corpora is not None and list(corpora) != [named]:
            raise ValueError(f"--corpus {' '.join(corpora)} and -p CORPUS={named} disagree")
        corpora = [named]
    names = {p: notebook_parameters([p]) for p in paths}
    takes = {p: "CORPUS" in names[p] for p in paths}
    reads = {p: READS_BUILD in names[p] for p in paths}
    if not any(takes.values()):
        if corpora is not None:  # the message -p CORPUS=… gets for such notebooks
            check_parameters({"CORPUS": corpora[0]}, notebook_parameters(paths))
        check_values(params)
        return [Job(p, "world", False, reads[p]) for p in paths]
    chosen = _corpora(corpora, params)
    return [Job(p, corpus, takes[p], reads[p]) for p in paths for corpus in (chosen if takes[p] else ["world"])]


def row_key(row: dict) -> tuple[str, str]:
    """What identifies a row of a build: its notebook and corpus (rows of builds made before rows carried a
    corpus are the world's).

    >>> row_key({"notebook": "01_x", "corpus": ""})
    ('01_x', 'world')
    """
    return row["notebook"], row.get("corpus") or "world"


def row_order(notebook: str, corpus: str) -> tuple:
    """The sort key of a build's rows: series order, then :data:`SERIES_CORPORA`'s order (others after, by name).

    >>> sorted([("01_x", "factbook"), ("00_y", "factbook"), ("01_x", "world")], key=lambda r: row_order(*r))
    [('00_y', 'factbook'), ('01_x', 'world'), ('01_x', 'factbook')]
    """
    rank = SERIES_CORPORA.index(corpus) if corpus in SERIES_CORPORA else len(SERIES_CORPORA)
    return notebook, rank, corpus
