"""An in-process fake of an OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

``FakeServer(script)`` answers POST /v1/chat/completions from ``script``: a list of steps, one per
request (the last repeats), each one of

- ``("ok", content)``: a chat completion whose message is ``content``; ``("empty", None)``: its content null;
- ``("extractive", backend)``: answer the prompt with ``backend`` (by default the offline ExtractiveLLM);
- ``("status", code)``: that HTTP status with OpenAI's error body ``{"error": {"message": "fake <code>"}}``;
  a 401 echoes the bearer token in its message (as real servers echo a masked key);
- ``("quota", None)``: HTTP 429 with OpenAI's body for an exhausted quota (code ``insufficient_quota``);
- ``("echo", code)``: that status with the whole bearer token in the error message (a server that echoes the key);
- ``("raw", (code, content_type, text[, headers]))``: that status, content type and body verbatim (an HTML
  page, an empty body, JSON that is not a chat completion), with any extra headers (``Retry-After``);
- ``("bytes", (code, content_type, data))``: that status, content type and body as raw bytes (not UTF-8);
- ``("trickle", (interval, content))``: headers at once, then a chat completion of ``content`` one byte every
  ``interval`` seconds (a crawling server: each read is quick, the whole answer is not);
- ``("sleep", seconds)``: answer "late" after that long; ``("hang", None)``: accept the request and never
  answer (until the server closes).

``models`` (a list of names) makes it an Ollama as the OpenAI SDK sees one: GET /v1/models lists them (any
other GET is a 404, as when no ``models`` are given).
``latency`` (seconds) delays every answer, as a real endpoint's generation time; concurrent requests are
served concurrently, as a real server does. Every request's headers and body are kept in ``requests`` (in
arrival order; ``n`` counts them). :func:`unreachable_url` is an endpoint where nothing listens.
"""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

QUOTA_BODY = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                        "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}


def completion(content):
    """OpenAI's chat-completion body with message ``content``."""
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class FakeServer:
    def __init__(self, script, *, latency=0.0, models=None):
        self.script = list(script)
        self.models = models
        self.latency = latency
        self.requests = []
        self.n = 0
        self.lock = threading.Lock()  # requests arrive on several threads at once
        self.closing = threading.Event()  # set on exit: hung requests end then
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def send(self, code, content_type, data: bytes, headers=()):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                for name, value in dict(headers).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                    pass

            def do_GET(self):
                if server.models is None or self.path.rstrip("/") != "/v1/models":
                    return self.send(404, "application/json", b'{"error": {"message": "404 page not found"}}')
                listed = [{"id": m, "object": "model", "created": 0, "owned_by": "library"} for m in server.models]
                self.send(200, "application/json", json.dumps({"object": "list", "data": listed}).encode())

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                with server.lock:
                    server.requests.append(request)
                    kind, arg = server.script[min(server.n, len(server.script) - 1)]
                    server.n += 1
                if server.latency:
                    time.sleep(server.latency)
                token = self.headers.get("Authorization", "")[7:]
                if kind == "hang":
                    server.closing.wait()
                    return
                if kind == "sleep":
                    time.sleep(arg)
                    kind, arg = "ok", "late"
                if kind in ("status", "echo"):
                    message = f"fake {arg}"
                    if arg == 401 or kind == "echo":
                        message += f": Incorrect API key provided: {token}"
                    return self.send(arg, "application/json", json.dumps({"error": {"message": message}}).encode())
                if kind == "quota":
                    return self.send(429, "application/json", json.dumps(QUOTA_BODY).encode())
                if kind == "bytes":
                    return self.send(*arg)
                if kind == "trickle":
                    interval, arg = arg
                    data = json.dumps(completion(arg)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    try:
                        for i in range(len(data)):
                            if server.closing.is_set():
                                return
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            time.sleep(interval)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                if kind == "raw":
                    code, content_type, text, *headers = arg
                    return self.send(code, content_type, text.encode(), *headers)
                content = None if kind == "empty" else arg
                if kind == "extractive":
                    from cookbook.llm import ExtractiveLLM

                    body_json = request["body"]
                    content = (arg or ExtractiveLLM()).complete(body_json["messages"][0]["content"],
                                                                max_tokens=body_json.get("max_tokens") or 500)
                self.send(200, "application/json", json.dumps(completion(content)).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # serve_forever checks for shutdown() every poll_interval (0.5 s by default): every test with a server
        # waited that long at its end, ~0.5 s idle per test over ~100 tests.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def unreachable_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: a port bound, then closed (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class FakeModel:
    """A model for the fakes to answer with (``("extractive", FakeModel())``, or a stand-in google.colab.ai): the
    offline stand-in's answers, a tie for the judge's prompts (the stand-in refuses to judge), and "no records"
    for graph extraction (the stand-in needs a corpus's gazetteer for it)."""

    model = "fake"

    def complete(self, prompt, *, max_tokens):
        from cookbook.llm import ExtractiveLLM

        if prompt.startswith("TASK: judge"):
            return '{"winner": "tie", "reason": "Both answers name the same things."}'
        try:
            return ExtractiveLLM().complete(prompt, max_tokens=max_tokens)
        except ValueError:
            return "(no records)"
