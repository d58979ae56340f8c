"""Every public function of the package, called with bad input, raises a specific exception whose message
names the offending argument — never a silent wrong answer or a traceback from deep inside numpy.

The table must cover every public callable: a new one without a row (or a stated exemption) fails here."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import cookbook
from cookbook import arrays, cache, embed, llm, metrics, paths, stats, text
from cookbook import data as datasets
from cookbook.data import corpus, factbook, gazetteer, records
from cookbook.data.records import Document, Mention
from cookbook.harness import bench, checks, expansion, experiments, graph_view, judge, tradeoff, verdicts
from cookbook.harness.exercises import core as exercises_core
from cookbook.index import (
    claims,
    communities,
    extract,
    graph,
    graph_extraction,
    hierarchy,
    incremental,
    recorded,
    reports,
    resolution,
    silver,
)
from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
from cookbook.linalg import ppr, top_k
from cookbook.llm import base as llm_base
from cookbook.llm import claim_records, extractive_graph, extractive_report, json_answers, parse, prompts, tokens
from cookbook.llm.colab import ColabLLM
from cookbook.llm.ollama import OllamaLLM, ollama_base_url
from cookbook.llm.recording import read_recording
from cookbook.query import (
    basic_search,
    drift_search,
    dynamic_selection,
    hipporag,
    lazy_search,
    local_search,
    rerank,
    seeds,
)
from cookbook.query import global_search as answer
from cookbook.run import build, colab, compare, parameters, plan, runner, workers

NAN = float("nan")
A3 = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], dtype=float))
W3 = ppr.transition_matrix(A3)
GAZ = {"Ada": ["E1"]}
N2 = sp.csr_matrix(np.eye(2))
INDEX = embed.CosineIndex(np.eye(3))
TINY = datasets.make_world(scale="tiny")
GRAPH_LLM = llm.ExtractiveLLM(gazetteer=GAZ, types={"E1": "person"})
FOREIGN_FILE = Path(__import__("tempfile").mkdtemp()) / "mine.graphml"  # a file graph_view did not write
FOREIGN_FILE.write_text("<graphml>a user's own graph</graphml>")


def pg():
    ms = extract.gazetteer_mentions(TINY.documents, TINY.gazetteer())
    return hipporag.passage_graph(TINY.documents, ms, [e.id for e in TINY.entities])


HIPPO = hipporag.HippoRetriever.from_world(TINY)
XG = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",))], [])
LOCAL = local_search.local_index(XG, {"d1": "Ada."}, gazetteer=GAZ)


# (callable, args, kwargs, exception type, word the message must contain)
REPORT0 = reports.Report("R0-0", 0, 0, "t", "s", [], 1.0, [], [], 0)
CASES = [
    (datasets.make_world, ("7",), {}, TypeError, "seed"),
    (datasets.make_world, (7,), {"scale": "huge"}, ValueError, "scale"),
    (datasets.make_world, (7,), {"mixing": -0.1}, ValueError, "mixing"),
    (datasets.load_world, ("galactic",), {}, ValueError, "scale"),
    (datasets.resolve_scale, ("xl",), {}, ValueError, "scale"),
    (datasets.read_world, ("/nonexistent/world",), {}, FileNotFoundError, "world.json"),
    (datasets.save_world, (None, "/tmp/x"), {}, AttributeError, "seed"),
    (datasets.build_gazetteer, ([("E1", 5)],), {}, TypeError, "int"),
    (datasets.power_law_graph, (1, 10), {}, ValueError, "n_nodes"),
    (extract.doc_pairs, ({},), {}, ValueError, "corpus"),
    (extract.doc_pairs, (3,), {}, TypeError, "docs"),
    (extract.doc_pairs, ([("d", "a"), ("d", "b")],), {}, ValueError, "duplicate"),
    (records.doc_ids, ({},), {}, ValueError, "corpus"),
    (records.doc_ids, (3,), {}, TypeError, "docs"),
    (records.doc_ids, ([Document("d", "a", (), 0), Document("d", "b", (), 0)],), {}, ValueError, "duplicate"),
    (extract.gazetteer_mentions, ({"d": "x"}, {}), {}, ValueError, "gazetteer"),
    (extract.gazetteer_mentions, ({"d": "x"}, GAZ), {"ambiguity": "coin"}, ValueError, "ambiguity"),
    (extract.gazetteer_mentions, ({"d": "x"}, {"Ada": []}), {}, ValueError, "gazetteer"),
    (gazetteer.compile_gazetteer, ({},), {}, ValueError, "empty gazetteer"),
    (gazetteer.compile_gazetteer, ({"Ada": "E1"},), {}, TypeError, "Ada"),  # not the ids 'E' and '1'
    (gazetteer.compile_gazetteer, ({"Ada": [1]},), {}, TypeError, "entity ids"),
    (gazetteer.compile_gazetteer, ({" ": ["E1"]},), {}, ValueError, "blank"),
    (gazetteer.compile_gazetteer, ([("Ada", ["E1"])],), {}, TypeError, "mapping"),
    (gazetteer.ambiguous_mentions, ({"d": "x"}, GAZ), {"ambiguity": "coin"}, ValueError, "ambiguity"),
    (gazetteer.fold_surface, (None,), {}, TypeError, "surface"),
    (gazetteer.compile_gazetteer(GAZ).candidates, (b"Ada",), {}, TypeError, "surface"),
    (records.build_gazetteer, ([("E1", "Ada")],), {}, TypeError, "surfaces"),
    (records.build_gazetteer, ([(1, ["Ada"])],), {}, TypeError, "id"),
    (graph.doc_sentences, (3,), {}, TypeError, "docs"),
    (extract.capitalised_mentions, ([],), {}, ValueError, "corpus"),
    (extract.score_mentions, ([], []), {"match": "loose"}, ValueError, "match"),
    (graph.incidence, ([], {"d": "x"}, []), {}, ValueError, "entity_ids"),
    (graph.incidence, ([], {"d": "x"}, ["E1"]), {"window": "page"}, ValueError, "window"),
    (graph.incidence, ([Mention("d", 0, 1, "E9", "x")], {"d": "x"}, ["E1"]), {}, KeyError, "entity"),
    (graph.incidence, ([Mention("q", 0, 1, "E1", "x")], {"d": "x"}, ["E1"]), {}, KeyError, "document"),
    (graph.mention_arrays, ([Mention("d", 0, 1, "E9", "x")], {"d": "x"}, ["E1"]), {}, KeyError, "entity"),
    (graph.mention_arrays, ([], {"d": "x"}, []), {}, ValueError, "entity_ids"),
    (graph.incidence_from_arrays, ([Mention("d", 0, 1, "E1", "x")],), {}, TypeError, "MentionArrays"),
    (graph.incidence_from_arrays, (graph.mention_arrays([], {"d": "x"}, ["E1"]),), {"window": "sentence"},
     ValueError, "sentence spans"),
    (graph.incidence_from_arrays, (graph.MentionArrays(["d"], ["E1"], np.array([0]), np.array([0]), None),),
     {"window": "sentence", "sentences": {"d": [(0, 1)]}}, ValueError, "offsets"),
    (graph.cooccurrence, (A3,), {"weight": "tfidf"}, ValueError, "weight"),
    (graph.cooccurrence, (A3,), {"min_count": 0}, ValueError, "min_count"),
    (graph.cooccurrence_graph, ([], {"d": "x"}, []), {}, ValueError, "entities"),
    (graph.cooccurrence_graph, ([], {"d": "x"}, [("E1", "a"), ("E1", "b")]), {}, ValueError, "entities"),
    (graph.corpus_graph, (corpus.from_world(TINY), ("planet",)), {}, ValueError, "no entity of types"),
    (communities.to_igraph, ([[0, 1]],), {}, TypeError, "graph"),
    (communities.to_igraph, (sp.csr_matrix((3, 3)),), {}, ValueError, "edges"),
    (communities.leiden, (A3,), {"resolution": 0}, ValueError, "resolution"),
    (communities.leiden, (A3,), {"objective": "surprise"}, ValueError, "objective"),
    (communities.leiden, (A3,), {"engine": "gpu"}, ValueError, "engine"),
    (communities.leiden, (-A3,), {}, ValueError, "weights"),
    (communities.louvain, (A3,), {"engine": "cuda"}, ValueError, "engine"),
    (communities.louvain, (A3,), {"resolution": -1}, ValueError, "resolution"),
    (communities.greedy_modularity, (A3,), {"resolution": NAN}, ValueError, "resolution"),
    (hierarchy.hierarchical_leiden, (A3,), {"max_cluster_size": 1}, ValueError, "max_cluster_size"),
    (communities.modularity, (A3, [0, 1]), {}, ValueError, "membership"),
    (communities.compare, ([0, 1], [0]), {}, ValueError, "memberships"),
    (communities.compare, ([0, 1], [0, 1]), {"method": "vi"}, ValueError, "method"),
    (communities.disconnected_communities, (A3, [0]), {}, ValueError, "membership"),
    (communities.canonical, ([[0, 1], [1]],), {}, ValueError, "membership"),
    (prompts.prompt, ("poem",), {}, ValueError, "task"),
    (parse.parse_extraction, (None,), {}, TypeError, "text"),
    (parse.format_records, (["Ada"], []), {}, TypeError, "entities"),
    (graph_extraction.extract_records, ("Ada.", GRAPH_LLM), {"entity_types": []}, ValueError, "entity_types"),
    (graph_extraction.extract_records, ("Ada.", GRAPH_LLM), {"entity_types": ["person"], "gleanings": -1},
     ValueError, "gleanings"),
    (graph_extraction.merge_records, ([("D1", [])],), {}, TypeError, "units"),
    (graph_extraction.merge_records, ([],), {"description_tokens": 0}, ValueError, "description_tokens"),
    (graph_extraction.extract_graph, ({}, GRAPH_LLM), {"entity_types": ["person"]}, ValueError, "corpus"),
    (graph_extraction.extract_graph, ({"D1": "Ada."}, GRAPH_LLM),
     {"entity_types": ["person"], "ledger": llm.TokenLedger(llm.ExtractiveLLM())}, ValueError, "ledger"),
    (graph_extraction.to_entity_graph, (graph_extraction.ExtractedGraph([], []),), {}, ValueError, "no entities"),
    (graph_extraction.relation_triples, ([],), {}, TypeError, "extracted"),
    (graph_extraction.score_relations, (graph_extraction.ExtractedGraph([], []), [("E1", "knows", "E2")]), {},
     TypeError, "facts"),
    (llm.ExtractiveLLM, (), {"max_records": 0}, ValueError, "max_records"),
    (llm.ExtractiveLLM().complete, (prompts.prompt("extract_graph", entity_types="person", text="Ada."),),
     {"max_tokens": 50}, ValueError, "gazetteer"),
    (prompts.parse_prompt, ("hello",), {}, ValueError, "TASK"),
    (json_answers.parse_json, ("",), {}, ValueError, "output"),
    (json_answers.read_json, (None,), {}, TypeError, "text"),
    (json_answers.read_json, ("x {}",), {}, ValueError, "opens at character 0"),
    (prompts.cited_lines, (None,), {}, TypeError, "body"),
    (text.split_sentences, (None,), {}, TypeError, "text"),
    (corpus.check_corpus, ("wiki", "ci"), {}, ValueError, "corpus"),
    (verdicts.verdict_of, (0.2, 0.1), {}, ValueError, "low to high"),
    (verdicts.verdicts, (["build/checks"],), {}, TypeError, "corpus"),
    (verdicts.markdown_table, ([("seeds", "world")],), {}, TypeError, "Verdict"),
    (verdicts.render_readme, ("no markers", []), {}, ValueError, "verdicts:start"),
    (verdicts.caveat_of, ("ppr", "world", 0.1, 0.1, None), {}, TypeError, "caveat"),
    (stats.hypothesis_verdict, (0.3, -0.1), {}, ValueError, "low to high"),
    (stats.minimum_detectable_effect, (-0.1, 10), {}, ValueError, "sd"),
    (graph_extraction.corpus_extraction, ({"d1": "Ada."},), {}, TypeError, "Corpus"),
    (graph_extraction.degrees, (None,), {}, TypeError, "ExtractedGraph"),
    (graph_extraction.entity_line, (None, 1), {}, TypeError, "ExtractedEntity"),
    (graph_extraction.relationship_line, (0, None, {}), {}, TypeError, "Relationship"),
    (reports.data_references, (None,), {}, TypeError, "text"),
    (reports.graph_context, (["E9"], ExtractedGraph([], []), 100), {}, ValueError, "not an entity"),
    (reports.graph_context, ([], ExtractedGraph([], []), 0), {}, ValueError, "budget"),
    (reports.graph_reports, (None, ExtractedGraph([], []), llm.ExtractiveLLM()), {"budget": 10}, ValueError, "budget"),
    (reports.graph_reports, (None, None, llm.ExtractiveLLM()), {}, TypeError, "ExtractedGraph"),
    (basic_search.basic_search, ("Who?", ["d1"], {"d1": "Ada."}, llm.ExtractiveLLM()), {"k": 0}, ValueError, "k"),
    (basic_search.basic_search, ("Who?", ["d1"], {"d1": "Ada."}, llm.ExtractiveLLM()), {"budget": -1}, ValueError,
     "budget"),
    (dynamic_selection.select_reports, ("Why?", [], llm.ExtractiveLLM()), {}, ValueError, "no reports"),
    (dynamic_selection.select_reports, ("Why?", [REPORT0], llm.ExtractiveLLM()), {"threshold": -1}, ValueError,
     "threshold"),
    (extractive_report.write_report, (None,), {}, TypeError, "sections"),
    (corpus.check_corpus, ("factbook", "large"), {}, ValueError, "factbook scale"),
    (parameters.check_values, ({"LLM": "gpt-4o"},), {}, ValueError, "LLM"),
    (parameters.check_values, ({"SEED": 1.5},), {}, ValueError, "SEED"),
    (build.prepare_out, (__file__,), {}, ValueError, "not a folder"),
    (tradeoff.seed_selections, (embed.CosineIndex(np.eye(3)), sp.eye(3, format="csr"), np.ones(3), 0, [(1, None)]),
     {}, ValueError, "top_k"),
    (tradeoff.seed_picks, (INDEX, A3, np.ones(3), 2, []), {}, ValueError, "settings"),
    (tradeoff.seed_picks, (INDEX, A3, np.ones(3), 5, [(1, None)]), {}, ValueError, "top_k"),
    (expansion.budgeted_recall, ([1, 2], [], [5]), {}, ValueError, "gold"),
    (expansion.budgeted_recall, ([1, 2], [1], [0]), {}, ValueError, "budget"),
    (expansion.expansion_order, (A3, [0], [0.5], 0), {}, ValueError, "budget"),
    (expansion.expansion_recalls, (INDEX, A3, np.ones(3), [0], [expansion.Setting(2)], ()), {}, ValueError,
     "budgets"),
    (expansion.question_sample, ([1, 2], 0), {}, ValueError, "n_questions"),
    (expansion.question_sample, ([], 3), {}, ValueError, "hops"),
    (experiments.TfidfIndex, (np.eye(3),), {}, ValueError, "sparse"),
    (experiments.TfidfIndex(sp.csr_matrix(np.eye(3))).search, (sp.csr_matrix(np.ones((1, 2))), 1), {}, ValueError,
     "query"),
    (text.sentence_spans, (b"Ada came.",), {}, TypeError, "text"),
    (parse.name_key, (None,), {}, TypeError, "name"),
    (extractive_graph.GraphStandIn, ({}, {}), {}, ValueError, "gazetteer"),
    (extractive_graph.GraphStandIn, ({"Ada": ["E1"]}, {}), {"max_records": 0}, ValueError, "max_records"),
    (tokens.count_tokens, (None,), {}, TypeError, "text"),
    (llm.ExtractiveLLM().complete, ("TASK: map",), {"max_tokens": 0}, ValueError, "max_tokens"),
    (llm.OpenAICompatibleLLM, ("m",), {"api_key_env": "COOKBOOK_NO_SUCH_KEY"}, llm.LLMUnavailable,
     "COOKBOOK_NO_SUCH_KEY"),
    (llm.FaultInjectingLLM, (llm.ExtractiveLLM(),), {"schedule": ["gremlins"]}, ValueError, "fault"),
    (llm.FaultInjectingLLM, (llm.ExtractiveLLM(),), {"rate": 1.5}, ValueError, "rate"),
    (llm.OpenAICompatibleLLM, ("m",), {"concurrency": 0, "api_key_env": "COOKBOOK_NO_SUCH_KEY"}, ValueError,
     "concurrency"),
    (llm.OpenAICompatibleLLM, ("m",), {"requests_per_minute": -5, "api_key_env": "COOKBOOK_NO_SUCH_KEY"},
     ValueError, "requests_per_minute"),
    (llm.OpenAICompatibleLLM, ("m",), {"deadline": 0, "api_key_env": "COOKBOOK_NO_SUCH_KEY"}, ValueError, "deadline"),
    (llm.OpenAICompatibleLLM, ("m",), {"max_consecutive_failures": 0, "api_key_env": "COOKBOOK_NO_SUCH_KEY"},
     ValueError, "max_consecutive_failures"),
    (llm.from_parameter, ("gpt-4o",), {}, ValueError, "the notebooks know"),
    (verdicts.backend_table, ({},), {}, ValueError, "at least one backend"),
    (llm.spend_line, (10, 100, "gpt-4o"), {}, ValueError, "backend must be one of"),
    (llm.dry_run, (None,), {}, TypeError, "not callable"),
    (llm.from_parameter, ("replay",), {"recording": "/nonexistent/r.json"}, llm.LLMUnavailable, "no recording at"),
    (ColabLLM, (), {}, llm.LLMUnavailable, "google.colab.ai cannot be imported"),
    (OllamaLLM, ("m",), {"host": "127.0.0.1:9", "check": False, "concurrency": 0}, ValueError, "concurrency"),
    (ollama_base_url, (7,), {}, TypeError, "host must be a string"),
    (llm.ReplayLLM, ("/nonexistent/r.json",), {}, FileNotFoundError, "no recording at"),
    (read_recording, (__file__,), {}, ValueError, "is not a recording"),
    (llm.export_recording, ("/tmp/cookbook-bad-input-r.json",), {"cache": "/nonexistent-cache"}, ValueError,
     "name the model to export"),
    (llm.redact, (None,), {}, TypeError, "text"),
    (llm_base.holds_secret, (b"sk-",), {}, TypeError, "text"),
    (llm_base.add_secret, (12345678,), {}, TypeError, "secret"),
    (llm.concurrency_of, (llm.ExtractiveLLM(), 0), {}, ValueError, "concurrency"),
    (llm.ordered_map, (str, [1]), {"concurrency": 0}, ValueError, "concurrency"),
    (llm.complete_many, (llm.ExtractiveLLM(), ["TASK: map"]), {"max_tokens": 0}, ValueError, "max_tokens"),
    (llm.RateLimiter, (-1,), {}, ValueError, "requests_per_minute"),
    (llm.RateLimiter, (None, 0), {}, ValueError, "tokens_per_minute"),
    (llm.RateLimiter(tokens_per_minute=10).acquire, (11,), {}, ValueError, "tokens_per_minute"),
    (llm.RateLimiter().acquire, (-1,), {}, ValueError, "tokens"),
    (llm.CachedLLM(llm.ExtractiveLLM()).complete, ("TASK: map",), {"max_tokens": 0}, ValueError, "max_tokens"),
    (tokens.truncate, ("abc", 0), {}, ValueError, "max_tokens"),
    (tokens.pack_lines, (["a"], 0), {}, ValueError, "budget"),
    (tokens.truncate, (None, 5), {}, TypeError, "text"),
    (llm.TokenLedger(llm.ExtractiveLLM()).estimate, (["p"],), {"max_tokens": -1}, ValueError, "max_tokens"),
    (reports.community_context, ([0], None, {}, {}, 0), {}, ValueError, "budget"),
    (reports.community_reports, (None, None, [], [], None), {"budget": 10}, ValueError, "budget"),
    (answer.map_batches, ([], 0), {}, ValueError, "budget"),
    (answer.map_prompts, ("q", []), {}, ValueError, "reports"),
    (answer.map_step, ("q", [], llm.ExtractiveLLM()), {"max_tokens": 0}, ValueError, "max_tokens"),
    (answer.map_step, ("q", [], llm.ExtractiveLLM()), {"max_tokens": True}, ValueError, "max_tokens"),
    (answer.reduce_step, ("q", [], llm.ExtractiveLLM()), {"budget": 0}, ValueError, "budget"),
    (answer.reduce_step, ("q", [], llm.ExtractiveLLM()), {"max_tokens": 0}, ValueError, "max_tokens"),
    (answer.global_search, ("", [1], None), {}, ValueError, "question"),
    (answer.global_search, ("q?", [], None), {}, ValueError, "reports"),
    (answer.global_search, ("q?", [1], None), {"map_budget": 1}, ValueError, "budget"),
    (answer.global_search, ("q?", [1], llm.ExtractiveLLM()), {"concurrency": 0}, ValueError, "concurrency"),
    (reports.community_reports, (None, None, [], [], llm.ExtractiveLLM()), {"concurrency": 0}, ValueError,
     "concurrency"),
    (basic_search.flat_search, ("q", [], [], None, INDEX, None), {"k": 0}, ValueError, "k"),
    (metrics.theme_coverage, ("x", []), {}, ValueError, "themes"),
    (metrics.theme_scores, ("x", ["mining"], ["brewing"]), {}, ValueError, "all_themes"),
    (metrics.unnamed_themes, (None, ["mining"], ["mining"]), {}, TypeError, "question must be"),
    (metrics.theme_scores, ("x", ["mining"], ["mining"]), {"question": 3}, TypeError, "question must be"),
    (embed.stem, (None,), {}, TypeError, "word"),
    (embed.tokenize, (None,), {}, TypeError, "text"),
    (embed.TfidfVectorizer().fit, ([],), {}, ValueError, "texts"),
    (embed.TfidfVectorizer().fit_transform, (["the"],), {}, ValueError, "vocabulary"),
    (embed.TfidfVectorizer().transform, (["x"],), {}, RuntimeError, "fit"),
    (embed.BM25, (["a b"],), {"k1": -1}, ValueError, "k1"),
    (embed.LSAEmbedder, (0,), {}, ValueError, "dim"),
    (embed.LSAEmbedder().fit_transform, ("text",), {}, TypeError, "texts"),
    (embed.LSAEmbedder().transform, (["x"],), {}, RuntimeError, "fit"),
    (embed.WordLlamaEmbedder, (300,), {}, ValueError, "dim"),
    (embed.WordLlamaEmbedder().transform, ("one text",), {}, TypeError, "texts"),
    (embed.WordLlamaEmbedder().fit, ([],), {}, ValueError, "texts"),
    (embed.dense_embedder, ("bert",), {}, ValueError, "bert"),
    (embed.CosineIndex, (np.zeros((0, 3)),), {}, ValueError, "vectors"),
    (embed.CosineIndex, (np.eye(2), ["a"]), {}, ValueError, "ids"),
    (INDEX.search, (np.ones(3), 4), {}, ValueError, "k"),
    (INDEX.search, (np.ones(2), 1), {}, ValueError, "query"),
    (INDEX.scores, (np.array([1, NAN, 0]),), {}, ValueError, "query"),
    (ppr.transition_matrix, (np.ones((2, 3)),), {}, ValueError, "adjacency"),
    (ppr.transition_matrix, (-A3,), {}, ValueError, "adjacency"),
    (ppr.personalized_pagerank, (W3, np.zeros(3)), {}, ValueError, "v0"),
    (ppr.personalized_pagerank, (W3, np.ones(3)), {"restart": 1.5}, ValueError, "restart"),
    (ppr.personalized_pagerank, (W3, np.ones(3)), {"tol": -1}, ValueError, "tol"),
    (ppr.personalized_pagerank, (W3, np.ones(4)), {}, ValueError, "v0"),
    (ppr.personalized_pagerank, (np.ones((3, 3)), np.ones(3)), {}, ValueError, "transition_matrix"),
    (ppr.personalized_pagerank_batch, (W3, np.ones(3)), {}, ValueError, "V0"),
    (top_k.top_k_pagerank, (W3, np.ones(3), 3), {}, ValueError, "k"),
    (top_k.top_k_pagerank, (W3, np.ones(3), 1), {"among": [1, 0, 1]}, ValueError, "among"),
    (top_k.top_k_pagerank, (W3, np.ones(3), 1), {"among": np.array([True, False, False])}, ValueError, "ranked"),
    (top_k.top_k_pagerank, (W3, np.ones(3), 1), {"margin": -1.0}, ValueError, "margin"),
    (ppr.inflow_bound, (np.ones((2, 3)),), {}, ValueError, "square"),
    (top_k.top_k_push, (W3, np.ones(3), 3), {}, ValueError, "k"),
    (top_k.top_k_push, (W3, np.ones(3), 1), {"rounds": 0}, ValueError, "rounds"),
    (top_k.top_k_push, (W3, np.ones(3), 1), {"eps": -1.0}, ValueError, "eps"),
    (top_k.top_k_push, (W3, np.ones((3, 2)), 1), {}, ValueError, "top_k_push_batch"),
    (top_k.top_k_push_batch, (W3, np.ones(3), 1), {}, ValueError, "V0"),
    (ppr.Walk, (np.ones((3, 3)),), {}, ValueError, "transition_matrix"),
    (ppr.prepare, (np.array([[np.nan, 0], [1, 1]]),), {}, ValueError, "non-finite"),
    (hipporag.passage_graph, ({"d": "x"}, [], []), {}, ValueError, "entity_ids"),
    (hipporag.seed_vector, (pg(), {"E99999": 1.0}), {}, KeyError, "E99999"),
    (hipporag.seed_vector, (pg(), {TINY.entities[0].id: -1.0}), {}, ValueError, "seed scores"),
    (hipporag.rank_passages, (pg(), np.ones(3), 0), {}, ValueError, "k"),
    (hipporag.top_passages, (pg(), np.ones(pg().adjacency.shape[0]), 10**6), {}, ValueError, "larger than"),
    (hipporag.top_passages, (pg(), np.ones(pg().adjacency.shape[0]), 2), {"restart": 0}, ValueError, "restart"),
    (hipporag.top_passages, (pg(), np.ones(pg().adjacency.shape[0]), 2), {"tol": -1.0}, ValueError, "tol"),
    (hipporag.fact_index, ({"d": "Ada."}, []), {}, ValueError, "facts"),
    (hipporag.FactIndex, (["a b"], [], None), {}, ValueError, "entity tuples"),
    (hipporag.structure_aware_seeds, (pg(), "q", {"E99999"}, None), {}, KeyError, "E99999"),
    (HIPPO.retrieve, ("Where?", 0), {"dense_hits": {"D00000": 1.0}}, ValueError, "k"),
    (HIPPO.dense_hits, (np.ones(2),), {}, ValueError, "query"),
    (hipporag.HippoRetriever.build, ([], [], ["E1"], GAZ), {}, ValueError, "corpus"),
    (ppr.dangling_mask, (np.ones(3),), {}, ValueError, "W"),
    (arrays.top_k, ([1.0, 2.0], 0), {}, ValueError, "k"),
    (arrays.top_k, (np.eye(2), 1), {}, ValueError, "scores"),
    (arrays.csr_row_positions, (A3.indptr, np.array([5])), {}, IndexError, "index"),
    (metrics.support_recall, (["D1"], []), {}, ValueError, "supporting"),
    (metrics.support_recall, ("D1", ["D1"]), {}, TypeError, "retrieved"),
    (compare.compare_builds, ("/nonexistent/a", "/nonexistent/b"), {}, ValueError, "build folder"),
    (compare.mask_timings, (None,), {}, TypeError, "string"),
    (rerank.Hit, (), {}, TypeError, "id"),
    (rerank.RRFReranker, (), {"k_param": -1}, ValueError, "k_param"),
    (rerank.RRFReranker().fuse, ([[rerank.Hit("a", 1)]],), {"k": 2.5}, ValueError, "k"),
    (rerank.RRFReranker().fuse, ("abc",), {"k": 1}, TypeError, "per_store"),
    (rerank.PPRReranker(None).fuse, ([[rerank.Hit("a", 1)]],), {"k": 0}, ValueError, "k"),
    (seeds.neighbourhoods, (A3, [5]), {}, KeyError, "node"),
    (seeds.neighbourhoods, (A3, [0]), {"max_neighbourhood": 0}, ValueError, "max_neighbourhood"),
    (seeds.jaccard_matrix, (np.ones(3),), {}, ValueError, "N"),
    (seeds.seed_overlap, (A3, [0, 9]), {}, KeyError, "node"),
    (seeds.select_seeds, ([0, 1], [0.5, NAN], N2, 1), {}, ValueError, "ann_scores"),
    (seeds.select_seeds, ([0, 1], [0.5, 0.4], N2, 3), {}, ValueError, "k"),
    (seeds.select_seeds, ([0, 1], [0.5, 0.4], N2, 1), {"overlap_penalty": -1}, ValueError, "overlap_penalty"),
    (seeds.bfs, (A3, [0], -1), {}, ValueError, "depth"),
    (seeds.bfs, (A3, [7], 1), {}, KeyError, "seed"),
    (seeds.bfs, (A3, [True], 1), {}, TypeError, "seeds"),  # True is not node 1
    (seeds.bfs, (A3, [1.0], 1), {}, TypeError, "seeds"),
    (seeds.bfs, (A3, [0], 1, [0.1, 0.2]), {}, ValueError, "seed_scores"),
    (seeds.n_candidates, (0, 5, 100), {}, ValueError, "top_k"),
    (seeds.retrieve, (INDEX, A3, np.ones(3)), {"top_k": 2, "depth": 0, "oversample": 0}, ValueError, "oversample"),
    (seeds.two_step_retrieve, (INDEX, A3, np.ones(3)), {"top_k": 0, "depth": 0}, ValueError, "top_k"),
    (metrics.jaccard, (None, {1}), {}, TypeError, "a"),
    (metrics.precision_recall, (None, {1}), {}, TypeError, "predicted"),
    (metrics.mean_pairwise_jaccard, (None,), {}, TypeError, "sets"),
    (metrics.unique_nodes, (None,), {}, TypeError, "results"),
    (metrics.label_entropy, (None,), {}, TypeError, "labels"),
    (metrics.majority_fraction, (None,), {}, TypeError, "labels"),
    (bench.time_calls, (print, []), {}, ValueError, "inputs"),
    (bench.best_of, (print,), {"repeat": 0}, ValueError, "repeat"),
    (bench.summarize, ([],), {}, ValueError, "latencies"),
    (bench.ratio_table, ({"a": {"p50": 1}},), {"baseline": "b"}, KeyError, "baseline"),
    (bench.write_results, ("/tmp", "", {}), {}, ValueError, "name"),
    (bench.make_manifest, ("m", 5, 6), {}, ValueError, "n_queries"),
    (bench.run_manifest, (bench.make_manifest("m", 5, 1), {}, None), {}, ValueError, "methods"),
    (bench.aggregate, ([{"latency_s": 1}],), {}, KeyError, "method"),
    (bench.write_csv, ([], "/tmp/x.csv"), {}, ValueError, "rows"),
    (bench.loglog_slope, ([1], [1]), {}, ValueError, "sizes"),
    (bench.mean_by, ([{"method": "a"}], "recall"), {}, KeyError, "recall"),
    (experiments.world_bench, ("nowhere",), {}, ValueError, "scale"),
    (experiments.penalty_sweep, (INDEX, A3, []), {}, ValueError, "queries"),
    (experiments.restart_sweep, (HIPPO, TINY.questions), {"restarts": (0,)}, ValueError, "restart"),
    (experiments.scaling_curves, ([10],), {}, ValueError, "sizes"),
    (experiments.scaling_runs, ([140, 7],), {}, ValueError, "sizes"),
    (stats.dev_test_split, ([],), {}, ValueError, "hops"),
    (stats.dev_test_split, ([[1, 2]],), {}, ValueError, "hops"),
    (expansion.expansion_comparison, (corpus.from_world(TINY), HIPPO), {"budgets": ()}, ValueError, "budgets"),
    (expansion.expansion_comparison, (corpus.from_world(TINY), HIPPO), {"top_k": 500}, ValueError, "top_k"),
    (tradeoff.seed_tradeoff, (corpus.from_world(TINY), HIPPO), {"max_recall_loss": -1}, ValueError,
     "max_recall_loss"),
    (cache.cached_array, ("../up", {}, lambda: np.zeros(1)), {}, ValueError, "name"),
    (cache.cache_path, ("x", {"f": object()}), {}, TypeError, "JSON"),
    (cache.read_entry, ("../up", {}), {}, ValueError, "name"),
    (cache.write_entry, ("x", {}, object()), {}, TypeError, "JSON"),
    (paths.list_notebooks, (None, ["99"]), {}, ValueError, "only"),
    (runner.run, (), {"scale": "huge"}, ValueError, "scale"),
    (runner.run, (), {"extra_parameters": {"SEED": "7"}}, ValueError, "SEED"),
    (runner.run, (), {"jobs": 0}, ValueError, "jobs"),
    (runner.run, (), {"jobs": 1.5}, ValueError, "jobs"),
    (runner.run, (), {"corpora": ["wikipedia"]}, ValueError, "corpus"),
    (plan.plan, (paths.list_notebooks(only=["00"]), {"SCALE": "ci"}, []), {}, ValueError, "corpora"),
    (plan.plan, (paths.list_notebooks(only=["00"]), {"SCALE": "ci"}, "world"), {}, ValueError, "corpora"),
    (plan.plan, (paths.list_notebooks(only=["00"]), {"SCALE": "class", "CORPUS": "world"}, ["factbook"]), {},
     ValueError, "disagree"),
    (workers.execute_all, ([1], 0, str, {}, lambda: None, lambda r, n: None), {}, ValueError, "jobs"),
    (workers.kernel_threads, (0, 2), {}, ValueError, "jobs"),
    (workers.kernel_threads, (2, True), {}, ValueError, "cores"),
    (parameters.notebook_parameters, (["/nonexistent/01_x.ipynb"],), {}, FileNotFoundError, "01_x"),
    (parameters.check_parameters, ({"SEED": True}, {"SEED": 7}), {}, ValueError, "SEED"),
    (parameters.parse_parameters, (["SEED=abc"], {"SEED": 7}), {}, ValueError, "SEED"),
    (colab.badge, ("ftp://x", "n.ipynb"), {}, ValueError, "url"),
    (colab.setup_cell, ("",), {}, ValueError, "url"),
    (colab.repo_url, ("/nonexistent/pyproject.toml",), {}, FileNotFoundError, "pyproject"),
    (checks.Checks, ("",), {}, ValueError, "notebook_id"),
    (corpus.load_corpus, ("wikipedia",), {}, ValueError, "corpus"),
    (corpus.load_corpus, ("factbook", "huge"), {}, ValueError, "scale"),
    (corpus.load_corpus, ("world", ["ci"]), {}, ValueError, "scale"),
    (corpus.load_corpus, ("world", "class", 7.0), {}, TypeError, "seed"),
    (corpus.load_corpus, ("world", "ci", True), {}, TypeError, "seed"),
    (factbook.build_factbook, ("ci", "7"), {}, TypeError, "seed"),
    (stats.paired_bootstrap, ([0.1, NAN], [0.1, 0.2]), {}, ValueError, "a has a non-finite"),
    (stats.paired_bootstrap, ([0.1], [0.1, 0.2]), {}, ValueError, "same questions"),
    (exercises_core.series_verdict, ([0.1], [0.1, 0.2]), {}, ValueError, "same questions"),
    (exercises_core.redecide_cases, (), {"n": 1}, ValueError, "n"),
    (exercises_core.redecide_cases, (0.0,), {}, ValueError, "scale"),
    (exercises_core.redecide_cases, (), {"seed": "7"}, TypeError, "seed"),
    (stats.bootstrap_mean_ci, ([],), {}, ValueError, "x is empty"),
    (stats.bootstrap_statistic, ("mean", 3), {}, TypeError, "statistic"),
    (paths.shipped, ("notebookz",), {}, FileNotFoundError, "notebookz"),
    (checks.read, (Path(__file__),), {}, ValueError, "not a checks record"),
    (paths.copy_notebooks, (__file__,), {}, ValueError, "not a directory"),
    (paths.place_files, ({"../escape.txt": b""}, "/nonexistent"), {}, ValueError, "not a file name"),
    (build.row_files, ("../../../victim",), {}, ValueError, "not a build file name"),
    (local_search.local_index, ({"entities": []}, {}), {}, TypeError, "ExtractedGraph"),
    (local_search.local_index, (ExtractedGraph([], []), {}), {}, ValueError, "no entities"),
    (local_search.local_index, (XG, {"d2": "x"}), {}, ValueError, "d1"),
    (local_search.LocalIndex, (ExtractedGraph(XG.entities, [Relationship("E1", "E9", "", "", 1.0, ())]),
                               {"d1": "Ada."}, [], None), {}, ValueError, "E9"),
    (local_search.match_entities, ("Who?", LOCAL), {"top_k": 0}, ValueError, "top_k"),
    (local_search.match_entities, (None, LOCAL), {}, TypeError, "question"),
    (local_search.local_context, ("Who?", LOCAL), {"budget": 5}, ValueError, "budget"),
    (local_search.local_context, ("Who?", LOCAL), {"text_unit_prop": 1.5}, ValueError, "text_unit_prop"),
    (local_search.local_context, ("Who?", LOCAL), {"text_unit_prop": 0.7, "community_prop": 0.5}, ValueError,
     "community_prop"),
    (local_search.local_context, ("Who?", LOCAL), {"top_k_relationships": 0}, ValueError, "top_k_relationships"),
    (local_search.local_search, ("Who?", LOCAL, llm.ExtractiveLLM()), {"max_tokens": 0}, ValueError, "max_tokens"),
    (judge.compare_methods, (["Q?"], ["a"], ["b", "c"], llm.ExtractiveLLM()), {}, ValueError, "answers_b"),
    (judge.compare_methods, (["Q?"], ["a"], ["b"], llm.ExtractiveLLM()), {"criteria": ["relevance"]}, ValueError,
     "criterion"),
    (judge.judge_pair, ("Q?", None, "b", llm.ExtractiveLLM()), {}, TypeError, "answer_a"),
    (judge.judge_pair, ("Q?", "a", "b", llm.ExtractiveLLM()), {"replicates": 0}, ValueError, "replicates"),
    (judge.judge_prompt, ("Q?", "relevance", "a", "b"), {}, ValueError, "criterion"),
    (judge.judge_prompt, ("Q?", "diversity", "a", 3), {}, TypeError, "second"),
    (judge.parse_judgement, ('{"winner": 3}',), {}, ValueError, "winner"),
    (datasets.load_recorded, ("carol",), {}, ValueError, "recording"),
    (datasets.read_graphrag_index, ("/nonexistent/output",), {}, ValueError, "not a folder"),
    (datasets.read_index_json, ("/nonexistent/index",), {}, ValueError, "documents.jsonl"),
    (datasets.write_index_json, (None, "/tmp/never-written"), {}, TypeError, "GraphRAGIndex"),
    (recorded.entity_id, (-1,), {}, ValueError, "human_readable_id"),
    (recorded.citations, (None,), {}, TypeError, "text"),
    (recorded.count_written, (3,), {}, TypeError, "answer"),
    (recorded.graph_of_index, ({},), {}, TypeError, "GraphRAGIndex"),
    (recorded.communities_of_index, (None, None), {}, TypeError, "GraphRAGIndex"),
    (recorded.reports_of_index, (None, None, None), {}, TypeError, "GraphRAGIndex"),
    (recorded.recorded_extraction, ("christmas-carol",), {}, TypeError, "RecordedCorpus"),
    (recorded.recorded_reports, ("christmas-carol",), {}, TypeError, "RecordedCorpus"),
    (silver.silver_reference, ("dulce",), {}, TypeError, "RecordedCorpus"),
    (silver.silver_scores, (None,), {}, TypeError, "RecordedCorpus"),
    (silver.report_overlap, (None,), {}, TypeError, "GraphRAGIndex"),
    (llm.RecordedLLM, ("christmas-carol",), {}, TypeError, "RecordedCorpus"),
    # notebooks 11-12: DRIFT, the lazy search, claims, resolution, incremental indexing, the graph view
    (drift_search.drift_search, ("Q?", [], None, None), {}, ValueError, "reports"),
    (drift_search.rank_reports, ("Q?", [], 3), {}, ValueError, "reports"),
    (lazy_search.lazy_index, (None, [], {"d1": "x"}), {}, TypeError, "graph"),
    (lazy_search.lazy_search, ("Q?", None, None), {"budget": 0}, ValueError, "budget"),
    (claims.extract_claims, ({"d1": "Ada."}, GRAPH_LLM), {"entity_types": ["person"], "max_tokens": 0}, ValueError,
     "max_tokens"),
    (claims.score_claims, ([], [object()]), {}, TypeError, "facts"),
    (claims.claim_lines, ([], ["E1"], {}, 0), {}, ValueError, "budget"),
    (claim_records.parse_claims, (None,), {}, TypeError, "text"),
    (claim_records.format_claims, ([1],), {}, TypeError, "ClaimRecord"),
    (resolution.corpus_names, (None,), {}, TypeError, "corpus"),
    (resolution.synonymy_matrix, (np.ones(3),), {}, ValueError, "vectors"),
    (resolution.synonymy_edges, (np.ones((2, 2)),), {"threshold": 2}, ValueError, "threshold"),
    (resolution.exact_edges, ("Ada",), {}, TypeError, "names"),
    (resolution.containment_edges, ([1],), {}, TypeError, "names"),
    (resolution.merge, (2, [(0, 5)]), {}, ValueError, "edge"),
    (resolution.score_merges, ([0], [("E1",), ("E2",)]), {}, ValueError, "labels"),
    (resolution.bcubed, ([0], [("E1",), ("E2",)]), {}, ValueError, "labels"),
    (incremental.build_index, ({"d1": "Ada."}, GRAPH_LLM), {"entity_types": ["person"], "gleanings": -1}, ValueError,
     "gleanings"),
    (incremental.update_index, (None, {"d1": "Ada."}, GRAPH_LLM), {}, TypeError, "index"),
    (incremental.same_index, (None, None), {}, TypeError, "GraphIndex"),
    (graph_view.graph_html, ([{"id": "a"}, {"id": "a"}], []), {}, ValueError, "distinct"),
    (graph_view.graph_html, ([{"id": "a"}], [("a", "b", 1.0)]), {}, ValueError, "edges"),
    (graph_view.graph_view, (ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",))], []),
                             hierarchy.Hierarchy([np.zeros(3, dtype=int)], [np.array([-1])], 10), {}), {}, ValueError,
     "hierarchy"),
    (graph_view.write_graphml, ([], [], FOREIGN_FILE), {}, FileExistsError, "refusing"),
]

# Public callables deliberately without a bad-input row, and why.
EXEMPT = {
    "data.realdata.raw_factbook": "no arguments; a missing package is tested in test_datasets",
    "data.realdata.wordnet": "no arguments; reads the installed package",
    "data.realdata.les_miserables": "no arguments",
    "data.storage.data_dir": "no arguments; reads the environment",
    "data.questions.multi_hop_questions": "make_world's last step, on the facts and entities it generated; "
    "make_world checks its arguments", "data.questions.global_questions": "make_world's step, on the groups, "
    "entities and facts it generated; make_world checks its arguments",
    "paths.repo_root": "no arguments", "paths.notebooks_dir": "no arguments",
    "run.runner.ensure_kernel": "no arguments", "run.runner.default_jobs": "no arguments",
    "harness.bench.machine": "no arguments",
    "run.compare.notebook_lines": "reads a notebook the runner wrote; bad folders are caught by compare_builds",
    "harness.bench.script_args": "argparse reports a bad option itself and exits with status 2",
    "cache.cache_dir": "no arguments; reads the environment",
    "progress.bar": "tqdm's own arguments, passed through; tqdm checks them",
    "llm.recording.cached_models": "reads a folder: a missing or foreign one holds no entries ({})",
    "harness.experiments.wordnet_embedding": "takes datasets.wordnet()'s graph (seconds); LSAEmbedder checks dim",
    "harness.experiments.wordnet_bench": "its arguments are validated by make_manifest / numpy choice (seconds)",
    "harness.experiments.wordnet_tfidf": "takes datasets.wordnet()'s graph (seconds); TfidfVectorizer checks texts",
    "harness.expansion.Setting": "a record of three numbers; expansion_comparison builds and checks its settings",
    "run.runner.run_notebook": "never raises for a failing notebook by design; tested in test_runner",
    "run.render.render_html": "renders results the runner produced",
    "run.runner.format_table": "formats runner results",
    "run.runner.NotebookResult": "a row the runner makes (or reads back from its own summary.json)",
    "run.plan.Job": "a job plan() makes from the notebooks list_notebooks found",
    "run.plan.row_key": "reads a row of the runner's own summary.json",
    "run.plan.row_order": "sorts the runner's own rows; any names are valid",
    "run.render.detail": "formats results and checks records the runner produced",
    "run.render.as_run": "rewrites a papermill-executed parameters cell with papermill's injected cell",
    "run.workers.interrupt_once": "no arguments",
    "run.workers.stop_kernels": "stops this process's own children whose command line names the folder; any path "
                                "is valid",
    "llm.extractive_search": "the stand-in's handlers of parsed prompt sections; ExtractiveLLM.complete checks the "
                             "prompt they are given",
    "harness.exercises.core.crash_message": "formats an exception check() caught; never raises, like check",
    "run.colab.stamp": "takes a folder and URL; validated through badge / setup_cell",
    "run.colab.without_badge": "any text is valid: text without a badge comes back as it was",
    "run.render.scrub_paths": "any text and paths are valid; used on outputs the runner produced",
    "run.render.describe": "reads a notebook the runner executed; a notebook without a title gives ''",
    "harness.exercises.core.hint": "never raises by design: a hint for students, an unknown id or tier is its text",
    "harness.exercises.core.check_redecide": "a checker helper: raises Wrong, by design, on any mismatch",
    "harness.exercises.core.check": "never raises by design: feedback for students; tested in test_exercises",
    "harness.exercises.core.exercise": "a registration decorator",
    "run.build.BuildLock": "takes a folder prepare_out checked; its refusal is tested in test_run_safety",
    "run.build.previous_rows": "reads the summary the runner wrote; a damaged one is tested in test_run_safety",
    "run.build.owned_files": "reads a folder's marker: an unreadable one, or entries outside --out, own nothing "
                             "(tested in test_ownership)",
    "run.build.check_unowned": "refusing is its purpose; tested in test_ownership",
    "run.build.start_stage": "takes a folder prepare_out checked; an unwritable one is a ValueError",
    "run.compare.readable": "turns any error reading a build file into a ValueError naming it (test_run_safety)",
    "run.build.commit": "swaps the runner's own stage folder into place", "run.build.remove_stale_stages":
    "removes the runner's own stage folders of dead runs",
    "harness.exercises.core.expect_close": "a checker helper: raises Wrong, by design, on any mismatch",
    "harness.exercises.core.expect_equal": "a checker helper: raises Wrong, by design, on any mismatch",
    "harness.exercises.core.expect_choice": "a checker helper: raises Wrong, by design, on any mismatch",
    "llm.base.LLM": "a Protocol", "query.rerank.Reranker": "a Protocol",
    "stats.PairedResult": "a record paired_bootstrap builds; significant() compares its CI with a number",
    "data.records.World": "a record built and checked by make_world / read_world",
    "data.realdata.factbook_json": "no arguments; a missing package is tested in test_datasets (via factbook)",
    "data.records.Corpus": "a record built and checked by load_corpus",
    "data.recorded.RecordedCorpus": "a record built and checked by load_recorded (tests/test_recorded.py)",
    "data.graphrag_index.GraphRAGIndex": "a record built by read_graphrag_index / read_index_json",
    "index.recorded.Recovery": "a record built by recorded_extraction",
    "index.silver.SilverScores": "a record built by silver_scores",
    "data.records.Gazetteer": "the dict build_gazetteer returns; compile_gazetteer checks what is in it",
    "data.corpus.from_world": "takes a World built and checked by make_world / read_world",
    "harness.plots": "plotting helpers over rows the harness produced; tested through notebook 09 and benchmarks",
    **dict.fromkeys([f"query.graphdb.{m}" for m in ("server", "connection", "load", "retrieve")],
                    "needs a server: its bad inputs (arguments, missing binary, long socket path, bad Cypher, a "
                    "server that dies) are in test_graphdb"),
}


def public_callables():
    """``module.name`` (the module's dotted path below ``cookbook``) of every public function and class the
    package defines."""
    names = set()
    for mod_info in pkgutil.walk_packages(cookbook.__path__, "cookbook."):
        if mod_info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        mod = importlib.import_module(mod_info.name)
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj) or (inspect.isclass(obj) and not _is_plain_record(obj)):
                names.add(f"{mod_info.name.removeprefix('cookbook.')}.{name}")
    return names


def _is_plain_record(cls):
    """Result containers (dataclasses without validation, exceptions) are not entry points."""
    import dataclasses

    if issubclass(cls, Exception):
        return True
    return dataclasses.is_dataclass(cls) and "__post_init__" not in vars(cls) and not any(
        inspect.isfunction(v) and not k.startswith("_") and k not in ("text", "sizes", "texts", "subgraph",
                                                                        "gazetteer", "stats", "edges", "to_networkx",
                                                                        "to_igraph", "communities", "cells",
                                                                        "to_json", "node", "has", "table",
                                                                        "summary", "failures")
        for k, v in vars(cls).items())


def _case_name(fn):
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        return f"{type(owner).__module__.removeprefix('cookbook.')}.{type(owner).__name__}"
    return f"{fn.__module__.removeprefix('cookbook.')}.{fn.__qualname__.split('.')[0]}"


def test_every_public_callable_has_a_bad_input_case_or_a_reason():
    covered = {_case_name(fn) for fn, *_ in CASES}
    missing = {n for n in public_callables()
               if n not in covered and n not in EXEMPT and n.rsplit(".", 1)[0] not in EXEMPT}
    assert not missing, f"add bad-input rows (or an exemption with a reason) for: {sorted(missing)}"


@pytest.mark.parametrize("fn,args,kwargs,exc,word", CASES, ids=[f"{_case_name(c[0])}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_raises_a_named_error(fn, args, kwargs, exc, word):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert word.lower() in str(info.value).lower(), f"message {str(info.value)!r} does not name {word!r}"
