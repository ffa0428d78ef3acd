"""LlamaCppJudge (``gguf:``, the ``tiny:`` judges): a GGUF model in process through
llama-cpp-python's ``Llama``, held against llama-cpp-python's own server on the same file.

The server (``python -m llama_cpp.server``, started here on 127.0.0.1 as a user starts it, behind
the recording proxy) answers ``OpenAIJudge``; the in-process judge answers the same requests.
The tests hold that the two write the same answer text, token counts and log-probabilities for
the same request (the same settings: the server's own defaults, read here from its request and
model types), that every example is scored, and that the judge resolves, pickles, fails clearly
and serves requests that come together. The model (SmolLM2-135M-Instruct) is tiny: these tests
assert the plumbing, never a verdict's quality.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import pickle
from pathlib import Path

import pytest

import textgen_metrics
from llama_server import RecordingProxy, llama_server
from textgen_metrics.judges import JudgeRequest, LlamaCppJudge, OpenAIJudge, TinyJudge, get_judge
from textgen_metrics.judges.base import BREVITY, REPAIR_PROMPT, RESTART_PROMPT
from textgen_metrics.judges.llamacpp import SERVER_MODEL_SETTINGS, SERVER_REQUEST_DEFAULTS
from textgen_metrics.judges.tiny import tiny_model_file
from textgen_metrics.llm.metrics import METRICS
from textgen_metrics.llm.prompts import PROMPTS

ROOT = Path(__file__).resolve().parent.parent
ROWS = [json.loads(line) for line in (ROOT / "data" / "judge_sample.jsonl").read_text().splitlines() if line]
CRITERIA = "Correctness: every fact the answer states is true and answers the query."
SERVER_EXCLUDE = {"n", "logit_bias_type", "user", "min_tokens"}  # llama_cpp/server/app.py


def inputs(name, rows):
    cols = {"predictions": [r["prediction"] for r in rows], "references": [r["reference"] for r in rows],
            "queries": [r["query"] for r in rows], "contexts": [r["contexts"] for r in rows],
            "sources": [r["source"] for r in rows], "baselines": [r["baseline"] for r in rows]}
    given = {c: v for c, v in cols.items() if c in METRICS[name].columns}
    return dict(given, criteria=CRITERIA) if name == "g_eval" else given


def requests(n=3, claims=True):
    out = []
    for r in ROWS[:n]:
        if claims:
            out.append(PROMPTS["faithfulness/claims"].request([("prediction", r["prediction"])]))
        out.append(PROMPTS["summary_coherence/score"].request([("source", r["source"]), ("summary", r["prediction"])]))
    return out


@pytest.fixture(scope="module")
def smollm2():
    return tiny_model_file("smollm2")


@pytest.fixture(scope="module")
def server(smollm2, tmp_path_factory):
    log = tmp_path_factory.mktemp("server") / "llama_server.log"
    with llama_server(smollm2, log=log) as url, RecordingProxy(url) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def judge(smollm2):
    return LlamaCppJudge(smollm2)


def test_the_defaults_are_the_servers():
    """Every decoding default the server applies to a chat request, and every model setting it
    loads with, read from llama-cpp-python's own server types."""
    from llama_cpp.server.settings import ModelSettings
    from llama_cpp.server.types import CreateChatCompletionRequest

    dumped = CreateChatCompletionRequest(messages=[]).model_dump(exclude=SERVER_EXCLUDE)
    dumped.pop("messages")
    dumped.pop("model")
    assert dumped == SERVER_REQUEST_DEFAULTS
    assert dumped["repeat_penalty"] == 1.1 and dumped["top_k"] == 40 and dumped["min_p"] == 0.05
    settings = ModelSettings(model="x.gguf")
    for key, value in SERVER_MODEL_SETTINGS.items():
        assert getattr(settings, key) == value, key
    options = LlamaCppJudge(tiny_model_file("smollm2")).llama_options()
    cpus = multiprocessing.cpu_count()
    assert (options["n_threads"], options["n_threads_batch"]) == (settings.n_threads, settings.n_threads_batch) == (
        max(cpus // 2, 1), cpus)
    assert options["chat_format"] is settings.chat_format is None  # the GGUF file's own template


@pytest.mark.parametrize("extra", [{}, {"max_tokens": 64, "logprobs": True, "top_logprobs": 5},
                                   {"frequency_penalty": 0.5}, {"schema": None}])
def test_each_request_passes_what_the_server_passes_for_the_judges_body(judge, extra):
    """``create_chat_completion``'s keyword arguments equal what the server hands it for the body
    ``OpenAIJudge`` sends in the server's dialect (llama_cpp/server/app.py)."""
    from llama_cpp.server.types import CreateChatCompletionRequest

    base = requests(1)[0]
    request = JudgeRequest(base.messages, schema=extra.pop("schema", base.schema), task=base.task, **extra)
    body = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key="none",
                       response_format="json_object_schema")._body(list(request.messages), request)
    server = CreateChatCompletionRequest(**body).model_dump(exclude=SERVER_EXCLUDE)
    server.pop("model")
    assert judge.request_options(list(request.messages), request) == server


def test_the_same_answers_as_the_real_server(server, judge):
    """faithfulness, G-Eval and pairwise preference on real rows: every request's answer text and
    token counts as the server wrote them (G-Eval's log-probabilities too), the same scores,
    every example scored at the first try where the server scores it."""
    for name, rows in (("faithfulness", ROWS[:1]), ("g_eval", ROWS[:1]), ("pairwise_preference", ROWS[:1])):
        before = len(server.exchanges)
        at_server = OpenAIJudge("smollm2", base_url=server.url, api_key="none", timeout=600, concurrency=1)
        theirs = getattr(textgen_metrics, name)(**inputs(name, rows), judge=at_server, use_aggregator=False,
                                                return_details=True)
        exchanges = [e for e in server.exchanges[before:] if e["status"] == 200]
        served = {}
        for e in exchanges:
            message = e["answer"]["choices"][0]
            served[json.dumps(e["request"]["messages"])] = (message["message"]["content"], e["answer"]["usage"],
                                                            message.get("logprobs"))
        asked = []
        original = judge.complete

        def recording(messages, request, asked=asked, original=original):
            completion = original(messages, request)
            asked.append((json.dumps(messages), completion))
            return completion

        judge.complete = recording
        try:
            ours = getattr(textgen_metrics, name)(**inputs(name, rows), judge=judge, use_aggregator=False,
                                                  return_details=True)
        finally:
            del judge.complete
        assert ours["judge_mode"] == theirs["judge_mode"] == "json_object_schema"
        key = METRICS[name].score_key
        assert ours[key] == theirs[key] and None not in ours[key], (name, ours[key], theirs[key])
        assert ours["errors"] == theirs["errors"] == []
        assert len(asked) == len(exchanges), name
        again = (REPAIR_PROMPT[:40], BREVITY[:40], RESTART_PROMPT[:40])
        assert not any(a in messages for messages, _ in asked for a in again), name  # every example at the first try
        for messages, completion in asked:
            text, usage, logprobs = served[messages]
            assert completion.text == text, (name, completion.text, text)
            assert (completion.prompt_tokens, completion.completion_tokens) == (usage["prompt_tokens"],
                                                                                usage["completion_tokens"])
            if logprobs:  # G-Eval's score request: the server's log-probabilities, to the bit
                assert [t["logprob"] for t in completion.logprobs] == [t["logprob"] for t in logprobs["content"]]
                assert completion.logprobs[0]["top_logprobs"] == [{"token": t["token"], "logprob": t["logprob"]}
                                                                  for t in logprobs["content"][0]["top_logprobs"]]
        assert ours["judge_usage"]["requests"] == len(exchanges)


def test_requests_together_answer_as_one_at_a_time_and_leave_the_loop_free(judge):
    """Requests at once through the engine (one model: llama.cpp is not re-entrant, the calls
    are queued on the judge's worker thread) give the answers of the same requests one at a time;
    the event loop runs on while the model computes."""
    reqs = requests(2, claims=False) + requests(1)
    one = judge.share()  # the same model, one request at a time
    one.concurrency = 1
    alone = [r.text for r in one.judge(reqs)]
    ticks = 0

    async def together():
        nonlocal ticks
        done = asyncio.Event()

        async def tick():
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        async with judge.session() as session:
            results = await asyncio.gather(*(session.ask(r) for r in reqs))
        done.set()
        await ticker
        return results

    results = asyncio.run(together())
    assert [r.text for r in results] == alone and all(r.ok for r in results)
    assert ticks > 10  # the loop was not blocked by the model


def test_tiny_and_gguf_names_resolve_to_it(smollm2):
    tiny = get_judge("tiny:smollm2")
    assert isinstance(tiny, TinyJudge) and isinstance(tiny, LlamaCppJudge)
    assert tiny.model == "tiny:smollm2" and tiny.judge_mode == "json_object_schema" and tiny.chat_format is None
    assert TinyJudge("gemma3").chat_format == "gemma"  # the format its server is started with (no template in the file)
    plain = get_judge(f"gguf:{smollm2}", n_ctx=2048)
    assert isinstance(plain, LlamaCppJudge) and plain.path == smollm2 and plain.n_ctx == 2048


def test_a_pickled_judge_loads_its_model_again_and_answers_alike(judge):
    request = requests(1)[1]
    first = judge.judge([request])[0]
    copy = pickle.loads(pickle.dumps(judge))
    assert copy._llama is None and copy._worker is None and copy.path == judge.path
    assert copy.judge([request])[0].text == first.text
    assert copy._llama is not None and copy._llama is not judge._llama


def test_a_missing_or_wrong_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ValueError, match="does not exist") as e:
        get_judge(f"gguf:{missing}")
    assert str(missing) in str(e.value)
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    with pytest.raises(ValueError, match="not a GGUF file"):
        LlamaCppJudge(str(text))
    with pytest.raises(ValueError, match="n_ctx"):
        LlamaCppJudge(tiny_model_file("smollm2"), n_ctx=0)


def test_a_prompt_longer_than_the_context_is_that_requests_error(smollm2):
    small = LlamaCppJudge(smollm2, n_ctx=256)
    long = PROMPTS["faithfulness/claims"].request([("prediction", "The rain fell on the plain. " * 60)])
    result = small.judge([long])[0]
    assert "longer than the model's context" in result.error and result.requests == 1
