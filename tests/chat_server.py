"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

It answers ``POST /v1/chat/completions`` over HTTP/1.1 from a thread per connection, with a
scripted ``responder(body) -> str`` or ``responder(body, task) -> str`` (``task``: the request's
stable task id from its ``X-Textgen-Task`` header; the answer may also be a dict with
``content`` and ``logprobs``), a fixed latency, and faults injected per request from a queue:

- ``("429", seconds)``: HTTP 429 with ``Retry-After: seconds``
- ``"500"``: HTTP 500
- ``("hang", seconds)``: wait that long before answering (past the client's time-out)
- ``"garbage"``: HTTP 200 with a body that is not JSON
- ``("length", text)``: HTTP 200 with ``text`` as content and finish_reason ``length``
- ``"drop"``: close the connection without an answer
- ``"not_utf8"``: HTTP 200 with a body that is not UTF-8
- ``"no_message"``: HTTP 200 with ``{"choices": [{"message": "hello"}]}``
- ``("status", code, message)``: HTTP ``code`` with an OpenAI-style error body carrying ``message``
  (``{key}`` in it is replaced by the request's bearer token: a server that echoes the key)
- ``("length", text)`` may also be ``("length", text, tokens)`` with the completion token count
- ``("answer", text)``: HTTP 200 with ``text`` as the content instead of the responder's answer

``fault_fn(body, task)``, when given, picks a fault (or None) for each request the queue leaves
without one: random fault injection for the trust tests.

``reject`` (a set of response_format types) answers 400 to requests asking for them. The
server counts requests and the most it had in flight at once. Bounded by the test: it only
answers what the client sends and stops with ``close()``.
"""

import collections
import inspect
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _tokens(text):
    return max(1, len(str(text)) // 4)


def completion_payload(body, out, finish="stop"):
    """The chat.completion JSON for ``out`` (a str, or a dict with content and logprobs)."""
    content, logprobs = (out.get("content"), out.get("logprobs")) if isinstance(out, dict) else (out, None)
    prompt = " ".join(str(m.get("content")) for m in body.get("messages", []))
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
    if body.get("logprobs") and logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
        "choices": [choice],
        "usage": {"prompt_tokens": _tokens(prompt), "completion_tokens": _tokens(content),
                  "total_tokens": _tokens(prompt) + _tokens(content)},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)  # a client closing an idle keep-alive is no error


def schema_answer(body):
    """An answer that fits the request's JSON schema, for any metric's task: extracted items are
    the sentences of the first data block; the i-th verdict is the schema's first choice for even
    i and its second for odd i (one verdict per item or context, as the schema's count asks); a
    score is 4. Without a schema (a plain-text request), one "yes" verdict."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    if not schema:
        return '{"verdicts": [{"index": 1, "reason": "no schema", "verdict": "yes"}]}'
    text = body["messages"][1]["content"].split(">>>\n", 1)[-1].split("\n<<<END", 1)[0]
    answer = {}
    for key, prop in schema["properties"].items():
        if key == "score":
            answer[key] = 4
        elif key == "reason":
            answer[key] = "a reason"
        elif "minItems" in prop:
            choices = prop["items"]["properties"]["verdict"]["enum"]
            answer[key] = [{"index": i + 1, "reason": f"reason {i}",
                            "verdict": choices[i % 2 if len(choices) > 1 else 0]}
                           for i in range(prop["minItems"])]
        else:
            answer[key] = [s.strip() for s in text.replace("!", ".").split(".") if s.strip()]
    return json.dumps(answer)


class ChatServer:
    def __init__(self, responder=None, latency=0.0, reject=(), fault_fn=None):
        responder = responder or (lambda body: '{"verdict": "yes"}')
        takes_task = len(inspect.signature(responder).parameters) >= 2
        self.responder = responder if takes_task else (lambda body, task: responder(body))
        self.latency = latency
        self.reject = set(reject)
        self.faults = collections.deque()
        self.fault_fn = fault_fn
        self.bodies = []
        self.headers = []
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def setup(self):
                super().setup()
                # headers and body go out as two writes: without TCP_NODELAY, Nagle's algorithm
                # and the client's delayed ACK stall every keep-alive answer by ~40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(self, status, payload, extra=None):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                task = self.headers.get("X-Textgen-Task", "")
                with server._lock:
                    server.count += 1
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    fault = server.faults.popleft() if server.faults else None
                    if fault is None and server.fault_fn is not None:
                        fault = server.fault_fn(body, task)
                try:
                    self._answer(body, fault, task,
                                 self.headers.get("Authorization", "").removeprefix("Bearer "))
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, body, fault, task, key):
                if server.latency:
                    time.sleep(server.latency)
                kind = fault[0] if isinstance(fault, tuple) else fault
                if kind == "429":
                    return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": str(fault[1])})
                if kind == "500":
                    return self._send(500, {"error": {"message": "internal error"}})
                if kind == "hang":
                    time.sleep(fault[1])
                if kind == "garbage":
                    return self._send(200, b"<html>502 Bad Gateway</html>")
                if kind == "not_utf8":
                    return self._send(200, b'{"choices": [{"message": {"content": "\xff\xfe caf\xe9"}}]}')
                if kind == "no_message":
                    return self._send(200, {"choices": [{"message": "hello"}]})
                if kind == "status":
                    return self._send(fault[1], {"error": {"message": fault[2].replace("{key}", key),
                                                           "type": "invalid_request_error"}})
                if kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                rf = (body.get("response_format") or {}).get("type")
                if rf in server.reject:
                    return self._send(400, {"error": {"message": f"response_format {rf} is not supported"}})
                finish = "stop"
                if kind == "length":
                    out, finish = fault[1], "length"
                elif kind == "answer":
                    out = fault[1]
                else:
                    out = server.responder(body, task)
                payload = completion_payload(body, out, finish)
                if kind == "length" and len(fault) > 2:
                    payload["usage"]["completion_tokens"] = fault[2]
                return self._send(200, payload)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv=None):
    """Run as its own process (benchmarks): an aiohttp server (asyncio, C HTTP parser) with the
    same protocol and latency; prints the URL, serves until stdin closes, then prints counts."""
    import argparse
    import asyncio
    import sys

    from aiohttp import web

    p = argparse.ArgumentParser()
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--answer", default='{"verdict": "yes"}')
    p.add_argument("--faithfulness", action="store_true",
                   help="answer claim extraction with two claims and verdicts with yes/no")
    p.add_argument("--schema", action="store_true", help="answer every task by its schema (schema_answer)")
    args = p.parse_args(argv)

    def answer(body, task):
        if args.schema:
            return schema_answer(body)
        if not args.faithfulness:
            return args.answer
        if task == "faithfulness/claims":
            return '{"claims": ["first claim", "second claim"]}'
        return ('{"verdicts": [{"index": 1, "reason": "implied", "verdict": "yes"}, '
                '{"index": 2, "reason": "not stated", "verdict": "no"}]}')

    stats = {"count": 0, "in_flight": 0, "max_in_flight": 0}

    async def handle(request):
        body = await request.json()
        stats["count"] += 1
        stats["in_flight"] += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(args.latency)
            return web.json_response(completion_payload(body, answer(body, request.headers.get("X-Textgen-Task", ""))))
        finally:
            stats["in_flight"] -= 1

    async def run():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        stats.pop("in_flight")
        print(json.dumps(stats), flush=True)
        await runner.cleanup()

    asyncio.run(run())


if __name__ == "__main__":
    main()
