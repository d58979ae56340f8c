"""Issue 33, the fresh review's findings in notebooks 00, 02, 03, 04 and 06, read from the session's SCALE="ci"
build on both corpora (conftest.ci_series): each check the review found passing over nothing, against a typed
constant near its value, or beside a floor it did not name, now tests something that can fail."""

import re

import nbformat
import pytest

from cookbook.harness import checks, verdicts

CORPORA = ("world", "factbook")


def saved(ci_series, corpus, stem):
    out, run = ci_series(corpus)
    path = out / "checks" / f"{stem}.{corpus}.json"
    assert path.exists(), f"{stem} ({corpus}): no checks record ({run.stderr[-2000:]})"
    return {c.name: c for c in checks.read(path).checks}


def printed(ci_series, corpus, stem) -> str:
    """Everything the executed notebook printed."""
    out, _ = ci_series(corpus)
    nb = nbformat.read(out / "notebooks" / f"{stem}.{corpus}.ipynb", as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def on(stem):
    return pytest.mark.parametrize("corpus", [pytest.param(c, marks=pytest.mark.ci_series(c, stem)) for c in CORPORA])


@on("02_graph_extraction")
def test_02_gleaning_check_tests_units_on_both_corpora(corpus, ci_series):
    """It passed over 0 caps on the Factbook (every cap cut some answer): now its value counts the (cap, unit) pairs
    whose first answer held fewer records than its cap, and there are some on both corpora."""
    c = saved(ci_series, corpus, "02_graph_extraction")["gleaning_recovers_only_what_was_cut"]
    assert c.passed and c.value > 0 and "not applicable" not in c.message, c


@on("02_graph_extraction")
def test_02_prints_the_weakest_predicate_s_reason_and_no_ci_under_the_minimum(corpus, ci_series):
    """§5 promised a reason and printed none; §9 printed CIs over Dulce's 5 units beside "too few"."""
    text = printed(ci_series, corpus, "02_graph_extraction")
    assert re.search(r"without a record cap: reason (the answer cap|not the cap)", text), text[-3000:]
    if corpus == "world":
        assert "weakest predicate by recall on set A" in text
    dulce = text[text.index("dulce: 5 text units"):].split("(5 units are too few")[0]
    assert "no CI under the series' minimum" in dulce and "[" not in dulce, dulce


@on("03_leiden_communities")
def test_03_ingredients_compare_ami_not_raw_nmi(corpus, ci_series):
    record = saved(ci_series, corpus, "03_leiden_communities")
    if corpus == "world":
        assert "ingredients_matter" not in record  # the world has no swamping lists (03 §2)
        return
    c = record["ingredients_matter"]
    assert c.passed and "AMI" in c.message and "NMI" not in c.message.split("(")[0], c


@on("04_community_reports")
def test_04_report_comparisons_name_their_floor(corpus, ci_series):
    """Factbook typed vs FastGraphRAG report names: 0.10 vs 0.03 read 'typed-graph reports better' with no floor."""
    record = saved(ci_series, corpus, "04_community_reports")
    rows = [c for name, c in record.items() if name.startswith("typed_vs_fast_report")]
    assert len(rows) == 3
    for c in rows:
        below = max(c.mean_a, c.mean_b) < verdicts.FLOOR
        assert below == c.caveat.startswith("floor") == ("floor" in c.message), c
    quoted = record["claims_quote_their_unit"]
    assert quoted.passed and quoted.bound is None and 0 < quoted.value < 1, quoted  # a finding, no bound under 1


@on("00_quickstart")
def test_00_multihop_recall_is_held_to_a_baseline_not_a_constant(corpus, ci_series):
    record = saved(ci_series, corpus, "00_quickstart")
    c = record["multihop_recall"]
    assert c.passed and c.op == "CI low >" and c.n >= 8 and c.ci_low > 0, c
    flat = record["multihop_ppr_vs_flat"]
    assert flat.status == "RECORDED" and flat.n == c.n, flat


@on("06_personalized_pagerank")
def test_06_hop_figure_is_checked_as_drawn(corpus, ci_series):
    c = saved(ci_series, corpus, "06_personalized_pagerank")["hop_figure_readable"]
    assert c.passed, c
