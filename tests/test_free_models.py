"""Every notebook whose ``LLM`` parameter reaches a model, executed (``cookbook run``, SCALE="ci", the world) on
each free real-model backend: Colab's built-in model (a stand-in ``google.colab.ai`` on the kernel's path), a local
Ollama (tests/fake_openai.py on 127.0.0.1, answering as the stand-in), and a replay of that same Ollama run,
exported from its cache with ``cookbook record export`` and answered with no server at all — the replay's checks
and outputs equal the recorded run's but for the lines naming the backend. A dead backend (Colab without its
module, Ollama not running, a recording without the prompt asked) stops a notebook with one line. Nothing here
touches the network: the runs go through a proxy where nothing listens, 127.0.0.1 excepted.

Cheap by design: one ``cookbook run --jobs 2`` a backend (started with the session beside the other tests,
conftest.BACKGROUND, and shared by every notebook's test), and the three dead backends in one more run. The
notebooks are copies with the Colab setup cell left out (the stand-in makes ``google.colab`` importable, so the
cell would install the package)."""

import ast
import gzip
import json
import os
import re
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from cookbook import llm, paths
from cookbook.run.compare import notebook_lines
from tests.fake_openai import FakeModel, FakeServer, unreachable_url

from .conftest import BACKGROUND, BackgroundRun, finished

pytestmark = pytest.mark.runs_notebooks  # kernels start here

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("colab", "ollama", "replay")
MODELS = {"colab": "google/gemini-2.5-flash", "ollama": "llama3.2", "replay": "llama3.2"}
PROXY_TOKEN = "proxy-token-under-test"


def _code(path: Path) -> tuple[list[str], list[str]]:
    """(sources of the parameters cells, sources of the other code cells) of the notebook at ``path``."""
    cells = [c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
    tagged = [("parameters" in c.metadata.get("tags", []), c.source) for c in cells]
    return [s for p, s in tagged if p], [s for p, s in tagged if not p]


def has_llm_parameter(path: Path) -> bool:
    """The notebook's parameters cell assigns ``LLM``."""
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LLM" for t in node.targets)
               for source in _code(path)[0] for node in ast.parse(source).body)


def reads_llm(path: Path) -> bool:
    """A code cell outside the parameters cell reads the name ``LLM`` (a cell that does not parse — a magic —
    counts when the word appears in it at all)."""
    for source in _code(path)[1]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            if re.search(r"\bLLM\b", source):
                return True
            continue
        if any(isinstance(n, ast.Name) and n.id == "LLM" and isinstance(n.ctx, ast.Load) for n in ast.walk(tree)):
            return True
    return False


NOTEBOOKS = paths.list_notebooks(ROOT / "notebooks")
WITH_LLM = [p for p in NOTEBOOKS if has_llm_parameter(p)]
DRIVEN = [p.stem for p in WITH_LLM if reads_llm(p)]  # the notebooks whose LLM parameter reaches a model
ONLY = [s[:2] for s in DRIVEN]

COLAB_AI = f'''"""A stand-in for google.colab.ai (googlecolab/colabtools google/colab/ai.py)."""
import sys

sys.path.insert(0, {str(ROOT)!r})
from tests.fake_openai import FakeModel  # noqa: E402


def generate_text(prompt, model_name="google/gemini-2.5-flash", stream=False):
    return FakeModel().complete(prompt, max_tokens=500)


def list_models():
    return ["google/gemini-2.5-flash"]
'''


def test_every_notebook_with_an_llm_parameter_is_driven_or_never_reads_it():
    """A notebook whose LLM parameter no code reads runs the same on every backend (it is the stand-in run
    tests/test_notebooks.py executes); every other one is in the matrix below, found from the notebooks."""
    assert DRIVEN and {"00_quickstart", "05_map_reduce_answering"} <= set(DRIVEN)
    for path in WITH_LLM:
        source = "\n".join(_code(path)[1])
        assert (path.stem in DRIVEN) == bool(re.search(r"from_parameter\(LLM\b", source)), path.stem


def write_copies(folder: Path) -> Path:
    """The driven notebooks copied into ``folder``, their Colab setup cell replaced by ``IN_COLAB = False``."""
    folder.mkdir()
    for path in NOTEBOOKS:
        if path.stem in DRIVEN:
            nb = nbformat.read(str(path), as_version=4)
            setup = next(c for c in nb.cells if c.cell_type == "code")
            setup.source = "IN_COLAB = False  # the Colab setup cell, left out under test"
            nbformat.write(nb, str(folder / path.name))
    return folder


def run_command(notebooks: Path, out: Path, llm_name: str, env: dict, only=ONLY) -> tuple[list[str], dict]:
    """(argv, environment) of a ``cookbook run`` of ``notebooks`` at SCALE="ci" on the world into ``out``, with
    ``LLM=llm_name``, behind a proxy where nothing listens (``env["_path"]`` goes ahead on PYTHONPATH)."""
    cmd = [sys.executable, "-m", "cookbook", "run", "--notebooks", str(notebooks), "--scale", "ci",
           "--corpus", "world", "--out", str(out), "--quiet", "--no-html", "--jobs", "2"]
    cmd += ["--only", *only] if only else []
    cmd += ["-p", f"LLM={llm_name}"] if llm_name else []
    proxy = unreachable_url().removesuffix("/v1")  # any request off this machine fails
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *env.pop("_path", [])]),
           "COOKBOOK_PROGRESS": "0", "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "ALL_PROXY": proxy,
           "NO_PROXY": "127.0.0.1,localhost", **env}
    return cmd, env


class Run:
    """A finished ``cookbook run`` (a :data:`BACKGROUND` run of this module, read in whichever process): exit
    code, output, build folder, ``{stem: checks}``."""

    def __init__(self, finished):
        proc = finished.result()
        self.folder, self.out, self.server = finished.folder, finished.folder / "build", finished.server
        self.code, self.output = proc.returncode, proc.stdout + proc.stderr
        self.checks = {p.name.split(".")[0]: {c["name"]: c for c in json.loads(p.read_text())["checks"]}
                       for p in sorted((self.out / "checks").glob("*.json"))} if (self.out / "checks").is_dir() else {}

    def executed(self, stem: str):
        return nbformat.read(str(self.out / "notebooks" / f"{stem}.world.ipynb"), as_version=4)

    def text(self, stem: str) -> str:
        """Every output of the executed notebook, as text."""
        return "\n".join(json.dumps(o.get("data") or o.get("text") or o.get("evalue") or "")
                         for c in self.executed(stem).cells if c.cell_type == "code" for o in c.get("outputs", []))

    def errors(self, stem: str) -> list:
        return [o for c in self.executed(stem).cells if c.cell_type == "code" for o in c.get("outputs", [])
                if o.output_type == "error"]


def colab_stub(folder: Path) -> Path:
    """A folder holding a stand-in ``google.colab`` package (``ai`` and ``userdata``)."""
    stub = folder / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("")
    (stub / "ai.py").write_text(COLAB_AI)
    (stub / "userdata.py").write_text("def get(key):\n    raise KeyError(key)\n")
    return folder


# One ``cookbook run --jobs 2`` a backend of every driven notebook, and the three dead backends in one more, started
# with the session beside the other tests (conftest.BACKGROUND) and read by this module's tests.
def _colab_run(folder: Path) -> BackgroundRun:
    env = {"_path": [str(colab_stub(folder / "stub"))], "MODEL_PROXY_API_KEY": PROXY_TOKEN,
           "COOKBOOK_CACHE": str(folder / "cache")}
    argv, env = run_command(write_copies(folder / "notebooks"), folder / "build", "colab", env)
    return BackgroundRun(argv, folder, env=env)


def _ollama_run(folder: Path) -> BackgroundRun:
    """The Ollama run against the fake server, its cache exported to ``folder/class.json.gz`` once the server is
    gone (``cookbook record export``, its output in ``folder/export.json``)."""
    server = FakeServer([("extractive", FakeModel())], models=["llama3.2:latest"]).__enter__()
    argv, env = run_command(write_copies(folder / "notebooks"), folder / "build", "ollama",
                            {"OLLAMA_HOST": server.url.removesuffix("/v1"), "COOKBOOK_CACHE": str(folder / "cache")})

    def export():
        server.__exit__(None, None, None)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COOKBOOK_CACHE": str(folder / "cache")}
        proc = subprocess.run([sys.executable, "-m", "cookbook", "record", "export", str(folder / "class.json.gz")],
                              cwd=ROOT, capture_output=True, text=True, env=env)
        (folder / "export.json").write_text(json.dumps({"returncode": proc.returncode, "stdout": proc.stdout,
                                                        "stderr": proc.stderr}))
    return BackgroundRun(argv, folder, env=env, on_exit=export, server=server)


def _replay_run(folder: Path) -> BackgroundRun:
    """The Ollama run replayed from its export: an empty cache, and Ollama's address one where nothing listens."""
    recording = finished("free-models-ollama").folder / "class.json.gz"
    argv, env = run_command(write_copies(folder / "notebooks"), folder / "build", "replay",
                            {"COOKBOOK_RECORDING": str(recording), "COOKBOOK_CACHE": str(folder / "cache"),
                             "OLLAMA_HOST": unreachable_url().removesuffix("/v1")})
    return BackgroundRun(argv, folder, env=env)


_replay_run.after = ("free-models-ollama",)


def _dead_run(folder: Path) -> BackgroundRun:
    """Three copies of the first driven notebook, one a dead backend each: Colab without its module, Ollama not
    running, and a recording of the same model (``folder/other.json``) that lacks every prompt the notebook asks."""
    source = next(p for p in NOTEBOOKS if p.stem == DRIVEN[0])
    notebooks = folder / "dead"
    notebooks.mkdir()
    for k, backend in enumerate(BACKENDS):
        nb = nbformat.read(str(source), as_version=4)
        next(c for c in nb.cells if c.cell_type == "code").source = "IN_COLAB = False"
        params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        params.source = re.sub(r"^LLM = .*$", f"LLM = {backend!r}", params.source, flags=re.MULTILINE)
        nbformat.write(nb, str(notebooks / f"{k:02d}_dead_{backend}.ipynb"))
    recording = folder / "other.json"
    recording.write_text(json.dumps({"format": "graphrag-cookbook recording", "version": 1, "model": "llama3.2",
                                     "answers": [{"prompt": "TASK: answer\nnot this notebook's", "max_tokens": 500,
                                                  "text": "x"}]}))
    argv, env = run_command(notebooks, folder / "build", "", {"OLLAMA_HOST": unreachable_url().removesuffix("/v1"),
                                                              "COOKBOOK_RECORDING": str(recording),
                                                              "COOKBOOK_CACHE": str(folder / "cache")}, only=None)
    return BackgroundRun(argv, folder, env=env)


BACKGROUND.update({"free-models-colab": _colab_run, "free-models-ollama": _ollama_run,
                   "free-models-replay": _replay_run, "free-models-dead": _dead_run})
RUNS = {backend: f"free-models-{backend}" for backend in BACKENDS}


def _on(*backends):
    """The ``background`` marks of the runs of ``backends``."""
    return [pytest.mark.background(RUNS[b]) for b in backends]


@pytest.fixture(scope="module")
def runs(background):
    """backend → its finished :class:`Run`, read once for the module."""
    read = {}

    def get(backend: str) -> Run:
        if backend not in read:
            read[backend] = Run(background(RUNS[backend]))
        return read[backend]

    return get


@pytest.fixture(scope="module")
def ollama(runs):
    run = runs("ollama")
    run.sent = run.server.n
    run.recording = run.folder / "class.json.gz"
    run.export = SimpleNamespace(**json.loads((run.folder / "export.json").read_text()))
    return run


@pytest.mark.parametrize("backend", [pytest.param(b, marks=_on(b)) for b in BACKENDS])
@pytest.mark.parametrize("stem", DRIVEN)
def test_the_notebook_runs_on_the_backend(stem, backend, runs):
    run = runs(backend)
    assert run.code == 0, run.output[-3000:]
    assert stem in run.checks, f"{stem}: no checks record ({run.output[-2000:]})"
    failed = [name for name, c in run.checks[stem].items() if not c["passed"] and not c.get("timing")]
    assert not failed and not run.errors(stem), failed
    text = run.text(stem)  # the spend line, a ledger or an answer names the model that answered
    assert MODELS[backend] in text, f"{stem} never names {MODELS[backend]}: its LLM parameter reached no model"
    assert "Skipped the real-model run" not in text
    assert PROXY_TOKEN not in text


@pytest.mark.background(RUNS["ollama"])
def test_each_notebook_sends_a_bounded_subset(ollama):
    """What each notebook announces it will send fits llm.REAL_CALLS, and the server got no more than announced but
    a call a notebook (a handful of calls goes unannounced: 05's first "Reply OK.", 08's two answers)."""
    announced = {stem: [int(n.replace(",", "")) for n in re.findall(r"about to send ([\d,]+) calls",
                                                                     ollama.text(stem))] for stem in DRIVEN}
    print(f"announced {announced}, sent {ollama.sent}; seconds",
          {r["notebook"][:2]: r["seconds"] for r in json.loads((ollama.out / "summary.json").read_text())})
    assert all(n <= llm.REAL_CALLS for ns in announced.values() for n in ns), announced
    assert 0 < ollama.sent <= sum(map(sum, announced.values())) + len(DRIVEN), (ollama.sent, announced)


@pytest.mark.background(RUNS["ollama"])
def test_the_export_holds_the_run(ollama):
    assert "answers of 'llama3.2'" in ollama.export.stdout
    held = json.loads(gzip.decompress(ollama.recording.read_bytes()))
    assert held["model"] == "llama3.2" and 0 < len(held["answers"]) <= ollama.sent


@pytest.mark.parametrize("stem", [pytest.param(s, marks=_on("ollama", "replay")) for s in DRIVEN])
def test_the_replay_equals_the_recorded_run(stem, ollama, runs):
    """The same checks (timings aside) and the same outputs, but for the lines naming the backend."""
    assert ollama.export.returncode == 0, ollama.export.stderr
    replay = runs("replay")
    assert ollama.code == 0 and replay.code == 0, (ollama.output + replay.output)[-3000:]
    values = [{n: c["value"] for n, c in run.checks[stem].items() if not c.get("timing")} for run in (ollama, replay)]
    assert values[0] == values[1]
    timing = {n for n, c in ollama.checks[stem].items() if c.get("timing")}
    a, b = (notebook_lines(run.out / "notebooks" / f"{stem}.world.ipynb", timing) for run in (ollama, replay))
    differ = [(a[i:j], b[k:m]) for op, i, j, k, m in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
              if op != "equal"]  # each a line that names the backend, on both sides
    assert all(all("ollama" in x for x in x_a) and all("replay" in x for x in x_b) for x_a, x_b in differ), differ
    assert len(a) > 10 and len(differ) < 5


@pytest.mark.background("free-models-dead")
def test_a_dead_backend_stops_the_notebook_with_one_line(background):
    """In one run, three copies of the first driven notebook, one a dead backend each: Colab without its module,
    Ollama not running, and a recording of the same model that lacks every prompt the notebook asks."""
    run = Run(background("free-models-dead"))
    recording = run.folder / "other.json"
    assert run.code == 1, run.output[-3000:]
    starts = {"colab": "LLM backend colab, model 'google/gemini-2.5-flash': google.colab.ai cannot be imported",
              "ollama": "LLM backend ollama at http://127.0.0.1:",
              "replay": f"LLM backend replay of {recording} (model 'llama3.2'): no recorded answer for step"}
    for k, backend in enumerate(BACKENDS):
        errors = run.errors(f"{k:02d}_dead_{backend}")
        assert [e.ename for e in errors] == ["LLMUnavailable"], backend
        assert "\n" not in errors[0].evalue and errors[0].evalue.startswith(starts[backend]), errors[0].evalue
    assert "Ollama is not running there" in run.errors("01_dead_ollama")[0].evalue
