import pytest
from hypothesis import settings

from cookbook import datasets

# Reproducible property tests: the same examples on every run and machine (CI included).
settings.register_profile("cookbook", derandomize=True, database=None)
settings.load_profile("cookbook")


@pytest.fixture(scope="session")
def tiny_world():
    return datasets.make_world(scale="tiny")


@pytest.fixture(scope="session")
def class_world():
    return datasets.load_world("class")


@pytest.fixture(scope="session")
def tiny_pipeline(tiny_world):
    """The tiny world's mentions, entity graph and community hierarchy (max 6 members per community)."""
    from cookbook import communities, extract, graph

    ms = extract.gazetteer_mentions(tiny_world.documents, tiny_world.gazetteer())
    g = graph.cooccurrence_graph(ms, tiny_world.documents, tiny_world.entities)
    return tiny_world, ms, g, communities.hierarchical_leiden(g, max_cluster_size=6, seed=7)
