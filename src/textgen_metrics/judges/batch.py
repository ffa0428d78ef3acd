"""Batch mode: the providers' batch APIs, at half the live price (``batch=True`` on
``OpenAIJudge``, ``AzureOpenAIJudge`` and ``AnthropicJudge``).

The metric code does not change. A batch-mode judge's session context is a :class:`BatchRun`:
each request the engine sends (``_acomplete``) becomes a line of a batch file and waits on a
future. When no new request has come for ``batch_window`` seconds (every example of a stage has
asked its request: the claims of every example, then the verdicts of every example), the
requests gathered are sent as one batch, polled with back-off until the provider ends it, and
each request's future is resolved from the results: an answer (a ``Completion``, checked by the
engine like a live one), or an error with the provider's reason. So a multi-stage metric runs
stage by stage, one batch per stage; the engine's rules are the live ones:

- only validated answers are cached;
- a cut-off or unusable answer is asked again in a follow-up batch (with the other requests of
  the next stage), or live with ``batch_retry="live"``;
- a request the batch did not answer (expired, cancelled, failed, or that one line's error)
  fails with the provider's reason: that example gets None and the error, and a rerun sends only
  what is missing;
- the batch id is stored in the judge's cache as soon as the batch exists, keyed by the content
  of its requests: a process that stops while waiting (Ctrl-C, a killed job) and is run again
  with the same cache finds the same requests, so it polls the same batch instead of paying
  twice. A batch that ended without answers (expired, cancelled, failed) is marked used, so that
  a rerun submits its requests anew; a completed one is marked used once its answers are in the
  cache.

Wire formats (``BatchAPI`` subclasses):

- OpenAI: a JSONL file of ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
  "body"}`` uploaded to ``POST /files`` (multipart, ``purpose=batch``), ``POST /batches``
  (``input_file_id``, ``endpoint``, ``completion_window: "24h"``), ``GET /batches/{id}`` until
  ``completed``, ``expired``, ``cancelled`` or ``failed``; the answers in ``output_file_id``'s
  content and the failed requests in ``error_file_id``'s (``GET /files/{id}/content``).
- Azure OpenAI: the same under ``{endpoint}/openai/...?api-version=...``, each line's ``url``
  ``/chat/completions`` and ``model`` the (Global-Batch) deployment.
- Anthropic: ``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}``,
  ``GET /v1/messages/batches/{id}`` until ``processing_status`` is ``ended``, then the JSONL of
  ``results_url`` (``succeeded``, ``errored``, ``canceled``, ``expired`` per request).

Limits per batch: OpenAI 50,000 requests and 200 MB, Anthropic 100,000 requests and 256 MB; a
stage with more is sent as several batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from .base import Completion, JudgeError, JudgeFatalError, JudgeRequest, JudgeResult, logger
from .cache import AnswerCache
from .http import _error_message, _HTTPClient, _short, transport_failure

__all__ = ["BatchRun", "BatchAPI", "OpenAIBatchAPI", "AzureBatchAPI", "AnthropicBatchAPI", "custom_id"]


class BatchJudge(Protocol):
    """What the batch APIs use of the judge that sends them (``OpenAIJudge`` and its subclasses,
    ``AnthropicJudge`` among them): the judges import this module, never the other way round."""

    backend: str
    model: str
    base_url: str
    cache: AnswerCache | None
    timeout: float
    max_retries: int
    live_concurrency: int
    batch_window: float
    batch_poll_interval: float
    batch_max_poll_interval: float

    def redact(self, text: str | None) -> str | None: ...

    def _headers(self, request: JudgeRequest) -> dict[str, str]: ...

    def _fatal(self, status: int, message: str) -> JudgeFatalError | None: ...

    def _retry_after(self, status: int, headers: Mapping[str, str], text: str) -> float | None: ...

    def _delay(self, attempt: int, retry_after: float | None = None) -> float: ...

    def _completion(self, payload: Any) -> Completion: ...


def custom_id(request: JudgeRequest, body: dict[str, Any]) -> str:
    """A request's id in a batch: its task and a hash of its body (``[A-Za-z0-9_-]``, at most 64
    characters, as Anthropic requires); identical bodies share one line."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return f"{request.schema_name[:40]}-{digest.hexdigest()[:20]}"


class _Ended:
    """A batch the provider has ended: its status and the results per custom id."""

    def __init__(self, status: str, results: dict[str, Completion | JudgeError], missing: str) -> None:
        self.status, self.results, self.missing = status, results, missing


class BatchAPI:
    """One provider's batch wire format, spoken over the judge's HTTP session."""

    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, judge: BatchJudge) -> None:
        self.judge = judge

    # -- hooks --------------------------------------------------------------------------------
    def line(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def create(self, http: Any, lines: list[dict[str, Any]], content: bytes) -> str:
        raise NotImplementedError

    async def status(self, http: Any, batch_id: str) -> tuple[bool, dict[str, Any]]:
        """(ended, the batch object)."""
        raise NotImplementedError

    async def results(self, http: Any, batch: dict[str, Any]) -> _Ended:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        return {k: v for k, v in self.judge._headers(JudgeRequest([], task="batch")).items()
                if k.lower() not in ("content-type",)}

    def where(self) -> str:
        """The batch API's address (part of the key a batch id is kept under)."""
        return self.judge.base_url

    # -- HTTP with the judge's retries --------------------------------------------------------
    async def call(self, http: Any, method: str, url: str, what: str, **kw: Any) -> bytes:
        """The body of a 2xx answer; 429, 5xx and transport failures retried with back-off; a
        401/403/404 stops the run (``JudgeFatalError``); another 4xx is a ``JudgeError``."""
        import aiohttp

        judge = self.judge
        last = "no attempt"
        for attempt in range(judge.max_retries + 1):
            wait: float | None = None
            try:
                async with http.request(method, url, headers=self.headers(), **kw) as resp:
                    raw: bytes = await resp.read()
                    if 200 <= resp.status < 300:
                        return raw
                    message = _short(_error_message(raw.decode("utf-8", "replace")))
                    if resp.status in (401, 402, 403):
                        fatal = judge._fatal(resp.status, message)
                        raise JudgeFatalError(judge.redact(str(fatal)) or "")
                    if resp.status == 404:
                        raise JudgeFatalError(judge.redact(
                            f"{judge.base_url}: {what}: not found (HTTP 404: {message}); check that the server "
                            "serves the batch API") or "")
                    if resp.status != 429 and resp.status < 500:
                        raise JudgeError(judge.redact(f"{what}: HTTP {resp.status}: {message}") or "")
                    last = f"HTTP {resp.status}: {message}"
                    wait = judge._retry_after(resp.status, resp.headers, raw.decode("utf-8", "replace"))
            except (asyncio.TimeoutError, aiohttp.ClientError) as e:
                last = transport_failure(e, judge.base_url)
            if attempt < judge.max_retries:
                await asyncio.sleep(judge._delay(attempt, wait))
        raise JudgeError(judge.redact(f"{what}: no answer after {judge.max_retries + 1} tries ({last})") or "")

    async def call_json(self, http: Any, method: str, url: str, what: str, **kw: Any) -> dict[str, Any]:
        raw = await self.call(http, method, url, what, **kw)
        try:
            value = json.loads(raw.decode("utf-8"))
        except ValueError:
            raise JudgeError(f"{what}: the answer is not JSON") from None
        if not isinstance(value, dict):
            raise JudgeError(f"{what}: the answer is not a JSON object")
        return value

    def completion(self, payload: Any) -> Completion | JudgeError:
        try:
            return self.judge._completion(payload)
        except JudgeError as e:
            return e
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return JudgeError("the batch result is not a chat completion")


def _id(value: dict[str, Any], what: str) -> str:
    """The ``id`` of an object the API made (a file, a batch): a body without one is the requests'
    failure, as any other body that is not what was asked."""
    found = value.get("id")
    if not isinstance(found, str) or not found:
        raise JudgeError(f"{what}: the answer holds no id")
    return found


def _jsonl(raw: bytes) -> Iterator[dict[str, Any]]:
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.strip():
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    yield value


class OpenAIBatchAPI(BatchAPI):
    """OpenAI's Batch API (``/files`` + ``/batches``)."""

    endpoint = "/v1/chat/completions"
    running = ("validating", "in_progress", "finalizing", "cancelling")

    def url(self, path: str) -> str:
        return f"{self.judge.base_url}{path}"

    def line(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": cid, "method": "POST", "url": self.endpoint, "body": body}

    async def create(self, http: Any, lines: list[dict[str, Any]], content: bytes) -> str:
        import aiohttp

        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", content, filename="textgen_metrics_batch.jsonl", content_type="application/jsonl")
        uploaded = await self.call_json(http, "POST", self.url("/files"), "uploading the batch file", data=form)
        batch = await self.call_json(http, "POST", self.url("/batches"), "creating the batch", json={
            "input_file_id": _id(uploaded, "uploading the batch file"), "endpoint": self.endpoint,
            "completion_window": "24h", "metadata": {"source": "textgen-metrics"}})
        return _id(batch, "creating the batch")

    async def status(self, http: Any, batch_id: str) -> tuple[bool, dict[str, Any]]:
        batch = await self.call_json(http, "GET", self.url(f"/batches/{urllib.parse.quote(batch_id, safe='')}"),
                                     f"reading batch {batch_id}")
        batch.setdefault("id", batch_id)
        return str(batch.get("status")) not in self.running, batch

    async def results(self, http: Any, batch: dict[str, Any]) -> _Ended:
        status = str(batch.get("status"))
        results: dict[str, Completion | JudgeError] = {}
        for field in ("output_file_id", "error_file_id"):
            file_id = batch.get(field)
            if not file_id:
                continue
            raw = await self.call(http, "GET", self.url(f"/files/{urllib.parse.quote(str(file_id), safe='')}/content"),
                                  f"reading batch {batch['id']}'s {field}")
            for row in _jsonl(raw):
                cid = row.get("custom_id")
                if isinstance(cid, str):
                    results[cid] = self._outcome(row)
        if status == "failed":
            errors = batch.get("errors")
            errors = (errors.get("data") if isinstance(errors, dict) else None) or []
            why = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errors if isinstance(e, dict))
            missing = f"the batch {batch['id']} failed ({why or 'no reason given'})"
        elif status == "expired":
            missing = f"the batch {batch['id']} expired (its 24 h window) before this request was answered"
        elif status == "cancelled":
            missing = f"the batch {batch['id']} was cancelled before this request was answered"
        else:
            missing = f"the batch {batch['id']} ({status}) holds no result for this request"
        return _Ended(status, results, missing)

    def _outcome(self, row: dict[str, Any]) -> Completion | JudgeError:
        error = row.get("error")
        if isinstance(error, dict) and error:
            return JudgeError(f"the batch did not answer this request: {error.get('code')}: {error.get('message')}")
        response = row.get("response") or {}
        code = response.get("status_code")
        body = response.get("body")
        if code == 200:
            return self.completion(body)
        message = _short(_error_message(json.dumps(body))) if body is not None else "no body"
        return JudgeError(f"the batch answered this request with HTTP {code}: {message}")


class AzureBatchAPI(OpenAIBatchAPI):
    """Azure OpenAI's batch API: ``{endpoint}/openai/files`` and ``/openai/batches`` with the
    ``api-version``; each line's ``url`` is ``/chat/completions`` and its ``model`` the
    (Global-Batch) deployment."""

    endpoint = "/chat/completions"

    def url(self, path: str) -> str:
        query = urllib.parse.urlencode({"api-version": getattr(self.judge, "api_version", "")})
        return f"{self.judge.base_url}/openai{path}?{query}"

    def line(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": cid, "method": "POST", "url": self.endpoint,
                "body": dict(body, model=getattr(self.judge, "deployment", self.judge.model))}


class AnthropicBatchAPI(BatchAPI):
    """Anthropic's Message Batches (``/v1/messages/batches``)."""

    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def url(self, path: str = "") -> str:
        base = self.judge.base_url[:-3] if self.judge.base_url.endswith("/v1") else self.judge.base_url
        return f"{base}/v1/messages/batches{path}"

    def line(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": cid, "params": body}

    async def create(self, http: Any, lines: list[dict[str, Any]], content: bytes) -> str:
        batch = await self.call_json(http, "POST", self.url(), "creating the message batch", json={"requests": lines})
        return _id(batch, "creating the message batch")

    async def status(self, http: Any, batch_id: str) -> tuple[bool, dict[str, Any]]:
        batch = await self.call_json(http, "GET", self.url(f"/{urllib.parse.quote(batch_id, safe='')}"),
                                     f"reading message batch {batch_id}")
        batch.setdefault("id", batch_id)
        return batch.get("processing_status") == "ended", batch

    async def results(self, http: Any, batch: dict[str, Any]) -> _Ended:
        results: dict[str, Completion | JudgeError] = {}
        url = batch.get("results_url")
        if url:
            raw = await self.call(http, "GET", str(url), f"reading message batch {batch['id']}'s results")
            for row in _jsonl(raw):
                cid = row.get("custom_id")
                if isinstance(cid, str):
                    results[cid] = self._outcome(batch, row.get("result") or {})
        return _Ended("ended", results, f"the message batch {batch['id']} holds no result for this request")

    def _outcome(self, batch: dict[str, Any], result: dict[str, Any]) -> Completion | JudgeError:
        kind = result.get("type")
        if kind == "succeeded":
            return self.completion(result.get("message"))
        if kind == "errored":
            err = result.get("error") or {}
            err = err.get("error", err) if isinstance(err, dict) else {}
            return JudgeError(f"the message batch answered this request with {err.get('type')}: {err.get('message')}")
        if kind == "canceled":
            return JudgeError(f"the message batch {batch['id']} was cancelled before this request was answered")
        if kind == "expired":
            return JudgeError(f"the message batch {batch['id']} expired (its 24 h window) before this request was "
                              "answered")
        return JudgeError(f"the message batch gave this request a result of unknown type {kind!r}")


class _Waiting:
    __slots__ = ("line", "futures")

    def __init__(self, line: dict[str, Any]) -> None:
        self.line = line
        self.futures: list[asyncio.Future[Completion]] = []


class BatchRun:
    """The session context of a batch-mode judge: gathers the requests of a stage and sends them
    as one batch (see the module's docstring)."""

    def __init__(self, judge: BatchJudge, http: Any, api: BatchAPI) -> None:
        self.judge, self.http, self.api = judge, http, api
        self.live = asyncio.Semaphore(judge.live_concurrency)  # re-asks sent live (batch_retry="live")
        self.pending: dict[str, _Waiting] = {}
        self.flusher: asyncio.Task[None] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.used: list[tuple[str, str]] = []  # (cache key, batch id) of completed batches, marked at close
        self.batches: list[str] = []  # ids of the batches this run sent or resumed

    async def ask(self, body: dict[str, Any], request: JudgeRequest, tally: JudgeResult) -> Completion:
        cid = custom_id(request, body)
        tally.sent()
        waiting = self.pending.get(cid)
        if waiting is None:
            waiting = self.pending[cid] = _Waiting(self.api.line(cid, body))
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        waiting.futures.append(future)
        if self.flusher is None:
            self.flusher = asyncio.ensure_future(self._flush_when_quiet())
        return await future

    async def _flush_when_quiet(self) -> None:
        while True:  # until no new request came for batch_window seconds
            count = sum(len(w.futures) for w in self.pending.values())
            await asyncio.sleep(self.judge.batch_window)
            if sum(len(w.futures) for w in self.pending.values()) == count:
                break
        pending, self.pending, self.flusher = self.pending, {}, None
        for chunk in self._chunks(pending):
            task = asyncio.ensure_future(self._run(chunk))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def _chunks(self, pending: dict[str, _Waiting]) -> Iterator[dict[str, _Waiting]]:
        chunk: dict[str, _Waiting] = {}
        size = 0
        for cid in sorted(pending):  # the same requests make the same file, whatever their order
            n = len(json.dumps(pending[cid].line, ensure_ascii=False).encode("utf-8", "surrogatepass")) + 1
            if chunk and (len(chunk) >= self.api.max_requests or size + n > self.api.max_bytes):
                yield chunk
                chunk, size = {}, 0
            chunk[cid] = pending[cid]
            size += n
        if chunk:
            yield chunk

    async def _run(self, chunk: dict[str, _Waiting]) -> None:
        try:
            ended = await self._send_and_wait(chunk)
        except BaseException as e:  # handed as it is to each waiting request (a JudgeError: kept; a bug: raised)
            # a cancellation reaches whoever still waits as a JudgeError, and is raised on here
            error = e if isinstance(e, Exception) else JudgeError(f"{type(e).__name__}: {e}")
            for waiting in chunk.values():
                for f in waiting.futures:
                    if not f.done():
                        f.set_exception(error)
            if not isinstance(e, Exception):
                raise
            return
        for cid, waiting in chunk.items():
            outcome = ended.results.get(cid) or JudgeError(ended.missing)
            for f in waiting.futures:
                if f.done():
                    continue
                if isinstance(outcome, Completion):
                    f.set_result(outcome)
                else:
                    f.set_exception(JudgeError(self.judge.redact(str(outcome)) or ""))

    async def _send_and_wait(self, chunk: dict[str, _Waiting]) -> _Ended:
        judge, cache = self.judge, self.judge.cache
        lines = [chunk[cid].line for cid in sorted(chunk)]
        content = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines).encode(
            "utf-8", "surrogatepass")
        key = "batch:" + hashlib.sha256(json.dumps([judge.backend, self.api.where()]).encode() + content).hexdigest()
        kept = cache.get(key) if cache is not None else None
        if isinstance(kept, dict) and kept.get("id") and not kept.get("used"):
            batch_id = str(kept["id"])
            logger.warning("judge %s: resuming batch %s (%d requests)", judge.model, batch_id, len(lines))
        else:
            batch_id = await self.api.create(self.http, lines, content)
            if cache is not None:  # at once: a process stopped while waiting resumes this batch
                cache.put(key, {"id": batch_id, "requests": len(lines), "created": time.time()})
            logger.info("judge %s: batch %s sent (%d requests)", judge.model, batch_id, len(lines))
        self.batches.append(batch_id)
        delay = judge.batch_poll_interval
        while True:
            ended, batch = await self.api.status(self.http, batch_id)
            if ended:
                break
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, judge.batch_max_poll_interval)
        result = await self.api.results(self.http, batch)
        if cache is not None:
            if result.status in ("completed", "ended") and result.results:
                self.used.append((key, batch_id))  # marked used once its answers are stored (close)
            else:  # ended without answers: a rerun sends these requests again
                cache.put(key, {"id": batch_id, "used": True, "status": result.status})
        return result

    async def close(self) -> None:
        if self.flusher is not None:
            self.flusher.cancel()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*([self.flusher] if self.flusher else []), *self.tasks, return_exceptions=True)
        cache = self.judge.cache
        if cache is not None and self.used:
            cache.flush()  # the answers first: then the batch is no longer needed
            for key, batch_id in self.used:
                cache.put(key, {"id": batch_id, "used": True, "status": "completed"})


class BatchContext(contextlib.AbstractAsyncContextManager):  # type: ignore[type-arg]
    """The judge's ``_open()`` in batch mode: its HTTP session and a :class:`BatchRun`."""

    def __init__(self, judge: BatchJudge, api: BatchAPI) -> None:
        self.judge, self.api = judge, api
        self.client = _HTTPClient(judge.timeout)
        self.run: BatchRun | None = None

    async def __aenter__(self) -> BatchRun:
        http = await self.client.__aenter__()
        self.run = BatchRun(self.judge, http, self.api)
        return self.run

    async def __aexit__(self, *exc: Any) -> bool:
        try:
            if self.run is not None:
                await self.run.close()
        finally:
            await self.client.__aexit__(*exc)
        return False
