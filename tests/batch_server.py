"""Batch APIs on 127.0.0.1 for tests: OpenAI's (``/v1/files`` + ``/v1/batches``), Azure
OpenAI's (``/openai/files`` + ``/openai/batches`` with ``api-version``) and Anthropic's Message
Batches (``/v1/messages/batches``), each speaking the provider's wire format closely enough for
the official SDKs (the tests drive them against these servers as controls).

A batch moves one state per status read: OpenAI ``validating`` -> ``in_progress`` -> ``final``
(``completed``, ``expired``, ``cancelled`` or ``failed``); Anthropic ``in_progress`` -> ``ended``.
``hold`` keeps every batch in progress until ``release()`` (a client killed while waiting).
Each request line is answered by ``responder(body, task)`` (``task`` read from the request's
custom id, which carries it), as a chat completion (Anthropic: a message); ``line_fault(body,
task)`` may instead give that line ``("status", code, message)`` (the provider's per-request
error), ``("length", text)`` (an answer cut off by the token limit) or ``("answer", text)``. An
expired or cancelled batch answers the first ``answered`` lines and reports the rest as
expired/cancelled, as the providers do; a failed batch answers none. ``{key}`` in a message is
replaced by the key the client presented (a server that echoes it). The server records the
batches created (``created``: the tasks of each) and every request's path.
"""

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from chat_server import AnthropicServer, _Server, completion_payload

_counter = itertools.count(1)


def task_of(custom_id):
    """The task a custom id names (``faithfulness_claims-<hash>`` -> ``faithfulness/claims``)."""
    return custom_id.rsplit("-", 1)[0].replace("_", "/", 1)


class _BatchServer:
    final = "completed"

    def __init__(self, responder, key="sk-test-batch-key", hold=False, final=None, line_fault=None, answered=None,
                 echo_key=False):
        self.responder = responder
        self.key = key
        self.hold = hold
        self.final = final or self.final
        self.line_fault = line_fault
        self.answered = answered
        self.echo_key = echo_key
        self.files = {}
        self.batches = {}
        self.created = []  # per batch created: its tasks
        self.sizes = []  # per batch created: its number of requests
        self.live = 0  # chat completions asked live (batch_retry="live")
        self.paths = []
        self.reads = collections_counter()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, payload, content_type="application/json"):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                with server._lock:
                    server.paths.append((method, self.path))
                    answer = server.route(method, self.path, self.headers, raw)  # names in any case
                self._send(*answer)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def root(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def release(self):
        with self._lock:
            self.hold = False

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def answer_line(self, body, task):
        """(kind, value) of one request: ("ok", (text, finish)) or ("error", (code, message))."""
        fault = self.line_fault(body, task) if self.line_fault is not None else None
        if fault is not None and fault[0] == "status":
            return "error", (fault[1], fault[2])
        if fault is not None and fault[0] == "length":
            return "ok", (fault[1], "length")
        if fault is not None and fault[0] == "answer":
            return "ok", (fault[1], "stop")
        return "ok", (self.responder(body, task), "stop")

    def unauthorized(self, headers):
        return None


def collections_counter():
    import collections

    return collections.Counter()


class OpenAIBatchServer(_BatchServer):
    """OpenAI's Batch API."""

    prefix = "/v1"
    endpoint = "/v1/chat/completions"

    @property
    def url(self):
        return f"{self.root}/v1"

    def presented_key(self, headers):
        return headers.get("Authorization", "").removeprefix("Bearer ")

    def error(self, status, message):
        return status, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}

    def route(self, method, path, headers, raw):
        parsed = urllib.parse.urlsplit(path)
        p = parsed.path
        key = self.presented_key(headers)
        if self.key is not None and key != self.key:
            return self.error(401, f"Incorrect API key provided: {key}")
        if not p.startswith(self.prefix + "/"):
            return self.error(404, f"Invalid URL ({method} {path})")
        p = p[len(self.prefix):]
        if method == "POST" and p == "/chat/completions":
            body = json.loads(raw or b"{}")
            self.live += 1
            return 200, completion_payload(body, self.responder(body, headers.get("X-Textgen-Task", "")))
        if method == "POST" and p == "/files":
            return self.upload(headers, raw)
        if method == "POST" and p == "/batches":
            return self.create(json.loads(raw or b"{}"))
        m = re.fullmatch(r"/batches/([\w-]+)", p)
        if method == "GET" and m:
            return self.status(m.group(1), key)
        m = re.fullmatch(r"/files/([\w-]+)/content", p)
        if method == "GET" and m and m.group(1) in self.files:
            return 200, self.files[m.group(1)]["content"], "application/octet-stream"
        return self.error(404, f"Invalid URL ({method} {path})")

    def upload(self, headers, raw):
        ctype = headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return self.error(400, "Expected multipart/form-data")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
        fields = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))
        if (fields.get("purpose") or (None, b""))[1] != b"batch" or "file" not in fields:
            return self.error(400, "purpose must be 'batch' and a file is required")
        content = fields["file"][1]
        for i, line in enumerate(content.decode().splitlines()):
            entry = json.loads(line)
            if set(entry) != {"custom_id", "method", "url", "body"} or entry["url"] != self.endpoint:
                return self.error(400, f"line {i + 1}: not a batch request line for {self.endpoint}")
        file_id = f"file-{next(_counter)}"
        self.files[file_id] = {"content": content, "filename": fields["file"][0]}
        return 200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                     "filename": fields["file"][0], "purpose": "batch", "status": "processed"}

    def create(self, body):
        file_id = body.get("input_file_id")
        if file_id not in self.files or body.get("endpoint") != self.endpoint or body.get("completion_window") != "24h":
            return self.error(400, "input_file_id, endpoint and completion_window='24h' are required")
        batch_id = f"batch_{next(_counter)}"
        lines = [json.loads(x) for x in self.files[file_id]["content"].decode().splitlines()]
        self.created.append(sorted({task_of(x["custom_id"]) for x in lines}))
        self.sizes.append(len(lines))
        self.batches[batch_id] = {"lines": lines, "states": ["validating", "in_progress", self.final], "step": 0,
                                  "input_file_id": file_id}
        return 200, self.batch_object(batch_id, None)

    def status(self, batch_id, key):
        batch = self.batches.get(batch_id)
        if batch is None:
            return self.error(404, f"No batch found with id '{batch_id}'.")
        self.reads[batch_id] += 1
        if not (self.hold and batch["states"][batch["step"]] == "in_progress"):
            batch["step"] = min(batch["step"] + 1, len(batch["states"]) - 1)
        return 200, self.batch_object(batch_id, key)

    def batch_object(self, batch_id, key):
        batch = self.batches[batch_id]
        status = batch["states"][batch["step"]]
        out, err, errors = None, None, None
        total = len(batch["lines"])
        done = failed = 0
        if status in ("completed", "expired", "cancelled") and "output" not in batch:
            batch["output"], batch["error"] = self.results(batch, status, key)
        if status == "failed":
            errors = {"object": "list", "data": [{"code": "invalid_request", "message": "the model is not "
                                                  "available for batch", "param": None, "line": 1}]}
        if "output" in batch:
            outs, errs = batch["output"], batch["error"]
            done, failed = len(outs), len(errs)
            if outs:
                out = f"file-{next(_counter)}"
                self.files[out] = {"content": "".join(json.dumps(x) + "\n" for x in outs).encode()}
            if errs:
                err = f"file-{next(_counter)}"
                self.files[err] = {"content": "".join(json.dumps(x) + "\n" for x in errs).encode()}
        now = int(time.time())
        return {"id": batch_id, "object": "batch", "endpoint": self.endpoint, "errors": errors,
                "input_file_id": batch["input_file_id"], "completion_window": "24h", "status": status,
                "output_file_id": out, "error_file_id": err, "created_at": now, "in_progress_at": now,
                "expires_at": now + 86400, "completed_at": now if status == "completed" else None,
                "failed_at": None, "expired_at": None, "cancelled_at": None,
                "request_counts": {"total": total, "completed": done, "failed": failed}, "metadata": None}

    def results(self, batch, status, key):
        outs, errs = [], []
        limit = len(batch["lines"]) if status == "completed" else (self.answered or 0)
        for i, line in enumerate(batch["lines"]):
            cid, body = line["custom_id"], line["body"]
            if i >= limit:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errs.append({"id": f"batch_req_{i}", "custom_id": cid, "response": None,
                             "error": {"code": code, "message": f"This request was not executed ({status})."}})
                continue
            kind, value = self.answer_line(body, task_of(cid))
            if kind == "error":
                code, message = value
                message = message.replace("{key}", key or "")
                response = {"status_code": code, "request_id": f"req_{i}", "body": self.error(code, message)[1]}
                errs.append({"id": f"batch_req_{i}", "custom_id": cid, "response": response, "error": None})
            else:
                text, finish = value
                outs.append({"id": f"batch_req_{i}", "custom_id": cid, "response": {
                    "status_code": 200, "request_id": f"req_{i}", "body": completion_payload(body, text, finish)},
                    "error": None})
        return outs, errs


class AzureBatchServer(OpenAIBatchServer):
    """Azure OpenAI's batch API: ``/openai/files`` and ``/openai/batches`` with ``api-version``,
    the key in ``api-key``, each line's url ``/chat/completions`` and model the deployment."""

    prefix = "/openai"
    endpoint = "/chat/completions"

    def __init__(self, *args, deployment="judge-batch", **kwargs):
        self.deployment = deployment
        super().__init__(*args, **kwargs)

    @property
    def url(self):
        return self.root

    def presented_key(self, headers):
        return headers.get("api-key", "")

    def route(self, method, path, headers, raw):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        if not query.get("api-version"):
            return self.error(400, "Missing required query parameter: api-version")
        return super().route(method, path, headers, raw)

    def create(self, body):
        status, payload = super().create(body)
        if status == 200:
            for line in self.batches[payload["id"]]["lines"]:
                if line["body"].get("model") != self.deployment:
                    return self.error(400, "each line's model must be the Global-Batch deployment")
        return status, payload


class AnthropicBatchServer(_BatchServer):
    """Anthropic's Message Batches."""

    final = "ended"

    @property
    def url(self):
        return self.root

    def error(self, status, message, kind="invalid_request_error"):
        return status, {"type": "error", "error": {"type": kind, "message": message}}

    def route(self, method, path, headers, raw):
        # the key in x-api-key, or as a bearer token (how anthropic's SDK 2.x sends it)
        key = headers.get("x-api-key") or (headers.get("Authorization") or "").removeprefix("Bearer ")
        if not headers.get("anthropic-version"):
            return self.error(400, "anthropic-version: header is required")
        if self.key is not None and key != self.key:
            return self.error(401, "invalid x-api-key", "authentication_error")
        p = urllib.parse.urlsplit(path).path
        if method == "POST" and p == "/v1/messages/batches":
            return self.create(json.loads(raw or b"{}"))
        m = re.fullmatch(r"/v1/messages/batches/([\w-]+)", p)
        if method == "GET" and m and m.group(1) in self.batches:
            return self.status(m.group(1), key)
        m = re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", p)
        if method == "GET" and m and "results" in self.batches.get(m.group(1), {}):
            data = "".join(json.dumps(x) + "\n" for x in self.batches[m.group(1)]["results"]).encode()
            return 200, data, "application/binary"
        return self.error(404, f"Not found: {path}", "not_found_error")

    def create(self, body):
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return self.error(400, "requests: Field required")
        for i, r in enumerate(requests):
            if set(r) != {"custom_id", "params"} or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", r["custom_id"]):
                return self.error(400, f"requests.{i}: custom_id and params are required (custom_id: "
                                       "^[a-zA-Z0-9_-]{1,64}$)")
            if not isinstance(r["params"].get("max_tokens"), int) or "model" not in r["params"]:
                return self.error(400, f"requests.{i}.params: model and max_tokens are required")
        batch_id = f"msgbatch_{next(_counter):08d}"
        self.created.append(sorted({task_of(r["custom_id"]) for r in requests}))
        self.sizes.append(len(requests))
        self.batches[batch_id] = {"requests": requests, "step": 0, "final": self.final}
        return 200, self.batch_object(batch_id)

    def status(self, batch_id, key):
        batch = self.batches[batch_id]
        self.reads[batch_id] += 1
        if not self.hold:
            batch["step"] = 1
            if "results" not in batch:
                batch["results"] = self.results(batch, key)
        return 200, self.batch_object(batch_id)

    def results(self, batch, key):
        out = []
        limit = len(batch["requests"]) if self.final == "ended" else (self.answered or 0)
        for i, r in enumerate(batch["requests"]):
            cid, params = r["custom_id"], r["params"]
            if i >= limit:
                out.append({"custom_id": cid, "result": {"type": self.final}})
                continue
            body = AnthropicServer.openai_body(None, params)
            kind, value = self.answer_line(body, task_of(cid))
            if kind == "error":
                message = value[1].replace("{key}", key or "")
                out.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "invalid_request_error", "message": message}}}})
            else:
                text, finish = value
                message = AnthropicServer.success(None, params, body, text, "max_tokens" if finish == "length" else
                                                  "stop")
                out.append({"custom_id": cid, "result": {"type": "succeeded", "message": message}})
        return out

    def batch_object(self, batch_id):
        batch = self.batches[batch_id]
        ended = batch["step"] == 1
        counts = {"processing": 0 if ended else len(batch["requests"]), "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}
        for r in batch.get("results", []) if ended else []:
            kind = r["result"]["type"]
            counts[kind if kind in counts else "errored"] += 1
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "ended_at": now if ended else None, "created_at": now,
                "expires_at": now, "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.root}/v1/messages/batches/{batch_id}/results" if ended else None}
