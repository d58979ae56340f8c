"""The verdict table read from a build (``<out>/checks/<notebook>.<corpus>.json``) and from per-corpus folders;
the ``cookbook verdicts`` command prints it."""

import shutil

from cookbook.__main__ import main
from cookbook.harness.checks import Checks
from cookbook.harness.verdicts import LESSONS, verdicts


def _save(folder, stem, name, a, b):
    c = Checks(stem, results_dir=folder)
    c.compare(name, a, b, "method − baseline", n_boot=500)
    return c.save()


def test_a_build_folder_gives_each_lesson_on_each_corpus(tmp_path):
    stage = tmp_path / "stage"
    _save(stage, "05_map_reduce_answering", "verdict_global_search", [1.0] * 24, [0.0] * 24)  # method ahead
    checks = tmp_path / "build" / "checks"
    checks.mkdir(parents=True)
    shutil.copy(stage / "05_map_reduce_answering.json", checks / "05_map_reduce_answering.factbook.json")
    rows = {(r.lesson, r.corpus): r for r in verdicts(checks)}
    assert len(rows) == 2 * len(LESSONS)
    assert rows[("global_search", "factbook")].verdict == "supported" and rows[("global_search", "factbook")].n == 24
    assert rows[("global_search", "world")].verdict == "not measured"
    assert {r.verdict for k, r in rows.items() if k[0] != "global_search"} == {"not measured"}


def test_per_corpus_folders_and_a_contradicted_lesson(tmp_path):
    _save(tmp_path / "w", "08_local_search", "verdict_local_search", [0.0] * 24, [1.0] * 24)
    rows = {r.lesson: r for r in verdicts({"world": tmp_path / "w"})}
    assert rows["local_search"].verdict == "contradicted" and rows["local_search"].difference == -1.0


def test_a_checks_file_without_its_lesson_is_an_error(tmp_path):
    _save(tmp_path / "w", "06_personalized_pagerank", "something_else", [1.0, 0.0], [0.0, 0.0])
    try:
        verdicts({"world": tmp_path / "w"})
    except ValueError as e:
        assert "verdict_ppr" in str(e)
    else:
        raise AssertionError("a checks file without its lesson's check was read as not measured")


def test_the_command_prints_the_table_and_refuses_a_folder_without_checks(tmp_path, capsys):
    (tmp_path / "checks").mkdir()
    assert main(["verdicts", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("| not measured |") == 2 * len(LESSONS)
    assert main(["verdicts", str(tmp_path / "nowhere")]) == 2
    assert "no checks/ folder" in capsys.readouterr().err


def test_a_recorded_model_build_is_shown_beside_the_stand_in(tmp_path, capsys):
    """``cookbook verdicts BUILD`` with ``BUILD-recorded`` beside it (or ``--recorded``): one column per backend,
    each lesson's verdict read from its own build."""
    for build, (a, b) in (("build", ([1.0] * 24, [0.0] * 24)), ("build-recorded", ([0.0] * 24, [1.0] * 24))):
        stage = tmp_path / f"{build}-stage"
        _save(stage, "05_map_reduce_answering", "verdict_global_search", a, b)
        (tmp_path / build / "checks").mkdir(parents=True)
        shutil.copy(stage / "05_map_reduce_answering.json",
                    tmp_path / build / "checks" / "05_map_reduce_answering.world.json")
    assert main(["verdicts", str(tmp_path / "build")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"| lesson | corpus | stand-in | recorded model ({tmp_path / 'build-recorded'}) |"
    row = next(x for x in lines if x.startswith(f"| {LESSONS['global_search'][0]} | world |"))
    stand_in, recorded = row.split(" | ")[2:4]
    assert stand_in.startswith("supported, +1.000") and recorded.startswith("contradicted, -1.000")
    assert main(["verdicts", str(tmp_path / "build"), "--recorded", str(tmp_path / "nowhere")]) == 2
    shutil.rmtree(tmp_path / "build-recorded")
    assert main(["verdicts", str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| lesson | corpus | verdict |") and "recorded model" not in out
