"""The data: the generated world (with gold), the CIA World Factbook corpus and real data read from installed
packages — one import for notebooks and benchmarks over the modules that hold them:

- :mod:`~cookbook.data.records`: the data types (:class:`Entity`, :class:`Document`, :class:`World`, ...);
- :mod:`~cookbook.data.world`: :func:`make_world`, the seeded generator;
- :mod:`~cookbook.data.storage`: :func:`save_world`, :func:`read_world`, :func:`load_world`, :func:`data_dir`;
- :mod:`~cookbook.data.realdata`: :func:`raw_factbook`, :func:`wordnet`, :func:`les_miserables`,
  :func:`power_law_graph`;
- :mod:`~cookbook.data.gazetteer`: names → entity ids, and the matcher that finds them in text;
- :mod:`~cookbook.data.corpus` (with :mod:`~cookbook.data.factbook`): :func:`load_corpus`, one
  :class:`Corpus` type over the world and the Factbook;
- :mod:`~cookbook.data.recorded`: two recorded real-model runs (:func:`load_recorded`, also through
  :func:`load_corpus`), and :mod:`~cookbook.data.graphrag_index`: any GraphRAG index's output tables
  (:func:`read_graphrag_index`).

>>> w = make_world(seed=0, scale="tiny")
>>> len(w.documents) <= 100 and w.mentions[0].entity_id in w.entity_index
True

Real data is read at run time from installed packages and never copied into this repository; the two
recorded runs (third-party, MIT) are committed under ``data/`` with their licences.
"""

from __future__ import annotations

# Each module's __all__ is what it re-exports here, so the facade cannot drift from the modules.
from . import corpus, gazetteer, graphrag_index, realdata, recorded, records, storage, world
from .corpus import *  # noqa: F403
from .gazetteer import *  # noqa: F403
from .graphrag_index import *  # noqa: F403
from .realdata import *  # noqa: F403
from .recorded import *  # noqa: F403
from .records import *  # noqa: F403
from .storage import *  # noqa: F403
from .world import *  # noqa: F403

__all__ = [*records.__all__, *gazetteer.__all__, *world.__all__, *storage.__all__, *realdata.__all__, *corpus.__all__,
           *recorded.__all__, *graphrag_index.__all__]
