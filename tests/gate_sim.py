"""A seeded simulator of a noisy judge, for the gate tests and ``benchmarks/gates.py``.

Items have true scores; each call of the judge on an item answers its true score plus Gaussian
noise (``sd`` per call), clipped to [0, 1]. Two forms share the draws:

- :class:`NoisyJudge`: a ``messages -> str`` function for ``CallableJudge`` that answers
  G-Eval's score requests (task id ``g_eval/score``) on a 0-100 scale, the item found by the
  ``[item N]`` tag of its prediction (the data, not the prompt's wording); the k-th call on an
  item draws from ``default_rng([seed, 2, item, k])``, so a rerun answers alike (each kind of
  draw has its own tag: NumPy's seed ``[s]`` and ``[s, 0]`` are the same stream);
- :class:`SimTarget`: the same draws without the judge engine, in the shape the gate's decision
  takes (:func:`textgen_metrics.gates.gate.decide`), for simulations of thousands of gates.
"""

from __future__ import annotations

import collections
import json
import re

import numpy as np

from textgen_metrics.gates.scoring import Scored

SCALE = 100  # the G-Eval scale the stand-in answers on: scores 0..100
_ITEM = re.compile(r"\[item (\d+)\]")


def true_scores(n, mean, spread=0.15, seed=0, centered=True):
    """``n`` items' true scores with this spread, inside [0, 1]: their mean exactly ``mean``
    (``centered``: a given suite), or drawn around it (a sample of a population whose mean is
    ``mean``: what a gate's interval is about)."""
    rng = np.random.default_rng([seed, 1])  # a tag per kind of draw: no two streams alike
    raw = rng.normal(0.0, spread, n)
    if centered:
        raw = raw - raw.mean()
    return np.clip(raw + mean, 0.0, 1.0)


def draw(true, seed, item, k, sd):
    """The k-th call's answer on ``item``: true score plus noise, clipped."""
    rng = np.random.default_rng([seed, 2, item, k])
    return float(min(1.0, max(0.0, true[item] + rng.normal(0.0, sd))))


def predictions(n):
    return [f"[item {i}] an answer" for i in range(n)]


class NoisyJudge:
    """A stand-in judge answering G-Eval's score task with noisy scores (see the module)."""

    def __init__(self, true, sd=0.1, seed=0, fail_items=()):
        self.true, self.sd, self.seed = list(true), sd, seed
        self.fail_items = set(fail_items)
        self.calls = collections.Counter()
        self.model = "noisy-sim"

    def __call__(self, messages, task):
        if task != "g_eval/score":
            raise ValueError(f"the stand-in answers g_eval/score only, got {task}")
        text = "\n".join(m["content"] for m in messages)
        item = int(_ITEM.search(text).group(1))
        if item in self.fail_items:
            return "not an answer"
        k = self.calls[item]
        self.calls[item] += 1
        score = round(SCALE * draw(self.true, self.seed, item, k, self.sd))
        return json.dumps({"reason": "simulated", "score": score})


G_EVAL = {"criteria": "Correctness: the answer is right", "evaluation_steps": ["Check the answer"],
          "score_range": [0, SCALE]}


class SimTarget:
    """The simulated judge in the gate decision's shape: repeat r of every item (one request each)."""

    judged = True
    name = "simulated"
    key = "score"
    lower_is_better = False
    fingerprint = None

    def __init__(self, true, sd=0.1, seed=0):
        self.true, self.sd, self.seed = np.asarray(true), sd, seed

    def repeat(self, number):
        rng = np.random.default_rng([self.seed, 3, number])
        values = np.clip(self.true + rng.normal(0.0, self.sd, self.true.size), 0.0, 1.0)
        return Scored([float(v) for v in values], int(self.true.size))


def fill(schema):
    """A minimal answer that a JSON schema accepts (the first enum value, minItems items...)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return fill(schema[key][0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: fill(props[k]) for k in (schema.get("required") or list(props))}
    if kind == "array":
        return [fill(schema.get("items", {"type": "string"})) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 0.5)
    if kind == "boolean":
        return True
    return "the cat"


def schema_judge():
    """A judge for every LLM-guided metric: it answers each request with the smallest answer its
    schema takes (the request's schema, not its wording), counting what it is asked."""
    from textgen_metrics.judges.base import Completion, Judge
    from textgen_metrics.judges.schema import inline_definitions

    class SchemaJudge(Judge):
        backend = "schema-stand-in"

        def __init__(self):
            super().__init__("schema-filler")

        async def _acomplete(self, messages, request, ctx, tally):
            tally.sent()
            schema = inline_definitions(request.schema) if request.schema else {"type": "string"}
            return Completion(text=json.dumps(fill(schema)))

    return SchemaJudge()
