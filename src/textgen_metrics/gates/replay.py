"""Exact replay of a judge for CI, built on the judge cache.

A recording is the judge cache's entries a gate used, exported as text: one JSON line per
request, sorted by the request's cache key (the judge engine's
:func:`~textgen_metrics.judges.cache.cache_key`: backend, model, messages as first asked, every
decoding setting, the repeat number), each with the cached answer (the entry as the cache holds
it) and the judge fingerprint it was made with. The file is meant to be committed and reviewed
in a pull request: sorted lines diff cleanly.

- ``record``: the judge runs as usual (its own cache too); every answer it used, from the cache
  or from the judge, is written to the recording: the other metrics' lines kept, the metric's
  replaced by the first gate of the run that records it and added to by the next (the gates of
  one test session or config file share a recording). A run is one process, or every worker of
  one pytest-xdist run (``PYTEST_XDIST_TESTRUNUID``); its writes take a file lock (``filelock``)
  around the read, merge and replace, so workers writing at once lose no line.
- ``strict``: a :class:`RecordingCache` holding the recording's entries is the judge's only
  cache, and the judge's backend is replaced by one that refuses: nothing is sent, no socket is
  opened (no session either), and a request the recording lacks is an error naming the metric,
  the item and the repeat (:class:`ReplayMissError`).
- ``off``: no recording.

The judge fingerprint is the metric, the judge's backend, the model the server says it ran
(``model``: each answer's own, which the judge engine keeps in the cache entry; the name asked
for, ``requested``, where the server names none), the metric's prompts version and the decoding
settings (the judge's settings of a request, without the per-request ones). A server may serve
the name it is asked for with another model, or another version of it, from one day to the next:
the served model is what makes the answers, so it is what a recording is checked against.
Replaying a recording made with another fingerprint is an error that names both
(:class:`ReplayFingerprintError`): another configuration (backend, name asked for, prompts,
decoding) always; another served model when the judge knows what its server runs now
(:attr:`~textgen_metrics.judges.base.Judge.served_model`: it, or a copy of it, has had a live
answer in this process), since strict replay itself sends nothing to ask.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Mapping
from typing import Any

from filelock import FileLock

from ..judges.base import Judge, JudgeError, JudgeRequest

__all__ = ["REPLAY_MODES", "ReplayError", "ReplayMissError", "ReplayFingerprintError", "RecordingCache",
           "judge_fingerprint", "read_recording", "write_recording", "check_fingerprint", "strict_judge",
           "MISSING_NOTE", "check_replay"]

REPLAY_MODES = ("off", "record", "strict")
MISSING_NOTE = "not in the judge recording"  # the error text of a request strict replay refuses
_PER_REQUEST = ("schema", "logprobs", "top_logprobs", "repeat")


class ReplayError(ValueError):
    """A replay that cannot go on: a request the recording lacks, another judge fingerprint."""


class ReplayMissError(ReplayError):
    """Strict replay met a request the recording lacks (``metric``, ``item``, ``repeat``)."""

    def __init__(self, metric: str, items: list[int], repeat: int, path: str) -> None:
        self.metric, self.items, self.repeat, self.path = metric, items, repeat, path
        shown = ", ".join(str(i) for i in items[:10]) + (f" (and {len(items) - 10} more)" if len(items) > 10 else "")
        super().__init__(f"judge_recording {path}: metric {metric!r}, item {shown}, repeat {repeat}: the request "
                         f"is not in the recording (strict replay sends nothing); record it again with "
                         f"judge_replay='record'")


class ReplayFingerprintError(ReplayError):
    """The recording was made with another judge fingerprint."""


def check_replay(judge_replay: Any, judge_recording: Any) -> tuple[str, str | None]:
    """The replay mode and the recording's path, checked (argument names in the messages)."""
    if judge_replay not in REPLAY_MODES:
        raise ValueError(f"judge_replay: {judge_replay!r} is not one of {list(REPLAY_MODES)}")
    if judge_replay == "off":
        return "off", None
    if not isinstance(judge_recording, (str, os.PathLike)) or not os.fspath(judge_recording):
        raise ValueError(f"judge_recording: judge_replay={judge_replay!r} needs the recording's path, got "
                         f"{judge_recording!r}")
    path = os.fspath(judge_recording)
    if judge_replay == "strict" and not os.path.isfile(path):
        raise ValueError(f"judge_recording: {path} does not exist; make it with judge_replay='record'")
    return str(judge_replay), path


def judge_fingerprint(metric: str, prompts_version: str, judge: Judge) -> dict[str, Any]:
    """What makes a judge answer as it did, as configured: metric, backend, the model asked for
    (``requested``; ``model`` too until an answer says what was served: :func:`served`), prompts,
    decoding settings."""
    settings = judge.settings(JudgeRequest(messages=[]))
    decoding = {k: v for k, v in sorted(settings.items()) if k not in _PER_REQUEST}
    return {"metric": metric, "backend": judge.backend, "model": str(judge.model), "requested": str(judge.model),
            "prompts": prompts_version, "decoding": json.loads(json.dumps(decoding, default=str))}


def answer_model(answer: Any, fingerprint: Mapping[str, Any]) -> str:
    """The model a cached answer says the server ran; the model asked for where it names none
    (a callable or local judge, an entry cached before answers kept it)."""
    model = answer.get("model") if isinstance(answer, Mapping) else None
    return model if isinstance(model, str) and model else str(fingerprint["requested"])


def served(fingerprint: Mapping[str, Any], answers: Any) -> dict[str, Any]:
    """``fingerprint`` with ``model`` the model(s) the server said it ran for ``answers`` (sorted,
    joined by ", " when the answers came from several)."""
    models = sorted({answer_model(a, fingerprint) for a in answers})
    return {**fingerprint, "model": ", ".join(models) if models else fingerprint["requested"]}


def _configuration(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fingerprint.items() if k != "model"}


# the recordings read by this process, by (path, modification time, size): the gates of a test
# session read their shared recording once
_READ: dict[tuple[str, int, int], list[dict[str, Any]]] = {}


def read_recording(path: str) -> list[dict[str, Any]]:
    """The recording's lines (``{"key", "answer", "judge"}``), each checked, the line named
    (read once per version of the file in a process; the lines are not to be changed)."""
    status = os.stat(path)
    version = (os.path.abspath(path), status.st_mtime_ns, status.st_size)
    if version not in _READ:
        _READ.clear()  # one recording at a time is the common case: no growth over a session
        _READ[version] = _read_lines(path)
    return _READ[version]


def _read_lines(path: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as e:
                raise ReplayError(f"judge_recording {path}, line {number}: not JSON ({e.msg})") from None
            if not isinstance(line, dict) or not {"key", "answer", "judge"} <= set(line):
                raise ReplayError(f"judge_recording {path}, line {number}: expected an object with key, answer "
                                  "and judge")
            lines.append(line)
    return lines


# this process's run, where no pytest-xdist run says which run it belongs to
_PROCESS_RUN = uuid.uuid4().hex


def run_id() -> str:
    """The run a write belongs to: the workers of one pytest-xdist run share its id (each adds its
    gates to the recording); any other process is a run of its own."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or _PROCESS_RUN


def _beside(path: str, suffix: str) -> str:
    """A file of the recording's own in the temporary folder (its lock, the metrics its run has
    written): none is left beside the recording, in the repository."""
    digest = hashlib.sha256(os.path.abspath(path).encode("utf-8")).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"textgen-metrics-recording-{digest}{suffix}")


def _first_of_run(path: str, metric: str) -> bool:
    """Whether this is the run's first write of ``metric`` to the recording (noted; under its lock)."""
    state_path, run = _beside(path, ".run.json"), run_id()
    state: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        with open(state_path, encoding="utf-8") as f:
            state = json.load(f)
    metrics = state.get("metrics") if isinstance(state, dict) and state.get("run") == run else None
    written = [m for m in metrics if isinstance(m, str)] if isinstance(metrics, list) else []
    if metric in written:
        return False
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump({"run": run, "metrics": [*written, metric]}, f)
    return True


def write_recording(path: str, metric: str, entries: Mapping[str, Any], fingerprint: dict[str, Any]) -> None:
    """Write ``entries`` of ``metric`` into the recording at ``path``, every line sorted by key
    (written whole, then renamed), under the recording's file lock. The other metrics' lines are
    kept; this metric's are replaced by the first write of this run (:func:`run_id`) and added to
    by the next ones (stale requests leave the file; several gates, tests, workers or config
    entries of one metric share one recording)."""
    with FileLock(_beside(path, ".lock")):
        _write_locked(path, metric, entries, fingerprint)


def _write_locked(path: str, metric: str, entries: Mapping[str, Any], fingerprint: dict[str, Any]) -> None:
    lines = _read_lines(path) if os.path.isfile(path) else []  # read anew: another worker may have written
    if _first_of_run(path, metric):
        lines = [line for line in lines if line["judge"].get("metric") != metric]
    added = [{"key": k, "answer": v, "judge": {**fingerprint, "model": answer_model(v, fingerprint)}}
             for k, v in entries.items()]
    new = {(line["key"], json.dumps(_configuration(line["judge"]), sort_keys=True)) for line in added}
    lines = [line for line in lines
             if (line["key"], json.dumps(_configuration(line["judge"]), sort_keys=True)) not in new]
    lines += added
    lines.sort(key=lambda line: (line["key"], json.dumps(line["judge"], sort_keys=True)))
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.replace(temporary, path)


def check_fingerprint(path: str, lines: list[dict[str, Any]], fingerprint: dict[str, Any],
                      served_now: str | None = None) -> dict[str, Any]:
    """The entries recorded for the gate's metric with ``fingerprint``'s configuration (every
    field but the served model). A recording that holds the metric only with other
    configurations, or (``served_now``: the model the judge's server said it ran in its latest
    live answer) with answers of another served model, is an error naming both fingerprints."""
    metric = fingerprint["metric"]
    configuration = _configuration(fingerprint)
    entries: dict[str, Any] = {}
    others: list[dict[str, Any]] = []  # the metric's other configurations
    stale: list[dict[str, Any]] = []  # this configuration, answered by another model than the server's now
    for line in lines:
        recorded = line["judge"]
        if recorded.get("metric") != metric:
            continue
        if _configuration(recorded) != configuration:
            others += [recorded] if recorded not in others else []
        elif served_now is not None and recorded.get("model") != served_now:
            stale += [recorded] if recorded not in stale else []
        else:
            entries[line["key"]] = line["answer"]
    if stale or (others and not entries):
        others = stale or others
        shown = " and ".join(json.dumps(o, sort_keys=True) for o in others)
        now = fingerprint if served_now is None else {**fingerprint, "model": served_now}
        raise ReplayFingerprintError(
            f"judge_recording {path}: metric {metric!r} was recorded with the judge {shown}, and is replayed with "
            f"the judge {json.dumps(now, sort_keys=True)}; record it again with judge_replay='record'")
    return entries


class RecordingCache:
    """An :class:`~textgen_metrics.judges.cache.AnswerCache` over a recording's entries.

    Strict (``inner`` None): the entries only, nothing written. Recording: every answer got from
    ``inner`` (the judge's own cache) or put by the engine is kept in :attr:`entries` too.
    :attr:`used`: the answers served or put (a strict gate's: its part of the recording), whose
    served models are the gate's judge fingerprint."""

    def __init__(self, entries: Mapping[str, Any], inner: Any = None, recording: bool = False) -> None:
        self.entries: dict[str, Any] = dict(entries)
        self.used: dict[str, Any] = {}
        self.inner = inner
        self.recording = recording

    def get(self, key: str) -> Any | None:
        value = self.entries.get(key)
        if value is None and self.recording and self.inner is not None:
            value = self.inner.get(key)
            if value is not None:
                self.entries[key] = value
        if value is not None:
            self.used[key] = value
        return value

    def put(self, key: str, value: Any) -> None:
        if self.recording:
            self.entries[key] = self.used[key] = value
            if self.inner is not None:
                self.inner.put(key, value)

    def stage(self, key: str, value: Any) -> None:
        if self.recording:
            self.entries[key] = self.used[key] = value
            if self.inner is not None:
                self.inner.stage(key, value)

    def flush(self) -> None:
        if self.inner is not None:
            self.inner.flush()


async def _refuse(messages: Any, request: JudgeRequest, ctx: Any, tally: Any) -> Any:
    raise JudgeError(f"{request.task}: {MISSING_NOTE}")


def strict_judge(judge: Judge, entries: Mapping[str, Any]) -> tuple[Judge, RecordingCache]:
    """A copy of ``judge`` that answers from ``entries`` only (its cache, returned too): its
    backend refuses every request (an error of that request, named afterwards by item and
    repeat) and opens no session."""
    cache = RecordingCache(entries)
    out = judge.share(cache=None)
    out.cache = cache
    out._acomplete = _refuse  # type: ignore[method-assign]
    out._open = lambda: contextlib.nullcontext(None)  # type: ignore[method-assign]
    out.first_answer_timeout = None
    return out, cache


def recording_judge(judge: Judge) -> tuple[Judge, RecordingCache]:
    """A copy of ``judge`` whose cache keeps every answer it uses (its own cache beneath)."""
    cache = RecordingCache({}, inner=judge.cache, recording=True)
    out = judge.share(cache=None)
    out.cache = cache
    return out, cache
