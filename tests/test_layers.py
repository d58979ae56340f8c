"""The package's layers (docs/architecture.md): a module may import its own layer or a lower one, never a
higher one, and no chain of imports may lead back to where it started. Parsed from the source with ``ast``,
so lazy imports inside functions count too; imports under ``if TYPE_CHECKING:`` are annotations only and do
not. Module names are dotted paths below ``cookbook`` (``index.reports``); a package's ``__init__`` is its name.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cookbook"

# Each layer names modules or whole packages (every module below the package); layer 6 holds the top.
LAYERS = {
    0: ["_validate", "arrays", "cache", "metrics", "stats", "splits", "paths", "progress", "text", "embed",
        "linalg"],  # shared
    1: ["data"],  # records, the generated world, the Factbook, gazetteers
    2: ["llm"],  # the model layer: protocol, backends, the offline stand-in, prompts, parsing, tokens
    3: ["index"],  # mentions, graphs, extraction, communities, reports
    4: ["query"],  # global, local, basic search; HippoRAG/PPR retrieval; seeds; rerankers
    5: ["harness"],  # measures and checks the stages: bench, experiments, plots, checks, exercises
    6: ["run", "__main__", ""],  # executing the series, the CLI, the package itself
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = p.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


MODULES = _modules()


def layer_of(module: str) -> int | None:
    for level, names in LAYERS.items():
        for name in names:
            if module == name or (name and module.startswith(name + ".")):
                return level
    return None


def _package_imports(path: Path, module: str) -> set[str]:
    """The package modules ``module`` (at ``path``) imports, as dotted names below ``cookbook``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = [p for p in package if p]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
            elif (node.module or "").split(".")[0] == "cookbook":
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                candidate = ".".join([*base, alias.name])
                out.add(candidate if candidate in MODULES else ".".join(base))
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("cookbook.")}
    return {m for m in out if m != module}


IMPORTS = {m: _package_imports(p, m) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, f"add to LAYERS: {missing}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module):
    ups = sorted(m for m in IMPORTS[module] if m in MODULES and layer_of(m) > layer_of(module))
    assert not ups, f"{module or 'cookbook'} (layer {layer_of(module)}) imports {ups} from a higher layer"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state, stack, found = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif not state.get(v):
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if not state.get(u):
            visit(u)
    return found


def test_no_import_cycles():
    # A package's __init__ importing its own submodules is how a package publishes them, not a cycle.
    graph = {m: {d for d in deps if d in MODULES and not d.startswith(m + ".") and not (m == "" and d)}
             for m, deps in IMPORTS.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_the_parser_sees_lazy_relative_and_absolute_imports(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from typing import TYPE_CHECKING\nimport cookbook.linalg.ppr\nif TYPE_CHECKING:\n"
                 "    from ..llm import LLM\ndef f():\n    from ..run.runner import run\n"
                 "    from cookbook.query import seeds\n"
                 "    from .graph import EntityGraph\n")
    assert _package_imports(p, "index.reports") == {"linalg.ppr", "run.runner", "query.seeds", "index.graph"}


def test_no_module_is_too_long():
    # ~400 lines a module (issue 23): a longer one holds two ideas and should be split.
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 420}
    assert not long, f"modules over 420 lines: {long}"
