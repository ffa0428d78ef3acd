"""The one parser of judge answers: JSON found in what real (and small) models write, repaired
with json-repair, validated against the schema with errors precise enough for a re-ask."""

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
