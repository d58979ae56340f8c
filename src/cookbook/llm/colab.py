"""Colab's built-in model through its public API, ``google.colab.ai`` (:class:`ColabLLM`): free for every
Colab user, no key of your own. ``ai.generate_text(prompt, model_name=...)`` sends one user message to a
model proxy (an OpenAI-compatible server underneath, so its errors are the ``openai`` SDK's) and returns the
text; ``ai.list_models()`` names the models on offer. Outside Colab the module does not import; the proxy's
token comes from the ``MODEL_PROXY_API_KEY`` environment variable or Colab's secrets. Source read:
googlecolab/colabtools ``google/colab/ai.py``. Tested against a stand-in module (tests/test_backends.py).
"""

from __future__ import annotations

import os
import threading

from .base import LLMUnavailable, add_secret, redact
from .openai_compatible import OpenAICompatibleLLM, _snippet, _status_outcome

__all__ = ["COLAB_MODEL", "ColabLLM"]

# generate_text's own default in google/colab/ai.py; COLAB_MODEL in the environment overrides it.
COLAB_MODEL = "google/gemini-2.5-flash"
_TOKEN = "MODEL_PROXY_API_KEY"  # where google.colab.ai looks first, then Colab's secrets


def _import_ai(model: str):
    """``google.colab.ai``, or :class:`LLMUnavailable` saying we are not in Colab."""
    try:
        from google.colab import ai
    except ImportError as e:  # no google.colab at all, or a Colab without the public model API
        raise LLMUnavailable(f"LLM backend colab, model {model!r}: google.colab.ai cannot be imported "
                             f"({_snippet(e, 100)}): LLM='colab' runs only in Google Colab; elsewhere use "
                             "'ollama', 'openai' or 'replay'") from None
    return ai


def _proxy_token(model: str) -> str:
    """The model proxy's token: ``$MODEL_PROXY_API_KEY``, else Colab's secret of that name (copied into the
    environment, as ``google.colab.ai`` does); :class:`LLMUnavailable` when there is none."""
    token = os.environ.get(_TOKEN)
    if not token:
        try:
            from google.colab import userdata
            token = userdata.get(_TOKEN)
        except Exception as e:  # SecretNotFoundError, NotebookAccessError, a timeout outside the Colab UI
            raise LLMUnavailable(f"LLM backend colab, model {model!r}: no model proxy token ({type(e).__name__}: "
                                 f"{_snippet(e, 100)}); Colab provides {_TOKEN} to notebooks run in its UI") from None
        if not token:
            raise LLMUnavailable(f"LLM backend colab, model {model!r}: the model proxy token {_TOKEN} is empty")
        os.environ[_TOKEN] = token
    add_secret(token)
    return token


class ColabLLM(OpenAICompatibleLLM):
    """Colab's built-in model: each call is ``google.colab.ai.generate_text(prompt, model_name=model)``, with
    the OpenAI path's retries, whole-call ``deadline``, rate limits and stop rules (it reuses
    :meth:`OpenAICompatibleLLM.complete`; the ``openai`` SDK's errors that ``generate_text`` lets through are
    classified the same way). ``model`` defaults to ``$COLAB_MODEL``, then :data:`COLAB_MODEL`. ``ai`` is the
    module to call (by default ``google.colab.ai``; tests pass a stand-in).

    Constructing one checks what can be checked before a prompt is sent, each failure one
    :class:`LLMUnavailable` line naming the backend, the model and the cause: not in Colab (the module does not
    import), no model proxy token, and — where ``ai.list_models()`` exists — a model Colab does not offer.

    ``generate_text`` takes no ``max_tokens``, temperature or seed, so the answer's length is the prompt's
    instructions' and the server's default sampling applies (:attr:`params` is ``{}``); the ledger counts what
    came back.

    >>> try:
    ...     ColabLLM()  # outside Colab
    ... except LLMUnavailable as e:
    ...     print(str(e).split(' (')[0])
    LLM backend colab, model 'google/gemini-2.5-flash': google.colab.ai cannot be imported
    """

    def __init__(self, model: str | None = None, *, ai=None, concurrency: int = 4, timeout: float = 60.0,
                 deadline: float = 180.0, **kwargs):
        model = model or os.environ.get("COLAB_MODEL") or COLAB_MODEL
        self._ai = ai if ai is not None else _import_ai(model)
        _proxy_token(model)
        super().__init__(model, api_key_env=_TOKEN, concurrency=concurrency, timeout=timeout, deadline=deadline,
                         **kwargs)
        self._check_model()

    def __repr__(self) -> str:
        return f"ColabLLM(model={self.model!r})"

    def endpoint(self) -> str:
        """``"LLM backend colab (google.colab.ai), model '<model>'"``: how every message names it.

        >>> ColabLLM.endpoint(type("Stub", (), {"model": "google/gemini-2.5-flash"})())
        "LLM backend colab (google.colab.ai), model 'google/gemini-2.5-flash'"
        """
        return f"LLM backend colab (google.colab.ai), model {self.model!r}"

    @property
    def params(self) -> dict:
        """``{}``: ``generate_text`` sends no generation parameters (what :class:`CachedLLM` keys by).

        >>> ColabLLM.params.fget(None)
        {}
        """
        return {}

    def _check_model(self) -> None:
        lister = getattr(self._ai, "list_models", None)
        if lister is None:  # an older google.colab.ai: the first call will tell
            return
        try:
            offered = [str(m) for m in lister()]
        except Exception as e:  # ModelProxyServiceError, RuntimeManagementError, a refused token
            raise LLMUnavailable(f"{self.endpoint()}: ai.list_models() failed ({type(e).__name__}: "
                                 f"{_snippet(e, 120)})") from None
        if self.model not in offered:
            raise LLMUnavailable(f"{self.endpoint()}: Colab does not offer this model; ai.list_models() names "
                                 f"{offered[:8]}{' …' if len(offered) > 8 else ''} (set COLAB_MODEL)")

    def _attempt(self, prompt: str, max_tokens: int, timeout: float, expired=None) -> tuple[str, str, int | None,
                                                                                          float | None]:
        """One ``generate_text`` call in a worker thread, waited for at most ``timeout`` seconds (the API
        takes no timeout of its own, so ``expired`` is not needed); the outcome as
        :meth:`OpenAICompatibleLLM._attempt` returns it."""
        import openai

        box: dict = {}

        def call():
            try:
                box["text"] = self._ai.generate_text(prompt, model_name=self.model)
            except BaseException as e:  # handed to the caller's thread, classified there
                box["error"] = e

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            return "retry", f"no answer within the timeout of {timeout:.3g} s", None, None
        e = box.get("error")
        if e is None:
            text = box.get("text")
            if text is None:  # no content (a blocked answer): malformed output, as an empty completion is
                return "ok", "", 200, None
            if not isinstance(text, str):
                return "stop", f"generate_text returned {type(text).__name__}, not text", 200, None
            return "ok", redact(text), 200, None
        if isinstance(e, openai.APITimeoutError):
            return "retry", f"no answer within the timeout of {timeout:.3g} s", None, None
        if isinstance(e, openai.APIConnectionError):
            return "connect", f"cannot connect to the model proxy ({_snippet(e.__cause__ or e)})", None, None
        if isinstance(e, openai.APIStatusError):
            return _status_outcome(e)
        if isinstance(e, ImportError | RuntimeError) and not isinstance(e, openai.OpenAIError):
            # google.colab.errors: not in (external) Colab, or the runtime refuses
            return "stop", f"{type(e).__name__}: {_snippet(e, 120)}", None, None
        return "fail", f"{type(e).__name__}: {_snippet(e, 120)}", None, None
