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


def test_prerequisites_are_the_notebooks_own():
    """The guide's table of what each notebook builds on is the notebook header's *Prerequisites* line (the guide
    had 03 on 01 alone and 09 on 05–07, while the headers said 01–02 and 06–07)."""
    rows = dict(re.findall(r"(?m)^\| (\d\d) \| (none|\d\d(?:, \d\d)*) \|", guide()))
    assert set(rows) == set(NOTEBOOKS) - {"00"}, f"the prerequisites table lists {sorted(rows)}"
    for nn, listed in rows.items():
        header = re.search(r"\*\*Prerequisites\*\* ([^*]*)", cells(nn)[0].source)
        assert header, f"notebook {nn} has no Prerequisites line"
        text = re.split(r"\.\s", header.group(1))[0]  # the line's first sentence names the notebooks
        stated = set()
        for a, b in re.findall(r"\b(\d\d)(?:–(\d\d))?\b", text):
            stated |= {f"{i:02d}" for i in range(int(a), int(b or a) + 1)}
        assert stated == (set() if listed == "none" else set(listed.split(", "))), \
            f"{nn}: the guide lists {listed}, its header says {text.strip()!r}"


def recorded_comparisons() -> set[str]:
    """Names the notebooks record with ``checks.compare`` (literal names only): comparisons whose outcome depends
    on the run."""
    return {name for nn in NOTEBOOKS for name in re.findall(r'checks\.compare\(\s*f?"([a-z0-9_]+)"', source(nn))}


OUTCOME = re.compile(r"\b(better|worse|wins?|loses|more often|less often|beats?|outperforms?|saves|higher|lower)\b")


def test_the_guide_states_no_outcome_of_a_recorded_comparison():
    """A sentence naming a recorded comparison asks about it or says how to read it; it never states which side
    came out ahead (the guide said "FastGraphRAG's reports name … more often" and "dynamic selection saves tokens",
    neither of which every build shows)."""
    names = recorded_comparisons()
    assert {"typed_vs_fast_report_names", "verdict_ppr"} <= names
    for sentence in re.split(r"(?<=[.?!])\s+(?=[A-Z(-])", re.sub(r"\s+", " ", guide())):
        named = [n for n in re.findall(r"`([a-z0-9_]+)`", sentence) if n in names]
        if named and not sentence.rstrip(")").endswith("?"):
            assert not OUTCOME.search(sentence), f"the guide states an outcome of {named}: {sentence!r}"


def test_no_setting_is_chosen_on_the_test_half():
    """Choosing a baseline or a setting on the test half would be a methods error to teach: the guide never says so,
    and notebook 06 picks its strongest baselines from the dev half, overall and per hop count (the guide said
    "chosen per hop count on the test half")."""
    assert not re.search(r"(?:chosen|tuned|picked|selected)(?: per hop count)? on the test half",
                         re.sub(r"\s+", " ", guide()))
    assert re.search(r"strongest = stats\.best_on_dev\(\{b: recall\[b\] for b in BASELINES\}, dev_rows\)", source("06"))
    # per hop count too, the baseline comes from that hop count's dev questions (never the test half's)
    assert re.search(r"stats\.best_on_dev\(\{b: rec\[b\] for b in BASELINES\}, part\[\"dev\"\] & \(hop_of == h\)\)",
                     source("06"))
    session6 = next(t for t, nbs in sessions() if "06" in nbs)
    assert "chosen on the dev half, over all hop counts" in re.sub(r"\s+", " ", session6)


def test_session_minutes_fill_the_session_and_leave_time_for_the_exercises():
    """Each session's lecture, lab and discussion (or synthesis) add up to its 90 minutes; the lab gives at least ten
    minutes to each exercise of its notebooks, and where that and three minutes a section do not fit, the timing
    says which sections are set as reading (05, 07 and 08 had 45-50 minute labs for up to nine sections and the
    exercises, with nothing set as reading)."""
    for text, _ in sessions():
        timing = " ".join(re.search(r"(?s)\*\*Timing\*\*(.+?)\n\n", text).group(1).split())
        minutes = [int(m) for m in re.findall(r"(?:lecture|lab|discussion|synthesis) (\d+) min", timing)]
        assert sum(minutes) == 90, f"{text.splitlines()[0]}: {minutes} add up to {sum(minutes)}"
        lab = int(re.search(r"lab (\d+) min", timing).group(1))
        n_exercises = len(re.findall(EXERCISE_ROW, text))
        assert lab >= 10 * n_exercises, f"{text.splitlines()[0]}: {lab} min of lab for {n_exercises} exercises"
        n_sections = len(re.findall(r"§\d+", re.search(r"(?s)\*\*Sections\*\*(.+?)\n\n", text).group(1)))
        if lab < 10 * n_exercises + 3 * n_sections:
            assert "reading" in timing, f"{text.splitlines()[0]}: {n_sections} sections and {n_exercises} exercises " \
                                        f"in {lab} min of lab, and no section set as reading"
