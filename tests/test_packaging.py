import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from cookbook import paths

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"igraph": "python-igraph"}  # conda-forge spells some packages differently


def split(req: str) -> tuple[str, str]:
    m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(.*)", req)
    return m.group(1).lower(), m.group(2).replace(" ", "")


def test_environment_yml_mirrors_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # conda users get the Jupyter stack and notebook 10's graph database too
    reqs = project["dependencies"] + extras["notebooks"] + extras["lab"] + extras["graphdb"]
    wanted = {CONDA_NAMES.get(n, n): spec for n, spec in map(split, reqs)}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.update(split(d) for d in dep["pip"] if not d.startswith("-e"))
        elif not dep.startswith(("python>", "python=", "pip")) or dep.startswith("python-"):
            conda.update([split(dep)])
    assert {**conda, **pip} == wanted
    assert any(d.startswith("-e .") for dep in env["dependencies"] if isinstance(dep, dict) for d in dep["pip"])


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme.split("\n## ")[0], "the test command is at the top of the README"
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# Versions preinstalled in Google Colab's runtime, recorded by hand for issue 15 (google-colab itself pins
# ipykernel==6.17.1, ipython==7.34.0 and notebook==6.5.x; the rest as `pip list` shows them in a 2025
# runtime). Not fetched by the test: refresh them when Colab moves. Our floors must admit every one of them,
# or the Colab setup cell's `pip install` upgrades (and conflicts with) what google-colab pinned.
COLAB_PINS = {"ipykernel": "6.17.1", "ipython": "7.34.0", "notebook": "6.5.7", "nbformat": "5.10.4",
              "jupyter-client": "6.1.12", "numpy": "2.0.2", "scipy": "1.15.3", "networkx": "3.5",
              "matplotlib": "3.10.0", "tqdm": "4.67.1"}


def test_runtime_floors_admit_colabs_preinstalled_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # The Colab setup cell installs the `notebooks` extra too.
    deps = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["notebooks"]]
    checked = {r.name.lower(): r.specifier for r in deps if r.name.lower() in COLAB_PINS}
    assert {"ipykernel", "nbformat", "numpy"} <= checked.keys()  # the test cannot pass by checking nothing
    refused = {n: f"{s} refuses {COLAB_PINS[n]}" for n, s in checked.items() if not s.contains(COLAB_PINS[n])}
    assert not refused, refused


def test_notebooks_use_the_python3_kernelspec():
    """"python3" is the kernel Colab runs and the one `make lab` maps to the project's venv."""
    for path in paths.list_notebooks(ROOT / "notebooks"):
        spec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
        assert (spec["name"], spec["language"]) == ("python3", "python"), path.name


def test_wheel_ships_the_notebooks_and_the_world(tmp_path):
    """Build the wheel from a copy of the project (so the checkout gets no build/ folder) and list it."""
    src = tmp_path / "project"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")
    for name in ("src", "notebooks", "data"):
        shutil.copytree(ROOT / name, src / name, ignore=junk)
    stale = src / "build" / "lib" / "cookbook" / "_bundle" / "notebooks" / "07_renamed_since.ipynb"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")  # an earlier build's copy of a notebook renamed since: must not ship
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"),
                            str(src)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("graphrag_cookbook-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    want = {f"cookbook/_bundle/notebooks/{p.name}" for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    want |= {f"cookbook/_bundle/data/world-class/{p.name}" for p in (ROOT / "data" / "world-class").iterdir()}
    assert len(want) >= 8 + 7 and want <= names, sorted(want - names)
    shipped = {n for n in names if n.startswith("cookbook/_bundle/notebooks/")}
    assert shipped == {w for w in want if "/notebooks/" in w}, sorted(shipped)
    assert "cookbook/run/runner.py" in names
    # the recorded runs load from the wheel (their licences with them); Dulce's parquet original stays in the repo
    recorded = {"christmas-carol/answers.jsonl", "christmas-carol/book.txt", "christmas-carol/units.jsonl",
                "christmas-carol/LICENSE", "dulce/LICENSE", "dulce/index/entities.jsonl"}
    assert {f"cookbook/_bundle/data/{n}" for n in recorded} <= names
    assert not any(n.endswith(".parquet") for n in names)


def test_copy_notebooks_refuses_to_overwrite(tmp_path):
    copied = paths.copy_notebooks(tmp_path / "mine")
    assert [p.name for p in copied] == [p.name for p in paths.list_notebooks()]
    assert copied[0].read_bytes() == paths.list_notebooks()[0].read_bytes()
    copied[0].write_text("edited")
    with pytest.raises(ValueError, match="exists .*--force"):
        paths.copy_notebooks(tmp_path / "mine")
    assert copied[0].read_text() == "edited"  # nothing overwritten
    paths.copy_notebooks(tmp_path / "mine", force=True)
    assert copied[0].read_bytes() == paths.list_notebooks()[0].read_bytes()
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="not a directory"):
        paths.copy_notebooks(tmp_path / "file")
