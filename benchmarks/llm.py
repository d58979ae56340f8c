"""Notebook 05's map step against an OpenAI-compatible endpoint with latency: wall time at concurrency 1 vs 8
(and 4, 16), as the notebook asks (one question after another, each question's batches concurrently) and with
every question's batches in one pool, median of 3 runs each; then the same pooled run through the on-disk
response cache, cold and then warm. The endpoint is tests/fake_openai.py's in-process server answering with
the extractive backend after a fixed delay, so the numbers measure how calls overlap, not a model.

    python benchmarks/llm.py [--quick] [--out build/bench] [--latency 0.2]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.fake_openai

from tests.fake_openai import FakeServer  # noqa: E402

from cookbook import llm  # noqa: E402
from cookbook.data.corpus import load_corpus  # noqa: E402
from cookbook.harness import bench  # noqa: E402
from cookbook.index import graph, hierarchy, reports  # noqa: E402
from cookbook.query import global_search as answer  # noqa: E402

SEED = 7
QUESTIONS = {"quick": 70, "full": 200}  # global questions mapped per run (their first ones)
KEY_ENV = "COOKBOOK_BENCH_FAKE_KEY"  # the fake server takes any key; this one is a placeholder, not a secret


def level_reports(scale: str):
    """Notebook 05's reports: the world's corpus graph, hierarchical Leiden, extractive reports at budget 800,
    the finest level."""
    corpus = load_corpus("world", scale, seed=SEED)
    mentions, g = graph.corpus_graph(corpus)
    hier = hierarchy.hierarchical_leiden(g, max_cluster_size=10, seed=SEED)
    out = reports.community_reports(hier, g, corpus.documents, mentions, llm.ExtractiveLLM(), budget=800)
    return corpus, out[len(hier.levels) - 1]


def map_step(questions, level, backend, concurrency, pooled=False):
    """Notebook 05's map step (global_search's map budget 1500 and seed) for each of ``questions``: one
    question after another, a question's batches ``concurrency`` at a time, as the notebook asks them; or,
    ``pooled``, every question's batches in one pool. Returns (seconds, map outputs in question order)."""
    t0 = time.perf_counter()
    work = [(q.text, b) for q in questions for b in answer.map_batches(level, 1500, SEED)]
    if pooled:
        mapped = llm.ordered_map(lambda w: answer.map_step(*w, backend), work, concurrency=concurrency)
    else:
        mapped = [m for q in questions for m in llm.ordered_map(
            lambda w: answer.map_step(*w, backend), [w for w in work if w[0] == q.text], concurrency=concurrency)]
    return time.perf_counter() - t0, mapped


def run(quick: bool, latency: float, repeats: int) -> dict:
    """Each configuration ``repeats`` times, the median wall time kept (the machine is shared)."""
    corpus, level = level_reports("ci" if quick else "class")
    # The first of the world's global questions: the wall time grows with their number, the ratios measured do not
    # (kept near the 71 / 233 the world held before its scoped families, data/README.md).
    questions = corpus.global_questions[:QUESTIONS["quick" if quick else "full"]]
    calls = sum(len(answer.map_batches(level, 1500, SEED)) for _ in questions)
    os.environ[KEY_ENV] = "fake"
    old_cache = os.environ.get("COOKBOOK_CACHE")
    times: dict[str, list[float]] = {}
    rows: dict[str, dict] = {}
    reference = None

    def record(name, seconds, points, requests, ledger=None):
        nonlocal reference
        reference = reference or points
        times.setdefault(name, []).append(seconds)
        rows[name] = {"run": name, "requests": requests, "same points": points == reference}
        if ledger is not None:
            rows[name] |= {"cache hits": ledger.hits, "tokens saved": ledger.tokens_saved}

    with FakeServer([("extractive", None)], latency=latency) as srv:
        for _ in range(repeats):
            for pooled, c in [(False, 1), (False, 4), (False, 8), (True, 4), (True, 8), (True, 16)]:
                backend = llm.OpenAICompatibleLLM("fake-model", base_url=srv.url, api_key_env=KEY_ENV,
                                                  concurrency=c)
                before = srv.n
                seconds, points = map_step(questions, level, backend, c, pooled)
                record(f"{'all questions pooled' if pooled else 'per question'}, concurrency {c}", seconds, points,
                       srv.n - before)
            with tempfile.TemporaryDirectory() as d:
                os.environ["COOKBOOK_CACHE"] = d
                for name in ("cache cold, pooled, concurrency 8", "cache warm, pooled, concurrency 8"):
                    ledger = llm.TokenLedger(llm.CachedLLM(llm.OpenAICompatibleLLM(
                        "fake-model", base_url=srv.url, api_key_env=KEY_ENV, concurrency=8)))
                    before = srv.n
                    seconds, points = map_step(questions, level, ledger, 8, pooled=True)
                    record(name, seconds, points, srv.n - before, ledger)
    if old_cache is None:
        os.environ.pop("COOKBOOK_CACHE", None)
    else:
        os.environ["COOKBOOK_CACHE"] = old_cache
    out = []
    for name, row in rows.items():
        row["seconds"] = statistics.median(times[name])
        row["speed-up"] = statistics.median(times["per question, concurrency 1"]) / row["seconds"]
        out.append(row)
        print(row, flush=True)
    return {"corpus": corpus.name, "scale": "ci" if quick else "class", "reports": len(level),
            "questions": len(questions), "map_calls": calls, "latency_s": latency, "repeats": repeats, "rows": out}


def markdown(res: dict) -> str:
    cols = ["run", "seconds", "speed-up", "requests", "same points", "cache hits", "tokens saved"]
    lines = ["| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]
    for r in res["rows"]:
        cells = [r["run"], f"{r['seconds']:.2f}", f"{r['speed-up']:.1f}×", str(r["requests"]),
                 str(r["same points"]), str(r.get("cache hits", "")), str(r.get("tokens saved", ""))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    args, out = bench.script_args(__doc__, argv, add=lambda ap: ap.add_argument(
        "--latency", type=float, default=None, help="seconds the fake endpoint takes per call (default 0.2; "
        "0.05 with --quick)"))
    latency = args.latency if args.latency is not None else (0.05 if args.quick else 0.2)
    res = run(args.quick, latency, 1 if args.quick else 3)
    res["table"] = markdown(res)
    bench.write_results(out, "llm", res)
    print(res["table"])
    return res


if __name__ == "__main__":
    main()
