import csv
import re
from pathlib import Path

import numpy as np
import pytest

from cookbook.harness import bench

ROOT = Path(__file__).resolve().parents[1]


def test_manifest_is_deterministic_and_round_trips():
    a = bench.make_manifest("x", 100, 10, seed=3)
    assert a.to_json() == bench.make_manifest("x", 100, 10, seed=3).to_json()
    assert a.to_json() != bench.make_manifest("x", 100, 10, seed=4).to_json()
    assert bench.Manifest.from_json(a.to_json()) == a
    assert len(set(a.queries)) == 10 and len(a.cells()) == 10 * 4 * 3
    with pytest.raises(ValueError, match="n_queries"):
        bench.make_manifest("x", 5, 6)
    with pytest.raises(ValueError, match="top_ks"):
        bench.make_manifest("x", 5, 2, top_ks=(0,))


def test_run_manifest_warms_up_interleaves_and_scores():
    calls = []

    def method(name):
        def run(q, k, d):
            calls.append((name, q, k, d))
            return name
        return run

    methods = {m: method(m) for m in "abc"}
    man = bench.make_manifest("t", 50, 3, seed=0, top_ks=(1, 2), depths=(0,))
    rows = bench.run_manifest(man, methods, lambda q, k, d, out: {"echo": out == "a"})
    assert calls[:3] == [(m, *man.cells()[0]) for m in "abc"]  # one untimed warm-up each
    firsts = [calls[3 + 3 * i][0] for i in range(len(man.cells()))]
    assert firsts == ["a", "b", "c", "a", "b", "c"]  # rotating order
    assert len(rows) == 3 * len(man.cells()) and all(r["latency_s"] >= 0 for r in rows)
    assert all(r["echo"] == (r["method"] == "a") for r in rows)
    agg = bench.aggregate(rows)
    assert agg["a"]["echo"] == {"mean": 1.0, "std": 0.0} and agg["b"]["latency_s"]["n"] == len(man.cells())


def test_summaries_tables_and_slopes(tmp_path):
    s = bench.summarize([1, 2, 3, 4, 100])
    assert (s["min"], s["p50"], s["max"], s["n"]) == (1, 3, 100, 5)
    assert s["p95"] == pytest.approx(np.percentile([1, 2, 3, 4, 100], 95))
    t = bench.ratio_table({"slow": {"p50": 0.2}, "fast": {"p50": 0.05}}, baseline="slow")
    assert "| fast | 50.00 | 4.0× |" in t
    with pytest.raises(KeyError, match="baseline"):
        bench.ratio_table({"a": {"p50": 1}}, baseline="b")
    assert bench.loglog_slope([10, 100, 1000], [1, 100, 10000]) == pytest.approx(2.0)
    path = bench.write_csv([{"a": 1, "b": 2}, {"a": 3, "c": 4}], tmp_path / "x.csv")
    assert list(csv.DictReader(open(path))) == [{"a": "1", "b": "2", "c": ""}, {"a": "3", "b": "", "c": "4"}]
    t, out = bench.best_of(sorted, [3, 1, 2], repeat=2)
    assert out == [1, 2, 3] and t >= 0


@pytest.mark.background("bench-quick")
def test_quick_benchmarks_run_and_write_the_summary(background):
    """``benchmarks/run_all.py --quick``, run side by side with the session (conftest.BACKGROUND)."""
    run = background("bench-quick")
    tmp_path, r = run.folder, run.result()
    assert r.returncode == 0, r.stderr[-2000:]
    summary = (tmp_path / "summary.md").read_text()
    for section in ("Personalized PageRank", "BFS", "Community detection", "Scaling", "Retrieval", "HippoRAG at scale"):
        assert f"## {section}" in summary
    for method in ("BM25", "dense", "RRF(BM25, dense)", "HippoRAG dense-seeded", "HippoRAG BM25-seeded",
                   "PPR entities only"):
        assert re.search(rf"\| 2 \| \d+ \| {re.escape(method)} \| [01]\.\d{{3}} \|", summary), method  # 2-hop recall@5
    assert "Same top-5 ids as legacy: dense-seeded 20/20, BM25-seeded 20/20" in summary
    for f in ("ppr.json", "engines.png", "sweeps.png", "retrieval-world-class.csv", "manifest-wordnet.json"):
        assert (tmp_path / f).exists(), f
