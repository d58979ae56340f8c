"""A run owns only what it made (issue 22, item 1), and damaged or unwritable builds give one line (item 9).
Each case failed on the main branch before: a folder of someone else's was moved away and deleted, two runs
into one ``--out`` mixed their rows, a bad parameter value started kernels, a damaged build compared as
"DIFFERENT" with exit status 1."""

import errno
import json
import subprocess
import sys
import textwrap

import pytest

from cookbook.__main__ import main
from cookbook.paths import notebooks_dir, repo_root
from cookbook.run import build, runner
from tests.test_runner import series, write_nb  # noqa: F401 — the fixture and its helper

pytestmark = pytest.mark.usefixtures("no_kernel")


@pytest.fixture
def no_kernel(monkeypatch, request):
    """Every refusal here comes before a kernel starts; a test that runs notebooks opts out by name."""
    if "runs_notebooks" not in request.keywords:
        monkeypatch.setattr(runner, "ensure_kernel", lambda: pytest.fail("a kernel was started"))


def one_line(capfd) -> str:
    err = capfd.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("folder", ["notebooks", "html", "checks"])
def test_a_folder_no_run_made_is_refused_and_kept(series, tmp_path, capfd, folder):  # noqa: F811
    out = tmp_path / "thesis"
    (out / folder).mkdir(parents=True)
    (out / folder / "thesis.ipynb").write_text("my work")
    assert main(["run", "--notebooks", str(series), "--only", "01", "--out", str(out), "--quiet"]) == 2
    err = one_line(capfd)
    assert "is not a build of this series" in err and str(out / folder) in err
    assert (out / folder / "thesis.ipynb").read_text() == "my work"


def test_the_series_own_notebooks_are_never_an_output(capfd):
    root = repo_root()
    before = sorted(p.name for p in notebooks_dir().iterdir())
    assert main(["run", "--only", "00", "--out", str(root), "--quiet"]) == 2
    assert "series' own notebooks" in one_line(capfd)
    assert sorted(p.name for p in notebooks_dir().iterdir()) == before


@pytest.mark.runs_notebooks
def test_a_build_is_marked_and_its_next_run_replaces_it(series, tmp_path):  # noqa: F811
    out = tmp_path / "build"
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    assert (out / build.MARKER).is_file()
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)  # its own build: replaced
    assert json.loads((out / "summary.json").read_text())[0]["notebook"] == "01_ok"


def test_a_build_written_before_the_marker_is_still_ours(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "summary.json").write_text(json.dumps([{"notebook": "00_quickstart", "status": "ok"}]))
    assert build.prepare_out(tmp_path) == tmp_path.resolve()
    (tmp_path / "summary.json").write_text("[]")  # not a build summary: the folder is not ours
    with pytest.raises(ValueError, match="not a build of this series"):
        build.prepare_out(tmp_path)


HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from cookbook.run.build import BuildLock
    lock = BuildLock(Path(sys.argv[1])).acquire()
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
""")


def _holder(out, seconds):
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(out), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_run_into_the_same_out_is_refused_naming_the_holder(series, tmp_path, capfd):  # noqa: F811
    out = tmp_path / "build"
    out.mkdir()
    holder = _holder(out, 30)
    try:
        assert main(["run", "--notebooks", str(series), "--only", "01", "--out", str(out), "--quiet"]) == 2
        err = one_line(capfd)
        assert f"pid {holder.pid}" in err and "--wait" in err
    finally:
        holder.kill()
        holder.wait()


def test_wait_takes_its_turn(tmp_path):
    holder = _holder(tmp_path, 1.5)
    try:
        with build.BuildLock(tmp_path, wait=True):  # blocks until the holder lets go (it exits), then holds
            assert holder.wait(timeout=10) == 0
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_dies_with_its_process(tmp_path):
    holder = _holder(tmp_path, 30)
    holder.kill()
    holder.wait()
    with build.BuildLock(tmp_path):  # a killed run does not hold the folder forever
        pass


@pytest.mark.parametrize("argv,words", [
    (["-p", "CORPUS=wiki"], "unknown corpus 'wiki'"),
    (["--corpus", "factbook", "--scale", "large"], "unknown factbook scale 'large'"),
    (["--scale", "huge"], "unknown world scale 'huge'"),
    (["-p", "LLM=gpt-4o"], "-p LLM='gpt-4o'"),
    (["-p", "SEED=-3"], "SEED=-3"),
    (["-p", "SEED=99999999999999999999999"], "SEED=99999999999999999999999: a seed is a whole number from 0"),
    (["-p", f"SEED={2**32}"], "(2**32 - 1)"),
    (["--scale", "ci", "-p", "SCALE=large"], "--scale ci and -p SCALE=large disagree"),
    (["-p", "BUILD_CHECKS=/elsewhere"], "BUILD_CHECKS is set by the runner"),
    (["-p", "LLM='openai'"], "-p LLM=\"'openai'\""),  # a string parameter as typed: quotes and all
])
def test_parameter_values_are_checked_before_any_kernel(tmp_path, capfd, argv, words):
    out = tmp_path / "build"
    assert main(["run", "--only", "00", "--out", str(out), "--quiet", *argv]) == 2
    assert words in one_line(capfd)
    assert not out.exists() or not any(out.iterdir())  # nothing was written, no previous build replaced


def _build(root, name="00_demo", recall=0.9):
    from cookbook.harness.checks import Checks

    c = Checks(name, results_dir=root / "checks")
    c.at_least("recall", recall, 0.5)
    c.save()
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    (root / "notebooks" / f"{name}.ipynb").write_text('{"cells": []}')


@pytest.mark.parametrize("damage", [
    ("notebooks/00_demo.ipynb", "{not json"), ("notebooks/00_demo.ipynb", "[1, 2]"),
    ("checks/00_demo.json", "{}"), ("checks/00_demo.json", "nul\x00l"), ("notebooks/00_demo.ipynb", "[" * 5000),
])
def test_compare_names_a_damaged_file_and_exits_2(tmp_path, capfd, damage):
    a, b = tmp_path / "a", tmp_path / "b"
    _build(a)
    _build(b)
    (b / damage[0]).write_text(damage[1])
    assert main(["compare", str(a), str(b)]) == 2
    err = one_line(capfd)
    assert str(b / damage[0]) in err and "cannot be read" in err


def test_a_full_disk_is_one_line(series, tmp_path, capfd, monkeypatch):  # noqa: F811
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "build" / "x"))

    monkeypatch.setattr(build, "prepare_out", full)
    monkeypatch.setattr(runner, "prepare_out", full)
    assert main(["run", "--notebooks", str(series), "--only", "01", "--out", str(tmp_path / "build"), "--quiet"]) == 1
    assert "No space left on device" in one_line(capfd)


def test_a_damaged_summary_stops_an_only_run_with_one_line(series, tmp_path, capfd):  # noqa: F811
    out = tmp_path / "build"
    out.mkdir()
    (out / build.MARKER).write_text("{}")
    (out / "summary.json").write_text("{not a summary")
    assert main(["run", "--notebooks", str(series), "--only", "01", "--out", str(out), "--quiet"]) == 2
    assert "is not a build summary" in one_line(capfd)
    assert (out / "summary.json").read_text() == "{not a summary"  # left as it was


def test_a_run_refused_by_the_parameter_check_leaves_the_build_as_it_was(tmp_path, capfd):
    out = tmp_path / "build"
    out.mkdir()
    (out / build.MARKER).write_text(json.dumps({"files": ["summary.json"]}))
    (out / "summary.json").write_text(json.dumps([{"notebook": "00_quickstart", "status": "ok", "corpus": "world"}]))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["run", "--only", "00", "--corpus", "world", "--out", str(out), "--quiet", "-p",
                 "SEED=99999999999999999999999"]) == 2
    one_line(capfd)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_scale_given_once_either_way_is_the_run_scale(tmp_path):
    from cookbook.run import parameters

    assert parameters.parse_parameters(["SCALE=ci"], {"SCALE": "class"}) == {"SCALE": "ci"}
    with pytest.raises(ValueError, match="disagree"):
        runner.run(["00"], scale="ci", extra_parameters={"SCALE": "large"})
    # the same value twice is no conflict (the kernel stub stops the run right after the checks)
    with pytest.raises(pytest.fail.Exception, match="a kernel was started"):
        runner.run(["00"], scale="ci", extra_parameters={"SCALE": "ci"}, corpora=["world"],
                   out=tmp_path / "build")
    assert not (tmp_path / "build" / "summary.json").exists()


@pytest.mark.parametrize("junk", ["notebooks/.ipynb_checkpoints/00_demo-checkpoint.ipynb", "notebooks/.DS_Store",
                                  "checks/.DS_Store", "notebooks/notes.txt", "checks/notes.txt",
                                  "checks/.ipynb_checkpoints/00_demo-checkpoint.json"])
def test_compare_ignores_what_is_not_a_build_file(tmp_path, capfd, junk):
    a, b = tmp_path / "a", tmp_path / "b"
    _build(a)
    _build(b)
    (b / junk).parent.mkdir(parents=True, exist_ok=True)
    (b / junk).write_text("{}")
    assert main(["compare", str(a), str(b)]) == 0
    out = capfd.readouterr().out
    assert "missing" not in out and out.strip().endswith("identical")


@pytest.mark.parametrize("damage", ["{not json", "nul\x00l", "{}", "[1, 2]", b"\xff\xfe not utf-8"])
def test_verdicts_names_a_damaged_checks_file_in_one_line(tmp_path, capfd, damage):
    _build(tmp_path, "07_overlap_aware_seeds.world")
    path = tmp_path / "checks" / "07_overlap_aware_seeds.world.json"
    if isinstance(damage, bytes):
        path.write_bytes(damage)
    else:
        path.write_text(damage)
    assert main(["verdicts", str(tmp_path)]) == 2
    err = one_line(capfd)
    assert str(path) in err and "cannot be read as part of a build" in err


BAD_URLS = ['https://github.com/o/r"); import os; os.system("id"); ("', "https://github.com/o/r\nimport os",
            "https://github.com/o/r)](https://evil.example", "https://github.com/o/r/../../x", "https://github.com/o",
            "https://github.com/o/r?x=1", "https://github.com/-o/r", "https://github.com/o/r#x", "https://github.com/o/.."]


def _copied_series(tmp_path, only=("00",)):
    import shutil

    from cookbook.paths import list_notebooks

    d = tmp_path / "nbs"
    d.mkdir()
    for p in list_notebooks(only=list(only)):
        shutil.copy(p, d / p.name)
    return d


@pytest.mark.parametrize("url", BAD_URLS)
def test_stamp_colab_takes_only_a_plain_github_repository_url(tmp_path, url):
    from cookbook.run import colab

    d = _copied_series(tmp_path)
    before = (d / "00_quickstart.ipynb").read_bytes()
    with pytest.raises(ValueError, match="GitHub repository URL"):
        colab.stamp(d, url)
    assert (d / "00_quickstart.ipynb").read_bytes() == before


def test_stamp_colab_cli_refuses_a_bad_url_in_one_line(capfd):
    before = {p.name: p.read_bytes() for p in notebooks_dir().iterdir()}
    assert main(["stamp-colab", "--url", BAD_URLS[0]]) == 2
    assert "GitHub repository URL" in one_line(capfd)
    assert {p.name: p.read_bytes() for p in notebooks_dir().iterdir()} == before


def test_a_badge_and_setup_cell_damaged_by_an_old_stamp_are_repaired(tmp_path):
    import nbformat

    from cookbook.run import colab

    d = _copied_series(tmp_path)
    path = d / "00_quickstart.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    code = next(c for c in nb.cells if c.cell_type == "code")
    title = colab.without_badge(md.source)
    bad = "https://github.com/o/r)x\nimport os; os.system('id')"
    md.source = (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
                 f"(https://colab.research.google.com/github/{bad[19:]}/blob/main/notebooks/00_quickstart.ipynb)\n\n"
                 + title)
    code.source = colab.SETUP_TEMPLATE.format(repo_url=bad, extras=())
    nbformat.write(nb, str(path))
    assert colab.stamp(d, "https://github.com/o/r") == [path]
    nb = nbformat.read(str(path), as_version=4)
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    code = next(c for c in nb.cells if c.cell_type == "code")
    assert md.source == colab.badge("https://github.com/o/r", path.name) + "\n\n" + title
    assert md.source.count("Open In Colab") == 1 and "os.system" not in md.source
    assert code.source == colab.setup_cell("https://github.com/o/r", path.name)
    assert colab.stamp(d, "https://github.com/o/r") == []  # and stamping again changes nothing


@pytest.mark.parametrize("url", ["", "  ", "\n"])
def test_stamp_colab_refuses_an_empty_url_instead_of_falling_back_to_pyproject(tmp_path, url, capfd):
    """`--url ''` once meant "no --url": the notebooks were stamped with pyproject.toml's URL and rc 0."""
    from cookbook.run import colab

    d = _copied_series(tmp_path)
    before = (d / "00_quickstart.ipynb").read_bytes()
    with pytest.raises(ValueError, match="url is empty"):
        colab.stamp(d, url)
    assert (d / "00_quickstart.ipynb").read_bytes() == before
    committed = {p.name: p.read_bytes() for p in notebooks_dir().iterdir()}
    assert main(["stamp-colab", "--url", url]) == 2
    assert "url is empty" in one_line(capfd)
    assert {p.name: p.read_bytes() for p in notebooks_dir().iterdir()} == committed
