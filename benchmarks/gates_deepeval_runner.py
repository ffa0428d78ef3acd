"""deepeval's own ``assert_test`` on the noisy-judge runs of ``benchmarks/gates.py``: run by it with
deepeval's interpreter (``make bench-peers``' venv, deepeval 4.3.1), as

    python gates_deepeval_runner.py RUNS_JSON

``RUNS_JSON`` holds ``{"threshold": t, "runs": [[score, ...], ...]}``: each run one judge call per
item (the simulator's draws, so deepeval sees the same numbers as the gate). Each run is gated as
deepeval's users gate it, both ways its docs show:

- ``per_item``: one ``LLMTestCase`` per item, ``assert_test`` on each (a parametrised ``deepeval
  test run``: the run fails when one case fails);
- ``mean``: one test case for the run, the judge's score the run's mean.

The metric is deepeval's ``GEval`` with the threshold; its judge is a stand-in model class
(``DeepEvalBaseLLM``) made for one case, which answers the score request with the score it holds
(on GEval's 0-10 scale) and never reads the prompt; the evaluation steps are given, so GEval asks
for no steps. Prints ``{"per_item": [...], "mean": [...]}`` ("pass" / "fail" per run) as its last
line."""

import json
import os
import sys

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_DISABLE_PROGRESS_BAR", "1")

from deepeval import assert_test  # noqa: E402
from deepeval.metrics import GEval  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, LLMTestCaseParams  # noqa: E402


class StandIn(DeepEvalBaseLLM):
    """A judge that answers GEval's score request with one given score, whatever it is asked."""

    def __init__(self, score):
        self.score = score
        super().__init__("stand-in")

    def load_model(self):
        return self

    def generate(self, prompt, schema=None, **kwargs):
        answer = {"reason": "stand-in", "score": 10.0 * self.score}
        return schema(**answer) if schema is not None else json.dumps(answer)

    async def a_generate(self, prompt, schema=None, **kwargs):
        return self.generate(prompt, schema)

    def get_model_name(self):
        return "stand-in"


def passes(score, threshold, name):
    metric = GEval(name="Correctness", evaluation_steps=["Judge the answer."], threshold=threshold,
                   evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT],
                   model=StandIn(score), async_mode=False)
    try:
        assert_test(LLMTestCase(input=name, actual_output="an answer"), [metric], run_async=False)
    except AssertionError:
        return False
    return True


def main(path):
    data = json.load(open(path))
    t = data["threshold"]
    per_item, mean = [], []
    for k, run in enumerate(data["runs"]):
        if data.get("per_item", True):
            per_item.append("pass" if all(passes(s, t, f"run {k} item {i}") for i, s in enumerate(run)) else "fail")
        mean.append("pass" if passes(sum(run) / len(run), t, f"run {k}") else "fail")
    print(json.dumps({"per_item": per_item or ["-"] * len(mean), "mean": mean}))


if __name__ == "__main__":
    main(sys.argv[1])
