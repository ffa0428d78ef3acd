"""Defaults a researcher can trust (issue 46, item 4): the constant metric's baseline beside every
statistic, spa's value without an interval, one seed default, incomplete systems said, a bundled
set's reference systems left out of reference-based metrics, intervals held in the metric's range,
and meta-eval's dry run."""

import json
import math

import numpy as np
import pytest

import textgen_metrics
from textgen_metrics.meta.data import describe_set
from textgen_metrics.meta.evaluate import meta_evaluate
from textgen_metrics.meta.report import format_table, meta_eval_html
from textgen_metrics.significance import held_in_range


def _table(rng, systems=4, items=12):
    """A systems x items table whose metric follows people with noise, and a tied human scale."""
    human = rng.integers(1, 4, size=(systems, items)).astype(float)
    metric = human + rng.normal(0, 0.7, size=human.shape)
    rows = [(f"i{i}", f"s{s}") for s in range(systems) for i in range(items)]
    return ({"m": metric.ravel().tolist(), "noise": rng.normal(size=human.size).tolist()}, human.ravel().tolist(),
            [r[0] for r in rows], [r[1] for r in rows])


def _pairs_tied(values):
    n = len(values)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return sum(values[i] == values[j] for i, j in pairs) / len(pairs)


def test_acc_baseline_is_the_share_of_tied_human_pairs():
    scores, human, _, _ = _table(np.random.default_rng(3))
    result = meta_evaluate(scores, human, statistics=("acc23", "acc_eq", "pearson"), n_resamples=50)
    base = {b["statistic"]: b for b in result["baselines"]}
    assert base["acc23"]["value"] == pytest.approx(_pairs_tied(human), abs=1e-12)
    assert base["acc_eq"]["value"] == pytest.approx(_pairs_tied(human), abs=1e-12)
    assert base["pearson"]["value"] is None and "constant" in base["pearson"]["reason"]
    assert set(base["acc23"]) >= {"human", "level", "group_by", "statistic", "value"}


def test_a_metric_whose_interval_holds_the_baseline_is_marked():
    rng = np.random.default_rng(4)
    human = rng.integers(1, 3, size=60).astype(float).tolist()
    scores = {"good": [h + 0.01 * i for i, h in enumerate(human)], "flat": [0.0] * 59 + [1.0]}
    result = meta_evaluate(scores, human, statistics=("acc_eq",), n_resamples=100)
    marks = {r["metric"]: r["includes_baseline"] for r in result["results"]}
    assert marks == {"good": False, "flat": True}
    result = {**result, "source": "table", "signature": "meta-eval"}
    text = format_table(result)
    assert "(constant)" in text and "(~)" in text
    page = meta_eval_html(result)
    assert "(constant)" in page and "(~)" in page


def test_spa_value_costs_no_resample_and_n_permutations_is_its_own():
    scores, human, items, systems = _table(np.random.default_rng(5))
    run = lambda **kw: meta_evaluate(scores, human, items=items, systems=systems, level="system",  # noqa: E731
                                     statistics=("spa",), compare=False, **kw)["results"][0]
    alone, with_ci = run(n_resamples=0), run(n_resamples=20)
    assert alone["value"] == with_ci["value"] and alone["ci"] is None and with_ci["ci"] is not None
    assert run(n_resamples=0, n_permutations=50)["value"] != alone["value"]
    with pytest.raises(ValueError, match="n_permutations"):
        run(n_resamples=0, n_permutations=0)


def test_the_seed_defaults_to_12345_everywhere():
    scores, human, items, _ = _table(np.random.default_rng(6))
    first = meta_evaluate(scores, human, items=items, n_resamples=30)
    again = meta_evaluate(scores, human, items=items, n_resamples=30)
    explicit = meta_evaluate(scores, human, items=items, n_resamples=30, seed=12345)
    assert first["results"] == again["results"] == explicit["results"]
    fresh = [meta_evaluate(scores, human, items=items, n_resamples=30, seed=None)["results"][0]["ci"]
             for _ in range(3)]
    assert len({tuple(ci) for ci in fresh}) > 1
    a = textgen_metrics.position_audit(["a", "b", "a", "tie"] * 5, ["a", "a", "b", "tie"] * 5, n_resamples=30)
    b = textgen_metrics.position_audit(["a", "b", "a", "tie"] * 5, ["a", "a", "b", "tie"] * 5, n_resamples=30,
                                       seed=12345)
    assert a == b


def test_incomplete_systems_are_counted_at_system_level():
    scores, human, items, systems = _table(np.random.default_rng(7), systems=3, items=6)
    keep = [k for k, (i, s) in enumerate(zip(items, systems, strict=True)) if not (s == "s1" and i in ("i0", "i1"))]
    pick = lambda v: [v[k] for k in keep]  # noqa: E731
    result = meta_evaluate({k: pick(v) for k, v in scores.items()}, pick(human), items=pick(items),
                           systems=pick(systems), level="system", statistics=("pearson",), n_resamples=0)
    assert result["incomplete_systems"] == {"s1": 2}
    assert result["results"][0]["n"] == 3
    assert "s1 lacks 2 item(s)" in format_table({**result, "source": "t", "signature": "x"})
    assert "incomplete_systems" not in meta_evaluate(scores, human, n_resamples=0)


def test_reference_systems_are_left_out_of_reference_based_metrics_by_default():
    info = describe_set("wmt21_ted_zhen")
    assert info.reference_systems == ("ref-A", "ref-B")
    assert describe_set("summeval").reference_systems == ()
    default = textgen_metrics.meta_eval("wmt21_ted_zhen", metrics=["bleu"], n_resamples=0, compare=False)
    assert default["excluded_systems"] == ["ref-A", "ref-B"]
    assert default["results"][0]["n"] == 13 and default["results"][0]["value"] > 0
    kept = textgen_metrics.meta_eval("wmt21_ted_zhen", metrics=["bleu"], n_resamples=0, compare=False,
                                     include_systems=["ref-A", "ref-B"])
    assert kept["excluded_systems"] == [] and kept["results"][0]["n"] == 15 and kept["results"][0]["value"] < 0
    assert "ref-A, ref-B" in format_table(default)
    with pytest.raises(ValueError, match="include_systems: 'Online-W'"):
        textgen_metrics.meta_eval("wmt21_ted_zhen", metrics=["bleu"], include_systems=["Online-W"])


def test_bleu_interval_stays_in_its_range_to_the_last_bit():
    predictions = ["The cat is on the mat.", "There is a dog in the garden.", "Rain fell all day."]
    references = [["The cat is on the mat."], ["There is a dog in the garden."], ["It rained all day."]]
    low, high = textgen_metrics.bleu(predictions, references, confidence_level=0.95)["bleu_ci"]
    assert 0.0 <= low and high == 1.0
    # the rule: rounding past a bound is put back, a score truly past a declared range is kept
    assert held_in_range(-1e-17, 1.0000000000000004, (0.0, 1.0)) == (0.0, 1.0)
    assert held_in_range(20.0, 112.5, (0.0, 100.0)) == (20.0, 112.5)
    assert held_in_range(-0.2, 0.5, None) == (-0.2, 0.5)


def test_meta_eval_dry_run_estimates_judged_metrics_and_sends_nothing(tmp_path):
    from textgen_metrics.cli import main

    out = tmp_path / "cost.json"
    assert main(["meta-eval", "qags_xsum", "--metrics", "summary_coherence,rouge", "--column", "sources=source",
                 "--judge", "openai:gpt-4o-mini", "--dry-run", "--json", str(out)]) == 0
    estimate = json.loads(out.read_text())
    assert estimate["rows"] == 239 and estimate["not_estimated"] == ["rouge"]
    assert estimate["metrics"]["summary_coherence"]["requests"] == 239
    assert estimate["total"]["prompt_tokens"] > 0 and not math.isnan(estimate["total"]["prompt_tokens"])
    assert main(["meta-eval", "qags_xsum", "--metrics", "rouge", "--dry-run"]) == 2


def test_a_blank_text_cell_of_a_file_is_an_error_naming_line_and_column(tmp_path, capsys):
    from textgen_metrics.cli import main

    path = tmp_path / "rated.csv"
    path.write_text("item,system,prediction,references,rating\n1,a,the cat sat,the cat sat on the mat,3\n"
                    "1,b,,the cat sat on the mat,2\n2,a,a dog,a dog ran,4\n2,b,the dog,a dog ran,1\n")
    args = ["meta-eval", str(path), "--metrics", "bleu", "--human-column", "rating", "--n-resamples", "0"]
    assert main(args) == 2
    assert "line 3, column 'prediction': empty" in capsys.readouterr().err
    assert main([*args, "--allow-empty"]) == 0


def test_the_library_names_its_arguments_and_the_command_line_its_flags(capsys):
    from textgen_metrics.cli import main
    from textgen_metrics.meta.run import MetaArgumentError

    with pytest.raises(MetaArgumentError, match=r"^human_columns: the set 'summeval' has no human column 'x'"):
        textgen_metrics.meta_eval("summeval", metrics=["bleu"], human_columns=["x"])
    assert main(["meta-eval", "summeval", "--metrics", "bleu", "--human-column", "x"]) == 2
    assert "error: --human-column: the set 'summeval' has no human column 'x'" in capsys.readouterr().err
