"""The instructor's guide (docs/teaching.md) holds to the repository: every notebook file, numbered section, exercise
(id, number and kind, as the notebooks name them), saved check, lesson and glossary entry it names exists where it
says; its runtimes are the README's runtime column; its prose names nothing the corpora lack and types no result;
README.md links it. A rename in a notebook, a new exercise or a new README runtime fails here until the guide
follows."""

import re
from functools import cache
from pathlib import Path

import nbformat
import pytest

from cookbook.harness.exercises import EXERCISES
from cookbook.harness.verdicts import LESSONS

from . import test_prose

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "teaching.md"
NOTEBOOKS = {p.stem[:2]: p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
# The guide's own headings and labels: ordinary words of a lesson plan, not names of the corpora.
GUIDE_WORDS = {"Adopting", "Conflicts", "Discussion", "Exercises", "Glossary", "Goals", "Notebooks", "Runtime",
               "Sections", "Session", "Teaching", "Timing", "Take-home", "Cookbook", "Determinism", "One", "Open",
               "Colab's", "GitHub", "Actions"}
# A row of a session's exercise table: number, id, kind, what it practises.
EXERCISE_ROW = r"(?m)^\| (\d\d\.\d) \| `(\d\d\.[a-z_]+)` \| (code|predict) \| (.+) \|$"


@cache
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


@cache
def cells(nn: str) -> tuple:
    return tuple(nbformat.read(NOTEBOOKS[nn], as_version=4).cells)


def source(nn: str) -> str:
    return "\n".join(c.source for c in cells(nn))


def blocks() -> list[tuple[str, set[str]]]:
    """The guide cut at its ``## `` headings: (text, the notebooks the block is about). A session block is about
    the notebooks of its **Notebooks** line; any other block about every notebook."""
    out = []
    for text in re.split(r"(?m)^(?=## )", guide()):
        line = re.search(r"(?m)^\*\*Notebooks\*\* (.+)$", text)
        nbs = set(re.findall(r"`(\d\d)_[a-z_]+\.ipynb`", line.group(1))) if line else set(NOTEBOOKS)
        out.append((text, nbs))
    return out


def sessions() -> list[tuple[str, set[str]]]:
    return [(t, nbs) for t, nbs in blocks() if t.startswith("## Session ")]


def exercise_numbers() -> dict[str, str]:
    """Exercise id → its number as the notebook names it: the first "Exercise NN.M" or "(NN.M)" of the markdown
    cell nearest above the cell that checks it."""
    out = {}
    for nn in NOTEBOOKS:
        last_md = ""
        for c in cells(nn):
            if c.cell_type == "markdown":
                last_md = c.source
                continue
            for ex_id in re.findall(r'exercises\.check\("([^"]+)"', c.source):
                m = re.search(r"(?:Exercise |\()(\d\d\.\d)\b", last_md)
                out[ex_id] = m.group(1) if m else None
    return out


def test_notebook_files_named_exist():
    named = set(re.findall(r"\b(\d\d_[a-z_]+\.ipynb)\b", guide()))
    assert named, "the guide names no notebook file"
    missing = sorted(n for n in named if not (ROOT / "notebooks" / n).exists())
    assert not missing, f"docs/teaching.md names notebooks that do not exist: {missing}"


def test_twelve_sessions_cover_every_notebook():
    found = sessions()
    assert len(found) == 12, f"expected twelve sessions, found {len(found)}"
    covered = set().union(*(nbs for _, nbs in found))
    assert covered == set(NOTEBOOKS), f"sessions cover {sorted(covered)}, the series has {sorted(NOTEBOOKS)}"
    for text, _ in found:
        for label in ("**Goals**", "**Sections**", "**Timing**", "**Discussion**", "**Exercises**",
                      "**Take-home project**"):
            assert label in text, f"{text.splitlines()[0]} lacks {label}"
        assert re.search(r"lecture \d+ min", text) and re.search(r"lab \d+ min", text), \
            f"{text.splitlines()[0]}: no lecture and lab minutes"


def test_sections_named_exist_in_their_notebook():
    refs = re.findall(r"\b(\d\d) §(\d+)(?: \*([^*]+)\*)?", guide())
    assert refs, "the guide names no notebook section"
    for nn, number, title in refs:
        assert nn in NOTEBOOKS, f"§{number} of notebook {nn}, which does not exist"
        headings = [line[3:].strip() for c in cells(nn) if c.cell_type == "markdown"
                    for line in c.source.splitlines() if line.startswith("## ")]
        heading = next((h for h in headings if h.startswith(f"{number}. ")), None)
        assert heading, f"notebook {nn} has no section {number} (its sections: {headings})"
        title = " ".join(title.split())  # a title may wrap across lines in the guide
        if title:
            assert heading[len(number) + 2:].lower().startswith(title.lower()), \
                f"{nn} §{number} is {heading!r}, the guide calls it {title!r}"


def test_exercises_are_named_as_the_notebooks_name_them():
    named = set(re.findall(r"`(\d\d\.[a-z_]+)`", guide()))
    unknown = sorted(named - set(EXERCISES))
    assert not unknown, f"docs/teaching.md names exercises that do not exist: {unknown}"
    rows = re.findall(EXERCISE_ROW, guide())
    listed = {ex_id for _, ex_id, _, _ in rows}
    assert listed == set(EXERCISES), f"exercise tables miss {sorted(set(EXERCISES) - listed)}"
    numbers = exercise_numbers()
    for number, ex_id, kind, practises in rows:
        got = numbers.get(ex_id)  # None: no notebook checks it
        assert got == number, f"{ex_id}: the guide numbers it {number}, its notebook {got}"
        assert (kind == "predict") == number.endswith(".3"), f"{ex_id} ({number}) is not a {kind} exercise"
        assert practises.strip(), f"{ex_id}: say what it practises"
    for text, nbs in sessions():
        for _, ex_id, _, _ in re.findall(EXERCISE_ROW, text):
            assert ex_id[:2] in nbs, f"{ex_id} is listed in a session about notebooks {sorted(nbs)}"


def test_checks_and_lessons_named_exist_where_the_guide_says():
    cited = 0
    for text, nbs in blocks():
        for group in re.findall(r"\bchecks? ((?:`[a-z0-9_]+`(?:,? (?:and )?)?)+)", text):
            for name in re.findall(r"`([a-z0-9_]+)`", group):
                cited += 1
                assert any(f'"{name}"' in source(nn) for nn in nbs), \
                    f"check {name!r} is recorded by none of notebooks {sorted(nbs)}"
        for lesson in re.findall(r"\blesson `([a-z_]+)`", text):
            assert lesson in LESSONS, f"lesson {lesson!r} is not one of {sorted(LESSONS)}"
            assert LESSONS[lesson][1][:2] in nbs, f"lesson {lesson!r} is decided in {LESSONS[lesson][1]}, " \
                                                  f"not in notebooks {sorted(nbs)}"
    assert cited, "the guide cites no saved check"


def readme_runtimes() -> dict[str, str]:
    out = {}
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.search(r"\]\(notebooks/(\d\d)_[a-z_]+\.ipynb\)", line)
        if m and line.startswith("|"):
            out[m.group(1)] = line.rstrip(" |").rsplit("|", 1)[1].strip()
    return out


def test_runtimes_are_the_readmes():
    readme = readme_runtimes()
    assert set(readme) == set(NOTEBOOKS), f"README's runtime column covers {sorted(readme)}"
    stated = re.findall(r"\b(\d\d) · (\d+ s \(world\), \d+ s \(Factbook\))", guide())
    assert sorted(nn for nn, _ in stated) == sorted(NOTEBOOKS), "state each notebook's runtime once"
    wrong = {nn: (t, readme[nn]) for nn, t in stated if t != readme[nn]}
    assert not wrong, f"runtimes differ from the README (guide, README): {wrong}"


def glossary() -> list[tuple[str, str, list[str], list[str]]]:
    """(symbol, concept, code names, notebooks) per row of the glossary table."""
    part = guide().split("## Glossary", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in part.splitlines():
        cols = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cols) == 4 and cols[0] not in ("symbol", "---"):
            rows.append((cols[0], cols[1], re.findall(r"`([^`]+)`", cols[2]), re.findall(r"\d\d", cols[3])))
    return rows


def test_glossary_has_one_symbol_per_concept_found_in_its_notebooks():
    rows = glossary()
    assert len(rows) >= 20, f"a glossary of {len(rows)} rows"
    symbols = [s for s, *_ in rows]
    twice = sorted({s for s in symbols if symbols.count(s) > 1})
    assert not twice, f"a symbol listed twice: {twice}"
    for symbol, _, code, nbs in rows:
        assert nbs, f"{symbol}: name the notebooks that use it"
        for nn in nbs:
            assert nn in NOTEBOOKS, f"glossary: {symbol} is used in notebook {nn}, which does not exist"
            text = source(nn)
            # A code name, or a symbol of two or more characters, as a word of its own (K is not the K of "TASK").
            found = any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) for name in code) or (
                len(symbol) > 1 and re.search(rf"(?<!\w){re.escape(symbol)}(?!\w)", text))
            assert found, f"glossary: neither {symbol!r} nor {code} occurs in notebook {nn}"


def prose() -> str:
    """The guide without code blocks, code spans and link targets (code and URLs are not prose)."""
    text = re.sub(r"(?s)```.*?```", "", guide())
    return re.sub(r"\]\([^)]*\)", "]", re.sub(r"`[^`]*`", "", text))


def test_prose_names_only_real_things_and_types_no_results(monkeypatch):
    # test_prose's rules (names of the corpora or words of the series, no hand-typed decimals), with the guide's
    # own heading words as concepts
    monkeypatch.setattr(test_prose, "CONCEPTS", test_prose.CONCEPTS | GUIDE_WORDS)
    names = test_prose.unknown_names(prose())
    assert not names, f"docs/teaching.md names what the corpora and the series lack: {names}"
    exercise_nos = set(exercise_numbers().values())  # "01.3" numbers an exercise, it is no result
    text = re.sub(r"\b\d\d\.\d\b", lambda m: "" if m.group(0) in exercise_nos else m.group(0), prose())
    numbers = test_prose.typed_numbers(text)
    assert not numbers, f"docs/teaching.md types numbers by hand (point to notebook 00's verdict table): {numbers}"


@pytest.mark.parametrize("doc", ["README.md"])
def test_the_guide_is_linked(doc):
    assert "docs/teaching.md" in (ROOT / doc).read_text(encoding="utf-8"), f"{doc} does not link docs/teaching.md"
