"""An in-process fake of an OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

``FakeServer(script)`` answers POST /v1/chat/completions from ``script``: a list of steps, one per
request (the last repeats), each ``("ok", content)``, ``("status", code)``, ``("sleep", seconds)``,
``("empty", None)`` or ``("extractive", backend)`` (answer the prompt with ``backend``, by default the
offline ExtractiveLLM). ``latency`` (seconds) delays every answer, as a real endpoint's generation time;
concurrent requests are served concurrently, as a real server does. Every request's headers and body are kept
in ``requests`` (in arrival order; ``n`` counts them). A 401 echoes the bearer token in its error
message (as real servers echo a masked key), so tests can check that it never reaches our messages.
:func:`unreachable_url` is an endpoint where nothing listens.
"""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    def __init__(self, script, *, latency=0.0):
        self.script = list(script)
        self.latency = latency
        self.requests = []
        self.n = 0
        self.lock = threading.Lock()  # requests arrive on several threads at once
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                with server.lock:
                    server.requests.append(request)
                    kind, arg = server.script[min(server.n, len(server.script) - 1)]
                    server.n += 1
                if server.latency:
                    time.sleep(server.latency)
                if kind == "sleep":
                    time.sleep(arg)
                    kind, arg = "ok", "late"
                if kind == "status":
                    message = f"fake {arg}"
                    if arg == 401:
                        message += f": Incorrect API key provided: {self.headers.get('Authorization', '')[7:]}"
                    self.send_response(arg)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(json.dumps({"error": {"message": message}}).encode())
                    return
                content = None if kind == "empty" else arg
                if kind == "extractive":
                    from cookbook.llm import ExtractiveLLM

                    body_json = request["body"]
                    content = (arg or ExtractiveLLM()).complete(body_json["messages"][0]["content"],
                                                       max_tokens=body_json.get("max_tokens") or 500)
                payload = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def unreachable_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: a port bound, then closed (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
