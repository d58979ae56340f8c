import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from cookbook.__main__ import main
from cookbook.run import parameters, render, runner

PARAMS = 'SCALE = "class"\nRESULTS_DIR = "build/checks"\nSTRICT = False'


def write_nb(path, body):
    params = new_code_cell(PARAMS, metadata={"tags": ["parameters"]})
    cells = [params, *(new_code_cell(src) for src in body)]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}), path)


@pytest.fixture
def series(tmp_path):
    d = tmp_path / "nbs"
    d.mkdir()
    checks = 'from cookbook.harness.checks import Checks\nc = Checks("{id}", results_dir=RESULTS_DIR, strict=STRICT)'
    write_nb(d / "01_ok.ipynb", [checks.format(id="01_ok"), 'c.at_least("v", 2, 1)\nc.save()'])
    write_nb(d / "02_failing_check.ipynb", [checks.format(id="02_failing_check"), 'c.at_least("v", 0, 1)\nc.save()'])
    write_nb(d / "03_raises.ipynb", ["x = 1", "raise RuntimeError('boom in cell two')", "print('never')"])
    write_nb(d / "04_ok_after.ipynb", [checks.format(id="04_ok_after"),
                                       'c.check("scale", SCALE == "ci")\nc.runtime(-1)  # over budget\nc.save()'])
    return d


def test_run_reports_each_notebook_and_keeps_going(series, tmp_path):
    out = tmp_path / "build"
    results = {r.notebook: r for r in runner.run(notebooks=series, out=out, scale="ci", progress=False)}
    assert results["01_ok"].status == "ok" and results["01_ok"].checks_passed == 1
    assert results["02_failing_check"].status == "error"  # strict save raised ChecksFailed
    assert results["02_failing_check"].failed_checks == ["v"]
    assert results["03_raises"].status == "error" and "boom in cell two" in results["03_raises"].error
    assert results["03_raises"].failing_cell == 2  # params, "x = 1", then the raise
    assert results["04_ok_after"].status == "ok"  # ran after the failures, with SCALE injected
    assert (out / "notebooks" / "04_ok_after.world.ipynb").exists() and (out / "checks" / "01_ok.world.json").exists()
    index = (out / "index.html").read_text()
    assert "html/01_ok.world.html" in index and "boom in cell two (cell 2)" in index
    assert len(json.loads((out / "summary.json").read_text())) == 4


def test_timing_is_a_warning_never_a_failure(series, tmp_path):
    """04 is over its runtime budget under STRICT: still ok, the warning is in the table, JSON and index."""
    out = tmp_path / "build"
    [r] = runner.run(["04"], notebooks=series, out=out, scale="ci", progress=False)
    assert r.status == "ok" and r.checks_passed == r.checks_total == 2 and r.budget_s == -1
    assert len(r.warnings) == 1 and r.warnings[0].startswith("runtime_s: ")
    [row] = json.loads((out / "summary.json").read_text())
    assert row["warnings"] == r.warnings and row["status"] == "ok"
    check = json.loads((out / "checks" / "04_ok_after.world.json").read_text())["checks"][1]
    assert check["name"] == "runtime_s" and check["passed"] and check["timing"] and "is not <=" in check["warning"]
    assert "warning: runtime_s" in runner.format_table([r]) and "warning: runtime_s" in (out / "index.html").read_text()


def test_only_keeps_the_other_rows_and_stale_run_folders_go(series, tmp_path):
    out = tmp_path / "build"
    runner.run(["01", "04"], notebooks=series, out=out, scale="ci", progress=False)
    first = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())}
    page_04 = (out / "html" / "04_ok_after.world.html").read_bytes()
    # a run killed with SIGKILL leaves its folder (and kernel connection file) behind; pid 2**22+1 is never live
    dead = out / f".run-20240101-000000-{2**22 + 1}"
    dead.mkdir()
    (dead / ".cookbook-stage").write_text("pid")  # the mark every stage carries from its first moment
    (dead / ".kernel-01_ok.world.json").write_text("{}")
    runner.run(["01"], notebooks=series, out=out, scale="tiny", progress=False, html_report=True)
    rows = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())}
    assert sorted(rows) == ["01_ok", "04_ok_after"]
    assert rows["04_ok_after"] == first["04_ok_after"]  # kept as it was: its own date, scale and corpus
    assert rows["01_ok"]["scale"] == "tiny" and first["01_ok"]["scale"] == "ci"
    assert rows["01_ok"]["finished_at"] and rows["01_ok"]["corpus"] == "world"
    index = (out / "index.html").read_text()
    assert "html/01_ok.world.html" in index and "html/04_ok_after.world.html" in index and "tiny" in index
    assert (out / "html" / "04_ok_after.world.html").read_bytes() == page_04
    assert (out / "checks" / "04_ok_after.world.json").exists()
    assert (out / "notebooks" / "04_ok_after.world.ipynb").exists()
    assert not list(out.glob(".run-*")) and not list(out.glob(".old-*"))
    # a full run replaces the build: only its own rows
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    runner.run(None, notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    assert len(json.loads((out / "summary.json").read_text())) == 4 and not (out / "index.html").exists()


def test_cli_exit_status(series, tmp_path, capfd):
    ok = main(["run", "--notebooks", str(series), "--only", "01", "--out", str(tmp_path / "a"), "--quiet",
               "--no-html"])
    assert ok == 0
    err = capfd.readouterr().err  # the kernel's stderr too: no transport warning, no spurious interrupt
    assert "without encryption" not in err and "KeyboardInterrupt" not in err, err
    bad = main(["run", "--notebooks", str(series), "--only", "01", "02", "--out", str(tmp_path / "b"), "--quiet",
                "--no-html"])
    out = capfd.readouterr()
    assert bad == 1 and "02_failing_check" in out.err and "failed checks: v" in out.out
    raised = main(["run", "--notebooks", str(series), "--only", "03", "04", "--out", str(tmp_path / "c"), "--quiet",
                   "--no-html"])
    out = capfd.readouterr()
    assert raised == 1 and "boom in cell two (cell 2)" in out.out and "04_ok_after" in out.out
    assert "FAILED: 03_raises.world" in out.err
    assert main(["run", "--notebooks", str(series), "--only", "77", "--quiet"]) == 2
    assert main(["run", "--scale", "huge", "--quiet"]) == 2
    assert main(["run", "--notebooks", str(series), "-p", "no-equals-sign", "--quiet"]) == 2


def one_line_error(capfd) -> str:
    err = capfd.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("bad", ["a_file", "a_file/sub", "read_only", "read_only/sub"])
def test_bad_out_is_one_line_before_any_kernel(series, tmp_path, capfd, monkeypatch, bad):
    if bad.startswith("read_only") and os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    monkeypatch.setattr(runner, "ensure_kernel", lambda: pytest.fail("a kernel was started"))
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "read_only").mkdir(mode=0o555)
    assert main(["run", "--notebooks", str(series), "--only", "01", "--out", str(tmp_path / bad), "--quiet"]) == 2
    assert "output folder" in one_line_error(capfd)


def test_cli_misuse_is_one_line(series, tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(runner, "ensure_kernel", lambda: pytest.fail("a kernel was started"))
    for argv in (["--timeout", "0"], ["--jobs", "0"], ["--notebooks", str(tmp_path)], ["-p", "RESULTS_DIR=x"]):
        assert main(["run", "--notebooks", str(series), "--quiet", *argv]) == 2
        one_line_error(capfd)
    assert main(["world", "--scale", "huge", "--out", str(tmp_path / "w")]) == 2
    assert "unknown scale" in one_line_error(capfd)
    # --corpus is the CORPUS parameter: refused by notebooks that take none, and when -p says otherwise
    assert main(["run", "--notebooks", str(series), "--quiet", "--corpus", "factbook"]) == 2
    assert "unknown parameter 'CORPUS'" in one_line_error(capfd)
    with_corpus = tmp_path / "with_corpus"
    with_corpus.mkdir()
    nb = nbformat.read(series / "01_ok.ipynb", as_version=4)
    nb.cells[0].source += '\nCORPUS = "world"'
    nbformat.write(nb, with_corpus / "01_c.ipynb")
    assert "CORPUS" in parameters.notebook_parameters([with_corpus / "01_c.ipynb"])
    assert main(["run", "--notebooks", str(with_corpus), "--quiet", "--corpus", "factbook", "-p", "CORPUS=world"]) == 2
    assert "disagree" in one_line_error(capfd)
    # `run` without the notebooks extra: one line naming the extra, not an ImportError from deep inside
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "papermill" else real(name, *a))
    assert main(["run", "--notebooks", str(series), "--quiet"]) == 2
    assert "pip install -e '.[notebooks]'" in one_line_error(capfd)


def test_typed_parameters(series, tmp_path, capfd, monkeypatch):
    defaults = parameters.notebook_parameters([series / "01_ok.ipynb"])
    assert defaults == {"SCALE": "class", "RESULTS_DIR": "build/checks", "STRICT": False}
    # papermill's convention: VALUE is YAML; a string parameter keeps the text as typed
    assert parameters.parse_parameters(["STRICT=False", "SCALE=no", "SCALE=123"], defaults) == \
        {"STRICT": False, "SCALE": "123"}
    assert parameters.parse_parameters(["STRICT=true"], defaults) == {"STRICT": True}
    for item, words in [("STRICT=1", "must be bool"), ("STRICT=abc", "must be bool"),
                        ("SEED=7", "unknown parameter 'SEED'; the notebooks' parameters cells define RESULTS_DIR, "
                                   "SCALE, STRICT")]:
        with pytest.raises(ValueError, match=words):
            parameters.parse_parameters([item], defaults)
    seeded = {"SEED": 7, "RATE": 0.5, "NAMES": ["a"], "ANY": None}
    assert parameters.parse_parameters(["SEED=11", "RATE=1", "NAMES=[b, c]", "ANY=x"], seeded) == \
        {"SEED": 11, "RATE": 1, "NAMES": ["b", "c"], "ANY": "x"}
    for item in ("SEED=abc", "SEED=7.5", "SEED=true", "RATE=fast", "NAMES=b"):
        with pytest.raises(ValueError, match=item.split("=")[0]):
            parameters.parse_parameters([item], seeded)
    with pytest.raises(ValueError, match="unknown parameter"):  # the API checks names too
        runner.run(["01"], notebooks=series, out=tmp_path / "x", extra_parameters={"SEED": 7})

    # end to end: the notebook sees an int and a real False; a bad value stops before any kernel
    write_nb(series / "05_typed.ipynb", ['assert SEED == 11 and type(SEED) is int, repr(SEED)\n'
                                         'assert STRICT is False, repr(STRICT)',
                                         'from cookbook.harness.checks import Checks\n'
                                         'Checks("05_typed", results_dir=RESULTS_DIR).save()'])
    nb = nbformat.read(series / "05_typed.ipynb", as_version=4)
    nb.cells[0].source += "\nSEED = 7"
    nbformat.write(nb, series / "05_typed.ipynb")
    run = ["run", "--notebooks", str(series), "--only", "05", "--out", str(tmp_path / "t"), "--quiet", "--no-html"]
    assert main([*run, "-p", "SEED=11", "-p", "STRICT=False"]) == 0
    capfd.readouterr()
    monkeypatch.setattr(runner, "ensure_kernel", lambda: pytest.fail("a kernel was started"))
    assert main([*run, "-p", "SEED=abc"]) == 2
    assert "parameter SEED must be int (its default is 7), got 'abc'" in one_line_error(capfd)


def connection_files(*folders) -> set[Path]:
    return {p for d in folders for p in Path(d).glob("**/*.json") if "shell_port" in p.read_text(errors="ignore")}


@pytest.mark.parametrize("sig, wait, jobs", [(signal.SIGINT, 1.0, 1), (signal.SIGTERM, 1.0, 1), (signal.SIGINT, 0.0, 1),
                                             (signal.SIGTERM, 1.0, 2), (signal.SIGINT, 0.0, 2)],
                         ids=["SIGINT", "SIGTERM", "SIGINT-during-kernel-start", "SIGTERM-two-jobs",
                              "SIGINT-two-jobs-during-kernel-start"])
def test_interrupted_run_keeps_the_previous_build(series, tmp_path, sig, wait, jobs):
    """One job: 01, then 06 sleeping. Two jobs: 01 and 06, then 07 once 01 is done; both sleepers are stopped."""
    import psutil
    from jupyter_core.paths import jupyter_runtime_dir

    out = tmp_path / "build"
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False)
    before = {name: (out / name).read_bytes() for name in ("index.html", "summary.json")}
    sleepers = ["06_sleeps", "07_sleeps"][:jobs]
    for name in sleepers:
        write_nb(series / f"{name}.ipynb", ["import time\ntime.sleep(120)"])
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    runtime_before = connection_files(jupyter_runtime_dir())
    cmd = [sys.executable, "-m", "cookbook", "run", "--notebooks", str(series), "--only", "01", "06", "07",
           "--scale", "ci", "--out", str(out), "--quiet", "--jobs", str(jobs)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)})
    deadline = time.monotonic() + 120
    # every sleeper's kernel is up (so 01 has finished), its cell sleeping or about to
    while not all(list(out.glob(f".run-*/.kernel-{name}.world.json")) for name in sleepers):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    time.sleep(wait)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    total = 1 + len(sleepers)
    cut_short = ", ".join(f"{name}.world" for name in sleepers)
    assert stderr.strip().splitlines() == [f"cookbook run: interrupted by {sig.name} while running "
                                           f"{cut_short} (1/{total} notebooks finished); "
                                           f"{out} keeps its previous build"]
    assert {name: (out / name).read_bytes() for name in before} == before
    assert not [name for name in sleepers if list((out / "notebooks").glob(f"{name}.*"))]
    assert not list(out.glob(".run-*")) and not list(out.glob(".old-*"))
    assert not connection_files(tmp, out) and connection_files(jupyter_runtime_dir()) <= runtime_before
    kernels = [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or [])]
    assert not kernels, "a kernel outlived the run"


def test_parallel_results_come_in_series_order(series, tmp_path, capfd):
    """03 raises at once while 01 still starts: finishing order differs from series order, the results do not."""
    checks = ('from cookbook.harness.checks import Checks\nc = Checks("01_ok", results_dir=RESULTS_DIR)\n'
              'c.at_least("v", 2, 1)')
    write_nb(series / "01_ok.ipynb", ["import time\ntime.sleep(3)", checks + "\nc.save()"])
    out = tmp_path / "build"
    results = runner.run(["01", "03"], notebooks=series, out=out, scale="ci", progress=True, html_report=False,
                         jobs=2)
    assert [r.notebook for r in results] == ["01_ok", "03_raises"]
    assert [r["notebook"] for r in json.loads((out / "summary.json").read_text())] == ["01_ok", "03_raises"]
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.startswith("[")]
    assert len(lines) == 2 and lines[0].startswith("[1/2] 03_raises.world error in ") and \
        lines[1].startswith("[2/2] 01_ok.world ok in "), lines


def test_param_reaches_the_parameters_cell(series, tmp_path):
    d = series
    make_checks = 'from cookbook.harness.checks import Checks\nc = Checks("05_param", results_dir=RESULTS_DIR)'
    write_nb(d / "05_param.ipynb", [make_checks, 'c.check("llm", LLM == "openai")\nc.save()'])
    params_cell = nbformat.read(d / "05_param.ipynb", as_version=4).cells[0]
    params_cell.source += '\nLLM = "extractive"'
    nb = nbformat.read(d / "05_param.ipynb", as_version=4)
    nb.cells[0] = params_cell
    nbformat.write(nb, d / "05_param.ipynb")
    assert main(["run", "--notebooks", str(d), "--only", "05", "--out", str(tmp_path / "p"), "--quiet", "--no-html",
                 "-p", "LLM=openai"]) == 0


def test_kernel_points_at_this_interpreter():
    import sys
    from pathlib import Path

    from jupyter_client.kernelspec import KernelSpecManager

    name = runner.ensure_kernel()
    spec = KernelSpecManager().get_kernel_spec(name)
    assert Path(spec.argv[0]).resolve() == Path(sys.executable).resolve()


READER_MD = "# 01 · A page\n\n**What you'll learn**\n- how `x` works;\n- what else"
LOCAL = 'import os, sys, tempfile\nprint(RESULTS_DIR, os.getcwd(), os.path.expanduser("~"), sys.prefix)\n' \
        'print(os.path.join(tempfile.gettempdir(), "scratch.txt"))'


@pytest.fixture(scope="module")
def reader_build(tmp_path_factory):
    """A one-notebook series built as a reader gets it: badge, setup and parameters cells, local paths
    printed, a 200-line output, a figure, a paired comparison among its checks."""
    from nbformat.v4 import new_markdown_cell

    from cookbook.run import colab

    url = "https://github.com/o/r"
    d = tmp_path_factory.mktemp("reader")
    cells = [new_markdown_cell(colab.badge(url, "01_page.ipynb") + "\n\n" + READER_MD),
             new_code_cell(colab.setup_cell(url), metadata={"tags": [colab.SETUP_TAG]}),
             new_code_cell(PARAMS, metadata={"tags": ["parameters"]}),
             new_code_cell(LOCAL),
             new_code_cell("import sys\nfor i in range(200):\n    print(i)\n    sys.stdout.flush()"),
             new_code_cell("import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()"),
             new_code_cell('from cookbook.harness.checks import Checks\n'
                           'c = Checks("01_page", results_dir=RESULTS_DIR)\n'
                           'c.at_least("v", 2, 1)\nc.compare("c_vs_d", [0.5, 0.6, 0.4], [0.6, 0.5, 0.4], '
                           'labels=("C", "D"))\nc.save()')]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                      "display_name": "Python 3"}}),
                   d / "01_page.ipynb")
    out = d / "build"
    [r] = runner.run(notebooks=d, out=out, scale="ci", progress=False)
    assert r.ok, r.error
    return out


def visible(page: str) -> str:
    """The page without its embedded images (base64 can spell anything)."""
    import re

    return re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=\s]+", "data:image", page)


def test_page_starts_with_the_title_and_hides_the_machinery(reader_build):
    page = visible((reader_build / "html" / "01_page.world.html").read_text())
    body = page[page.index("<body"):]
    assert body.index("01 · A page") < body.index("how <code>x</code> works") < body.index("jp-CodeCell")
    for hidden in ("colab-badge.svg", "Colab setup", "IN_COLAB", 'SCALE = "class"', "# Parameters",
                   "injected-parameters", ".run-"):
        assert hidden not in page, hidden
    # the parameters cell is shown as the run set it (the code below uses these names), with no local path
    text = html.unescape(re.sub(r"<[^>]+>", "", page))  # the code as a reader reads it, highlighting dropped
    assert text.count('SCALE = "ci"') == 1 and "the values this run was given" in text, "parameters as run"
    assert 'RESULTS_DIR = "…/checks/world"' in text  # the stage folder scrubbed, the build's layout kept
    executed = nbformat.read(str(reader_build / "notebooks" / "01_page.world.ipynb"), as_version=4)
    injected = "".join(c.source for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert ".run-" not in injected and str(reader_build / "checks" / "world") in injected  # not the gone stage
    assert "<title>01 · A page</title>" in page
    prompts = re.findall(r"In\xa0\[(\d+)\]", page)  # the shown cells numbered from In [1], not In [4]
    assert [int(n) for n in prompts][:2] == [1, 2], prompts[:3]
    # the 200-line output: its first 10 lines shown, the other 190 folded
    assert 'monospace">0\n1\n' in page and "<details><summary>190 more lines (200 in all)</summary>" in page
    assert 'column-width:8em">10\n11\n' in page and "\n199</pre></details>" in page


def test_pages_show_no_local_path(reader_build):
    import sys
    import tempfile

    roots = {str(reader_build), str(Path.home()), tempfile.gettempdir() + "/", sys.prefix,
             str(Path(__file__).resolve().parents[1])}
    for page in [reader_build / "index.html", *(reader_build / "html").glob("**/*.html")]:
        text = visible(page.read_text())
        assert not [r for r in roots if r in text], page
    assert "…/checks/world …/notebooks … …" in visible((reader_build / "html" / "01_page.world.html").read_text())


def test_scrub_paths_and_collapse_on_plain_data():
    assert render.scrub_paths("/a/b/c and /a/bc", ["/a/b"]) == "…/c and /a/bc"  # whole components only
    assert render.scrub_paths("see /a/b. Or /a/b.txt", ["/a/b"]) == "see …. Or /a/b.txt"  # b.txt is another file
    short = {"output_type": "stream", "name": "stdout", "text": "1\n2\n"}
    assert render._collapse(short) == short
    long = {"output_type": "stream", "name": "stdout", "text": "".join(f"<{i}>\n" for i in range(40))}
    folded = render._collapse(long, lines=30, preview=3)["data"]["text/html"]
    assert folded.startswith('<pre style="font-family:monospace">&lt;0&gt;\n&lt;1&gt;\n&lt;2&gt;</pre><details>'
                             "<summary>37 more lines (40 in all)")


def test_index_has_descriptions_checks_pages_and_thumbnails(reader_build):
    index = (reader_build / "index.html").read_text()
    for th in ("notebook", "status", "checks", "seconds / budget", "scale", "corpus", "first figure", "finished (UTC)"):
        assert f"<th>{th}</th>" in index
    assert "01 · A page — how <code>x</code> works" in index
    assert '<a href="html/checks/01_page.world.html">2/2</a>' in index
    thumb = reader_build / "html" / "thumbs" / "01_page.world.png"
    assert 'src="html/thumbs/01_page.world.png"' in index and thumb.read_bytes().startswith(b"\x89PNG")
    from PIL import Image

    assert max(Image.open(thumb).size) <= 280
    table = (reader_build / "html" / "checks" / "01_page.world.html").read_text()
    assert "<h1>Checks · 01 · A page (world)</h1>" in table and "2 of 2 passed" in table
    assert "<a href='../01_page.world.html'>the notebook</a>" in table
    # the comparison: mean difference 0, its CI and conclusion, against the brute-force mean of A − B
    assert "<td>c_vs_d</td><td style='color:#2e7d32'>RECORDED</td><td>0</td>" in table
    assert "+0 [" in table and "too few to decide over 3 questions" in table
    assert "<td>v</td><td style='color:#2e7d32'>PASS</td><td>2</td><td>&gt;= 1</td>" in table


def test_describe_prefers_the_metadata_description():
    from nbformat.v4 import new_markdown_cell

    nb = new_notebook(cells=[new_markdown_cell("# 05 · T\n\n**What you'll see** the whole\nthing; then more")])
    assert render.describe(nb) == "05 · T — the whole thing"  # a wrapped line joined, cut at its first ";"
    nb.cells[0].source = "# 05 · T\n\n**What you'll learn**\n- one\n  two, three;\n- four\n\nRuntime"
    assert render.describe(nb) == "05 · T — one two, three"
    assert render.describe(nb, limit=5) == "05 · T — one …"
    nb.metadata["description"] = "set by hand"
    assert render.describe(nb) == "set by hand"
    assert render.describe(new_notebook()) == ""


def test_kernels_side_by_side_share_the_cores_and_the_user_setting_wins(monkeypatch):
    from cookbook.run.kernels import BLAS_THREAD_VARIABLES, kernel_env

    for v in (*BLAS_THREAD_VARIABLES, "COOKBOOK_PROGRESS"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "7")  # the user's own choice
    before = dict(os.environ)
    assert kernel_env(2, 8) == {"COOKBOOK_PROGRESS": "0", "OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4"}
    assert kernel_env(3, 2)["OMP_NUM_THREADS"] == "1"
    assert dict(os.environ) == before


def test_a_run_gives_its_kernels_their_variables_and_never_changes_its_own_environment(series, tmp_path,
                                                                                     monkeypatch):
    """`cookbook run` once set COOKBOOK_PROGRESS (and the BLAS thread counts) in its own process for the kernels to
    inherit, restoring them after: while it ran, an in-process caller's environment was changed. The kernels get
    them now through their own start (papermill's kernel manager), read back here from inside a kernel."""
    import papermill as pm

    from cookbook.run.kernels import BLAS_THREAD_VARIABLES

    for v in (*BLAS_THREAD_VARIABLES, "COOKBOOK_PROGRESS"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # the user's: the kernel keeps it
    write_nb(series / "05_env.ipynb", ['import json, os\nfrom cookbook.harness.checks import Checks\n'
                                       'c = Checks("05_env", results_dir=RESULTS_DIR, strict=STRICT)\n'
                                       'seen = {v: os.environ.get(v) for v in ("COOKBOOK_PROGRESS", "OMP_NUM_THREADS", '
                                       '"MKL_NUM_THREADS")}\nc.check("env", True, json.dumps(seen, sort_keys=True))\n'
                                       'c.save()'])
    before, during, execute = dict(os.environ), [], pm.execute_notebook

    def watched(*args, **kwargs):
        during.append(dict(os.environ))
        return execute(*args, **kwargs)

    monkeypatch.setattr(pm, "execute_notebook", watched)
    assert main(["run", "--only", "05", "--notebooks", str(series), "--scale", "ci", "--out", str(tmp_path / "b"),
                 "--quiet", "--no-html", "--jobs", "1"]) == 0
    assert during == [before] and dict(os.environ) == before
    [check] = json.loads((tmp_path / "b" / "checks" / "05_env.world.json").read_text())["checks"]
    assert json.loads(check["message"]) == {"COOKBOOK_PROGRESS": "0", "MKL_NUM_THREADS": "3",
                                            "OMP_NUM_THREADS": str(runner.default_jobs())}


def run_with_papermill_failing(tmp_path, monkeypatch, error: str, failures: int):
    """run_notebook on a one-cell notebook, papermill raising RuntimeError(error) on its first ``failures`` calls
    (no kernel starts); returns the result and the output paths papermill was called with."""
    import papermill as pm

    calls = []

    def execute(*args, **kwargs):
        calls.append(args[1])
        if len(calls) <= failures:
            raise RuntimeError(error)

    monkeypatch.setattr(pm, "execute_notebook", execute)
    nb = tmp_path / "01_x.ipynb"
    write_nb(nb, ["x = 1"])
    r = runner.run_notebook(nb, tmp_path / "out", parameters={"RESULTS_DIR": str(tmp_path / "res")},
                            kernel=runner.KERNEL_NAME, timeout=5, progress=False)
    return r, calls


@pytest.mark.parametrize("failures, status", [(1, "checks failed"), (2, "error")])
def test_a_kernel_that_died_before_kernel_info_is_started_once_more(tmp_path, monkeypatch, failures, status):
    # Two kernels started side by side can race for a port; the kernel then dies before replying to
    # kernel_info, having run nothing, so the runner starts it once more (and only once).
    r, calls = run_with_papermill_failing(tmp_path, monkeypatch, "Kernel died before replying to kernel_info",
                                          failures)
    assert len(calls) == 2 and calls[0] == calls[1]
    assert r.status == status  # a second start that worked reaches the checks (none written here: "checks failed")
    assert ("kernel_info" in r.error) == (failures == 2)


def test_any_other_kernel_failure_is_not_retried(tmp_path, monkeypatch):
    r, calls = run_with_papermill_failing(tmp_path, monkeypatch, "Kernel died while running cell 3", 1)
    assert len(calls) == 1 and r.status == "error" and "cell 3" in r.error


def _reader_notebook(path):
    """A notebook that reads the build (its parameters cell sets BUILD_CHECKS) and records which checks it saw."""
    write_nb(path, ['import pathlib\nfrom cookbook.harness.checks import Checks\n'
                    'c = Checks("00_reads", results_dir=RESULTS_DIR)\n'
                    'seen = sorted(p.name for p in pathlib.Path(BUILD_CHECKS).glob("*.json"))\n'
                    'c.check("saw", True, value=" ".join(seen))\nc.save()'])
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += '\nBUILD_CHECKS = ""'
    nbformat.write(nb, path)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_notebook_that_reads_the_build_runs_after_the_others_and_sees_them(series, tmp_path, jobs):
    # Notebook 00's verdict table: it runs last whatever its number, reading this run's checks, and an --only run of
    # it alone reads the kept rows' checks; its row still comes first.
    _reader_notebook(series / "00_reads.ipynb")
    out = tmp_path / "build"
    results = runner.run(["00", "01", "04"], notebooks=series, out=out, scale="ci", progress=False,
                         html_report=False, jobs=jobs)
    assert [r.notebook for r in results] == ["00_reads", "01_ok", "04_ok_after"]
    saw = json.loads((out / "checks" / "00_reads.world.json").read_text())["checks"][0]["value"]
    assert saw.split() == ["01_ok.world.json", "04_ok_after.world.json"]
    runner.run(["00"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    saw = json.loads((out / "checks" / "00_reads.world.json").read_text())["checks"][0]["value"]
    assert saw.split() == ["01_ok.world.json", "04_ok_after.world.json"]


def test_a_cell_timeout_names_its_cell(series, tmp_path):
    write_nb(series / "05_slow.ipynb", ["x = 1", "import time\ntime.sleep(60)", "print('never')"])
    [r] = runner.run(["05"], notebooks=series, out=tmp_path / "b", scale="ci", progress=False, timeout=2,
                     html_report=False)
    assert r.status == "error" and "timed out" in r.error and r.failing_cell == 2  # params, "x = 1", the sleep
    assert "(cell 2)" in runner.format_table([r])


def _caught(pid: int, sig: signal.Signals) -> bool:
    """Whether process ``pid`` has a handler of its own for ``sig`` (Linux: the SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads SigCgt from /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("wait", [0.0, 0.1, 0.3])
def test_a_signal_at_any_moment_is_one_line_and_exit_130(tmp_path, sig, wait):
    """``wait`` seconds after the command's first line has run (its SIGTERM handler is in place: the earliest
    moment a Python program can answer SIGTERM at all; or, when no handler comes, 0.2 s after the interpreter took
    SIGINT), through the imports, the checks and the start of the run: one line, exit status 130, no build."""
    out = tmp_path / "build"
    proc = subprocess.Popen([sys.executable, "-m", "cookbook", "run", "--only", "00", "--corpus", "world", "--scale",
                             "ci", "--out", str(out), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    started, deadline = None, time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline and not _caught(proc.pid, signal.SIGTERM):
        if started is None and _caught(proc.pid, signal.SIGINT):
            started = time.monotonic()
        if started is not None and time.monotonic() > started + 0.2:
            break
        time.sleep(0.002)
    time.sleep(wait)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr and "interrupted" in lines[0], stderr
    assert not out.exists() or not list(out.glob(".run-*")) and not (out / "summary.json").exists()


def test_a_graphml_file_the_notebook_writes_is_kept_in_the_build_owned_and_listed(series, tmp_path):
    """Issue 34: notebook 12's GraphML went beside RESULTS_DIR in the run's stage, which the build removed: a
    `cookbook run` kept no GraphML. A notebook's graphml_path file now lands in graphs/, listed in the marker (so the
    next run may replace it and an --only run of another notebook keeps it), and a user's file there is refused."""
    from cookbook.run import build
    write_nb(series / "05_graph.ipynb", [
        'from cookbook.harness import graph_view\nfrom cookbook.harness.checks import Checks\n'
        'c = Checks("05_graph", results_dir=RESULTS_DIR, strict=STRICT)',
        'graph_view.write_graphml([{"id": "a"}, {"id": "b"}], [("a", "b", 1.0)],\n'
        '                         graph_view.graphml_path(RESULTS_DIR, "05_graph"))\nc.save()'])
    out = tmp_path / "build"
    [r] = runner.run(["05"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)
    kept = out / "graphs" / "05_graph.world.graphml"
    assert r.status == "ok" and kept.is_file() and "graphs/05_graph.world.graphml" in build.owned_files(out)
    assert json.loads((out / build.MARKER).read_text())["files"].count("graphs/05_graph.world.graphml") == 1
    import networkx as nx
    assert sorted(nx.read_graphml(kept).nodes) == ["a", "b"]
    runner.run(["01"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)  # another row
    assert kept.is_file() and "graphs/05_graph.world.graphml" in build.owned_files(out)
    runner.run(["05"], notebooks=series, out=out, scale="ci", progress=False, html_report=False)  # its own: replaced
    assert kept.is_file() and not list(out.glob(".run-*")) and not list(out.glob(".old-*"))
    other = tmp_path / "other"
    (other / "graphs").mkdir(parents=True)
    (other / "graphs" / "05_graph.world.graphml").write_text("mine")
    with pytest.raises(ValueError, match="was not written by a run"):
        runner.run(["05"], notebooks=series, out=other, scale="ci", progress=False, html_report=False)
    assert (other / "graphs" / "05_graph.world.graphml").read_text() == "mine"


def test_a_signal_a_library_swallowed_still_stops_the_run_before_any_kernel(series, tmp_path, monkeypatch, capfd):
    """Seen once under two CPU burners: SIGINT 0.5 s into `cookbook run` exited 0 after a whole run, no line — the
    KeyboardInterrupt the handler raised was swallowed on its way (a library's bare ``except:`` around an import),
    and nothing looked at the signal again. The handler's record (``__main__._SIGNALLED``, shared as
    ``runner._received``) is now honoured before any kernel starts: one line, 130, no build."""
    from cookbook import __main__ as cli_module

    def swallowed():  # the signal arrives while the kernel's registration imports, and is lost there
        cli_module._SIGNALLED.append("SIGINT")
        return runner.KERNEL_NAME

    monkeypatch.setattr(runner, "ensure_kernel", swallowed)
    started = []
    monkeypatch.setattr(runner, "run_notebook", lambda *a, **k: started.append(a) or 1 / 0)
    out = tmp_path / "build"
    try:
        code = main(["run", "--notebooks", str(series), "--only", "01", "--out", str(out), "--quiet", "--no-html"])
    finally:
        cli_module._SIGNALLED.clear()
    assert not started, "a notebook ran after the signal"
    assert code == 130
    assert "interrupted" in one_line_error(capfd)
    assert not (out / "summary.json").exists() and not list(out.glob(".run-*"))
