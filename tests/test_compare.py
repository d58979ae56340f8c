import copy
import json

import pytest

from cookbook.__main__ import main
from cookbook.run.compare import compare_builds, mask_timings

CHECKS = {"notebook": "01_x", "passed": True, "checks": [
    {"name": "recall", "passed": True, "value": 0.97, "bound": 0.95, "op": ">=", "message": "m", "timing": False},
    {"name": "runtime_s", "passed": True, "value": 3.2, "bound": 60, "op": "<=", "message": "t", "timing": True}]}


def _cell(source, *outputs):
    return {"cell_type": "code", "source": source, "metadata": {"execution": {"iopub.execute_input": "t0"}},
            "execution_count": 1, "outputs": list(outputs)}


def _stream(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def _image(data):
    return {"output_type": "display_data", "data": {"image/png": data, "text/plain": "<Figure>"}, "metadata": {}}


NB = {"cells": [_cell("print(recall)", _stream("recall 0.970 over 12 questions\n")),
                _cell("t0 = time.perf_counter()", _stream("per query 1.25 ms, 800.0 queries/s (3.1×)\n"),
                      _image("AAAA")),
                _cell("plt.plot(recall)", _image("BBBB"))],
      "metadata": {"papermill": {"duration": 3.0}}, "nbformat": 4, "nbformat_minor": 5}


def _build(root, checks=CHECKS, nb=NB):
    (root / "checks").mkdir(parents=True)
    (root / "notebooks").mkdir()
    (root / "checks" / "01_x.json").write_text(json.dumps(checks))
    (root / "notebooks" / "01_x.ipynb").write_text(json.dumps(nb))
    return root


def test_timing_only_differences_are_identical(tmp_path, capsys):
    checks, nb = copy.deepcopy(CHECKS), copy.deepcopy(NB)
    # a slow machine misses only the timing budget: a warning today, a failure in builds made before timing warned
    checks["checks"][1].update(value=75.0, passed=False, warning="75 is not <= 60 (timing: a warning, not a failure)")
    checks["passed"] = False
    nb["cells"][1]["outputs"][0]["text"] = "per query 9.5 ms, 105.3 queries/s (0.4×)\n"
    nb["cells"][1]["outputs"][1]["data"]["image/png"] = "CCCC"  # a latency plot
    nb["cells"][0]["execution_count"] = 7
    nb["metadata"]["papermill"]["duration"] = 9.0
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b", checks, nb)
    same, report = compare_builds(a, b)
    assert same, report
    assert main(["compare", str(a), str(b)]) == 0
    assert capsys.readouterr().out.strip().endswith("identical")


@pytest.mark.parametrize("change", ["value", "text", "image", "cell"])
def test_result_differences_are_reported(tmp_path, capsys, change):
    checks, nb = copy.deepcopy(CHECKS), copy.deepcopy(NB)
    if change == "value":
        checks["checks"][0]["value"] = 0.96
    elif change == "text":
        nb["cells"][0]["outputs"][0]["text"] = "recall 0.971 over 12 questions\n"
    elif change == "image":
        nb["cells"][2]["outputs"][0]["data"]["image/png"] = "CCCC"  # a plot of results, not timings
    else:
        nb["cells"].append(_cell("print(1)", _stream("1\n")))
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b", checks, nb)
    same, report = compare_builds(a, b)
    assert not same and "DIFFERENT" in report[0]
    assert main(["compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert {"value": "0.96", "text": "0.971", "image": "image/png", "cell": "[stream] 1"}[change] in out


def test_not_a_build_folder_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="not a build folder"):
        compare_builds(tmp_path, tmp_path)
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert "not a build folder" in capsys.readouterr().err


def test_mask_timings_keeps_other_numbers():
    assert mask_timings("12 docs in 0.5 s, 3 seconds, 7µs, 2e-3 ms") == "12 docs in <t> s, <t> seconds, <t>µs, <t> ms"
    assert mask_timings("5 sentences, 3 steps") == "5 sentences, 3 steps"


def test_where_the_kernel_cut_a_stream_does_not_matter(tmp_path):
    """One print's text split into stream messages at another flush (a busy machine) is the same output; the
    same words on other lines, or on stderr, are not."""
    whole = copy.deepcopy(NB)
    whole["cells"][0]["outputs"] = [_stream("top by count: [('a', 'b', 4)]\nnext\n")]
    cut = copy.deepcopy(NB)
    cut["cells"][0]["outputs"] = [_stream("top by count:"), _stream(" [('a', 'b', 4)]\nne"), _stream("xt\n")]
    moved = copy.deepcopy(NB)
    moved["cells"][0]["outputs"] = [_stream("top by count:\n"), _stream(" [('a', 'b', 4)]\nnext\n")]
    stderr = copy.deepcopy(cut)
    stderr["cells"][0]["outputs"][1] = {**stderr["cells"][0]["outputs"][1], "name": "stderr"}
    a = _build(tmp_path / "a", nb=whole)
    assert compare_builds(a, _build(tmp_path / "b", nb=cut))[0]
    assert not compare_builds(a, _build(tmp_path / "c", nb=moved))[0]
    assert not compare_builds(a, _build(tmp_path / "d", nb=stderr))[0]


def test_progress_bars_are_not_compared(tmp_path):
    """How far a tqdm bar had drawn (text on stderr, or a widget) depends on the machine's speed, not the result;
    a result printed beside it still is compared."""
    bar = {"output_type": "stream", "name": "stderr",
           "text": "extracting text units:  45%|####5     | 1340/2962 [00:01<00:02, 700.12unit/s]\r"
                   "extracting text units: 100%|##########| 2962/2962 [00:03<00:00, 801.50unit/s]\n"}
    widget = {"output_type": "display_data", "metadata": {},
              "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "abc"}, "text/plain": "  3%|3 | 1/30"}}
    with_bars = copy.deepcopy(NB)
    with_bars["cells"][0]["outputs"] = [bar, widget, *with_bars["cells"][0]["outputs"]]
    assert compare_builds(_build(tmp_path / "a"), _build(tmp_path / "b", nb=with_bars))[0]
    changed = copy.deepcopy(with_bars)
    changed["cells"][0]["outputs"][2] = _stream("recall 0.960 over 12 questions\n")
    assert not compare_builds(_build(tmp_path / "c"), _build(tmp_path / "d", nb=changed))[0]
