"""Real chat servers on 127.0.0.1 for tests and benchmarks, one per wire format: OpenAI's
chat completions (``ChatServer``), Azure OpenAI (``AzureServer``), Anthropic's Messages API
(``AnthropicServer``) and Gemini's OpenAI-compatible endpoint (``GeminiServer``).

Each answers over HTTP/1.1 from a thread per connection, with a scripted
``responder(body) -> str``, ``responder(body, task) -> str`` (``task``: the request's stable
task id from its ``X-Textgen-Task`` header) or ``responder(body, task, key) -> str`` (a parameter named
``key``: the key the request presented, for a server that echoes it); the answer may also be a dict with
``content`` and ``logprobs``, a fixed latency, and faults injected per request from a queue. Responders and
fault functions always see the request as an OpenAI chat-completions body (an Anthropic request
is translated: its ``system`` field becomes the first message, its forced tool the
``response_format``), so one responder serves every wire format; ``bodies`` keeps the raw bodies
as sent. Faults, each answered in the wire format's own shape (error body, headers):

- ``("429", seconds)``: HTTP 429 saying to wait ``seconds`` the way the provider says it
  (``Retry-After``; Azure also ``retry-after-ms``; Anthropic ``retry-after`` and its
  ``anthropic-ratelimit-*`` headers; Gemini a ``google.rpc.RetryInfo`` in the body)
- ``"500"``: a server error (Anthropic: 529 ``overloaded_error``)
- ``("hang", seconds)``: wait that long before answering (past the client's time-out)
- ``"garbage"``: HTTP 200 with a body that is not JSON
- ``("length", text)``: HTTP 200 with ``text`` as content, cut off by the token limit
  (finish_reason ``length``; Anthropic stop_reason ``max_tokens``); ``("length", text, tokens)``
  also sets the completion token count
- ``"drop"``: close the connection without an answer
- ``"not_utf8"``: HTTP 200 with a body that is not UTF-8
- ``"no_message"``: HTTP 200 with a body of the right kind but the wrong shape
  (``{"choices": [{"message": "hello"}]}``; Anthropic: ``{"content": "hello"}``)
- ``("status", code, message)``: HTTP ``code`` with the provider's error body carrying ``message``
  (``{key}`` in it is replaced by the key the request presented: a server that echoes the key)
- ``("raw", code, payload, headers)``: exactly this answer (a provider's own error body)
- ``("answer", text)``: HTTP 200 with ``text`` as the content instead of the responder's answer

``fault_fn(body, task)``, when given, picks a fault (or None) for each request the queue leaves
without one: random fault injection for the trust tests.

``reject`` (a set of structured-output dialects: ``json_schema``, ``json_object_schema``,
``guided_json``, ``json_object``; Anthropic ``tool``) refuses requests asking for them, the way
the server named by ``dialect_server`` does (``SERVERS``: its status and message): with
``speaks=`` instead, every dialect the server does not name is refused. ``request_schema(body)``
is the schema a request asks for in whatever dialect it uses. ``key``, when given, is the only key the
server accepts (the provider's authentication error otherwise). Each server checks the wire
format it speaks (paths, headers, required fields) and answers a malformed request as the
provider would. The server counts requests and the most it had in flight at once. Bounded by
the test: it only answers what the client sends and stops with ``close()``.
"""

import collections
import inspect
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from textgen_metrics.judges.schema import inline_definitions


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


DIALECTS = ("json_schema", "json_object_schema", "guided_json", "json_object", "text")

# How real servers refuse a structured-output dialect they do not speak: (status, message).
SERVERS = {
    # llama-cpp-python 0.3.x: its request model allows only these two types (FastAPI validation,
    # answered as HTTP 500 by its error handler)
    "llama-cpp-python": (500, "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                              "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                              "'input': '{mode}', 'ctx': {'expected': \"'text' or 'json_object'\"}}"),
    # OpenAI and servers that copy its errors
    "openai": (400, "Invalid parameter: 'response_format' of type '{mode}' is not supported with this model."),
    # a server behind a validating proxy: 422 with FastAPI's detail list
    "proxy": (422, "body -> response_format: value is not a valid response format ({mode})"),
    # a server that rejects arguments it does not know (guided_json to OpenAI)
    "strict-args": (400, "Unrecognized request argument supplied: {mode}"),
}


def request_schema(body):
    """The JSON schema a request asks for, in whichever dialect it uses (None: none)."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return inline_definitions((fmt.get("json_schema") or {}).get("schema"))
    if fmt.get("type") == "json_object" and "schema" in fmt:
        return inline_definitions(fmt["schema"])
    return inline_definitions(body.get("guided_json"))


def is_verdict_map(prop):
    """A property holding verdicts keyed by item number (``{"1": {...}, ...}``)."""
    return (prop.get("type") == "object" and prop.get("additionalProperties") is False
            and all(k.isdigit() for k in prop.get("properties", {})))


def schema_answer(body):
    """An answer that fits the request's JSON schema, for any metric's task: extracted items are
    the sentences of the first data block; the verdict for item i is the schema's first choice
    for odd i and its second for even i (one verdict per item or context, keyed by number, as
    the schema asks); a score is 4. Without a schema (a plain-text request), one "yes" verdict."""
    schema = request_schema(body)
    if not schema:
        return '{"verdicts": {"1": {"reason": "no schema", "verdict": "yes"}}}'
    text = body["messages"][1]["content"].split(">>>\n", 1)[-1].split("\n<<<END", 1)[0]
    answer = {}
    for key, prop in schema["properties"].items():
        if key == "score":
            answer[key] = 4
        elif key == "reason":
            answer[key] = "a reason"
        elif "enum" in prop:
            answer[key] = prop["enum"][0]
        elif is_verdict_map(prop):
            answer[key] = {}
            for number, entry in prop["properties"].items():
                choices = entry["properties"]["verdict"]["enum"]
                i = int(number) - 1
                answer[key][number] = {"reason": f"reason {i}", "verdict": choices[i % 2 if len(choices) > 1 else 0]}
        else:
            answer[key] = [s.strip() for s in text.replace("!", ".").split(".") if s.strip()]
    return json.dumps(answer)


class ChatServer:
    """OpenAI's chat-completions wire format (vLLM, Ollama, TGI... speak it too)."""

    finish_length = "length"
    # the model an answer says was served (None: the name asked for, as vLLM answers); a server that
    # serves the name it is asked for with another model or version sets it
    served_model = None

    def __init__(self, responder=None, latency=0.0, reject=(), fault_fn=None, key=None, speaks=None,
                 dialect_server="openai"):
        responder = responder or (lambda body: '{"verdict": "yes"}')
        params = inspect.signature(responder).parameters
        if "key" in params:
            self.responder = responder
        elif len(params) >= 2:
            self.responder = lambda body, task, key: responder(body, task)
        else:
            self.responder = lambda body, task, key: responder(body)
        self.latency = latency
        self.reject = set(reject) if speaks is None else {d for d in DIALECTS[:-1] if d not in speaks}
        self.dialect_server = dialect_server
        self.key = key
        self.faults = collections.deque()
        self.fault_fn = fault_fn
        self.bodies = []
        self.headers = []
        self.paths = []
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
                self._answered()  # before the first byte: the client may send its next request at once
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _answered(self):
                """The request leaves ``in_flight`` (once): when its answer starts, or it ends."""
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server._lock:
                        server.in_flight -= 1

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = json.loads(self.rfile.read(length) or b"{}")
                headers = dict(self.headers)
                task = self.headers.get("X-Textgen-Task", "")
                body = server.openai_body(raw)
                key = server.presented_key(headers)
                problem = server.check(self.path, headers, raw, key)  # a malformed request takes no fault
                with server._lock:
                    server.count += 1
                    server.bodies.append(raw)
                    server.headers.append(headers)
                    server.paths.append(self.path)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    self._counted = True
                    fault = None
                    if problem is None:
                        fault = server.faults.popleft() if server.faults else None
                        if fault is None and server.fault_fn is not None:
                            fault = server.fault_fn(body, task)
                try:
                    self._answer(raw, body, fault, task, key, problem)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    self._answered()

            def _answer(self, raw, body, fault, task, key, problem):
                if server.latency:
                    time.sleep(server.latency)
                if problem is not None:
                    return self._send(*problem)
                kind = fault[0] if isinstance(fault, tuple) else fault
                if kind == "429":
                    return self._send(*server.rate_limited(fault[1]))
                if kind == "500":
                    return self._send(*server.server_error())
                if kind == "raw":
                    return self._send(fault[1], fault[2], fault[3] if len(fault) > 3 else None)
                if kind == "hang":
                    time.sleep(fault[1])
                if kind == "garbage":
                    return self._send(200, b"<html>502 Bad Gateway</html>")
                if kind == "not_utf8":
                    return self._send(200, server.not_utf8())
                if kind == "no_message":
                    return self._send(200, server.malformed())
                if kind == "status":
                    return self._send(*server.error(fault[1], fault[2].replace("{key}", key)))
                if kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                mode = server.mode(raw)
                if mode in server.reject:
                    return self._send(*server.reject_mode(mode))
                finish = "stop"
                if kind == "length":
                    out, finish = fault[1], server.finish_length
                elif kind == "answer":
                    out = fault[1]
                else:
                    out = server.responder(body, task, key)
                tokens = fault[2] if kind == "length" and len(fault) > 2 else None
                return self._send(200, server.success(raw, body, out, finish, tokens))

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    # -- the wire format: subclasses override these -------------------------------------------
    @property
    def root(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self):
        """What a client is given as its base URL."""
        return f"{self.root}/v1"

    def presented_key(self, headers):
        return headers.get("Authorization", "").removeprefix("Bearer ")

    def check(self, path, headers, raw, key):
        """None, or the (status, payload[, headers]) a real server gives a malformed request."""
        if self.key is not None and key != self.key:
            return self.error(401, f"Incorrect API key provided: {key}")
        return None

    def openai_body(self, raw):
        return raw

    def mode(self, raw):
        fmt = raw.get("response_format") or {}
        if fmt.get("type") == "json_object" and "schema" in fmt:
            return "json_object_schema"
        return fmt.get("type") or ("guided_json" if "guided_json" in raw else None)

    def success(self, raw, body, out, finish, tokens=None):
        payload = completion_payload(body, out, finish)
        if self.served_model is not None:
            payload["model"] = self.served_model
        if tokens is not None:
            payload["usage"]["completion_tokens"] = tokens
        return payload

    def error(self, status, message):
        return status, {"error": {"message": message, "type": "invalid_request_error"}}

    def rate_limited(self, seconds):
        return 429, {"error": {"message": "rate limited"}}, {"Retry-After": str(seconds)}

    def server_error(self):
        return 500, {"error": {"message": "internal error"}}

    def reject_mode(self, mode):
        status, message = SERVERS[self.dialect_server]
        wire = {"json_object_schema": "json_object"}.get(mode, mode)
        if self.dialect_server == "proxy":
            return status, {"detail": message.replace("{mode}", wire)}
        if self.dialect_server == "llama-cpp-python":
            return status, {"error": {"message": message.replace("{mode}", wire), "type": "internal_server_error",
                                      "param": None, "code": None}}
        return status, {"error": {"message": message.replace("{mode}", wire), "type": "invalid_request_error"}}

    def malformed(self):
        return {"choices": [{"message": "hello"}]}

    def not_utf8(self):
        return b'{"choices": [{"message": {"content": "\xff\xfe caf\xe9"}}]}'

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class AzureServer(ChatServer):
    """Azure OpenAI: ``/openai/deployments/{deployment}/chat/completions?api-version=...``, the key
    in ``api-key``, Azure's error bodies (``{"error": {"code", "message"}}``) and rate-limit
    headers (``retry-after``, ``retry-after-ms``, ``x-ratelimit-remaining-*``)."""

    def __init__(self, *args, deployment="judge-deployment", **kwargs):
        self.deployment = deployment
        super().__init__(*args, **kwargs)

    @property
    def url(self):
        return self.root  # the endpoint: https://<resource>.openai.azure.com

    def presented_key(self, headers):
        return headers.get("api-key", "")

    def check(self, path, headers, raw, key):
        import urllib.parse

        parts = urllib.parse.urlsplit(path)
        query = urllib.parse.parse_qs(parts.query)
        segments = parts.path.strip("/").split("/")
        if len(segments) != 5 or segments[:2] != ["openai", "deployments"] or segments[3:] != ["chat", "completions"]:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        if "api-version" not in query:
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        if self.key is not None and key != self.key:
            return 401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong "
                                                             "API endpoint. Make sure to provide a valid key for an "
                                                             "active subscription and use a correct regional API "
                                                             "endpoint for your resource."}}
        if urllib.parse.unquote(segments[2]) != self.deployment:
            return 404, {"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource "
                                   "does not exist. If you created the deployment within the last 5 minutes, "
                                   "please wait a moment and try again."}}
        return None

    def error(self, status, message):
        return status, {"error": {"code": str(status), "message": message}}

    def rate_limited(self, seconds):
        message = ("Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have "
                   f"exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after "
                   f"{seconds} seconds.")
        headers = {"retry-after": str(max(1, round(seconds))), "retry-after-ms": str(int(seconds * 1000)),
                   "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "0"}
        return 429, {"error": {"code": "429", "message": message}}, headers


_ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                     403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                     429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def _text_of(content):
    """A message's content as text: Anthropic's list of text blocks joined as they read."""
    if isinstance(content, list):
        return "\n\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content


class AnthropicServer(ChatServer):
    """Anthropic's Messages API: ``POST /v1/messages`` with ``x-api-key`` and
    ``anthropic-version``, ``system`` as a top-level field, ``max_tokens`` required, user and
    assistant turns alternating; content blocks (``text``, ``tool_use``) and ``stop_reason`` in
    the answer; ``{"type": "error", "error": {"type", "message"}}`` error bodies; ``retry-after``
    and ``anthropic-ratelimit-*`` headers on 429, 529 when overloaded."""

    finish_length = "max_tokens"

    def presented_key(self, headers):
        return headers.get("x-api-key", "")

    def check(self, path, headers, raw, key):
        if path != "/v1/messages":
            return self.error(404, f"Not found: {path}")
        if not headers.get("anthropic-version"):
            return self.error(400, "anthropic-version: header is required")
        if self.key is not None and key != self.key:
            return self.error(401, "invalid x-api-key")
        if not isinstance(raw.get("max_tokens"), int):
            return self.error(400, "max_tokens: Field required")
        for field in ("seed", "response_format", "logprobs", "top_logprobs"):
            if field in raw:
                return self.error(400, f"{field}: Extra inputs are not permitted")
        turns = raw.get("messages") or []
        for i, m in enumerate(turns):
            if m.get("role") not in ("user", "assistant"):
                return self.error(400, f"messages.{i}.role: Unexpected role \"{m.get('role')}\". The Messages API "
                                       "accepts a top-level `system` parameter, not \"system\" as an input message "
                                       "role.")
            if m["role"] != ("user" if i % 2 == 0 else "assistant"):
                return self.error(400, "messages: roles must alternate between \"user\" and \"assistant\", "
                                       "and the first message must use the \"user\" role")
        if "tool_choice" in raw:
            names = [t.get("name") for t in raw.get("tools") or []]
            if raw["tool_choice"].get("name") not in names:
                return self.error(400, "tool_choice: the tool named is not among tools")
            for tool in raw["tools"]:
                if (tool.get("input_schema") or {}).get("type") != "object":
                    return self.error(400, "tools.0.input_schema.type: Input should be 'object'")
        return None

    def openai_body(self, raw):
        messages = ([{"role": "system", "content": raw["system"]}] if raw.get("system") else []) + [
            dict(m, content=_text_of(m.get("content"))) for m in raw.get("messages") or []]
        body = {"model": raw.get("model"), "messages": messages}
        tools = raw.get("tools") or []
        if tools:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": tools[0]["name"], "schema": tools[0]["input_schema"]}}
        return body

    def mode(self, raw):
        return "tool" if raw.get("tools") else None

    def success(self, raw, body, out, finish, tokens=None):
        text = out.get("content") if isinstance(out, dict) else out
        stop = "max_tokens" if finish == "max_tokens" else "end_turn"
        content = [{"type": "text", "text": text}]
        if raw.get("tools") and stop != "max_tokens":
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):  # the model called the tool; otherwise it answered in text
                content = [{"type": "tool_use", "id": "toolu_test", "name": raw["tools"][0]["name"], "input": value}]
                stop = "tool_use"
        prompt = " ".join(str(m.get("content")) for m in body.get("messages", []))
        model = getattr(self, "served_model", None) or raw.get("model")  # self is None when the batch server borrows it
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": _tokens(prompt), "output_tokens": tokens or _tokens(text)}}

    def error(self, status, message):
        return status, {"type": "error", "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"),
                                                   "message": message}, "request_id": "req_test"}

    def rate_limited(self, seconds):
        import datetime

        reset = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)).isoformat()
        headers = {"retry-after": str(seconds), "anthropic-ratelimit-requests-limit": "50",
                   "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": reset}
        return (429, self.error(429, "This request would exceed the rate limit for your organization of 50 "
                                     "requests per minute.")[1], headers)

    def server_error(self):
        return self.error(529, "Overloaded")

    def reject_mode(self, mode):
        return self.error(400, "tools: tool use is not supported by this model")

    def malformed(self):
        return {"type": "message", "content": "hello"}

    def not_utf8(self):
        return b'{"type": "message", "content": [{"type": "text", "text": "\xff\xfe caf\xe9"}]}'


_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class GeminiServer(ChatServer):
    """Gemini's OpenAI-compatible endpoint (``/v1beta/openai/chat/completions``): OpenAI's
    request and answer, Google's errors wrapped in a list (``[{"error": {"code", "message",
    "status", "details"}}]``), a rejected key as HTTP 400 ``API_KEY_INVALID``, and a 429 that
    says how long to wait in a ``google.rpc.RetryInfo`` of its body, with no header."""

    @property
    def url(self):
        return f"{self.root}/v1beta/openai"

    def check(self, path, headers, raw, key):
        if path != "/v1beta/openai/chat/completions":
            return self.error(404, f"Not found: {path}")
        if self.key is not None and key != self.key:
            return 400, [{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                    "status": "INVALID_ARGUMENT", "details": [{
                                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                        "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}]
        return None

    def error(self, status, message, details=None):
        err = {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "UNKNOWN")}
        if details:
            err["details"] = details
        return status, [{"error": err}]

    def rate_limited(self, seconds):
        return self.error(429, "Resource has been exhausted (e.g. check quota).", [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"}])

    def server_error(self):
        return self.error(503, "The model is overloaded. Please try again later.")
