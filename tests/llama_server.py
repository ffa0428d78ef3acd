"""A real judge server for the tests and benchmarks: llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server``) on a GGUF model, on 127.0.0.1, started the way a user starts it;
and ``RecordingProxy``, a loopback HTTP proxy in front of it that keeps every request body and
every answer as the server sent it (its ``usage``, its ``logprobs``), so that tests can hold what
the judge reports against what the server said."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(model_file, n_ctx=4096, extra=(), log=None, start_timeout=180):
    """llama-cpp-python's server on ``model_file``; yields its base URL (``http://127.0.0.1:N/v1``)."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), *extra]
    out = open(log or os.devnull, "w")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + start_timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"the server stopped at start-up (exit {proc.returncode}): "
                                       f"{' '.join(cmd)}") from None
                if time.time() > deadline:
                    raise RuntimeError(f"the server did not start within {start_timeout} s") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()


class RecordingProxy:
    """Forwards every POST to ``upstream`` (a base URL ending in /v1) and keeps, per request, the
    body sent and the status and JSON answer received (``exchanges``)."""

    def __init__(self, upstream):
        self.upstream = upstream.rstrip("/")
        self.exchanges = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _forward(self, data):
                path = self.path[len("/v1"):] if self.path.startswith("/v1") else self.path
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                req = urllib.request.Request(proxy.upstream + path, data=data, headers=headers,
                                             method="POST" if data is not None else "GET")
                try:
                    with urllib.request.urlopen(req, timeout=600) as r:
                        status, body = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, body = e.code, e.read()
                if data is not None:
                    try:
                        answer = json.loads(body)
                    except ValueError:
                        answer = None
                    with proxy._lock:
                        proxy.exchanges.append({"task": self.headers.get("X-Textgen-Task"),
                                                "request": json.loads(data), "status": status, "answer": answer})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def usage(self, since=0):
        """The requests and the tokens the server reported, over the exchanges from ``since`` on."""
        with self._lock:
            done = self.exchanges[since:]
        ok = [e["answer"]["usage"] for e in done if e["status"] == 200 and isinstance(e["answer"], dict)]
        return {"requests": len(done), "prompt_tokens": sum(u["prompt_tokens"] for u in ok),
                "completion_tokens": sum(u["completion_tokens"] for u in ok)}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
