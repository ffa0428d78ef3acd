"""Schemas as the hosted judges send them: each repeated part defined once (``$defs``/``$ref``),
accepting exactly the answers the written-out schema accepts, and fewer prompt tokens."""

import json
import random

from textgen_metrics.judges import JudgeParseError
from textgen_metrics.judges.parsing import parse_answer
from textgen_metrics.judges.prices import token_counter_for
from textgen_metrics.judges.schema import define_once, inline_definitions
from textgen_metrics.llm.prompts import PROMPTS, verdict_map_schema


def _verdict_schema(counts):
    return {"type": "object", "required": list(counts), "additionalProperties": False,
            "properties": {k: verdict_map_schema(n) for k, n in counts.items()}}


def test_define_once_is_inverted_by_inline_definitions_for_every_prompt_and_count():
    for task, prompt in PROMPTS.items():
        for n in range(0, 7):
            counts = {k: n + i for i, k in enumerate(prompt.keys)} if prompt.kind == "verdicts" else None
            schema = prompt.schema(counts, limit=n + 3 if prompt.kind == "items" else None)
            sent = define_once(schema)
            assert inline_definitions(sent) == schema, (task, n)
            assert sent["type"] == "object" and "properties" in sent  # the root stays an object
            assert define_once(sent) == sent  # already factored: sent as it is


def test_each_numbered_verdict_points_at_one_definition():
    sent = define_once(_verdict_schema({"verdicts": 3}))
    assert list(sent["$defs"]) == ["item"]
    assert sent["$defs"]["item"] == verdict_map_schema(1)["properties"]["1"]
    assert sent["properties"]["verdicts"]["properties"] == {k: {"$ref": "#/$defs/item"} for k in "123"}
    assert sent["properties"]["verdicts"]["required"] == ["1", "2", "3"]
    # two maps of the same length: the whole map once, its verdict once inside it
    both = define_once(_verdict_schema({"prediction": 2, "ground_truth": 2}))
    assert both["properties"] == {"prediction": {"$ref": "#/$defs/item"}, "ground_truth": {"$ref": "#/$defs/item"}}
    assert both["$defs"]["item"]["properties"] == {k: {"$ref": "#/$defs/item2"} for k in "12"}
    # nothing repeated: unchanged
    single = _verdict_schema({"verdicts": 1})
    assert define_once(single) is single


def test_the_sent_schema_costs_fewer_tokens_the_more_items_it_has():
    tok = token_counter_for("openai", "gpt-4o")

    def count(s):
        return tok.count(json.dumps(s, separators=(",", ":")))

    saved = []
    for n in (2, 3, 5, 10):
        full = _verdict_schema({"verdicts": n})
        saved.append(count(full) - count(define_once(full)))
    assert all(s > 0 for s in saved) and saved == sorted(saved)


def test_the_written_out_schema_accepts_exactly_what_the_sent_one_describes():
    """Random answers validated against the inlined sent schema and the original give the same
    verdict (accepted with the same value, or rejected)."""
    rng = random.Random(5)
    schema = _verdict_schema({"prediction": 3, "ground_truth": 2})
    back = inline_definitions(define_once(schema))
    for _ in range(300):
        answer = {k: {str(i): {"reason": "r", "verdict": rng.choice(["yes", "no", "maybe"])}
                      for i in range(1, n + 1 + rng.choice([-1, 0, 0, 1]))}
                  for k, n in (("prediction", 3), ("ground_truth", 2))}
        outcomes = []
        for s in (schema, back):
            try:
                outcomes.append(parse_answer(json.dumps(answer), s))
            except JudgeParseError as e:
                outcomes.append(type(e))
        assert outcomes[0] == outcomes[1]
