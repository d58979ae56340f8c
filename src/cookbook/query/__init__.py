"""Querying an index (Microsoft GraphRAG's ``graphrag/query/structured_search``).

- :mod:`~cookbook.query.global_search`: map-reduce over community reports.
- :mod:`~cookbook.query.local_search`: entity-centred context (entities, relationships, text units, reports).
- :mod:`~cookbook.query.basic_search`: plain top-k retrieval, the baseline.
- :mod:`~cookbook.query.hipporag`: HippoRAG 2 retrieval, Personalized PageRank over the passage–entity graph.
- :mod:`~cookbook.query.seeds`: overlap-aware seed selection and bounded BFS (NeoFuse's design).
- :mod:`~cookbook.query.rerank`: the ``Reranker`` protocol, RRF and PPR rerankers.
"""
