"""A recorded real model as a backend: :class:`RecordedLLM` answers the series' ``extract_graph`` and ``glean``
prompts with what GPT-4o wrote for the same text unit (A Christmas Carol, :mod:`cookbook.data.recorded`), so the
series' own pipeline (:func:`~cookbook.index.graph_extraction.extract_graph`: the parser, gleaning, merging) reads
the real answers. Offline and deterministic; it knows nothing but the recording: any other prompt, or a text it
has no answer for, stops the run with one :class:`~cookbook.llm.base.LLMUnavailable` naming it.

The recorded answers were written for nano-graphrag's prompt (GraphRAG's, with its own entity types), not the
series' prompt: a replay shows what the model wrote, not what it would write to this prompt.

>>> from cookbook.data.recorded import load_recorded
>>> from cookbook.llm.prompts import prompt
>>> cc = load_recorded("christmas-carol")
>>> llm = RecordedLLM(cc)
>>> llm.complete(prompt("extract_graph", entity_types="person", text=cc.documents[3].text), max_tokens=600)[:32]
'("entity"<|>"Scrooge"<|>"person"'
"""

from __future__ import annotations

from ..data.recorded import RecordedCorpus
from .base import LLMUnavailable
from .prompts import COMPLETE, parse_prompt

__all__ = ["RecordedLLM"]


class RecordedLLM:
    """Replays ``recorded``'s extraction (first prompt) and gleaning (``glean`` prompt) answers by the TEXT the
    prompt carries. Every gleaning round of a text gets its one recorded gleaning answer (nano recorded one round),
    so a second round adds nothing new and :func:`~cookbook.index.graph_extraction.extract_records` stops there.
    ``model`` names the recorded model.

    >>> from cookbook.data.recorded import load_recorded
    >>> RecordedLLM(load_recorded("christmas-carol")).model
    'gpt-4o (recorded)'
    """

    def __init__(self, recorded: RecordedCorpus):
        if not isinstance(recorded, RecordedCorpus):
            raise TypeError(f"recorded must be a RecordedCorpus (load_recorded), got {type(recorded).__name__}")
        self.name = recorded.name
        self._answers: dict[tuple[str, str], str] = {}
        models = set()
        for d in recorded.documents:
            for a in recorded.answers_of(d.id):
                self._answers[(a.step, d.text.strip())] = a.text
                models.add(a.model)
        if not self._answers:
            raise ValueError(f"recording {recorded.name!r} holds no extraction answers to replay")
        self.model = f"{'/'.join(sorted(models))} (recorded)"
        self._rounds: dict[str, int] = {}

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        """The recorded answer to an ``extract_graph`` or ``glean`` prompt over one of the recording's units
        (``max_tokens`` is not applied: the answer is as the model wrote it).

        >>> from cookbook.data.recorded import load_recorded
        >>> from cookbook.llm.prompts import prompt
        >>> cc = load_recorded("christmas-carol")
        >>> p = prompt("glean", entity_types="person", text=cc.documents[0].text, previous="")
        >>> RecordedLLM(cc).complete(p, max_tokens=600) == cc.answers_of("CC00", "glean")[0].text
        True
        """
        task, sections = parse_prompt(prompt)
        if task not in ("extract_graph", "glean"):
            raise LLMUnavailable(f"the recording {self.name!r} holds no answer to a {task!r} prompt: only graph "
                                 "extraction and gleaning are recorded")
        text = sections.get("TEXT", "").strip()
        answer = self._answers.get((task, text))
        if answer is None:
            if task == "glean" and ("extract_graph", text) in self._answers:
                return COMPLETE
            raise LLMUnavailable(f"the recording {self.name!r} holds no {task} answer for this text "
                                 f"({text[:40]!r}...): replay only its own text units")
        return answer
