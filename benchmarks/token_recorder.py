"""A loopback OpenAI-compatible server (127.0.0.1) that records every request a tool sends and
answers it validly by the structure the request asks for, for ``tokens_vs_peers.py``.

Requests are told apart by the path prefix of the base URL each run is given:
``http://127.0.0.1:PORT/<tool>/<metric>/v1``. ``/chat/completions`` is answered by structure:

- a JSON schema in ``response_format`` (OpenAI's structured outputs: ours, deepeval), or a forced
  tool's parameters (``tools``: instructor's tool mode), or a JSON schema written into the prompt
  (ragas' and langchain's "complies with the following schema"): an answer of that schema;
- otherwise (valor-lite asks for JSON in words): the keys its prompt names (``claims``,
  ``opinions``, ``statements``, ``verdicts`` of ``{"analysis", "verdict"}``, ``TP``/``FP``/``FN``),
  and a bare integer for a score.

The answer's content is fixed by one rule for every tool, so that completion tokens compare: a
list has one item per item the request enumerates (the items this server answered earlier in
the same run, when the prompt lists them all), else one per context of the example the prompt
holds (verdicts), else one per sentence of the example's prediction (or reference, when the
prompt holds no prediction). A reason, analysis or explanation is one fixed 15-word sentence; a
verdict "yes" (the schema's first allowed value); a number the schema's minimum, else 1.
``/embeddings`` is answered with a fixed small vector and its input tokens are recorded apart.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REASON = "The context states this directly, so the statement follows from it and is supported here."
STEP = "Read the text and check it against the criteria, point by point."
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_REASON_KEYS = ("reason", "analysis", "explanation", "rationale", "thought")
_SCHEMA_IN_PROMPT = re.compile(r"JSON Schema:\s*\n?(\{.*?\})\s*(?:\n|Do not|$)", re.S)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()] or [text or "item"]


def _forms(text: str) -> tuple[str, ...]:
    """A text as it may stand in a prompt: plain, or JSON-escaped (ragas, deepeval quote inputs)."""
    return (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])


def _in(text: str, prompt: str) -> bool:
    return bool(text) and any(f in prompt for f in _forms(text))


class _Run:
    """What one (tool, metric) run sent, and the item lists answered so far."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.embeddings: list[Any] = []
        self.lists: list[list[str]] = []


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, examples: list[dict[str, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.examples = examples
        self.runs: dict[str, _Run] = {}
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)

    def url(self, tool: str, metric: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{tool}/{metric}/v1"

    def run(self, tool: str, metric: str) -> _Run:
        with self.lock:
            return self.runs.setdefault(f"{tool}/{metric}", _Run())

    def close(self) -> None:
        self.shutdown()
        self.server_close()

    # ---- answering -----------------------------------------------------------------------------

    def answer(self, run: _Run, body: dict[str, Any], tool_name: str = "") -> dict[str, Any]:
        """The chat.completion message for ``body``: ``{"content": ...}`` or ``{"tool_calls": ...}``."""
        prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
        schema, tool = _requested_schema(body, prompt)
        example = self._example(prompt)
        if schema is not None:
            value = self._fill(run, schema, schema, prompt, example, None, None)
            text = json.dumps(value, ensure_ascii=False)
            if tool:
                return {"tool_calls": [{"id": "call_0", "type": "function",
                                        "function": {"name": tool, "arguments": text}}]}
            return {"content": text}
        if tool_name == "valor":
            return {"content": self._words(run, prompt, example)}
        shown = _example_json(prompt)
        if shown is not None:
            value = self._like(run, shown, prompt, example, None)
            return {"content": json.dumps(value, ensure_ascii=False)}
        return {"content": "4"}

    def _example(self, prompt: str) -> dict[str, Any]:
        for key in ("prediction", "reference", "source"):
            for ex in self.examples:
                if _in(ex.get(key, ""), prompt):
                    return ex
        for ex in self.examples:
            if any(_in(c, prompt) for c in ex.get("contexts", [])):
                return ex
        return {}

    def _items(self, run: _Run, prompt: str, example: dict[str, Any], verdicts: bool) -> list[str]:
        with self.lock:
            listed = [items for items in run.lists if items and all(_in(i, prompt) for i in items)]
        if listed:  # the list the request enumerates: of those it holds, the one that ends last
            return max(listed, key=lambda items: (_last(items[-1], prompt), len(items)))
        contexts = [c for c in example.get("contexts", []) if _in(c, prompt)]
        if verdicts and contexts:
            return contexts
        for key in ("prediction", "reference", "source"):
            if _in(example.get(key, ""), prompt):
                return sentences(example[key])
        if contexts:
            return [s for c in contexts for s in sentences(c)]
        return [STEP] * 3  # no text of the example (G-Eval's steps): three items

    def _remember(self, run: _Run, items: list[str]) -> None:
        with self.lock:
            run.lists.append(items)

    def _fill(self, run: _Run, schema: Any, root: Any, prompt: str, example: dict[str, Any],
              key: str | None, item: str | None) -> Any:
        schema = _resolve(schema, root)
        if not isinstance(schema, dict):
            return REASON
        for alt in ("anyOf", "oneOf"):
            if alt in schema:
                options = [s for s in schema[alt] if _resolve(s, root).get("type") != "null"] or schema[alt]
                return self._fill(run, options[0], root, prompt, example, key, item)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object" or (kind is None and "properties" in schema):
            return {k: self._fill(run, v, root, prompt, example, k, item)
                    for k, v in (schema.get("properties") or {}).items()}
        if kind == "array":
            inner = _resolve(schema.get("items") or {}, root)
            objects = inner.get("type") == "object" or "properties" in inner
            items = self._items(run, prompt, example, verdicts=objects)
            low, high = int(schema.get("minItems") or 0), schema.get("maxItems")
            if high is not None and len(items) > int(high):
                items = items[: int(high)]
            while len(items) < low:
                items = [*items, items[-1]]
            if not objects:
                out = [self._fill(run, inner, root, prompt, example, key, i) for i in items]
                if all(isinstance(s, str) for s in out):
                    self._remember(run, out)
                return out
            return [self._fill(run, inner, root, prompt, example, None, i) for i in items]
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
            return int(low) if kind == "integer" else float(low)
        if kind == "boolean":
            return True
        name = (key or "").lower()
        if any(r in name for r in _REASON_KEYS):
            return REASON
        if name == "verdict":
            return "yes"
        return item if item is not None else REASON

    def _like(self, run: _Run, shown: Any, prompt: str, example: dict[str, Any], key: str | None,
              item: str | None = None) -> Any:
        """An answer shaped like the example JSON a prompt shows (deepeval's G-Eval score)."""
        if isinstance(shown, dict):
            return {k: self._like(run, v, prompt, example, k, item) for k, v in shown.items()}
        if isinstance(shown, list):
            items = self._items(run, prompt, example, verdicts=bool(shown) and isinstance(shown[0], dict))
            return [self._like(run, shown[0] if shown else "", prompt, example, key, i) for i in items]
        if isinstance(shown, (int, float)) and not isinstance(shown, bool):
            return shown
        if isinstance(shown, str):
            name = (key or "").lower()
            if any(r in name for r in _REASON_KEYS):
                return REASON
            return item if item is not None else shown
        return shown

    def _words(self, run: _Run, prompt: str, example: dict[str, Any]) -> str:
        """valor-lite: JSON asked for in words; the keys its prompt names."""
        tail = prompt[-3000:]
        if '"TP"' in tail:
            items = sentences(example.get("prediction", ""))
            return json.dumps({"TP": items, "FP": [], "FN": []})
        if '"verdicts"' in tail:
            items = self._items(run, prompt, example, verdicts=True)
            return json.dumps({"verdicts": [{"analysis": REASON, "verdict": "yes"} for _ in items]})
        for key in ("claims", "opinions", "statements"):
            if f'"{key}"' in tail:
                items = self._items(run, prompt, example, verdicts=False)
                self._remember(run, items)
                return json.dumps({key: items})
        return "4"


def _last(text: str, prompt: str) -> int:
    return max(prompt.rfind(f) for f in _forms(text))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")


def _resolve(schema: Any, root: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    if isinstance(schema, dict) and "allOf" in schema and len(schema["allOf"]) == 1:
        return _resolve(schema["allOf"][0], root)
    return schema


def _requested_schema(body: dict[str, Any], prompt: str) -> tuple[Any, str | None]:
    """(the JSON schema the request asks its answer to follow, the forced tool's name or None)."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"].get("schema"), None
    tools = body.get("tools") or []
    if tools:
        choice = body.get("tool_choice")
        name = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
        fn = next((t["function"] for t in tools if t["function"]["name"] == name), tools[0]["function"])
        return fn.get("parameters"), fn["name"]
    shown = [m.group(1) for m in _SCHEMA_IN_PROMPT.finditer(prompt)]
    if shown:
        try:
            return json.loads(shown[-1]), None
        except ValueError:
            pass
    return None, None


def _example_json(prompt: str) -> Any:
    """The last JSON object shown in the prompt's final part (an "Example JSON"), or None."""
    tail = prompt[-2000:]
    end = tail.rfind("}")
    while end >= 0:
        depth = 0
        for start in range(end, -1, -1):
            depth += {"}": 1, "{": -1}.get(tail[start], 0)
            if depth == 0:
                try:
                    value = json.loads(tail[start:end + 1])
                except ValueError:
                    break
                return value if isinstance(value, dict) else None
        end = tail.rfind("}", 0, end)
    return None


def request_schema(body: dict[str, Any]) -> Any:
    """What of the request, besides its messages, a provider adds to the prompt: the response
    format's schema, or the tools' definitions."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"].get("schema")
    if body.get("tools"):
        return body["tools"]
    return None


class _Handler(BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        parts = self.path.strip("/").split("/")
        run = self.server.run(parts[0], parts[1]) if len(parts) >= 4 else self.server.run("?", "?")
        if self.path.endswith("/embeddings"):
            inputs = body.get("input")
            inputs = inputs if isinstance(inputs, list) else [inputs]
            with self.server.lock:
                run.embeddings.append(inputs)
            data = [{"object": "embedding", "index": i, "embedding": [0.1 * ((i + j) % 7 + 1) for j in range(8)]}
                    for i in range(len(inputs))]
            self._send({"object": "list", "data": data, "model": body.get("model"),
                        "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            return
        if not self.path.endswith("/chat/completions"):
            self._send({"error": {"message": f"no such path {self.path}", "type": "invalid_request_error"}}, 404)
            return
        message = self.server.answer(run, body, parts[0])
        with self.server.lock:
            run.requests.append({"body": body, "answer": message})
        finish = "tool_calls" if "tool_calls" in message else "stop"
        self._send({"id": "chatcmpl-rec", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": finish,
                                 "message": {"role": "assistant", "content": message.get("content"),
                                             **({"tool_calls": message["tool_calls"]} if finish == "tool_calls"
                                                else {})}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def _send(self, payload: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
