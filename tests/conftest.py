import pytest

from cookbook import datasets


@pytest.fixture(scope="session")
def tiny_world():
    return datasets.make_world(scale="tiny")


@pytest.fixture(scope="session")
def class_world():
    return datasets.load_world("class")
