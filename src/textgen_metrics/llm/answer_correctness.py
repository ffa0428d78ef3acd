"""Answer correctness (valor, after RAGAS without the embedding term): the F1 of a prediction's
statements against a ground truth's.

The judge breaks the prediction and each reference into statements (step ``statements``, the
wording shared with answer relevance and context recall), then, in one request per reference
(step ``verdicts``), says which prediction statements the ground truth supports and which ground
truth statements the prediction states.
"""

from __future__ import annotations

import asyncio

from ..judges import JudgeSession
from .metrics import Details, Example, JudgedMetric, ask, ask_items, count_yes, pair
from .prompts import STATEMENTS, STATEMENTS_EXAMPLE, items_block, prompt

__all__ = ["AnswerCorrectness"]

_CORRECTNESS = """\
Compare a predicted answer with a ground truth answer, statement by statement. The data block \
"prediction_statements" lists the numbered statements of the prediction, and \
"ground_truth_statements" those of the ground truth; the full texts are in the blocks \
"prediction" and "ground_truth". For each prediction statement, decide whether the ground truth \
supports it ("yes") or not ("no"). For each ground truth statement, decide whether the \
prediction states it too ("yes") or misses it ("no"). Judge meaning, not wording.
Answer with a JSON object {"prediction_verdicts": {...}, "ground_truth_verdicts": {...}}, each \
with exactly one entry per numbered statement of its block, keyed by the statement's number \
("1", "2", ... in order): {"reason": one short sentence, "verdict": "yes" or "no"}. Write the \
reason first, then the verdict that follows from it."""

_CORRECTNESS_EXAMPLE = """\
Example.
Prediction statements: 1. The sun is powered by nuclear fission. 2. The sun is a star.
Ground truth statements: 1. The sun is a star. 2. The sun is powered by nuclear fusion.
Answer: {"prediction_verdicts": {"1": {"reason": "The ground truth says fusion, not \
fission.", "verdict": "no"}, "2": {"reason": "The ground truth says the sun is a star.", \
"verdict": "yes"}}, "ground_truth_verdicts": {"1": {"reason": "The prediction says it \
is a star.", "verdict": "yes"}, "2": {"reason": "The prediction says fission instead.", \
"verdict": "no"}}}"""


class AnswerCorrectness(JudgedMetric):
    """F1 of the prediction's statements against a ground truth's (valor, after RAGAS without the embedding
    term): a prediction statement the ground truth supports is a true positive, one it does not a false
    positive, a ground-truth statement the prediction misses a false negative; F1 = tp / (tp + (fp + fn)
    / 2), 0 without true positives. Several references: the best. Range 0 to 1, higher is better.
    Empty cases: a prediction without statements scores 0.

    Args:
        predictions: the answers to judge.
        references: one ground truth answer, or several, per example.
    """

    name = "answer_correctness"
    columns = {"predictions": "text", "references": "text_or_list"}
    prompts = {"statements": prompt("items", STATEMENTS, STATEMENTS_EXAMPLE, keys=("statements",)),
                "verdicts": prompt("verdicts", _CORRECTNESS, _CORRECTNESS_EXAMPLE,
                                   keys=("prediction_verdicts", "ground_truth_verdicts"))}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        pred = example["predictions"]
        extract = self.prompt("statements")
        pred_st = await ask_items(session, extract, [("prediction", pred)], block="prediction")
        verdicts_prompt = self.prompt("verdicts")

        async def per_reference(ref: str) -> tuple[float, Details]:
            ref_st = await ask_items(session, extract, [("ground_truth", ref)], block="ground_truth")
            if not pred_st:
                return 0.0, {"statements": ref_st, "tp": 0, "fp": 0, "fn": len(ref_st)}
            counts = {"prediction_verdicts": len(pred_st), "ground_truth_verdicts": len(ref_st)}
            blocks = [("prediction", pred), ("ground_truth", ref),
                      ("prediction_statements", items_block(pred_st)),
                      ("ground_truth_statements", items_block(ref_st) if ref_st else "(none)")]
            value = (await ask(session, verdicts_prompt, blocks, counts)).value
            tp = count_yes(value["prediction_verdicts"])
            fp = len(pred_st) - tp
            fn = len(ref_st) - count_yes(value["ground_truth_verdicts"])
            f1 = tp / (tp + 0.5 * (fp + fn)) if tp else 0.0
            return f1, {"statements": ref_st, "tp": tp, "fp": fp, "fn": fn,
                        "prediction_verdicts": pair(pred_st, value["prediction_verdicts"]),
                        "ground_truth_verdicts": pair(ref_st, value["ground_truth_verdicts"])}

        per_ref = await asyncio.gather(*(per_reference(r) for r in example["references"]))
        return max(s for s, _ in per_ref), {"prediction_statements": pred_st,
                                            "references": [dict(d, score=s) for s, d in per_ref]}
