"""Record once, replay for the class: a real model's answers, as the on-disk cache holds them
(:class:`~cookbook.llm.cached.CachedLLM`), exported to one file (:func:`export_recording`, ``cookbook record
export``), and a backend that answers only from such a file (:class:`ReplayLLM`, ``LLM="replay"``): no network,
no key, the same answers for every student, in Colab or not. A prompt the recording does not hold stops the run
with one :class:`~cookbook.llm.base.LLMUnavailable` line naming the step and the prompt's first line.

A recording is JSON (gzip-compressed when its name ends in ``.gz``)::

    {"format": "graphrag-cookbook recording", "version": 1, "model": "...", "params": {...},
     "answers": [{"prompt": "...", "max_tokens": 500, "text": "..."}, ...]}

sorted by prompt and ``max_tokens``, so that one cache exports to the same bytes every time.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
import zlib
from collections import Counter
from pathlib import Path

from .._validate import integer, string
from ..cache import cache_dir
from ..paths import place_files
from .base import LLMUnavailable, public_url, redact

__all__ = ["MAX_RECORDING_BYTES", "RECORDING_FORMAT", "ReplayLLM", "cached_models", "export_recording",
           "read_recording"]

RECORDING_FORMAT = "graphrag-cookbook recording"
# A notebook's real-model section sends at most a few hundred calls: its recording is megabytes, never this.
MAX_RECORDING_BYTES = 256 * 2**20


def _cache_entries(cache: str | Path | None = None):
    """Every readable model answer in the cache folder: ``(inputs, text)`` with inputs ``{model, prompt,
    max_tokens, params}`` (what :meth:`CachedLLM.key` stores)."""
    folder = Path(cache) if cache is not None else cache_dir()
    for path in sorted(folder.glob("llm-*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            inputs, text = entry["inputs"], entry["value"]
            if isinstance(text, str) and text and isinstance(inputs, dict) and {"model", "prompt", "max_tokens"} <= set(
                    inputs) and isinstance(inputs["prompt"], str):
                yield inputs, text
        except (OSError, ValueError, KeyError, TypeError, RecursionError):  # not an entry of ours
            continue


def _known_secrets() -> None:
    """Register the keys and URL credentials the live backends read from the environment (:func:`redact` then
    masks them): the exporting process may not have made a backend."""
    for name in ("OPENAI_API_KEY", "MODEL_PROXY_API_KEY", "OLLAMA_API_KEY"):
        if os.environ.get(name):
            from .base import add_secret

            add_secret(os.environ[name])
    for name in ("OPENAI_BASE_URL", "OLLAMA_HOST", "FALKORDB_URL"):
        if os.environ.get(name):
            public_url(os.environ[name])


def _holds_secret(prompt: str, text: str) -> bool:
    """Whether a cached prompt or answer holds a known secret or an OpenAI-key-shaped string: a recording is
    shared, so such an answer is left out of it."""
    return redact(prompt) != prompt or redact(text) != text


def cached_models(cache: str | Path | None = None) -> dict[str, int]:
    """``{model: answers}`` the cache holds (the stand-in's own entries included), by model name.

    >>> import tempfile
    >>> from cookbook.cache import write_entry
    >>> os.environ["COOKBOOK_CACHE"] = tempfile.mkdtemp()
    >>> write_entry("llm", {"model": "m", "prompt": "TASK: answer", "max_tokens": 5, "params": {}}, "OK")
    >>> cached_models()
    {'m': 1}
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    return dict(sorted(Counter(inputs["model"] for inputs, _ in _cache_entries(cache)).items()))


def export_recording(path: str | Path, *, model: str | None = None, cache: str | Path | None = None,
                     force: bool = False) -> dict:
    """Write the cached answers of ``model`` (the only real model the cache holds when None) to ``path``;
    return ``{"path", "model", "answers", "left_out"}``. A file already at ``path`` (a link, a dangling one too)
    is kept unless ``force``. When the model's answers were made with several generation parameter sets, the
    most common one is exported; an answer whose prompt or text holds a secret (a key this process knows, from
    the environment too, or anything shaped like an OpenAI key) is never exported; ``left_out`` counts both.
    The file is written beside ``path`` and renamed into place: a link at ``path`` is replaced (with
    ``force``), never written through.

    >>> import tempfile
    >>> from cookbook.cache import write_entry
    >>> os.environ["COOKBOOK_CACHE"] = d = tempfile.mkdtemp()
    >>> write_entry("llm", {"model": "llama3.2", "prompt": "TASK: answer\\n## QUESTION\\nHi?", "max_tokens": 5,
    ...                     "params": {"seed": None, "temperature": 0.0}}, "Hello.")
    >>> info = export_recording(f"{d}/class.json")
    >>> info["model"], info["answers"], read_recording(f"{d}/class.json")["answers"][0]["text"]
    ('llama3.2', 1, 'Hello.')
    >>> del os.environ["COOKBOOK_CACHE"]
    """
    path = Path(path)
    if path.is_dir():  # never replaced, even with force: a recording is one file
        raise ValueError(f"{path} is a folder: name the recording's file, e.g. {path / 'class.json.gz'}")
    if os.path.lexists(path) and not force:  # a dangling link is the user's too
        raise FileExistsError(f"{path} exists; pass force=True (cookbook record export --force) to replace it")
    _known_secrets()
    entries = list(_cache_entries(cache))
    models = sorted({i["model"] for i, _ in entries} - {"extractive"})
    if model is None:
        if len(models) != 1:
            raise ValueError(f"name the model to export: the cache ({cache or cache_dir()}) holds answers of "
                             f"{models or 'no real model'}" + ("" if models else " (run a notebook with a real LLM)"))
        model = models[0]
    mine = [(i, t) for i, t in entries if i["model"] == model]
    if not mine:
        raise ValueError(f"the cache ({cache or cache_dir()}) holds no answers of model {model!r}; it holds {models}")
    param_sets = Counter(json.dumps(i.get("params", {}), sort_keys=True) for i, _ in mine)
    params = param_sets.most_common(1)[0][0]
    kept = sorted(({"prompt": i["prompt"], "max_tokens": i["max_tokens"], "text": t} for i, t in mine
                   if json.dumps(i.get("params", {}), sort_keys=True) == params and not _holds_secret(i["prompt"], t)),
                  key=lambda a: (a["prompt"], a["max_tokens"]))
    doc = {"format": RECORDING_FORMAT, "version": 1, "model": model, "params": json.loads(params), "answers": kept}
    blob = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True).encode()
    # written beside and renamed into place: no half file, no temporary name of the user's touched, no link followed
    place_files({path.name: gzip.compress(blob, mtime=0) if path.suffix == ".gz" else blob}, path.parent, force=force)
    return {"path": str(path), "model": model, "answers": len(kept), "left_out": len(mine) - len(kept)}


def read_recording(path: str | Path) -> dict:
    """The recording at ``path``, checked: a clear ``ValueError`` naming the file when it is not one (damaged,
    of the wrong shape, or larger than :data:`MAX_RECORDING_BYTES`, packed or unpacked).

    >>> read_recording("/nonexistent/class.json")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no recording at /nonexistent/class.json (make one with `cookbook record export FILE`)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no recording at {path} (make one with `cookbook record export FILE`)")
    if path.stat().st_size > MAX_RECORDING_BYTES:
        raise ValueError(f"{path} is not a recording of this series: {path.stat().st_size:,} bytes, more than "
                         f"{MAX_RECORDING_BYTES:,}")
    raw = path.read_bytes()
    try:
        if raw[:2] == b"\x1f\x8b":  # read at most the limit: a small file can unpack to gigabytes
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacked:
                raw = unpacked.read(MAX_RECORDING_BYTES + 1)
        if len(raw) <= MAX_RECORDING_BYTES:
            doc = json.loads(raw)
    except (ValueError, OSError, EOFError, zlib.error, RecursionError) as e:  # cut, damaged, or nested too deep
        raise ValueError(f"{path} is not a recording: not JSON ({e})") from None
    if len(raw) > MAX_RECORDING_BYTES:
        raise ValueError(f"{path} is not a recording of this series: it unpacks to more than "
                         f"{MAX_RECORDING_BYTES:,} bytes")
    if not isinstance(doc, dict) or doc.get("format") != RECORDING_FORMAT or doc.get("version") != 1:
        raise ValueError(f"{path} is not a recording (no 'format': {RECORDING_FORMAT!r}, version 1)")
    answers = doc.get("answers")
    if not isinstance(doc.get("model"), str) or not isinstance(answers, list) or not all(
            isinstance(a, dict) and isinstance(a.get("prompt"), str) and isinstance(a.get("text"), str)
            and isinstance(a.get("max_tokens"), int) for a in answers):
        raise ValueError(f"{path} is not a recording: it needs a 'model' and 'answers' of prompt, max_tokens, text")
    if not isinstance(doc.get("params", {}), dict | None) or any(
            isinstance(a["max_tokens"], bool) or a["max_tokens"] < 1 for a in answers):
        raise ValueError(f"{path} is not a recording: 'params' must be an object and every max_tokens a positive "
                         "integer")
    seen: dict = {}
    for a in answers:
        if seen.setdefault((a["prompt"], a["max_tokens"]), a["text"]) != a["text"]:
            raise ValueError(f"{path} is damaged: two different answers to the same prompt and max_tokens "
                             f"({_first_lines(a['prompt'])[1]!r})")
    return doc


def _first_lines(prompt: str) -> tuple[str, str]:
    """``(step, first line)``: the prompt's task (its ``TASK:`` line) and its first line of content."""
    lines = [ln for ln in prompt.splitlines() if ln.strip()]
    step = lines[0].removeprefix("TASK:").strip() if lines and lines[0].startswith("TASK:") else "?"
    content = next((ln for ln in lines[1:] if not ln.startswith("## ")), lines[0] if lines else "")
    return step, content[:100] + ("…" if len(content) > 100 else "")


class ReplayLLM:
    """Answers only from a recording (:func:`export_recording`): the recorded text of the same prompt and
    ``max_tokens``, nothing sent anywhere. ``model`` is the recorded model's name, so a
    :class:`~cookbook.llm.ledger.TokenLedger` prices a replay as the run it replays. A prompt not recorded
    raises :class:`LLMUnavailable` (the run stops: a replay that made answers up would not be the recorded
    run), naming the file, the step and the prompt's first line of content; ``misses`` counts them. The cache
    keeps no empty answer and no failed call, so a prompt the recorded run got nothing for is not recorded either:
    run the recording run once more before exporting (it asks only those again).

    >>> import tempfile
    >>> from cookbook.cache import write_entry
    >>> os.environ["COOKBOOK_CACHE"] = d = tempfile.mkdtemp()
    >>> write_entry("llm", {"model": "llama3.2", "prompt": "TASK: answer\\n## QUESTION\\nHi?", "max_tokens": 5,
    ...                     "params": {}}, "Hello.")
    >>> _ = export_recording(f"{d}/class.json.gz")
    >>> replay = ReplayLLM(f"{d}/class.json.gz")
    >>> replay.model, replay.complete("TASK: answer\\n## QUESTION\\nHi?", max_tokens=5)
    ('llama3.2', 'Hello.')
    >>> try:
    ...     replay.complete("TASK: answer\\n## QUESTION\\nWho?", max_tokens=5)
    ... except LLMUnavailable as e:
    ...     print(str(e).split(": ", 1)[1][:66])
    no recorded answer for step 'answer' (max_tokens 5), prompt 'Who?'
    >>> replay.misses
    1
    >>> del os.environ["COOKBOOK_CACHE"]
    """

    def __init__(self, path: str | Path, *, concurrency: int = 1):
        doc = read_recording(path)
        self.path = str(path)
        self.model = doc["model"]
        self.params = dict(doc.get("params") or {})
        self.concurrency = integer(concurrency, "concurrency")
        self.answers = {(a["prompt"], a["max_tokens"]): a["text"] for a in doc["answers"]}
        self.misses = 0
        self._asked: set = set()  # prompts answered before in this process: the recorded run's cache hits
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ReplayLLM({self.path!r}, model={self.model!r}, answers={len(self.answers)})"

    def endpoint(self) -> str:
        """``"LLM backend replay of <file> (model '<model>')"``: how every message names it.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = open(f"{d}/r.json", "w").write('{"format": "graphrag-cookbook recording", "version": 1, '
        ...                                        '"model": "llama3.2", "answers": []}')
        ...     ReplayLLM(f"{d}/r.json").endpoint().endswith("r.json (model 'llama3.2')")
        True
        """
        return f"LLM backend replay of {self.path} (model {self.model!r})"

    def complete_with_hit(self, prompt: str, *, max_tokens: int) -> tuple[str, bool]:
        """``(text, asked before)``: the recorded answer, and whether this process asked the same before — where
        the recorded run read its own cache, so a :class:`~cookbook.llm.ledger.TokenLedger` counts the replay's
        calls and cache hits as the recorded run's.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = open(f"{d}/r.json", "w").write('{"format": "graphrag-cookbook recording", "version": 1, '
        ...         '"model": "m", "answers": [{"prompt": "TASK: answer", "max_tokens": 5, "text": "OK"}]}')
        ...     replay = ReplayLLM(f"{d}/r.json")
        ...     [replay.complete_with_hit("TASK: answer", max_tokens=5) for _ in range(2)]
        [('OK', False), ('OK', True)]
        """
        text = self.complete(prompt, max_tokens=max_tokens)
        with self._lock:
            hit = (prompt, max_tokens) in self._asked
            self._asked.add((prompt, max_tokens))
        return text, hit

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The recorded answer to ``prompt`` at ``max_tokens`` (see the class doc).

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = open(f"{d}/r.json", "w").write('{"format": "graphrag-cookbook recording", "version": 1, '
        ...         '"model": "m", "answers": [{"prompt": "TASK: answer", "max_tokens": 5, "text": "OK"}]}')
        ...     ReplayLLM(f"{d}/r.json").complete("TASK: answer", max_tokens=5)
        'OK'
        """
        text = self.answers.get((string(prompt, "prompt"), integer(max_tokens, "max_tokens")))
        if text is None:
            self.misses += 1
            step, first = _first_lines(prompt)
            raise LLMUnavailable(f"{self.endpoint()}: no recorded answer for step {step!r} (max_tokens {max_tokens}), "
                                 f"prompt {first!r}; the recording was made from another run (another notebook, "
                                 "scale, corpus, seed or package version): record this run, or run it with "
                                 "LLM='extractive'")
        return text
