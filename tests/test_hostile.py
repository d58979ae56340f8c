"""A second hostile pass over the command line and the runner (issue 30's acceptance): what it found, pinned. Each
test failed on main before its fix. No kernel starts: papermill is the stub of :mod:`tests.test_ownership`."""

import json
import os
from pathlib import Path

import pytest

from cookbook.__main__ import main
from cookbook.run import build, runner
from tests.test_ownership import cli, fake_papermill, one_line, snapshot  # noqa: F401 — fixtures and helpers
from tests.test_runner import series, write_nb  # noqa: F401


def _own(out: Path, *rels: str) -> None:
    """A tampered marker: ``rels`` added to the files it says runs wrote."""
    marker = json.loads((out / build.MARKER).read_text())
    marker["files"] += list(rels)
    (out / build.MARKER).write_text(json.dumps(marker))


# ---------------------------------------------------------------- a run deletes nothing through a link or a folder

def test_a_marker_entry_through_a_linked_folder_deletes_nothing_outside_out(series, fake_papermill, tmp_path):  # noqa: F811
    out, outside = tmp_path / "b", tmp_path / "outside"
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    outside.mkdir()
    (outside / "victim.txt").write_text("thesis")
    (out / "notebooks" / "sub").symlink_to(outside)
    _own(out, "notebooks/sub/victim.txt")
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    assert (outside / "victim.txt").read_text() == "thesis"


def test_an_older_builds_linked_html_keeps_its_files_on_a_run_without_html(series, fake_papermill, tmp_path):  # noqa: F811
    out, site = tmp_path / "b", tmp_path / "site"
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    (out / build.MARKER).unlink()  # a build from before the marker: its rows' files are its own
    (out / "html").rename(site)
    (out / "html").symlink_to(site)  # the pages published through a link to a web server's folder
    before = snapshot(site)
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    assert snapshot(site) == before


def test_a_marker_that_claims_a_folder_deletes_none_of_the_users_files_in_it(series, fake_papermill, tmp_path):  # noqa: F811
    out = tmp_path / "b"
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    (out / "html" / "my_notes.txt").write_text("mine")
    _own(out, "html", "html/checks")
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    assert (out / "html" / "my_notes.txt").read_text() == "mine"


# ---------------------------------------------------------------- damaged build files: one line, never a traceback

@pytest.mark.parametrize("damaged", [build.MARKER, "summary.json"])
def test_a_deeply_nested_marker_or_summary_is_one_line(series, fake_papermill, tmp_path, capfd, damaged):  # noqa: F811
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    if damaged == "summary.json":
        (b / build.MARKER).unlink()  # an older build is recognised by its summary
    (b / damaged).write_text("[" * 100_000)  # json's parser recurses: RecursionError, not ValueError
    if damaged == "summary.json":  # no marker, no readable summary: not a build, and its files are not a run's
        before = snapshot(b)
        assert cli(series, b, "--only", "01", "--no-html") == 2
        assert "is not a build of this series" in one_line(capfd)
        lock = build.LOCK
        assert {k: v for k, v in snapshot(b).items() if k != lock} == {k: v for k, v in before.items() if k != lock}
    else:  # an unreadable marker is no marker: the summary's rows say what the build owns, as for an older build
        assert cli(series, b, "--only", "01", "--no-html") == 0
    assert main(["compare", str(a), str(b)]) in (0, 1, 2)
    assert "Traceback" not in capfd.readouterr().err


@pytest.fixture
def no_hang():
    """An ``AssertionError`` instead of a test that never ends: reading a FIFO blocks until a writer comes."""
    import signal

    def fail(signum, frame):
        raise AssertionError("blocked reading a file that is not a regular file")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("command", ["compare", "verdicts"])
@pytest.mark.parametrize("thing", ["fifo", "device"])
def test_compare_and_verdicts_refuse_a_fifo_or_a_device_in_a_build(series, fake_papermill, tmp_path, capfd, no_hang,  # noqa: F811
                                                                    command, thing):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    # a lesson's checks file (verdicts reads 06's) and a row of the build (compare reads both of each row)
    for stem in ("01_ok.world", "06_personalized_pagerank.world"):
        path = b / "checks" / f"{stem}.json"
        path.unlink(missing_ok=True)
        os.mkfifo(path) if thing == "fifo" else path.symlink_to("/dev/null")  # /dev/zero: read until memory ends
    argv = ["compare", str(a), str(b)] if command == "compare" else ["verdicts", str(b)]
    assert main(argv) == 2
    assert "is not a regular file" in one_line(capfd)


# ---------------------------------------------------------------- empty names are refused, not read as "here" or "00"

def test_an_empty_only_is_refused_not_read_as_notebook_00(fake_papermill, tmp_path, capfd):  # noqa: F811
    # ''.zfill(2) is '00': it ran the series' notebook 00
    assert main(["run", "--only", "", "--scale", "ci", "--out", str(tmp_path / "b"), "--quiet"]) == 2
    assert "--only" in one_line(capfd) and not (tmp_path / "b").exists()


@pytest.mark.parametrize("argv", [["notebooks", "--to", ""], ["world", "--scale", "tiny", "--out", ""],
                                  ["world", "--scale", "tiny", "--out", " "], ["record", "export", ""],
                                  ["record", "export", "", "--force"]])
def test_an_empty_destination_is_refused_not_the_working_folder(tmp_path, capfd, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "is empty" in one_line(capfd) and not any(tmp_path.iterdir())


# ---------------------------------------------------------------- verdicts --readme: the user's file is never lost

README = "# My README\n\n" + "words " * 2000 + "\n<!-- verdicts:start -->\nold\n<!-- verdicts:end -->\n"


def _on_a_full_disk(call: str, limit: int):
    """Run ``call`` (Python code) in a process whose files may grow to ``limit`` bytes only: a write past it fails
    part way, as on a full disk."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))
        """) + call
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_verdicts_readme_is_whole_after_a_full_disk(tmp_path):
    (tmp_path / "checks").mkdir()
    readme = tmp_path / "README.md"
    readme.write_text(README)
    done = _on_a_full_disk("from cookbook.__main__ import main\n"
                           f"sys.exit(main(['verdicts', {str(tmp_path)!r}, '--readme', {str(readme)!r}]))", 1000)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert readme.read_text() == README  # it was truncated: the file was opened for writing, then the disk filled


def test_stamp_colab_leaves_every_notebook_whole_after_a_full_disk(tmp_path):
    import shutil

    from cookbook.paths import list_notebooks

    for p in list_notebooks(only=["00", "01"]):
        shutil.copy(p, tmp_path / p.name)
    before = snapshot(tmp_path)
    done = _on_a_full_disk("from cookbook.run.colab import stamp\n"
                           f"stamp({str(tmp_path)!r}, 'https://github.com/someone/fork')", 5000)
    assert done.returncode != 0
    assert snapshot(tmp_path) == before  # nbformat.write truncated the notebook, then failed: its cells were lost


def test_verdicts_readme_that_is_a_fifo_is_refused(tmp_path, capfd, no_hang):
    (tmp_path / "checks").mkdir()
    os.mkfifo(tmp_path / "README.md")
    assert main(["verdicts", str(tmp_path), "--readme", str(tmp_path / "README.md")]) == 2
    assert "not a regular file" in one_line(capfd)


def test_verdicts_readme_through_a_link_renders_the_linked_file(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "real.md").write_text(README)
    (tmp_path / "README.md").symlink_to(tmp_path / "real.md")
    assert main(["verdicts", str(tmp_path), "--readme", str(tmp_path / "README.md")]) == 0
    assert (tmp_path / "README.md").is_symlink() and "| lesson" in (tmp_path / "real.md").read_text()


# ---------------------------------------------------------------- the package and its data are never a build folder

def _series_folders() -> list[Path]:
    import cookbook
    from cookbook.paths import shipped

    package = Path(cookbook.__file__).parent
    return [package, package / "data", shipped("data"), shipped("data") / "world-class", Path("/")]


@pytest.mark.parametrize("which", range(5))
def test_the_package_its_data_and_the_root_are_never_an_out(which):
    folder = _series_folders()[which]
    with pytest.raises(ValueError, match="choose another --out"):
        build.prepare_out(folder)  # on main it returned the folder: a run wrote its build into the package


# ---------------------------------------------------------------- the lock file is only ever a file of its own

@pytest.mark.parametrize("thing", ["hard link", "fifo"])
def test_the_lock_is_never_a_users_file_by_another_name_nor_a_fifo(series, fake_papermill, tmp_path, capfd, thing):  # noqa: F811
    out = tmp_path / "b"
    out.mkdir()
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("chapter 1")
    if thing == "hard link":
        os.link(thesis, out / build.LOCK)  # the same file: truncating the lock emptied the thesis
    else:
        os.mkfifo(out / build.LOCK)
    assert cli(series, out, "--only", "01") == 2
    assert "cannot be the lock of a build" in one_line(capfd)
    assert thesis.read_text() == "chapter 1"


# ---------------------------------------------------------------- a damaged notebook in --notebooks is named

@pytest.mark.parametrize("damage", [b"{bad", b"\xff\xfe", b"[1, 2]", "fifo", "dangling"])
def test_a_damaged_notebook_is_named_before_any_kernel(fake_papermill, tmp_path, capfd, no_hang, damage):  # noqa: F811
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    path = nbs / "00_x.ipynb"
    if damage == "fifo":
        os.mkfifo(path)  # reading it blocked the run before any kernel, for ever
    elif damage == "dangling":
        path.symlink_to(tmp_path / "gone.ipynb")
    else:
        path.write_bytes(damage)
    assert main(["run", "--notebooks", str(nbs), "--out", str(tmp_path / "b"), "--scale", "ci", "--quiet"]) == 2
    assert str(path) in one_line(capfd)


# ---------------------------------------------------------------- -p values built to hurt the YAML reader

LAUGHS = "[&a [1,1,1,1,1,1,1,1,1], " + ", ".join(
    f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefg", "bcdefgh")) + "]"  # 9**8 ones by reference


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, LAUGHS])
def test_a_yaml_bomb_in_p_is_one_short_line(fake_papermill, tmp_path, capfd, value):  # noqa: F811
    argv = ["run", "--only", "00", "--scale", "ci", "--out", str(tmp_path / "b"), "--quiet", "-p", f"SEED={value}"]
    assert main(argv) == 2  # the deep one: RecursionError's traceback; the aliases: an error of 30 million '1, '
    err = one_line(capfd)
    assert "parameter SEED must be int" in err and len(err) < 400, err[:1000]


def test_a_kept_rows_file_replaced_by_a_link_is_not_copied_into_the_new_build(series, fake_papermill, tmp_path):  # noqa: F811
    out = tmp_path / "b"
    runner.run(["01", "04"], notebooks=series, out=out, scale="ci", progress=False)
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----")
    page = out / "html" / "04_ok_after.world.html"
    page.unlink()
    page.symlink_to(secret)  # the kept row's page, now a link: its target was published as the page
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    assert "PRIVATE KEY" not in "".join(p.read_text(errors="replace") for p in out.rglob("*")
                                        if p.is_file() and not p.is_symlink())
    assert secret.read_text() == "-----BEGIN PRIVATE KEY-----"


def test_verdicts_refuses_a_fifo_in_the_recorded_build_too(series, fake_papermill, tmp_path, capfd, no_hang):  # noqa: F811
    a, r = tmp_path / "a", tmp_path / "a-recorded"
    for out in (a, r):
        runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    os.mkfifo(r / "checks" / "06_personalized_pagerank.world.json")
    assert main(["verdicts", str(a), "--recorded", str(r)]) == 2
    assert "is not a regular file" in one_line(capfd)


def test_world_never_writes_into_the_data_folder_itself(capfd):
    from cookbook.paths import shipped

    before = sorted(p.name for p in shipped("data").iterdir())
    assert main(["world", "--scale", "tiny", "--out", str(shipped("data"))]) == 2  # it wrote 7 files beside the worlds
    assert "data" in one_line(capfd) and sorted(p.name for p in shipped("data").iterdir()) == before
