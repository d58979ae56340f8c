"""Indexing: a corpus becomes a graph and its summaries (Microsoft GraphRAG's ``graphrag/index``).

- :mod:`~cookbook.index.extract`: entity mentions (gazetteer matching, capitalised spans), scored vs gold.
- :mod:`~cookbook.index.graph`: the entity graph from co-occurrence (GraphRAG's no-LLM "FastGraphRAG" method)
  and the :class:`~cookbook.index.graph.EntityGraph` type every graph is handed on as.
- :mod:`~cookbook.index.graph_extraction`: typed entities and relationships by LLM prompt, with gleaning.
- :mod:`~cookbook.index.communities`: Leiden (and Louvain, greedy modularity), hierarchies.
- :mod:`~cookbook.index.reports`: community reports within a token budget.
"""
