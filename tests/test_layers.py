"""The package's layers (docs/architecture.md): a module may import its own layer or a lower one, never a
higher one. Parsed from the source with ``ast``, so lazy imports inside functions count too; imports under
``if TYPE_CHECKING:`` are annotations only and do not."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cookbook"

LAYERS = {
    # helpers, data types, file locations: no package imports
    0: ["_validate", "arrays", "cache", "metrics", "stats", "records", "paths"],
    1: ["world", "storage", "realdata", "datasets", "corpus", "factbook", "embed", "prompts", "tokens"],  # data, text
    2: ["extract", "graph", "graph_extraction", "communities", "ppr", "hipporag", "seeds", "rerank", "llm", "reports",
        "answer", "local_search"],
    3: ["bench", "experiments", "plots", "checks", "exercises"],  # harness: measures and checks the stages
    4: ["runner", "render", "compare", "colab", "__main__", "__init__"],  # executing the series, the CLI
}
LAYER = {m: level for level, mods in LAYERS.items() for m in mods}

# Upward imports that exist for a stated reason, to be removed by the change named.
KNOWN: dict[tuple[str, str], str] = {}


def _package_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cookbook"):
            parts = node.module.split(".")
            out |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("cookbook.")}
    return out


def test_every_module_has_a_layer():
    modules = {p.stem for p in SRC.glob("*.py")}
    assert modules == set(LAYER), f"add to LAYERS: {sorted(modules - set(LAYER))}; gone: {sorted(set(LAYER) - modules)}"


@pytest.mark.parametrize("module", sorted(LAYER))
def test_no_module_imports_a_higher_layer(module):
    ups = {m for m in _package_imports(SRC / f"{module}.py") if m in LAYER and LAYER[m] > LAYER[module]}
    bad = sorted(m for m in ups if (module, m) not in KNOWN)
    assert not bad, f"{module} (layer {LAYER[module]}) imports {bad} from a higher layer"


def test_the_parser_sees_lazy_and_absolute_imports(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from typing import TYPE_CHECKING\nimport cookbook.ppr\nif TYPE_CHECKING:\n    from .llm import LLM\n"
                 "def f():\n    from .runner import shipped\n    from cookbook import seeds\n")
    assert _package_imports(p) == {"ppr", "runner", "seeds"}


def test_known_exceptions_still_exist():
    stale = [pair for pair in KNOWN if pair[1] not in _package_imports(SRC / f"{pair[0]}.py")]
    assert not stale, f"remove from KNOWN, the import is gone: {stale}"
