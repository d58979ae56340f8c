import re
from pathlib import Path

import yaml

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
    wanted = {CONDA_NAMES.get(n, n): spec for n, spec in map(split, project["dependencies"])}
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
