"""One build holds both corpora (issue 26, item 4): each notebook that takes ``CORPUS`` runs on the world and on
the Factbook, one row, one set of files each (``<notebook>.<corpus>``); ``--only`` and ``--corpus`` replace
their rows and keep the others; ``cookbook compare`` pairs two such builds file by file; the index shows
both, every row with a detail. The notebooks are small fakes whose checks record what CORPUS they saw."""

import json
import re
import shutil

import nbformat
import pytest

from cookbook.__main__ import main
from cookbook.run import plan, render, runner
from cookbook.run.compare import compare_builds
from tests.test_runner import write_nb

# What each corpus's notebook measures: a different number per corpus, so a row holding the other corpus's
# value (or a file of one corpus under the other's name) shows.
DOCS = {"world": 3, "factbook": 5}
BODY = ('from cookbook.harness.checks import Checks\n'
        'c = Checks("{id}", results_dir=RESULTS_DIR, strict=STRICT)\n'
        'docs = {docs}[CORPUS]\n'
        'c.at_least("docs", docs, 2, "documents loaded")\n'
        'c.at_least("recall", 0.97, 0.95, "recall of gold passages")\n'
        'c.better("a_beats_b", [1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 0], labels=("A", "B"), n_boot=500)\n'
        'print("corpus", CORPUS, "docs", docs)\n'
        '_ = c.save()')


def corpus_nb(path, docs=DOCS):
    write_nb(path, [BODY.format(id=path.stem, docs=docs)])
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += '\nCORPUS = "world"  # or "factbook"'
    nbformat.write(nb, path)


@pytest.fixture
def corpus_series(tmp_path):
    d = tmp_path / "nbs"
    d.mkdir()
    corpus_nb(d / "01_a.ipynb")
    corpus_nb(d / "02_b.ipynb")
    return d


@pytest.fixture(scope="module")
def _both_corpora_build(tmp_path_factory):
    """One build of the two-notebook series on both corpora (with HTML), run once for the module: the tests
    that start from such a build copy it (and its notebooks) instead of executing four kernels each."""
    d = tmp_path_factory.mktemp("both-corpora")
    (d / "nbs").mkdir()
    corpus_nb(d / "nbs" / "01_a.ipynb")
    corpus_nb(d / "nbs" / "02_b.ipynb")
    results = runner.run(notebooks=d / "nbs", out=d / "build", scale="ci", progress=False, jobs=2)
    return d / "nbs", d / "build", results


@pytest.fixture
def built_series(_both_corpora_build, tmp_path):
    """A copy of the module's build and of its notebooks in this test's folder: (notebooks, build, results)."""
    nbs, build, results = _both_corpora_build
    return shutil.copytree(nbs, tmp_path / "nbs"), shutil.copytree(build, tmp_path / "build"), results


def rows(out):
    return [(r["notebook"], r["corpus"]) for r in json.loads((out / "summary.json").read_text())]


def index_rows(out) -> dict[str, str]:
    """Each index row's detail cell (its text), by the row's page link."""
    index = (out / "index.html").read_text()
    found = re.findall(r"<tr><td><a href=\"html/([^\"]+)\.html\">.*?<td class='detail'>(.*?)</td></tr>", index)
    return {page: re.sub(r"<[^>]+>", " ", cell).strip() for page, cell in found}


def test_a_build_holds_both_corpora_file_by_file(_both_corpora_build):
    _, out, results = _both_corpora_build
    assert [(r.notebook, r.corpus) for r in results] == rows(out) == [
        ("01_a", "world"), ("01_a", "factbook"), ("02_b", "world"), ("02_b", "factbook")]
    assert all(r.ok for r in results), [r.error for r in results]
    for r in results:
        assert r.files == f"{r.notebook}.{r.corpus}"
        record = json.loads((out / "checks" / f"{r.files}.json").read_text())
        assert record["notebook"] == r.notebook and record["checks"][0]["value"] == DOCS[r.corpus]
        executed = nbformat.read(out / "notebooks" / f"{r.files}.ipynb", as_version=4)
        printed = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
        assert f"corpus {r.corpus} docs {DOCS[r.corpus]}" in printed
        assert (out / "html" / f"{r.files}.html").exists() and (out / "html" / "checks" / f"{r.files}.html").exists()
    assert sorted(p.name for p in (out / "checks").iterdir()) == [
        "01_a.factbook.json", "01_a.world.json", "02_b.factbook.json", "02_b.world.json"]  # no per-corpus folder
    index = (out / "index.html").read_text()
    assert "4 of 4 runs passed · world: 2 notebooks · factbook: 2 notebooks" in index
    assert index.count("<td>world</td>") == 2 and index.count("<td>factbook</td>") == 2
    # the CLI's table names the corpus of each row
    table = runner.format_table(results)
    assert re.search(r"^01_a +factbook +ok", table, flags=re.MULTILINE), table


def test_only_and_corpus_replace_their_rows_and_keep_the_others(built_series, capfd):
    corpus_series, out, _ = built_series
    before = {(r["notebook"], r["corpus"]): r for r in json.loads((out / "summary.json").read_text())}
    pages = {p.name: p.read_bytes() for p in (out / "html").glob("*.html")}
    corpus_nb(corpus_series / "01_a.ipynb", docs={"world": 3, "factbook": 8})  # the Factbook's count changes
    assert main(["run", "--notebooks", str(corpus_series), "--only", "01", "--corpus", "factbook", "--scale", "ci",
                 "--out", str(out), "--quiet"]) == 0
    capfd.readouterr()
    after = {(r["notebook"], r["corpus"]): r for r in json.loads((out / "summary.json").read_text())}
    assert list(after) == list(before)  # still four rows, in series order
    assert after["01_a", "factbook"]["finished_at"] >= before["01_a", "factbook"]["finished_at"]
    assert json.loads((out / "checks" / "01_a.factbook.json").read_text())["checks"][0]["value"] == 8
    for key in [("01_a", "world"), ("02_b", "world"), ("02_b", "factbook")]:
        assert after[key] == before[key], key  # kept as they were, with their own files
        name = f"{key[0]}.{key[1]}"
        assert (out / "html" / f"{name}.html").read_bytes() == pages[f"{name}.html"]
        assert json.loads((out / "checks" / f"{name}.json").read_text())["checks"][0]["value"] in (3, 5)
    # --only without --corpus reruns that notebook on both corpora; the other notebook's rows stay
    runner.run(["02"], notebooks=corpus_series, out=out, scale="ci", progress=False, jobs=2)
    again = {(r["notebook"], r["corpus"]): r for r in json.loads((out / "summary.json").read_text())}
    assert again["01_a", "factbook"] == after["01_a", "factbook"] and again["01_a", "world"] == after["01_a", "world"]
    assert again["02_b", "world"]["finished_at"] >= after["02_b", "world"]["finished_at"]
    # a full run of one corpus replaces the build: that corpus's rows only
    runner.run(notebooks=corpus_series, out=out, scale="ci", progress=False, corpora=["world"])
    assert rows(out) == [("01_a", "world"), ("02_b", "world")]
    assert sorted(p.name for p in (out / "notebooks").iterdir()) == ["01_a.world.ipynb", "02_b.world.ipynb"]


def test_compare_pairs_both_corpora_file_by_file(built_series, tmp_path):
    """The module's build against a second, separate run of the same notebooks."""
    corpus_series, a, _ = built_series
    b = tmp_path / "b"
    runner.run(notebooks=corpus_series, out=b, scale="ci", progress=False, html_report=False, jobs=2)
    same, report = compare_builds(a, b)
    assert same, report
    assert [line.split()[0] for line in report[:-1]] == ["01_a.factbook", "01_a.world", "02_b.factbook", "02_b.world"]
    # the Factbook's result of one notebook changes: that file pair, and only it, differs
    corpus_nb(corpus_series / "02_b.ipynb", docs={"world": 3, "factbook": 9})
    runner.run(["02"], notebooks=corpus_series, out=b, scale="ci", progress=False, html_report=False,
               corpora=["factbook"])
    same, report = compare_builds(a, b)
    verdicts = {line.split()[0]: line.split()[1] for line in report if not line.startswith(" ")
                and len(line.split()) == 2}
    assert not same and verdicts == {"01_a.factbook": "identical", "01_a.world": "identical",
                                     "02_b.factbook": "DIFFERENT", "02_b.world": "identical"}, report
    assert main(["compare", str(a), str(b)]) == 1


def test_every_index_row_has_a_detail(corpus_series, tmp_path):
    """An ok row names its claim (conclusion, effect, CI) and its closest call; a failed check, an error and a
    notebook without checks say why, each on its own row of either corpus."""
    corpus_nb(corpus_series / "03_fails_on_factbook.ipynb", docs={"world": 3, "factbook": 1})
    write_nb(corpus_series / "04_raises.ipynb", ["x = 1", "raise RuntimeError('boom in cell two')"])
    raises = nbformat.read(corpus_series / "04_raises.ipynb", as_version=4)
    raises.cells.append(nbformat.v4.new_markdown_cell("# 04 · Raises\n\n**What you'll learn**\n- what a banner is not"))
    nbformat.write(raises, corpus_series / "04_raises.ipynb")
    write_nb(corpus_series / "05_no_checks.ipynb", ["x = 1"])
    out = tmp_path / "build"
    runner.run(notebooks=corpus_series, out=out, scale="ci", progress=False, jobs=2)
    details = index_rows(out)
    assert set(details) == {"01_a.world", "01_a.factbook", "02_b.world", "02_b.factbook",
                            "03_fails_on_factbook.world", "03_fails_on_factbook.factbook", "04_raises.world",
                            "05_no_checks.world"}
    assert all(details.values()), details
    for name in ("01_a.world", "02_b.factbook", "03_fails_on_factbook.world"):
        assert "a_beats_b: A better over 6 questions, +0.667 [" in details[name]
        assert "closest to its bound: recall 0.97 (&gt;= 0.95)" in details[name]
    assert details["03_fails_on_factbook.factbook"] == "failed: docs: 1, wanted &gt;= 2 — documents loaded"
    assert details["04_raises.world"] == "RuntimeError: boom in cell two (cell 2)"
    # the row of a notebook that raised is described by its own title, not papermill's error banner above it
    assert "04 · Raises — what a banner is not" in (out / "index.html").read_text()
    assert "never reached checks.save()" in details["05_no_checks.world"]


def test_corpora_and_scales_are_checked_before_any_kernel(corpus_series, tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(runner, "ensure_kernel", lambda: pytest.fail("a kernel was started"))
    paths = sorted(corpus_series.glob("*.ipynb"))
    # by default every corpus that has the scale: the Factbook has no "large"; named, it is refused
    assert {job.corpus for job in plan.plan(paths, {"SCALE": "large"})} == {"world"}
    assert [job.name for job in plan.plan(paths[:1], {"SCALE": "ci", "CORPUS": "factbook"})] == ["01_a.factbook"]
    base = ["run", "--notebooks", str(corpus_series), "--out", str(tmp_path / "x"), "--quiet"]
    for argv, words in [(["--corpus", "factbook", "--scale", "large"], "unknown factbook scale 'large'"),
                        (["--corpus", "all", "-p", "CORPUS=world"], "--corpus all and -p CORPUS=world disagree"),
                        (["--corpus", "world", "-p", "CORPUS=factbook"], "disagree"),
                        (["-p", "CORPUS=wiki"], "unknown corpus"),
                        (["--scale", "huge"], "scale 'huge'")]:
        assert main([*base, *argv]) == 2, argv
        err = capfd.readouterr().err
        assert len(err.strip().splitlines()) == 1 and words in err, (argv, err)
    assert not (tmp_path / "x").exists() or not list((tmp_path / "x").iterdir())


def test_a_row_kept_from_a_build_before_both_corpora_keeps_its_files(corpus_series, tmp_path):
    """A build written before rows named their files (``notebooks/01_a.ipynb``, no corpus in the name): an
    ``--only`` run keeps its other rows with their pages, and replaces the row it reruns."""
    out = tmp_path / "build"
    runner.run(notebooks=corpus_series, out=out, scale="ci", progress=False, corpora=["world"])
    summary = json.loads((out / "summary.json").read_text())
    for row in summary:  # rename the build's files and rows to the old scheme
        for sub, suffix in (("notebooks", ".ipynb"), ("checks", ".json"), ("html", ".html"), ("html/checks", ".html"),
                            ("html/thumbs", ".png")):
            if (out / sub / f"{row['files']}{suffix}").exists():
                (out / sub / f"{row['files']}{suffix}").rename(out / sub / f"{row['notebook']}{suffix}")
        del row["files"]
    (out / "summary.json").write_text(json.dumps(summary))
    # and its marker as builds then wrote it: the build's entries, not yet its files (they are the summary's rows')
    (out / ".cookbook-build").write_text(json.dumps({"made_by": "graphrag-cookbook", "entries": [
        "notebooks", "checks", "html", "summary.json", "index.html"]}))
    runner.run(["01"], notebooks=corpus_series, out=out, scale="ci", progress=False, corpora=["world"])
    new = json.loads((out / "summary.json").read_text())
    assert [(r["notebook"], r["corpus"], r["files"]) for r in new] == [("01_a", "world", "01_a.world"),
                                                                       ("02_b", "world", "02_b")]
    assert (out / "html" / "02_b.html").exists() and (out / "checks" / "02_b.json").exists()
    assert set(index_rows(out)) == {"01_a.world", "02_b"}


def test_detail_on_plain_data():
    """The detail's rules without a kernel: the first failure wins over an error's text; comparisons are
    capped, the claims (better) before recorded findings (compare)."""
    from cookbook.harness import checks

    c = checks.Checks("01_x", results_dir=None)
    for i in range(3):
        c.compare(f"finding_{i}", [0, 1, 0, 1], [1, 0, 1, 0], n_boot=200)
    c.better("claim", [1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], n_boot=200)
    record = checks.Record("01_x", True, c.results)
    lines = render.detail(runner.NotebookResult("01_x", "ok", 1.0), record)
    assert lines[0].startswith("claim: A better over 6 questions")
    assert lines[1].startswith("finding_0: too few to decide over 4")
    assert lines[2] == "and 2 more comparisons" and len(lines) == 3  # no numeric bound: no closest call
    c.at_most("errors", 3, 1, "errors per page")
    failed = render.detail(runner.NotebookResult("01_x", "error", 1.0, error="ChecksFailed: 01_x: failed checks"),
                           checks.Record("01_x", False, c.results))
    assert failed == ["failed: errors: 3, wanted <= 1 — errors per page"]
    assert render.detail(runner.NotebookResult("01_x", "error", 1.0, error="/home/u/x.py: boom\nmore"), None,
                         ["/home/u"]) == ["…/x.py: boom"]
