"""Prompt caching: each prompt's fixed part (system rule, task, worked example) comes first and is
byte-identical across examples; Anthropic's requests mark it ``cache_control``; cached prompt
tokens are reported in ``judge_usage`` when the provider returns them."""

import json

import textgen_metrics
from chat_server import AnthropicServer, ChatServer
from textgen_metrics.cost import _DryRunJudge
from textgen_metrics.judges.prices import token_counter_for
from textgen_metrics.llm.metrics import METRICS

# two examples that differ in every input, also in the number of contexts
INPUTS = {"predictions": ["Paris is the capital of France. It is large.", "Water boils at 100 C."],
          "references": ["Paris is France's capital.", "Water boils at 100 degrees at sea level."],
          "queries": ["What is the capital of France?", "When does water boil?"],
          "contexts": [["Paris is the capital of France."], ["Water boils at 100 C.", "Ice melts at 0 C.", "Salt."]],
          "sources": ["Paris, the capital of France, is a large city.", "At sea level water boils at 100 C."],
          "baselines": ["Paris.", "At 100 degrees."]}
OPTIONS = {"g_eval": {"criteria": "Is the answer correct and complete?"}}


class _Recording(_DryRunJudge):
    def __init__(self):
        super().__init__("openai", "gpt-4o-mini", "json_schema", token_counter_for("openai", "gpt-4o-mini"))
        self.sent = []

    async def _acomplete(self, messages, request, ctx, tally):
        self.sent.append((request.task, messages))
        return await super()._acomplete(messages, request, ctx, tally)


def _fixed_part(messages):
    """The conversation up to where the example's data begins."""
    text = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
    return text[: text.index("\n\n<<<DATA ")]


def test_every_prompt_s_fixed_part_is_byte_identical_across_examples():
    tok = token_counter_for("openai", "gpt-4o-mini")
    checked = {}
    for name, metric in METRICS.items():
        judge = _Recording()
        kinds = {**metric.columns, **metric.optional_columns}
        metric(judge=judge, on_error="raise", **OPTIONS.get(name, {})).statistics(
            {c: v for c, v in INPUTS.items() if c in kinds})
        by_task = {}
        for task, messages in judge.sent:
            if "<<<DATA " in messages[-1]["content"]:  # a task asked of different texts (answer_correctness'
                # statements of the prediction and of the ground truth) names its block: one fixed part per block
                first_block = messages[-1]["content"].split("<<<DATA ", 1)[1].split(" ", 1)[0]
                by_task.setdefault((task, first_block), []).append(messages)
        for task, conversations in by_task.items():
            if task[0] == "g_eval/steps":  # asked once per run, not per example
                continue
            fixed = {_fixed_part(m) for m in conversations}
            assert len(conversations) >= 2 and len(fixed) == 1, (task, fixed)
            prefix = fixed.pop()
            assert prefix.startswith("system: " + conversations[0][0]["content"])
            checked[task] = tok.count(prefix)
    assert len(checked) >= 16 and min(checked.values()) > 80  # system rule, task and example


def test_openai_cached_prompt_tokens_reach_judge_usage():
    answer = json.dumps({"verdicts": {"1": {"reason": "it answers", "verdict": "yes"}}})
    payload = {"id": "c", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1500, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 1280}}}
    with ChatServer() as server:
        server.faults.append(("raw", 200, payload))
        judge = textgen_metrics.OpenAIJudge("gpt-4o-mini", base_url=server.url, api_key="k")
        result = textgen_metrics.context_relevance(queries=["q?"], contexts=[["c."]], judge=judge)
    assert result["context_relevance"] == 1.0
    assert result["judge_usage"]["cached_prompt_tokens"] == 1280 and result["judge_usage"]["prompt_tokens"] == 1500


def test_anthropic_marks_the_fixed_part_for_its_cache_and_reports_cache_reads():
    value = {"verdicts": {"1": {"reason": "it answers", "verdict": "yes"}}}
    payload = {"id": "m", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
               "content": [{"type": "tool_use", "id": "t", "name": "context_relevance_verdicts", "input": value}],
               "stop_reason": "tool_use", "usage": {"input_tokens": 90, "cache_read_input_tokens": 2100,
                                                    "cache_creation_input_tokens": 0, "output_tokens": 20}}
    with AnthropicServer() as server:
        server.faults.append(("raw", 200, payload))
        judge = textgen_metrics.AnthropicJudge("claude-3-5-haiku-latest", base_url=server.url, api_key="k")
        result = textgen_metrics.context_relevance(queries=["q?"], contexts=[["c."]], judge=judge)
        blocks = server.bodies[0]["messages"][0]["content"]
    assert result["judge_usage"]["cached_prompt_tokens"] == 2100 and result["judge_usage"]["prompt_tokens"] == 2190
    assert blocks[0]["cache_control"] == {"type": "ephemeral"} and "<<<DATA" not in blocks[0]["text"]
    assert blocks[1]["text"].startswith("<<<DATA query ") and "cache_control" not in blocks[1]
    with AnthropicServer() as server:
        judge = textgen_metrics.AnthropicJudge("claude-3-5-haiku-latest", base_url=server.url, api_key="k",
                                               prompt_cache=False)
        textgen_metrics.context_relevance(queries=["q?"], contexts=[["c."]], judge=judge)
        assert isinstance(server.bodies[0]["messages"][0]["content"], str)
