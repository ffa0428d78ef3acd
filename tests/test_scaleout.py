"""The core of the cluster front ends (textgen_metrics.run's Run, textgen_metrics.scaleout),
without a cluster: batches' statistics merged in any order equal the library's result; per-row
score columns; the run's checks; one set of metric objects per process."""

import json
import os
import random

import pandas as pd
import pytest

import textgen_metrics
from scaleout_judge import KillOnce, StepsPerProcess, columns, random_table, rows
from textgen_metrics import run as run_module
from textgen_metrics import scaleout
from textgen_metrics.errors import OptionError
from textgen_metrics.registry import get_metric

LEXICAL = ["rouge", "bleu", "google_bleu", "chrf", "ter", "meteor"]


def make_plan(*args, **kwargs):
    """A run as the cluster front ends build it (their options may set use_aggregator)."""
    return run_module.Run.build(*args, front_end=True, **kwargs)


def library(name, data, **options):
    spec = get_metric(name)
    given = {c: v for c, v in columns(data).items() if c in (*spec.columns, *spec.optional_columns)}
    return getattr(textgen_metrics, name)(**given, **options)


def batches(data, seed):
    """``data`` cut at random places (an empty batch among them), as (order, count, packed) in a
    shuffled order."""
    rng = random.Random(seed)
    cuts = sorted({0, len(data), *rng.sample(range(1, len(data)), 4)})
    bounds = list(zip(cuts, cuts[1:], strict=False)) + [(len(data), len(data))]
    rng.shuffle(bounds)
    return bounds


@pytest.mark.parametrize("seed", [0, 1])
def test_batches_merged_in_any_order_equal_the_library(seed):
    data = rows(60, seed=seed)
    options = {"bleu": {"confidence_level": 0.95, "n_resamples": 100},
               "rouge": {"use_aggregator": False}, "chrf": {"word_order": 2}}
    plan = make_plan(LEXICAL, options=options)
    frame = pd.DataFrame(data)
    parts = [(a, b - a, scaleout.pack(plan.statistics(frame.iloc[a:b]))) for a, b in batches(data, seed)]
    got = plan.result_dicts(scaleout.merge(parts))
    for name in LEXICAL:
        assert got[name] == library(name, data, **options.get(name, {})), name


def test_statistics_travel_as_json_with_every_bit():
    data = rows(20, seed=3)
    plan = make_plan(["meteor", "ter"])
    packed = scaleout.pack(plan.statistics(pd.DataFrame(data)))
    again = plan.result_dicts(scaleout.merge([(0, 20, json.dumps(json.loads(packed)))]))
    assert again["meteor"] == library("meteor", data) and again["ter"] == library("ter", data)


def test_a_batch_counted_twice_is_an_error():
    data = rows(6)
    plan = make_plan(["rouge"])
    packed = scaleout.pack(plan.statistics(pd.DataFrame(data)))
    with pytest.raises(ValueError, match="two batches at order key 5"):
        scaleout.merge([(5, 6, packed), (5, 6, packed)])


def test_no_rows_is_the_metrics_own_error():
    plan = make_plan(["bleu"])
    with pytest.raises(ValueError, match="no examples"):
        plan.result_dicts(scaleout.merge([]))


def test_score_columns_are_the_per_example_values():
    data = rows(15, seed=4)
    batch = {"prediction": [r["prediction"] for r in data], "refs": [r["references"] for r in data]}
    plan = make_plan(["rouge", "bleu", "chrf"], columns={"references": "refs"},
                              options={"rouge": {"rouge_types": ["rouge1", "rougeL"], "confidence_level": 0.9}})
    out = plan.score_columns(batch)
    assert list(out) == plan.score_names() == ["rouge.rouge1", "rouge.rougeL", "bleu.bleu", "chrf.score"]
    assert out["rouge.rougeL"] == library("rouge", data, rouge_types=["rouge1", "rougeL"],
                                          use_aggregator=False)["rougeL"]
    assert out["bleu.bleu"] == library("bleu", data, use_aggregator=False)["bleu"]  # each sentence's own
    assert out["chrf.score"] == library("chrf", data, use_aggregator=False)["score"]


def test_arrow_arrays_and_csv_cells_are_read_as_lists():
    import numpy as np

    data = rows(4, seed=5)
    refs = [np.array(data[0]["references"]), json.dumps(data[1]["references"]), data[2]["references"][0],
            data[3]["references"]]
    plan = make_plan(["google_bleu"])
    batch = pd.DataFrame({"prediction": [r["prediction"] for r in data], "references": refs})
    got = plan.result_dicts(scaleout.merge([(0, 4, scaleout.pack(plan.statistics(batch)))]))
    expected = [data[0]["references"], data[1]["references"], [data[2]["references"][0]], data[3]["references"]]
    assert got["google_bleu"] == textgen_metrics.google_bleu(predictions=[r["prediction"] for r in data],
                                                             references=expected)


def test_the_plan_checks_names_columns_and_options_first():
    with pytest.raises(ValueError, match="unknown metric 'rogue'"):
        make_plan(["rogue"])
    with pytest.raises(ValueError, match=r"columns queries: not an input of rouge"):
        make_plan(["rouge"], columns={"queries": "q"})
    with pytest.raises(OptionError, match="rouge has no option 'n_gram'"):
        make_plan(["rouge"], options={"rouge": {"n_gram": 2}})
    with pytest.raises(OptionError, match="confidence_level"):
        make_plan(["bleu"], options={"bleu": {"confidence_level": 2}})
    with pytest.raises(ValueError, match=r"options bleu: 'bleu' is not among metrics rouge"):
        make_plan(["rouge"], options={"bleu": {}})
    with pytest.raises(ValueError, match=r"judge: an LLM-guided metric needs a judge \(faithfulness\)"):
        make_plan(["rouge", "faithfulness"])
    plan = make_plan(["rouge"], columns={"predictions": "output"})
    with pytest.raises(ValueError, match=r"no column 'output' for rouge's predictions \(it has: prediction, "
                                         r"references\); map one with columns="):
        plan.check_table(["prediction", "references"])


def test_one_set_of_metric_objects_and_one_judge_per_process():
    options = {"faithfulness": {}, "answer_relevance": {}}
    first = make_plan(list(options), judge=KillOnce()).metrics_here("test")
    again = make_plan(list(options), judge=KillOnce()).metrics_here("test")
    assert again is first
    judges = {id(m.resolved_judge) for m in first.metrics.values()}
    assert len(judges) == 1  # one judge (one cache, one connection pool, one budget) for the process
    other = make_plan(["faithfulness"], judge=KillOnce()).metrics_here("test")
    assert other is not first


def test_a_process_keeps_the_metrics_of_its_last_few_plans():
    """A worker process that lives on between calls (a Ray task's, a Spark Python worker) keeps
    the scorers of the last ``_KEPT`` plans it used, the least recently used dropped first."""
    run_module._PROCESS.clear()
    plans = [make_plan(["chrf"], options={"chrf": {"word_order": n}}) for n in range(run_module._KEPT + 1)]
    made = [plan.metrics_here("test") for plan in plans[:-1]]
    assert plans[0].metrics_here("test") is made[0]  # used again: now the most recent
    plans[-1].metrics_here("test")  # one too many: the least recently used (plans[1]) goes
    assert len(run_module._PROCESS) == run_module._KEPT
    assert plans[0].metrics_here("test") is made[0]
    assert plans[2].metrics_here("test") is made[2]
    assert plans[1].metrics_here("test") is not made[1]


def test_a_plan_loads_a_model_where_a_worker_would():
    """BERTScore runs its model on the workers for per-row scores only (its statistics are its
    inputs); a local judge holds its model wherever it judges; an API or function judge none."""
    assert not scaleout.loads_model(make_plan(LEXICAL), per_row=True)
    assert scaleout.loads_model(make_plan(["rouge", "bertscore"]), per_row=True)
    assert not scaleout.loads_model(make_plan(["rouge", "bertscore"]), per_row=False)
    for judge in ("openai:m", KillOnce()):
        assert not scaleout.loads_model(make_plan(["faithfulness"], judge=judge), per_row=False)
    assert scaleout.loads_model(make_plan(["faithfulness"], judge="tiny:smollm2"), per_row=False)
    from textgen_metrics.judges import TinyJudge

    assert scaleout.loads_model(make_plan(["faithfulness"], judge=TinyJudge()), per_row=True)
    # a judge given to one metric in its options
    plan = make_plan(["rouge", "faithfulness"], options={"faithfulness": {"judge": "tiny:smollm2"}})
    assert scaleout.loads_model(plan, per_row=False)


def test_a_bad_value_is_raised_with_its_index_in_the_whole_table():
    """A batch with a bad value gives its error instead of statistics; the merge, which places
    the batches, raises the library's error (class, argument, index in the table), the first by
    the table's order whatever order the batches come in."""
    from textgen_metrics.errors import InputError, InputTypeError

    data = rows(30, seed=11)
    data[17]["prediction"] = None
    data[26]["references"] = []
    with pytest.raises(InputTypeError) as alone:
        library("bleu", data)
    plan = make_plan(["bleu", "rouge"])
    batches = [pd.DataFrame(data[start:start + 7]) for start in range(0, 30, 7)]
    parts = [(7 * i, len(b), scaleout.batch_statistics(plan, b, "test")) for i, b in enumerate(batches)]
    assert [scaleout.is_input_error(text) for _, _, text in parts] == [False, False, True, True, False]
    with pytest.raises(InputTypeError) as got:
        scaleout.merge(reversed(parts))
    assert (got.value.argument, got.value.index) == ("predictions", 17)
    assert str(got.value) == str(alone.value) == "predictions[17]: expected str, got None"
    with pytest.raises(InputError, match=r"^references\[5\]: empty list"):
        scaleout.merge(parts[3:])  # without the batches before it: row 5 of those merged


def test_a_per_row_batch_says_its_index_is_the_batchs():
    from textgen_metrics.errors import InputTypeError

    data = rows(6, seed=12)
    data[4]["prediction"] = None
    with pytest.raises(InputTypeError, match=r"^predictions\[4\]: expected str, got None \(the index is the row's "
                                             r"in a batch of 6 rows; evaluate\(\) names the row of the table\)"):
        scaleout.score_columns(make_plan(["chrf"]), pd.DataFrame(data), "test")


def test_missing_cells_are_read_as_none():
    """pandas' NA and NaN (a null of Arrow) are the library's None."""
    frame = pd.DataFrame({"prediction": pd.array(["a b", pd.NA], dtype="string"), "references": ["a", "b"]})
    with pytest.raises(ValueError, match=r"^predictions\[1\]: expected str, got None$"):
        make_plan(["chrf"]).statistics(frame)
    with pytest.raises(ValueError, match=r"^predictions\[0\]: expected str, got None$"):
        make_plan(["chrf"]).statistics({"prediction": [float("nan")], "references": ["a"]})


def test_a_run_s_decisions_are_pinned_once_by_the_driver():
    """G-Eval's steps asked once for the plan (for the inputs the table has): every batch's
    metric gets them as an option, the merged result equals the library's one run, usage of
    the steps request included. A plan whose metrics decide nothing per run is left as it is."""
    data = [dict(r, references=r["references"][0]) for r in rows(12, seed=13)]
    options = {"g_eval": {"criteria": "Clarity."}}
    judge = StepsPerProcess()
    plan, usage = make_plan(["g_eval", "bleu"], options=options, judge=judge).pinned(
        ["prediction", "references", "query", "id"])
    assert plan.options["g_eval"]["evaluation_steps"][0] == f"Read the prediction (process {os.getpid()}, steps 1)."
    assert usage["g_eval"]["requests"] == 1 and judge.written == 1
    parts = []
    for start in range(0, 12, 5):  # each batch in a process of its own: a scorer of its own
        batch = pd.DataFrame(data[start:start + 5])
        run_module._PROCESS.clear()  # metric objects of their own, as a new process makes them
        parts.append((start, len(batch), scaleout.pack(plan.statistics(batch))))
    assert judge.written == 1  # the batches asked for no steps
    expected = library("g_eval", data, judge=StepsPerProcess(), **options["g_eval"])
    assert plan.result_dicts(scaleout.merge(parts), usage)["g_eval"] == expected
    lexical = make_plan(["bleu"])
    assert lexical.pinned(["prediction"]) == (lexical, {})


def test_given_steps_are_not_asked_for_and_a_local_judge_stays_unloaded(monkeypatch):
    """G-Eval with ``evaluation_steps`` decides nothing per run: the driver opens no judge
    session, so a local judge's model is not loaded on the driver."""
    from textgen_metrics.judges.local import HFJudge

    def load(self):
        raise AssertionError("the driver loaded the local judge's model")

    monkeypatch.setattr(HFJudge, "_load", load)
    plan = make_plan(["g_eval"], options={"g_eval": {"criteria": "Clarity.", "evaluation_steps": ["Read."]}},
                              judge="tiny:smollm2")
    assert plan.pinned(["prediction"]) == (plan, {})


def test_steps_the_judge_cannot_write_stop_the_run_before_any_worker():
    """A steps request whose every answer is unusable: the driver raises the judge's error naming
    G-Eval, instead of letting each worker ask (and score its batch by steps of its own)."""
    from textgen_metrics.judges import JudgeError

    def judge(messages, task):
        return '{"steps": []}' if task == "g_eval/steps" else '{"reason": "r", "score": 3}'

    plan = make_plan(["g_eval"], options={"g_eval": {"criteria": "Clarity."}}, judge=judge)
    with pytest.raises(JudgeError, match=r"^g_eval: g_eval/steps: invalid answer after 3 attempts: "
                                         r"\$\.steps: expected at least 1 items, got 0$"):
        plan.pinned(["prediction"])


def test_ter_s_fractional_statistics_merge_to_the_bit_because_batches_are_placed():
    """TER's reference length is a mean over each example's references (fractional), summed as
    sacrebleu sums it: in row order. Summed in another order it can differ in the last digit, so
    the merge places every batch at its rows and sums in the table's order whatever order the
    batches arrive in: the library's bits (sacrebleu parity kept), on any partitioning."""
    from textgen_metrics.significance import sum_statistics

    data = [dict(r, references=[*r["references"], r["references"][0] + " and a few more words"])
            for r in rows(300, seed=2)]
    plan = make_plan(["ter"])
    stats = plan.statistics(pd.DataFrame(data))["ter"].columns["stats"]
    forward, backward = sum_statistics(stats), sum_statistics(list(reversed(stats)))
    assert forward[1] != backward[1]  # the order matters on these data: a real test of the merge
    want = library("ter", data)
    assert want["ref_length"] == forward[1]
    for seed in range(3):
        frame = pd.DataFrame(data)
        parts = [(a, b - a, scaleout.pack(plan.statistics(frame.iloc[a:b]))) for a, b in batches(data, seed)]
        assert plan.result_dicts(scaleout.merge(parts))["ter"] == want


# -- the merge to the bit, on any partitioning and arrival order: random cases -------------------
PROPERTY_METRICS = [*LEXICAL, "faithfulness", "answer_relevance"]


def random_blocks(rng, n):
    """``n`` rows cut into 1 to ``n`` blocks at random (empty blocks among them at times), in a
    random arrival order."""
    count = rng.randint(1, min(n, 12))
    cuts = sorted({0, n, *rng.sample(range(1, n), count - 1)}) if n > 1 else [0, n]
    bounds = list(zip(cuts, cuts[1:], strict=False)) + [(n, n)] * rng.randint(0, 1)
    rng.shuffle(bounds)
    return bounds


@pytest.mark.parametrize("seed", range(12))
def test_merged_statistics_equal_the_library_to_the_bit_on_random_tables_and_partitionings(seed):
    """Every metric (TER's float sums, ROUGE's and METEOR's means, BLEU's and chrF's counts, the
    judged metrics' per-example values and usage), random tables cut into random blocks that
    arrive in random orders, each block's statistics through JSON as the workers send them: the
    merged result dict equals the library's over the whole table, with ``==``."""
    rng = random.Random(1000 + seed)
    data = random_table(rng)
    frame = pd.DataFrame(data)
    judge = KillOnce()  # no marker: a plain function judge
    plan = make_plan(PROPERTY_METRICS, judge=judge, options={"ter": {"confidence_level": 0.95, "n_resamples": 50}})
    want = {name: library(name, data, **({"judge": judge} if name in ("faithfulness", "answer_relevance") else {}),
                          **({"confidence_level": 0.95, "n_resamples": 50} if name == "ter" else {}))
            for name in PROPERTY_METRICS}
    for _ in range(3):
        parts = [(a, b - a, scaleout.pack(plan.statistics(frame.iloc[a:b]))) for a, b in random_blocks(rng, len(data))]
        assert plan.result_dicts(scaleout.merge(parts)) == want
