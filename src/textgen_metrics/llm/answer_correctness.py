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
Blocks "prediction" and "ground_truth" number the statements of two answers. Per prediction \
statement: "yes" if the ground truth supports it; per ground truth statement: "yes" if the \
prediction states it; else "no". Judge meaning, not wording."""

_CORRECTNESS_EXAMPLE = """\
Example.
Prediction: 1. The sun is a star. 2. It is cold. Ground truth: 1. The sun is a star.
Answer: {"prediction":{"1":{"reason":"Same.","verdict":"yes"},"2":{"reason":"Absent.",\
"verdict":"no"}},"ground_truth":{"1":{"reason":"Same.","verdict":"yes"}}}"""


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
                                   keys=("prediction", "ground_truth"))}

    async def score_example(self, session: JudgeSession, example: Example) -> tuple[float, Details]:
        pred = example["predictions"]
        extract = self.prompt("statements")
        pred_st = await ask_items(session, extract, [("prediction", pred)], block="prediction")
        verdicts_prompt = self.prompt("verdicts")

        async def per_reference(ref: str) -> tuple[float, Details]:
            ref_st = await ask_items(session, extract, [("ground_truth", ref)], block="ground_truth")
            if not pred_st:
                return 0.0, {"statements": ref_st, "tp": 0, "fp": 0, "fn": len(ref_st)}
            counts = {"prediction": len(pred_st), "ground_truth": len(ref_st)}
            blocks = [("prediction", items_block(pred_st)),
                      ("ground_truth", items_block(ref_st) if ref_st else "(none)")]
            value = (await ask(session, verdicts_prompt, blocks, counts)).value
            tp = count_yes(value["prediction"])
            fp = len(pred_st) - tp
            fn = len(ref_st) - count_yes(value["ground_truth"])
            f1 = tp / (tp + 0.5 * (fp + fn)) if tp else 0.0
            return f1, {"statements": ref_st, "tp": tp, "fp": fp, "fn": fn,
                        "prediction_verdicts": pair(pred_st, value["prediction"]),
                        "ground_truth_verdicts": pair(ref_st, value["ground_truth"])}

        per_ref = await asyncio.gather(*(per_reference(r) for r in example["references"]))
        return max(s for s, _ in per_ref), {"prediction_statements": pred_st,
                                            "references": [dict(d, score=s) for s, d in per_ref]}
