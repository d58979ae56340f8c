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
