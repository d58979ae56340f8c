import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from cookbook import runner
from cookbook.__main__ import main

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
    checks = 'from cookbook.checks import Checks\nc = Checks("{id}", results_dir=RESULTS_DIR, strict=STRICT)'
    write_nb(d / "01_ok.ipynb", [checks.format(id="01_ok"), 'c.at_least("v", 2, 1)\nc.save()'])
    write_nb(d / "02_failing_check.ipynb", [checks.format(id="02_failing_check"), 'c.at_least("v", 0, 1)\nc.save()'])
    write_nb(d / "03_raises.ipynb", ["x = 1", "raise RuntimeError('boom in cell two')", "print('never')"])
    write_nb(d / "04_ok_after.ipynb", [checks.format(id="04_ok_after"), 'c.check("scale", SCALE == "ci")\nc.save()'])
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
    assert (out / "notebooks" / "04_ok_after.ipynb").exists() and (out / "checks" / "01_ok.json").exists()
    index = (out / "index.html").read_text()
    assert "html/01_ok.html" in index and "boom in cell two" in index
    assert len(json.loads((out / "summary.json").read_text())) == 4


def test_cli_exit_status(series, tmp_path, capsys):
    ok = main(["run", "--notebooks", str(series), "--only", "01", "--out", str(tmp_path / "a"), "--quiet",
               "--no-html"])
    assert ok == 0
    bad = main(["run", "--notebooks", str(series), "--only", "01", "02", "--out", str(tmp_path / "b"), "--quiet",
                "--no-html"])
    out = capsys.readouterr()
    assert bad == 1 and "02_failing_check" in out.err and "failed checks: v" in out.out
    raised = main(["run", "--notebooks", str(series), "--only", "03", "04", "--out", str(tmp_path / "c"), "--quiet",
                   "--no-html"])
    out = capsys.readouterr()
    assert raised == 1 and "boom in cell two (cell 2)" in out.out and "04_ok_after" in out.out
    assert "FAILED: 03_raises" in out.err
    assert main(["run", "--notebooks", str(series), "--only", "77", "--quiet"]) == 2
    assert main(["run", "--scale", "huge", "--quiet"]) == 2
    assert main(["run", "--notebooks", str(series), "-p", "no-equals-sign", "--quiet"]) == 2


def test_param_reaches_the_parameters_cell(series, tmp_path):
    d = series
    make_checks = 'from cookbook.checks import Checks\nc = Checks("05_param", results_dir=RESULTS_DIR)'
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
