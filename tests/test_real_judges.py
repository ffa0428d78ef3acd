"""The LLM-guided metrics on real models, the way users run them: llama-cpp-python's
OpenAI-compatible server (``python -m llama_cpp.server``, started here on 127.0.0.1) on the
packaged GGUF models, the in-process llama.cpp judge (``judge="tiny:smollm2"``) and the
transformers judge (``HFJudge``, ``judge="hf:FILE.gguf"``) on the same files. Every one of the
twelve modules goes through the library against the server; the in-process judge (held to the
server's answers by tests/test_llamacpp_judge.py) and the other front ends (``evaluate.load``, the
command line, the playground Space in Chromium) take one module of each way a metric asks its judge
(``SHAPES``): they share the library's Run, and every module goes through each of them with
stand-in judges (the modules' doctests, tests/test_metric_modules.py, tests/test_cli.py,
tests/test_spaces.py). One or two rows a module: the CPU time is the model's.

A proxy between the judge and the server (``llama_server.RecordingProxy``) keeps what the server
sent, so the tests hold the judge's report against the server's own ``usage`` and
``logprobs``. The models are tiny (SmolLM2-135M-Instruct, Gemma 3 270M): these tests assert the
plumbing (every example scored in range or None with its error, nothing raised, the constrained
dialect used, usage as the server counted it, a cached rerun free, G-Eval weighting from the
server's log-probabilities), never the quality of a verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import textgen_metrics
from llama_server import RecordingProxy, llama_server
from test_spaces import browser, page, read_key_values, serve, upload  # noqa: F401  (fixtures of the Space tests)
from textgen_metrics.judges import JudgeCache, OpenAIJudge, get_judge
from textgen_metrics.judges.parsing import extract_json
from textgen_metrics.judges.tiny import tiny_model_file
from textgen_metrics.llm.metrics import METRICS, score_probabilities
from textgen_metrics.registry import METRICS as REGISTRY

ROOT = Path(__file__).resolve().parent.parent
ROWS = [json.loads(line) for line in (ROOT / "data" / "judge_sample.jsonl").read_text().splitlines() if line]
CRITERIA = "Correctness: every fact the answer states is true and answers the query."
NAMES = sorted(METRICS)
# one module of each way a metric asks its judge: extracted items then a verdict per item
# (faithfulness), a score weighted by the answer's log-probabilities (g_eval), one pair in both
# orders (pairwise_preference)
SHAPES = ("faithfulness", "g_eval", "pairwise_preference")
# an error a constrained decoder can never cause: the answer's structure was rejected
STRUCTURE = ("missing key", "expected ", "is not one of", "names no numbered item", "written twice",
             "no JSON", "has two verdicts", "has no item number")


def columns(rows):
    return {"predictions": [r["prediction"] for r in rows], "references": [r["reference"] for r in rows],
            "queries": [r["query"] for r in rows], "contexts": [r["contexts"] for r in rows],
            "sources": [r["source"] for r in rows], "baselines": [r["baseline"] for r in rows]}


def inputs(name, rows):
    metric = METRICS[name]
    given = {c: v for c, v in columns(rows).items() if c in metric.columns}
    return dict(given, criteria=CRITERIA) if name == "g_eval" else given


def check_result(name, out, n):
    """Every example scored in the metric's range, or None with an error of its own."""
    key = METRICS[name].score_key
    low, high = REGISTRY[name].score_range
    scores = out[key]
    assert isinstance(scores, list) and len(scores) == n, (name, out)
    errors = {e["index"]: e["error"] for e in out["errors"]}
    for i, score in enumerate(scores):
        if score is None:
            assert errors.get(i), (name, i, out["errors"])
            assert errors[i].startswith(METRICS[name].name + "/") or ":" in errors[i], errors[i]
        else:
            assert low <= score <= high, (name, i, score)
            assert i not in errors
    return scores


@pytest.fixture(scope="module")
def smollm2():
    return tiny_model_file("smollm2")


@pytest.fixture(scope="module")
def server(smollm2, tmp_path_factory):
    """SmolLM2 behind llama-cpp-python's server, behind the recording proxy."""
    log = tmp_path_factory.mktemp("server") / "llama_server.log"
    with llama_server(smollm2, log=log) as url, RecordingProxy(url) as proxy:
        yield proxy


def judge_at(proxy, **options):
    return OpenAIJudge("smollm2", base_url=proxy.url, api_key="none", timeout=600, **options)


def test_every_module_through_the_library_on_the_real_server(server, tmp_path):
    """Default settings: the judge finds the server's dialect (llama-cpp-python refuses
    json_schema with HTTP 500) and asks with the schema its grammar enforces; usage is what the
    server reported; a cached rerun sends nothing; G-Eval's weighting uses the server's
    log-probabilities. One row per module: the tiny model tests the plumbing, not the judge."""
    rows = ROWS[:1]
    cache = tmp_path / "judge.sqlite"
    first = len(server.exchanges)
    for name in NAMES:
        before = len(server.exchanges)
        judge = judge_at(server, cache=str(cache))
        out = getattr(textgen_metrics, name)(**inputs(name, rows), judge=judge, use_aggregator=False,
                                             return_details=True)
        check_result(name, out, len(rows))
        assert out["judge_mode"] == "json_object_schema", (name, out["judge_mode"])
        said = server.usage(before)
        usage = out["judge_usage"]
        assert (usage["requests"], usage["prompt_tokens"], usage["completion_tokens"]) == (
            said["requests"], said["prompt_tokens"], said["completion_tokens"]), (name, usage, said)
        for e in server.exchanges[before:]:
            if e["status"] == 200:  # each answered request asked with the schema, in the server's dialect
                fmt = e["request"]["response_format"]
                assert fmt["type"] == "json_object" and fmt["schema"]["type"] == "object", name
        for err in out["errors"]:
            assert not any(s in err["error"] for s in STRUCTURE), (name, err)  # the grammar holds structure
        # the model extracts items to judge (a prompt that made it write empty lists would score
        # every text as if it said nothing: faithfulness 1.0, answer relevance 0)
        lists = [extract_json(e["answer"]["choices"][0]["message"]["content"]) for e in server.exchanges[before:]
                 if e["status"] == 200 and e["task"].split("/")[-1] in ("claims", "statements", "opinions")]
        assert not lists or any(items for value in lists for items in value.values()), (name, lists)
        if name in ("summary_coherence", "g_eval"):
            for i, d in enumerate(out["details"]):
                if out[METRICS[name].score_key][i] is None:
                    continue
                assert d["weighted"] is True and d["probabilities"], (name, d)
                summary = columns(rows)["predictions"][i]
                sent = [e for e in server.exchanges[before:] if e["status"] == 200
                        and e["task"] == f"{name}/score" and summary in e["request"]["messages"][-1]["content"]]
                logprobs = sent[-1]["answer"]["choices"][0]["logprobs"]["content"]
                low, high = REGISTRY[name].score_range
                assert d["probabilities"] == score_probabilities(logprobs, range(int(low), int(high) + 1)), name
    # the first judge met the server's refusal of json_schema once; every later judge started right
    refused = [e for e in server.exchanges[first:] if e["status"] != 200]
    assert len(refused) >= 1 and all("json_schema" in json.dumps(e["answer"]) for e in refused)
    assert all(e["request"].get("response_format", {}).get("type") == "json_schema" for e in refused)
    # a rerun of the same evaluation is answered from the cache: a module whose examples were all
    # scored sends no request; one with an unscored example asks again only what failed
    sent = len(server.exchanges)
    asked = 0
    for name in NAMES:
        out = getattr(textgen_metrics, name)(**inputs(name, rows), judge=judge_at(server, cache=str(cache)),
                                             use_aggregator=False)
        asked += out["judge_usage"]["requests"]
        if all(s is not None for s in out[METRICS[name].score_key]):
            assert out["judge_usage"]["requests"] == 0 and out["judge_usage"]["cached"] > 0, (name, out)
    assert len(server.exchanges) - sent == asked
    assert len(JudgeCache(str(cache))) > 0


def test_each_way_of_asking_through_evaluate_load_on_the_real_server(server, repo_root):
    import evaluate

    rows = ROWS[2:3]
    for name in SHAPES:
        module = evaluate.load(f"./metrics/{name}", judge=judge_at(server))
        out = module.compute(**inputs(name, rows), use_aggregator=False)
        check_result(name, out, len(rows))
        assert out["judge_mode"] == "json_object_schema"


def test_each_way_of_asking_through_the_command_line_on_the_real_server(server, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[3:5]))  # two rows: a row named in an error
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "textgen_metrics", "score", str(data), "--metrics", ",".join(SHAPES),
         "--judge", "openai:smollm2", "--judge-url", server.url, "--judge-option", "timeout=600",
         "--option", f"g_eval.criteria={CRITERIA}", "--out", str(report), "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800, env=dict(os.environ, OPENAI_API_KEY="none"))
    assert proc.returncode in (0, 1), proc.stderr  # 1: some example got no score, each named
    got = json.loads(report.read_text())
    for name in SHAPES:
        per = got["metrics"][name]["per_example"]
        check_result(name, dict(per, errors=got["metrics"][name]["aggregate"]["errors"]), 2)
    if proc.returncode == 1:
        assert "got no score" in proc.stderr and "row" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_each_way_of_asking_through_the_playground_in_chromium_on_the_real_server(server, page, tmp_path):  # noqa: F811
    data = tmp_path / "rag.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS[5:6]))
    with serve(ROOT / "spaces" / "playground" / "app.py") as url:
        page.goto(url)
        upload(page, data)
        dropdown = page.locator("#metrics input")
        for name in SHAPES:
            dropdown.click()
            dropdown.fill(name)
            page.keyboard.press("Enter")
            page.locator("#metrics .token").get_by_text(name, exact=True).wait_for()
        page.keyboard.press("Escape")
        chosen = [t.strip() for t in page.locator("#metrics .token").all_inner_texts()]
        assert set(SHAPES) <= set(chosen), chosen
        page.locator("#options textarea, #options input").first.fill(json.dumps({"g_eval": {"criteria": CRITERIA}}))
        page.get_by_text("Judge (an OpenAI-compatible server").click()
        page.locator("#judge-url textarea, #judge-url input").first.fill(server.url)
        page.locator("#judge-model textarea, #judge-model input").first.fill("smollm2")
        start = time.monotonic()
        page.click("#score")
        page.locator("#summary [data-testid=cell-0-0], #error :text('Error')").first.wait_for(timeout=900_000)
        error = page.locator("#error").inner_text().strip()
        shown = read_key_values(page, "summary") if not error else {}
        assert time.monotonic() - start < 900
        if error:  # an example without a score is named, row and judge error, never a crash
            assert "row 1" in error and "Traceback" not in error, error
        else:  # each module has its scores in the report (the summary table shows its first rows)
            assert shown and all(v != "" for v in shown.values())
            report = page.locator("#report").inner_text()
            chart = page.locator("#chart").inner_html()
            for name in SHAPES:
                assert f'"{name}"' in report or f'data-metric="{name}' in chart or name in report, (name, report[:3000])


def test_every_module_through_the_packaged_tiny_judge_with_constrained_decoding():
    """judge="tiny:smollm2": the GGUF file in process through llama.cpp (``LlamaCppJudge``), no
    server; llama.cpp's grammar (the server's dialect, ``json_object_schema``) holds every answer
    to its schema, so no answer is rejected for its structure. (The transformers judge, xgrammar,
    is ``hf:``: the next test.) One module of each way of asking: tests/test_llamacpp_judge.py holds
    the in-process judge to the server's answers, and the server takes every module above."""
    from textgen_metrics.judges import LlamaCppJudge

    rows = ROWS[6:7]
    judge = get_judge("tiny:smollm2")
    assert isinstance(judge, LlamaCppJudge) and judge.judge_mode == "json_object_schema"
    for name in SHAPES:
        out = getattr(textgen_metrics, name)(**inputs(name, rows), judge=judge, use_aggregator=False)
        check_result(name, out, len(rows))
        assert out["judge_mode"] == "json_object_schema" and out["judge_model"] == "tiny:smollm2"
        for err in out["errors"]:
            assert not any(s in err["error"] for s in STRUCTURE), (name, err)


def test_the_local_judge_reads_a_gguf_path_and_gemmas_turns(smollm2, monkeypatch):
    import gguf

    from textgen_metrics.judges import HFJudge

    opened = []

    class Counting(gguf.GGUFReader):  # the file's metadata parsed once per load (10 s for Gemma's vocabulary)
        def __init__(self, path, *args, **kwargs):
            opened.append(os.fspath(path))
            super().__init__(path, *args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", Counting)

    judge = get_judge(f"hf:{smollm2}")  # the judge string with a GGUF path
    assert isinstance(judge, HFJudge) and judge.files.gguf_file == os.path.basename(smollm2)
    out = textgen_metrics.faithfulness(**inputs("faithfulness", ROWS[7:8]), judge=judge, use_aggregator=False)
    check_result("faithfulness", out, 1)
    gemma = HFJudge(tiny_model_file("gemma3"), batch_size=4)  # a GGUF with no chat template: Gemma's own
    prompt = gemma._prompt([{"role": "system", "content": "RULES"}, {"role": "user", "content": "Q"}])
    assert prompt.startswith("<bos><start_of_turn>user\nRULES\n\nQ<end_of_turn>\n<start_of_turn>model\n"), prompt
    loaded = gemma._load()
    assert opened.count(tiny_model_file("gemma3")) == 1 and gguf.GGUFReader is Counting, opened
    assert loaded.tokenizer.convert_tokens_to_ids("<end_of_turn>") in loaded.eos_ids  # a turn's end stops
    # Gemma through xgrammar: one module (its vocabulary and its turns). SmolLM2 above answered a
    # list schema through xgrammar, and Gemma behind the server (below) answers faithfulness's.
    out = textgen_metrics.summary_coherence(**inputs("summary_coherence", ROWS[8:9]), judge=gemma,
                                            use_aggregator=False)
    check_result("summary_coherence", out, 1)
    assert out["judge_mode"] == "xgrammar"


def test_the_shared_gguf_reader_reads_what_gguf_reads(smollm2):
    """The reader a GGUF model's load shares (its file a plain array over the memory map, which
    parses faster) gives gguf-py's own fields and tensors, and is one reader per file and mode;
    the table of tensor names is built once per architecture and depth, and is gguf-py's own."""
    import gguf
    import numpy as np

    from textgen_metrics.judges.local import _one_gguf_reader

    own = gguf.GGUFReader(smollm2)
    real_names = gguf.get_tensor_name_map
    with _one_gguf_reader():
        shared = gguf.GGUFReader(smollm2)
        assert gguf.GGUFReader(smollm2) is shared and gguf.GGUFReader(smollm2, "c") is not shared
        names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30)
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30) is names
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 29) is not names
    assert gguf.get_tensor_name_map is real_names and real_names(gguf.MODEL_ARCH.LLAMA, 30).mapping == names.mapping
    assert gguf.GGUFReader is not type(shared) and isinstance(shared, gguf.GGUFReader)
    assert type(own.data) is np.memmap and type(shared.data) is np.ndarray and shared.data.base is not None
    assert list(shared.fields) == list(own.fields) and len(own.fields) > 20
    for key, field in own.fields.items():
        other = shared.fields[key]
        assert (other.offset, other.name, other.types, other.data) == (field.offset, field.name, field.types,
                                                                       field.data), key
        assert len(other.parts) == len(field.parts) and all(
            np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(other.parts, field.parts, strict=True)), key
    assert [(t.name, t.tensor_type, t.shape.tolist(), t.data_offset) for t in shared.tensors] == \
        [(t.name, t.tensor_type, t.shape.tolist(), t.data_offset) for t in own.tensors]
    assert all(np.array_equal(a.data, b.data) for a, b in zip(shared.tensors, own.tensors, strict=True))


def test_shared_prompt_prefixes_write_smollm2s_own_answers(smollm2, monkeypatch):
    """HFJudge on the real model: a batch of the metrics' own requests (two tasks) with their
    shared prefixes computed once writes the tokens of the plain left-padded batch."""
    from textgen_metrics.judges import HFJudge, JudgeRequest
    from textgen_metrics.judges import prefix as prefix_module
    from textgen_metrics.llm.prompts import PROMPTS

    plans = []
    real_prefill = prefix_module.prefill
    monkeypatch.setattr(prefix_module, "prefill", lambda model, plan, *a: plans.append(plan) or real_prefill(
        model, plan, *a))
    requests = []
    for r in ROWS[:2]:  # two requests of each task: a prefix of each is shared
        requests.append(PROMPTS["faithfulness/claims"].request([("prediction", r["prediction"])]))
        requests.append(PROMPTS["summary_coherence/score"].request([("source", r["source"]),
                                                                   ("summary", r["prediction"])]))
    judge = HFJudge(smollm2, batch_size=4, max_new_tokens=96)  # no cache: each pass generates

    def answers(share):  # one model loaded, asked with and without the shared prefixes
        judge.share_prefix = share
        results = judge.judge([JudgeRequest(q.messages, schema=q.schema, task=q.task, max_tokens=96)
                               for q in requests])
        assert judge.cache is None and not any(r.cached for r in results)
        return [(r.text, r.completion_tokens) for r in results]

    shared = answers(True)
    assert len(plans) >= 1 and len(plans[0].lengths) == 2  # one prefix per task
    prefilled = len(plans)
    assert answers(False) == shared
    assert len(plans) == prefilled  # the second pass shared nothing


def test_gemma_behind_the_real_server_in_its_chat_format():
    rows = ROWS[10:11]
    with llama_server(tiny_model_file("gemma3"), extra=("--chat_format", "gemma")) as url, \
            RecordingProxy(url) as proxy:
        for name in ("faithfulness", "pairwise_preference"):
            before = len(proxy.exchanges)
            out = getattr(textgen_metrics, name)(**inputs(name, rows), judge=judge_at(proxy), use_aggregator=False)
            check_result(name, out, len(rows))
            said, usage = proxy.usage(before), out["judge_usage"]
            assert (usage["prompt_tokens"], usage["completion_tokens"]) == (said["prompt_tokens"],
                                                                          said["completion_tokens"])
            assert out["judge_mode"] == "json_object_schema"
