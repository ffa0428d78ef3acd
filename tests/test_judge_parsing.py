import pytest

from textgen_metrics.judges.parsing import JudgeParseError, extract_json, parse_answer, validate

SCHEMA = {"type": "object", "required": ["verdicts"], "additionalProperties": False, "properties": {
    "verdicts": {"type": "array", "minItems": 2, "maxItems": 2, "items": {
        "type": "object", "required": ["verdict", "reason"],
        "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}}}}}}


@pytest.mark.parametrize("text", [
    '{"a": 1}',
    'Sure! Here is the JSON:\n```json\n{"a": 1}\n```\nHope it helps.',
    '```\n{"a": 1,}\n```',
    'The answer: {"a": 1} and more text {"b": 2}',
    '{"a": True, "b": None}'.replace("True", "1").replace("None", "null"),
])
def test_extracts_json_from_surrounding_text(text):
    assert extract_json(text)["a"] == 1


def test_repairs_trailing_commas_python_literals_and_truncation():
    assert extract_json('{"v": [1, 2,],}') == {"v": [1, 2]}
    assert extract_json("{'x': 1}".replace("'", '"')) == {"x": 1}
    assert extract_json('{"ok": True, "n": None}') == {"ok": True, "n": None}
    # cut off by max_tokens: close the string and the brackets
    assert extract_json('{"verdicts": [{"verdict": "yes", "reason": "because') == {
        "verdicts": [{"verdict": "yes", "reason": "because"}]}
    assert extract_json('```json\n{"a": [1, 2') == {"a": [1, 2]}


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("no json here", "no valid JSON"), ("{{{{:", "no valid JSON"),
])
def test_unusable_answers_raise(text, message):
    with pytest.raises(JudgeParseError, match=message):
        extract_json(text)


def test_schema_validation_names_the_problem():
    good = {"verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "no", "reason": "r"}]}
    assert validate(good, SCHEMA) is good
    with pytest.raises(JudgeParseError, match=r"expected exactly 2 items, got 3"):
        validate({"verdicts": good["verdicts"] + good["verdicts"][:1]}, SCHEMA)
    with pytest.raises(JudgeParseError, match=r"\$.verdicts\[1\].verdict: 'maybe' is not one of"):
        validate({"verdicts": [good["verdicts"][0], {"verdict": "maybe", "reason": "r"}]}, SCHEMA)
    with pytest.raises(JudgeParseError, match="missing key 'verdicts'"):
        validate({}, SCHEMA)
    with pytest.raises(JudgeParseError, match="unexpected key 'extra'"):
        validate(dict(good, extra=1), SCHEMA)
    with pytest.raises(JudgeParseError, match="expected string, got int"):
        validate({"verdicts": [{"verdict": "yes", "reason": 3}, good["verdicts"][1]]}, SCHEMA)


def test_wrong_count_is_never_padded_or_cut():
    with pytest.raises(JudgeParseError, match="exactly 2 items, got 1"):
        parse_answer('{"verdicts": [{"verdict": "yes", "reason": "r"}]}', SCHEMA)
