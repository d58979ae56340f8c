"""The self-checking exercises of every notebook: ``exercises.check("NN.name", answer)``.

The mechanism (:func:`check`, :class:`Feedback`, the registry) is :mod:`~cookbook.harness.exercises.core`;
each notebook's checkers are a module named after it, imported here so that importing this package registers
them all.

>>> from cookbook.harness import exercises
>>> sorted({ex_id[:2] for ex_id in exercises.EXERCISES})
['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12']
"""

from . import (  # noqa: F401 — imported to register their checkers
    benchmark,
    claims_resolution_updates,
    community_reports,
    drift_and_lazy_search,
    entity_cooccurrence,
    graph_database,
    graph_extraction,
    leiden_communities,
    local_search,
    map_reduce_answering,
    overlap_aware_seeds,
    personalized_pagerank,
)
from .core import EXERCISES, HINTS, Feedback, check, exercise, hint

__all__ = ["EXERCISES", "HINTS", "Feedback", "check", "exercise", "hint"]
