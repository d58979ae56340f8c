"""The verdict table read from a build (``<out>/checks/<notebook>.<corpus>.json``) and from per-corpus folders;
the ``cookbook verdicts`` command prints it."""

import shutil

import pytest

from cookbook.__main__ import main
from cookbook.harness.checks import Checks
from cookbook.harness.verdicts import LESSONS, markdown_table, verdicts

# A method ahead by 1.0 on average, by 0.5 or 1.5 a question: a CI of width 0 (one difference repeated) would read
# "the same difference on every unit", not a verdict.
AHEAD, BEHIND = ([1.0] * 24, [0.5, -0.5] * 12), ([0.5, -0.5] * 12, [1.0] * 24)


def _save(folder, stem, name, a, b):
    c = Checks(stem, results_dir=folder)
    c.compare(name, a, b, "method − baseline", n_boot=500)
    return c.save()


def test_a_build_folder_gives_each_lesson_on_each_corpus(tmp_path):
    stage = tmp_path / "stage"
    _save(stage, "05_map_reduce_answering", "verdict_global_search", *AHEAD)  # method ahead
    checks = tmp_path / "build" / "checks"
    checks.mkdir(parents=True)
    shutil.copy(stage / "05_map_reduce_answering.json", checks / "05_map_reduce_answering.factbook.json")
    rows = {(r.lesson, r.corpus): r for r in verdicts(checks)}
    assert len(rows) == 2 * len(LESSONS)
    assert rows[("global_search", "factbook")].verdict == "supported" and rows[("global_search", "factbook")].n == 24
    assert rows[("global_search", "world")].verdict == "not measured"
    assert {r.verdict for k, r in rows.items() if k[0] != "global_search"} == {"not measured"}


def test_per_corpus_folders_and_a_contradicted_lesson(tmp_path):
    _save(tmp_path / "w", "08_local_search", "verdict_local_search", *BEHIND)
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


def test_a_row_states_levels_mde_and_what_it_cannot_show(tmp_path):
    c = Checks("05_map_reduce_answering", results_dir=tmp_path / "f")
    c.compare("verdict_global_search", [0.1, 0.15, 0.2, 0.1], [0.1, 0.1, 0.1, 0.15], hypothesis=True, n_boot=500)
    c.save()
    c = Checks("02_graph_extraction", results_dir=tmp_path / "f")
    c.compare("verdict_extraction", [0.5, 0.5], [0.5, 0.5], hypothesis=True, n_boot=200)
    c.save()
    rows = {r.lesson: r for r in verdicts({"world": tmp_path / "f"})}
    g = rows["global_search"]
    assert (g.method_level, g.baseline_level) == pytest.approx((0.1375, 0.1125)) and g.caveat.startswith("floor")
    assert g.mde > abs(g.difference)  # four questions: only a large effect could have been seen
    e = rows["extraction"]
    # the world's extraction design is fixed in advance (DESIGN_CAVEATS): its verdict word says so, whatever the CI
    assert e.verdict == "by construction" and e.caveat.startswith("by construction") and e.mde == 0.0
    table = markdown_table(list(rows.values()))
    assert "| world | by construction | 2 |" in table and "| MDE |" in table.splitlines()[0]


def test_a_lesson_decided_on_fewer_than_the_minimum_reads_too_few_to_decide(tmp_path):
    """A CI over fewer than MIN_QUESTIONS questions is shown, never concluded: 12 clear wins read "too few to decide",
    the same wins over MIN_QUESTIONS questions "supported" (the world's global lesson had read "contradicted" over
    18)."""
    from cookbook.harness.verdicts import MIN_QUESTIONS

    for n, want in ((12, "too few to decide"), (MIN_QUESTIONS, "supported")):
        c = Checks("05_map_reduce_answering", results_dir=tmp_path / str(n))
        c.compare("verdict_global_search", [0.9, 0.8] * (n // 2), [0.1, 0.2] * (n // 2), hypothesis=True,
                  n_boot=200)
        c.save()
        (row,) = [r for r in verdicts({"world": tmp_path / str(n)}) if r.lesson == "global_search"]
        assert row.verdict == want and row.n == n and row.ci_low > 0


def test_the_command_renders_the_readme_between_its_markers_and_only_there(tmp_path, capsys):
    _save(tmp_path / "checks", "06_personalized_pagerank", "verdict_ppr", [1.0, 0.5, 1.0], [0.5, 0.5, 0.0])
    for p in (tmp_path / "checks").iterdir():
        p.rename(p.with_name(p.stem + ".world.json"))
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- verdicts:start -->\nstale\n<!-- verdicts:end -->\nrest\n", encoding="utf-8")
    assert main(["verdicts", str(tmp_path), "--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "stale" not in text and text.startswith("intro\n") and text.endswith("rest\n") and "| 3 |" in text
    (tmp_path / "plain.md").write_text("no markers", encoding="utf-8")
    assert main(["verdicts", str(tmp_path), "--readme", str(tmp_path / "plain.md")]) == 2
    assert "no <!-- verdicts:start -->" in capsys.readouterr().err


def test_a_recorded_model_build_is_shown_beside_the_stand_in(tmp_path, capsys):
    """``cookbook verdicts BUILD`` with ``BUILD-recorded`` beside it (or ``--recorded``): one column per backend,
    each lesson's verdict read from its own build."""
    for build, (a, b) in (("build", AHEAD), ("build-recorded", BEHIND)):
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


def test_notebook_00_shows_a_recorded_build_beside_its_own(tmp_path):
    """00's verdict cell, run on a build staged by cookbook run (``<out>/.run-*/checks``) with ``<out>-recorded``
    beside it: the table has a column per backend; without the recorded build, the plain table."""
    from pathlib import Path

    import nbformat

    from cookbook import paths
    from cookbook.harness import verdicts as verdicts_module

    cell = next(c.source for c in nbformat.read(str(paths.notebooks_dir() / "00_quickstart.ipynb"), as_version=4).cells
                if "build-recorded" in c.source)
    for checks, a, b in ((tmp_path / "build" / ".run-1-1" / "checks", [1.0] * 24, [0.0] * 24),
                         (tmp_path / "build-recorded" / "checks", [0.0] * 24, [1.0] * 24)):
        _save(tmp_path / "stage" / checks.parent.name, "05_map_reduce_answering", "verdict_global_search", a, b)
        checks.mkdir(parents=True)
        shutil.copy(tmp_path / "stage" / checks.parent.name / "05_map_reduce_answering.json",
                    checks / "05_map_reduce_answering.world.json")
    shown = []
    ns = {"BUILD_CHECKS": str(tmp_path / "build" / ".run-1-1" / "checks"), "IN_COLAB": False, "Path": Path,
          "paths": paths, "verdicts": verdicts_module, "display": shown.append, "Markdown": str}
    exec(compile(cell, "00-verdicts", "exec"), dict(ns))
    assert shown[0].splitlines()[0] == "| lesson | corpus | stand-in | recorded model |"
    shutil.rmtree(tmp_path / "build-recorded")
    exec(compile(cell, "00-verdicts", "exec"), dict(ns))
    assert "recorded model" not in shown[1] and shown[1].startswith("| lesson | corpus |")


def test_the_readme_table_is_rendered_by_markdown_table():
    """The README's verdict block is markdown_table's output (its header and one row per lesson and corpus, every
    row with every column), not a table typed by hand: `cookbook verdicts build --readme README.md` writes it."""
    from cookbook.paths import repo_root

    text = (repo_root() / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- verdicts:start -->\n", 1)[1].split("<!-- verdicts:end -->", 1)[0].strip().splitlines()
    assert block[:2] == markdown_table([]).splitlines()
    rows = block[2:]
    assert len(rows) == 2 * len(LESSONS)
    header_cells = block[0].count(" | ")
    assert all(r.count(" | ") >= header_cells for r in rows)


def _code_cells(stem):
    import re
    from pathlib import Path

    import nbformat
    nb = nbformat.read(Path(__file__).resolve().parents[1] / "notebooks" / f"{stem}.ipynb", as_version=4)
    section = ""
    for c in nb.cells:
        if c.cell_type == "markdown" and re.match(r"##\s", c.source):
            section = c.source.splitlines()[0]
        elif c.cell_type == "code":
            yield section, c.source


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_every_lesson_prints_its_minimum_detectable_effect(lesson):
    """Issue 33 (second review): 02 and 06 never printed their lesson's MDE (the README and 00 did). Each lesson's
    wrap-up prints it, and 02 and 06 print it too where the lesson is decided (05, 07 and 08 before them)."""
    import re
    stem = LESSONS[lesson][1]
    cells = list(_code_cells(stem))
    wrap_up = [src for s, src in cells if s.startswith("## Wrap-up") or "Wrap-up" in src or "WRAP_UP" in src]
    assert wrap_up and any(re.search(r"\bmde\b", src) for src in wrap_up), stem
    if stem[:2] in ("02", "06"):
        i = next(i for i, (_, src) in enumerate(cells) if "hypothesis=True" in src)
        assert re.search(r"\bmde\b", cells[i][1]), stem


def test_the_index_detail_and_the_table_agree_on_too_few():
    """The index's detail column reads a lesson over fewer than MIN_QUESTIONS questions as the table does ("too few
    to decide"; it had printed "contradicted" beside its own "too few" caveat)."""
    from cookbook.harness import checks as checks_module
    from cookbook.run import render, runner

    c = Checks("05_map_reduce_answering", results_dir=None)
    c.compare("verdict_global_search", [0.9, 0.8] * 6, [0.1, 0.2] * 6, hypothesis=True, n_boot=200)
    record = checks_module.Record("05_map_reduce_answering", True, c.results)
    lines = render.detail(runner.NotebookResult("05_map_reduce_answering", "ok", 1.0), record)
    assert lines[0].startswith("lesson — ") and ": too few to decide, " in lines[0] and " over 12" in lines[0]
