"""GraphRAG Cookbook: the package behind the notebook series.

One module per pipeline stage: ``datasets``, ``extract``, ``graph``, ``communities``, ``llm``,
``reports``, ``answer``, ``embed``, ``ppr``, ``rerank``, ``seeds``, ``metrics``, ``bench``, ``checks``,
``runner``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
