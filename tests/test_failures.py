"""Failures of a judged example stay with the example; bugs stop the run (issue #37, item 3).

A backend reports what fails one request (its transport, an HTTP error, a body that is no answer,
the user's own function) as a ``JudgeError``, kept as that example's ``None`` and error; an
exception raised by the package's own code leaves the run with its traceback. And every
``except Exception`` of the package either raises again or says, on its line, why it must
catch everything."""

import ast
import json
from pathlib import Path

import pytest

import textgen_metrics
from chat_server import ChatServer
from textgen_metrics.judges import CallableJudge, JudgeError, JudgeRequest, OpenAIJudge

SRC = Path(__file__).resolve().parent.parent / "src" / "textgen_metrics"
GOOD = '{"verdicts": ["yes", "no"]}'
SCHEMA = {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
    "type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "string", "enum": ["yes", "no"]}}}}


def request(i: int = 0) -> JudgeRequest:
    return JudgeRequest([{"role": "user", "content": f"question {i}"}], schema=SCHEMA, task="test/verdicts")


def by_task(body, task):
    if task == "faithfulness/claims":
        return json.dumps({"claims": ["one"]})
    return json.dumps({"verdicts": {"1": {"reason": "r", "verdict": "yes"}}})


def test_a_bug_in_a_backend_s_request_building_stops_the_run_with_its_traceback(monkeypatch):
    def planted(self, messages, request):
        raise KeyError("planted")

    monkeypatch.setattr(OpenAIJudge, "_body", planted)
    with ChatServer(by_task) as srv:
        judge = OpenAIJudge("m", base_url=srv.url, api_key="k", backoff=0.01)
        with pytest.raises(KeyError, match="planted") as info:
            judge.judge([request(0), request(1)])
        assert info.traceback[-1].name == "planted"  # raised where the bug is
        with pytest.raises(KeyError, match="planted"):  # not faithfulness: None with an error string
            textgen_metrics.faithfulness(predictions=["a"], contexts=[["c"]], judge=judge, use_aggregator=False)
        assert srv.count == 0


def test_a_backend_s_own_exception_that_is_no_judge_error_is_a_bug():
    from textgen_metrics.judges import Completion, Judge

    class Backend(Judge):
        backend = "test"

        async def _acomplete(self, messages, request, ctx, tally):
            tally.sent()
            if "3" in messages[0]["content"]:
                raise TypeError("a bug of the backend")
            if "2" in messages[0]["content"]:
                raise JudgeError("the body holds no choices")  # the server's fault: this request's
            return Completion(text=GOOD)

    judge = Backend("m", concurrency=2)
    ok, lost = judge.judge([request(1), request(2)])
    assert ok.value == {"verdicts": ["yes", "no"]}
    assert lost.error == "the body holds no choices" and isinstance(lost.cause, JudgeError)
    with pytest.raises(TypeError, match="a bug of the backend"):
        judge.judge([request(1), request(3)])


def test_transport_http_body_and_user_function_failures_stay_with_their_example():
    with ChatServer(lambda body: GOOD) as srv:
        # a server error past the retries, a body that is not JSON, one of the wrong shape, a 400
        srv.faults.extend(["500", "500", "garbage", "no_message", ("status", 400, "bad request")])
        judge = OpenAIJudge("m", base_url=srv.url, api_key="k", backoff=0.01, max_retries=1, concurrency=1)
        first, second, third = judge.judge([request(0), request(1), request(2)])
        assert "no usable answer after 2 tries (HTTP 500" in first.error
        assert "not a chat completion" in second.error
        assert "HTTP 400: bad request" in third.error

    def client(messages):
        if messages[0]["content"].endswith("1"):
            raise ConnectionError("the user's client lost this request")
        return GOOD

    ok, lost = CallableJudge(client).judge([request(0), request(1)])
    assert ok.ok and "judge function raised ConnectionError: the user's client lost" in lost.error


def _catch_alls(tree: ast.AST):
    """(line, handler or None) of each ``except Exception``/``except BaseException`` and each
    ``contextlib.suppress(Exception)``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(isinstance(n, ast.Name) and n.id in ("Exception", "BaseException") for n in names):
                yield node.lineno, node
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "suppress":
            if any(isinstance(a, ast.Name) and a.id in ("Exception", "BaseException") for a in node.args):
                yield node.lineno, None


def _raises_again(handler: ast.ExceptHandler) -> bool:
    """The handler's own statements (not nested functions') end in a ``raise``: the bare one, or
    a new exception (a ``JudgeFatalError`` that stops the run)."""
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def test_every_catch_all_raises_again_or_says_why_it_must_catch_everything():
    unexplained = []
    count = 0
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for line, handler in _catch_alls(ast.parse(text)):
            count += 1
            explained = "#" in lines[line - 1].split("except", 1)[-1].split("suppress", 1)[-1]
            if not explained and not (handler is not None and _raises_again(handler)):
                unexplained.append(f"{path.relative_to(SRC)}:{line}: {lines[line - 1].strip()}")
    assert count > 0
    assert not unexplained, "a catch-all that neither raises again nor names its reason:\n" + "\n".join(unexplained)


def test_a_missing_package_is_named_as_such_not_as_a_model_missing_from_the_cache(monkeypatch):
    import sys

    from textgen_metrics.errors import OptionError
    from textgen_metrics.judges.local import resolve_local_model
    from textgen_metrics.semantic.bertscore import _resolve

    with pytest.raises(ValueError, match="neither a local folder or GGUF file nor a model in the Hugging Face cache"):
        resolve_local_model("no-such-org/no-such-model")
    with pytest.raises(OptionError, match="neither a local folder nor a model in the Hugging Face cache"):
        _resolve("no-such-org/no-such-model")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import huggingface_hub: ImportError
    with pytest.raises(ValueError, match=r"huggingface_hub, which cannot be imported .*textgen-metrics\[hf\]") as e:
        resolve_local_model("no-such-org/no-such-model")
    assert "in the Hugging Face cache;" not in str(e.value)
    with pytest.raises(OptionError, match=r"huggingface_hub, which cannot be imported .*textgen-metrics\[bertscore\]"):
        _resolve("no-such-org/no-such-model")
