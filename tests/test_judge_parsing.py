"""The one parser of judge answers: JSON found in what real (and small) models write, repaired
with json-repair, validated against the schema with errors precise enough for a re-ask."""

import json

import pytest

from textgen_metrics.judges.parsing import JudgeParseError, extract_json, parse_answer, validate

SCHEMA = {"type": "object", "required": ["verdicts"], "additionalProperties": False, "properties": {
    "verdicts": {"type": "array", "minItems": 2, "maxItems": 2, "items": {
        "type": "object", "required": ["reason", "verdict"],
        "properties": {"reason": {"type": "string"}, "verdict": {"type": "string", "enum": ["yes", "no"]}}}}}}


@pytest.mark.parametrize("text", [
    '{"a": 1}',
    'Sure! Here is the JSON:\n```json\n{"a": 1}\n```\nHope it helps.',
    '```\n{"a": 1,}\n```',
    'The answer: {"a": 1} and more text {"b": 2}',
    "<think>Let me see: {a} is not it. The answer has a = 1.</think>\n{\"a\": 1}",
    "<thinking>\n[1, 2]\n</thinking>```JSON\n{'a': 1}\n```",
    "{'a': 1, 'b': 'it''s'}",
])
def test_extracts_json_from_what_models_write(text):
    assert extract_json(text)["a"] == 1


def test_small_model_damage_is_repaired_without_touching_strings():
    assert extract_json('{"v": [1, 2,],}') == {"v": [1, 2]}
    assert extract_json("{'x': 'it is'}") == {"x": "it is"}
    assert extract_json('{"ok": True, "n": None}') == {"ok": True, "n": None}
    # raw newlines inside strings
    assert extract_json('{"reason": "first line\nsecond line"}') == {"reason": "first line\nsecond line"}
    # words inside strings are never rewritten
    assert extract_json('{"reason": "None of True claims are False", "n": None}') == {
        "reason": "None of True claims are False", "n": None}
    assert extract_json("{'reason': \"None is True\", 'v': True}") == {"reason": "None is True", "v": True}


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("no json here", "no JSON object"), ('"Yes"', "no JSON object"),
    ("<think>I will answer {\"a\": 1} later", "no JSON after its reasoning block"),
])
def test_unusable_answers_raise(text, message):
    with pytest.raises(JudgeParseError, match=message):
        extract_json(text)


def test_garbage_that_reads_as_an_empty_object_fails_the_schema():
    with pytest.raises(JudgeParseError, match="missing key 'verdicts'"):
        parse_answer("{{{{:", SCHEMA)


def test_verdict_values_are_case_folded_and_trimmed_extra_keys_ignored():
    text = ('{"verdicts": [{"reason": "r", "verdict": "Yes", "confidence": 0.9}, '
            '{"reason": "r", "verdict": " NO."}], "note": "extra"}')
    assert parse_answer(text, SCHEMA) == {"verdicts": [{"reason": "r", "verdict": "yes"},
                                                       {"reason": "r", "verdict": "no"}]}
    score = {"type": "object", "required": ["score"], "properties": {"score": {"type": "integer", "enum": [1, 2, 3]}}}
    assert parse_answer('{"score": "2"}', score) == {"score": 2}
    assert parse_answer('{"score": 3.0}', score) == {"score": 3}
    with pytest.raises(JudgeParseError, match=r"\$.score: True is not one of \[1, 2, 3\]"):
        parse_answer('{"score": true}', score)


def test_schema_validation_names_the_problem():
    good = {"verdicts": [{"reason": "r", "verdict": "yes"}, {"reason": "r", "verdict": "no"}]}
    assert validate(good, SCHEMA) == good
    with pytest.raises(JudgeParseError, match=r"expected exactly 2 items, got 3"):
        validate({"verdicts": good["verdicts"] + good["verdicts"][:1]}, SCHEMA)
    with pytest.raises(JudgeParseError, match=r"\$.verdicts\[1\].verdict: 'maybe' is not one of"):
        validate({"verdicts": [good["verdicts"][0], {"reason": "r", "verdict": "maybe"}]}, SCHEMA)
    with pytest.raises(JudgeParseError, match="missing key 'verdicts'"):
        validate({}, SCHEMA)
    with pytest.raises(JudgeParseError, match="expected string, got int"):
        validate({"verdicts": [{"reason": 3, "verdict": "yes"}, good["verdicts"][1]]}, SCHEMA)


def test_wrong_count_is_never_padded_or_cut():
    with pytest.raises(JudgeParseError, match="exactly 2 items, got 1"):
        parse_answer('{"verdicts": [{"reason": "r", "verdict": "yes"}]}', SCHEMA)


def test_verdicts_keyed_by_item_number():
    from textgen_metrics.llm.prompts import verdict_lists, verdict_map_schema

    schema = {"type": "object", "required": ["verdicts"], "additionalProperties": False,
              "properties": {"verdicts": verdict_map_schema(3)}}
    keyed = {"verdicts": {"2": {"reason": "b", "verdict": "No."}, "1": {"reason": "a", "verdict": "yes"},
                          " 03": {"reason": "c", "verdict": "YES", "extra": 1}}}
    value = verdict_lists(parse_answer(json.dumps(keyed), schema), {"verdicts": 3})
    assert value["verdicts"] == [{"reason": "a", "verdict": "yes", "index": 1},
                                 {"reason": "b", "verdict": "no", "index": 2},
                                 {"reason": "c", "verdict": "yes", "index": 3}]
    # the list of {"index": k} entries that earlier prompts asked for reads as the same map
    listed = {"verdicts": [{"index": 3, "reason": "c", "verdict": "yes"}, {"index": "1", "reason": "a",
                                                                            "verdict": "yes"},
                           {"index": 2, "reason": "b", "verdict": "no"}]}
    assert verdict_lists(parse_answer(json.dumps(listed), schema), {"verdicts": 3}) == value
    with pytest.raises(JudgeParseError, match=r"\$.verdicts: missing key '3'"):
        parse_answer('{"verdicts": {"1": {"reason": "a", "verdict": "yes"}, "2": {"reason": "b", "verdict": "no"}}}',
                     schema)
    with pytest.raises(JudgeParseError, match=r"'4' names no numbered item \(the items are 1 to 3\)"):
        parse_answer(json.dumps({"verdicts": dict(keyed["verdicts"], **{"4": {"reason": "d", "verdict": "no"}})}),
                     schema)
    with pytest.raises(JudgeParseError, match="entry 0 of the list has no item number"):
        parse_answer('{"verdicts": [{"reason": "a", "verdict": "yes"}]}', schema)
    with pytest.raises(JudgeParseError, match="the key '1' is written twice"):
        parse_answer('{"verdicts": {"1": {"reason": "a", "verdict": "yes"}, "1": {"reason": "a", "verdict": "no"}, '
                     '"2": {"reason": "b", "verdict": "no"}, "3": {"reason": "c", "verdict": "no"}}}', schema)
    empty = {"type": "object", "required": ["verdicts"], "properties": {"verdicts": verdict_map_schema(0)}}
    assert parse_answer('{"verdicts": {}}', empty) == {"verdicts": {}}
    with pytest.raises(JudgeParseError, match="names no numbered item \\(the items are none\\)"):
        parse_answer('{"verdicts": {"1": {"reason": "a", "verdict": "yes"}}}', empty)


def test_every_worked_example_is_a_valid_answer_to_its_own_schema():
    """The answer each prompt shows the judge parses strictly (no repair) and fits the schema the
    judge is then asked for, with the example's own item counts."""
    from textgen_metrics.llm.prompts import PROMPTS

    values = {"low": 1, "high": 5, "n": 2, "block": "prediction", "inputs": "", "criteria": "c", "steps": "s",
              "reference": ""}
    for task, prompt in PROMPTS.items():
        example = prompt.text(**values).split("Example.", 1)[1]
        line = example.split("Answer: ", 1)[1].split("\n")[0]
        answer = json.loads(line)
        if prompt.kind == "items":  # spaced as models write JSON: with compact lists SmolLM2 wrote empty ones
            assert line == json.dumps(answer), task
        counts = {k: len(answer[k]) for k in prompt.keys} if prompt.kind == "verdicts" else None
        request = prompt.request([("prediction", example)], counts, **values)  # the example's own text
        assert request.check is None or request.check(parse_answer(json.dumps(answer), request.schema)), task
        assert parse_answer(json.dumps(answer), request.schema), task
