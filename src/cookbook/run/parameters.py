"""The notebooks' parameters as a run sets them (``-p NAME=VALUE``, ``--corpus``, ``--scale``): their names
and types read from the ``parameters`` cells, and their values checked before any kernel starts, so a typo
(``-p CORPUS=wiki``, ``--scale large --corpus factbook``, ``-p LLM=gpt``) is one line and exit status 2, not a
notebook failing inside and a build replaced.

>>> check_values({"CORPUS": "factbook", "SCALE": "large"})
Traceback (most recent call last):
...
ValueError: unknown factbook scale 'large': corpus 'factbook' has ['ci', 'class']
"""

from __future__ import annotations

import reprlib
from pathlib import Path

from ..data.corpus import check_corpus
from ..llm import LLM_BACKENDS

__all__ = ["SEED_LIMIT", "as_run", "check_parameters", "check_values", "notebook_parameters", "parse_parameters"]

# Seeds go to numpy's RandomState (scipy's random_state) too, which takes 0 <= seed < 2**32.
SEED_LIMIT = 2**32


# A value as the error shows it: a few items and levels, so YAML aliases that nest a list of nine lists nine times
# over (a few hundred characters typed, 9**8 items read) print as one short line.
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 3, 3, 120, 120


def notebook_parameters(paths: list[Path]) -> dict[str, object]:
    """Each name assigned in the notebooks' ``parameters`` cells → its default (the first notebook
    that sets it wins; a default that is not a Python literal maps to None, meaning any type).

    >>> from cookbook.paths import list_notebooks
    >>> sorted(notebook_parameters(list_notebooks(only=["00"])))
    ['BUILD_CHECKS', 'CORPUS', 'LLM', 'RESULTS_DIR', 'SCALE', 'SEED', 'STRICT']
    """
    import ast

    import nbformat

    defaults: dict[str, object] = {}
    for path in paths:
        for cell in _cells(path, nbformat):
            if cell.get("cell_type") != "code" or "parameters" not in cell.get("metadata", {}).get("tags", []):
                continue
            try:
                body = ast.parse(cell.source).body
            except SyntaxError as e:
                raise ValueError(f"{path.name}: parameters cell does not parse: {e.msg} (line {e.lineno})") from None
            for node in body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    target = node.target
                else:
                    continue
                if isinstance(target, ast.Name):
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        value = None
                    defaults.setdefault(target.id, value)
    return defaults


def _cells(path: Path, nbformat) -> list:
    """The cells of the notebook at ``path``, or a ``ValueError`` naming it when it is not a regular file (a FIFO
    would block) or not a notebook."""
    if not Path(path).is_file():
        raise ValueError(f"{path} is not a notebook: not a regular file")
    try:
        cells = nbformat.read(str(path), as_version=4).cells
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise ValueError("its cells are not a list of cells")
        return cells
    except (OSError, ValueError, AttributeError, KeyError, TypeError, RecursionError) as e:
        raise ValueError(f"{path} is not a notebook ({type(e).__name__}: {str(e)[:200]})") from None


def _same_kind(value, default) -> bool:
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):  # bool is an int to isinstance
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def check_parameters(given: dict, defaults: dict) -> None:
    """Every name in ``given`` is a notebook parameter and its value has the type of the default.

    >>> check_parameters({"SEED": "7"}, {"SEED": 7})
    Traceback (most recent call last):
    ...
    ValueError: parameter SEED must be int (its default is 7), got '7' (str)
    """
    for name, value in given.items():
        if name not in defaults:
            raise ValueError(f"unknown parameter {name!r}; the notebooks' parameters cells define "
                             f"{', '.join(sorted(defaults)) or 'nothing'}")
        default = defaults[name]
        if not _same_kind(value, default):
            raise ValueError(f"parameter {name} must be {type(default).__name__} (its default is {default!r}), "
                             f"got {_SHORT.repr(value)} ({type(value).__name__})")


def parse_parameters(items: list[str], defaults: dict) -> dict:
    """``NAME=VALUE`` texts → typed values, checked against ``defaults``. A string parameter takes the text
    exactly as typed, never read as YAML (``-p LLM=no`` is ``"no"``, not False; ``-p LLM='openai'`` keeps its
    quotes, and is then no backend); any other VALUE is read as a YAML literal (``7`` an int, ``False`` a bool,
    ``[1, 2]`` a list) and must have the type of the default.

    >>> parse_parameters(["SEED=11", "STRICT=false", "LLM=no"], {"SEED": 7, "STRICT": True, "LLM": "extractive"})
    {'SEED': 11, 'STRICT': False, 'LLM': 'no'}
    >>> parse_parameters(["LLM='openai' # x"], {"LLM": "extractive"})
    {'LLM': "'openai' # x"}
    """
    import yaml

    given = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"-p wants NAME=VALUE, got {item!r}")
        if isinstance(defaults.get(name), str):
            given[name] = text
            continue
        try:
            given[name] = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError):  # "[[[[…": the reader recurses per level
            given[name] = text
    check_parameters(given, defaults)
    return given


def check_values(params: dict) -> None:
    """The values the notebooks act on, checked as the notebooks would check them: ``CORPUS`` names a corpus
    and ``SCALE`` is one it has (:func:`cookbook.data.corpus.check_corpus`), ``LLM`` names a backend
    (:data:`cookbook.llm.LLM_BACKENDS`), ``SEED`` is a whole number below 2**32 (:data:`SEED_LIMIT`: what every
    random generator the notebooks seed takes). A parameter not given is not checked.

    >>> check_values({"CORPUS": "world", "SCALE": "ci", "LLM": "openai", "SEED": 3})
    >>> check_values({"LLM": "gpt-4o"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: -p LLM='gpt-4o': the notebooks know ['extractive', 'openai', 'colab', 'ollama', 'replay'] (the model ...
    """
    if "CORPUS" in params or "SCALE" in params:
        check_corpus(params.get("CORPUS", "world"), params.get("SCALE", "class"))
    if "LLM" in params and params["LLM"] not in LLM_BACKENDS:
        raise ValueError(f"-p LLM={params['LLM']!r}: the notebooks know {list(LLM_BACKENDS)} "
                         "(the model itself is OPENAI_MODEL, COLAB_MODEL or OLLAMA_MODEL)")
    seed = params.get("SEED", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"-p SEED={seed!r}: a seed is a whole number from 0 to {SEED_LIMIT - 1} (2**32 - 1)")


def _injected_paths_final(executed: Path, stage: Path) -> None:
    """Point the executed notebook's injected parameters at the build folder the run moves its files to, not at
    the temporary stage they were written in (``<out>/.run-…``), which is gone once the run ends."""
    if not stage.name.startswith(".run-") or not executed.exists():
        return
    import nbformat

    nb = nbformat.read(str(executed), as_version=4)
    cells = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    if any(str(stage) in c.source for c in cells):
        for c in cells:
            c.source = c.source.replace(str(stage), str(stage.parent))
        nbformat.write(nb, str(executed))


def as_run(parameters: str, injected: str) -> str:
    r"""The ``parameters`` cell's source with each assignment papermill's ``injected`` cell overrode given the
    value it ran with (its comment kept); a name only the injection sets is added at the end. The code below it
    uses these names, so the reader sees them as they were.

    >>> as_run('SCALE = "class"  # ci, class\nSEED = 7', '# Parameters\nSCALE = "ci"\nBUILD = "x"\n')
    'SCALE = "ci"  # ci, class\nSEED = 7\nBUILD = "x"'
    """
    given = {}
    for line in injected.splitlines():
        name, eq, value = line.partition(" = ")
        if eq and name.isidentifier():
            given[name] = value.strip()
    out = []
    for line in parameters.splitlines():
        name, eq, rest = line.partition(" = ")
        if eq and name in given:
            comment = rest[rest.index("  #"):] if "  #" in rest else ""
            line = f"{name} = {given.pop(name)}{comment}"
        out.append(line)
    return "\n".join(out + [f"{k} = {v}" for k, v in given.items()])
