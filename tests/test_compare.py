"""Paired comparisons: ``textgen_metrics.compare`` and ``textgen-metrics compare``.

For BLEU, chrF and TER the p-values, scores and intervals equal sacrebleu's ``PairedTest``
(``--paired-bs`` / ``--paired-ar``) for the same seed and count; every other metric compares
its per-example scores; an LLM-guided metric reuses a cached judge's answers."""

import json
import subprocess
import sys

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

import textgen_metrics
from conftest import ROOT
from mt_corpus import mt_corpus, sacre_refs, second_system
from textgen_metrics.significance import bootstrap_ci

SACREBLEU = {"bleu": (lambda: BLEU(smooth_method="none"), {}, 100.0),
             "chrf": (lambda: CHRF(word_order=2), {"word_order": 2}, 1.0),
             "ter": (lambda: TER(), {}, 1.0)}


def systems(n, seed):
    preds, refs = mt_corpus(n, seed=seed, kinds=("english", "english", "cjk", "empty"), max_refs=3)
    return preds, second_system(preds, seed + 1), refs


@pytest.mark.parametrize("metric", list(SACREBLEU))
@pytest.mark.parametrize("seed, n", [(12345, 1000), (4, 300)])
def test_paired_bootstrap_equals_sacrebleu(monkeypatch, metric, seed, n):
    make, options, divisor = SACREBLEU[metric]
    a, b, refs = systems(100, seed % 50)
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    sigs, scores = PairedTest([("a", a), ("b", b)], {metric: make()}, sacre_refs(refs), test_type="bs",
                              n_samples=n)()
    name = next(k for k in scores if k != "System")
    base, system = scores[name]
    got = textgen_metrics.compare(metric, a, b, refs, method="bootstrap", n_resamples=n, seed=seed, **options)
    s = got["scores"]["bleu" if metric == "bleu" else "score"]
    assert s["p_value"] == system.p_value
    assert (s["a"], s["b"]) == (base.score / divisor, system.score / divisor)
    assert s["b_ci"] == [float(system.mean - system.ci) / divisor, float(system.mean + system.ci) / divisor]
    assert s["a_ci"] == [float(base.mean - base.ci) / divisor, float(base.mean + base.ci) / divisor]
    assert s["difference"] == s["b"] - s["a"]
    assert s["difference_ci"][0] <= s["difference_ci"][1]
    assert got["signature"] == sigs[name].format()


@pytest.mark.parametrize("metric", list(SACREBLEU))
def test_paired_randomization_equals_sacrebleu(monkeypatch, metric):
    make, options, divisor = SACREBLEU[metric]
    a, b, refs = systems(80, 9)
    monkeypatch.setenv("SACREBLEU_SEED", "21")
    sigs, scores = PairedTest([("a", a), ("b", b)], {metric: make()}, sacre_refs(refs), test_type="ar",
                              n_samples=2000, n_ar_confidence=1000)()
    name = next(k for k in scores if k != "System")
    base, system = scores[name]
    got = textgen_metrics.compare(metric, a, b, refs, method="randomization", n_resamples=2000, seed=21, **options)
    s = got["scores"]["bleu" if metric == "bleu" else "score"]
    assert s["p_value"] == system.p_value
    assert s["b"] == system.score / divisor
    # sacrebleu's interval of the baseline comes from the bootstrap with the same seed as ours
    assert s["a_ci"] == [float(base.mean - base.ci) / divisor, float(base.mean + base.ci) / divisor]
    assert got["signature"] == sigs[name].format()


def test_mean_metrics_compare_their_per_example_scores():
    a, b, refs = systems(60, 3)
    got = textgen_metrics.compare("rouge", a, b, refs, n_resamples=500, use_stemmer=True)
    agg_a = textgen_metrics.rouge(a, refs, use_stemmer=True)
    agg_b = textgen_metrics.rouge(b, refs, use_stemmer=True)
    assert set(got["scores"]) == {"rouge1", "rouge2", "rougeL", "rougeLsum"}
    for key, s in got["scores"].items():
        assert (s["a"], s["b"]) == (agg_a[key], agg_b[key])
        assert s["a_ci"][0] <= s["a"] <= s["a_ci"][1] and 0 < s["p_value"] <= 1
        assert s["compared"] == 60 and s["unscored"] == 0
    assert got == textgen_metrics.compare("rouge", a, b, refs, n_resamples=500, use_stemmer=True)
    other = textgen_metrics.compare("rouge", a, b, refs, n_resamples=500, use_stemmer=True, seed=1)
    assert other["scores"]["rouge1"]["a_ci"] != got["scores"]["rouge1"]["a_ci"]
    assert got["signature"].startswith("rouge|tok:rouge_score+porter|") and "|bs:500|seed:12345|" in got["signature"]
    same = textgen_metrics.compare("meteor", a, a, refs, n_resamples=200)["scores"]["meteor"]
    assert same["difference"] == 0.0 and same["p_value"] == 1.0  # identical systems: a tie counts
    ar = textgen_metrics.compare("meteor", a, b, refs, method="randomization", n_resamples=500)
    assert ar["n_resamples"] == 500 and 0 < ar["scores"]["meteor"]["p_value"] <= 1


def test_llm_metric_compare_reuses_the_cached_judge_and_counts_unscored(tmp_path):
    from test_llm_metrics import Scripted, word_rule

    def opinions(messages, blocks):
        text = blocks["prediction"]
        if "broken" in text:
            return "not json at all"
        return json.dumps({"opinions": [w for w in text.split() if w in ("awful", "fine", "great")]})

    judge_fn = Scripted(opinions=opinions, verdicts=word_rule("awful"))
    judge = textgen_metrics.CallableJudge(judge_fn, cache=str(tmp_path / "judge.sqlite"))
    a = ["awful fine", "great", "fine fine", "broken text", "awful awful great"]
    b = ["fine", "great awful", "broken too", "fine", "great great"]
    textgen_metrics.bias(predictions=a, judge=judge)
    textgen_metrics.bias(predictions=b, judge=judge)
    calls = len(judge_fn.calls)
    got = textgen_metrics.compare("bias", a, b, judge=judge, n_resamples=300)
    # every validated answer came from the cache; only the failed examples are asked again
    again = judge_fn.calls[calls:]
    assert again and all("broken" in m[1]["content"] for _, m in again)
    s = got["scores"]["bias"]
    assert s["compared"] == 3 and s["unscored"] == 2  # examples 3 and 2 have no score in one system
    per_a = textgen_metrics.bias(predictions=a, judge=judge, use_aggregator=False)["bias"]
    kept = [i for i in range(5) if i not in (2, 3)]
    assert s["a"] == sum(per_a[i] for i in kept) / 3


def test_bootstrap_ci_leaves_out_and_counts_missing_scores():
    scores = [0.2, None, 0.9, 0.4, None, 0.7, 1.0, 0.0]
    got = bootstrap_ci(scores, confidence_level=0.9, n_resamples=400, seed=5)
    assert (got.scored, got.unscored) == (6, 2)
    assert got == bootstrap_ci([s for s in scores if s is not None], 0.9, 400, 5)._replace(unscored=2)
    assert got.low <= sum(s for s in scores if s is not None) / 6 <= got.high
    assert bootstrap_ci([None, None]).as_list() == [None, None]


@pytest.mark.parametrize("kwargs, message", [
    (dict(method="t-test"), "method: 't-test' is not one of"),
    (dict(predictions_b=["x"]), "predictions_b: 1 examples, but predictions_a has 2"),
    (dict(references=None), "references: bleu needs predictions, references"),
    (dict(use_aggregator=False), "use_aggregator"),
    (dict(metric="nope"), "unknown metric 'nope'"),
    (dict(n_resamples=0), "n_resamples"),
])
def test_bad_compare_arguments_are_named(kwargs, message):
    args = dict(metric="bleu", predictions_a=["a b", "c"], predictions_b=["a", "c d"], references=["a b", "c d"])
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        textgen_metrics.compare(**args)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "textgen_metrics", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT)


def test_cli_compare_prints_the_table_and_writes_the_library_results(tmp_path):
    a, b, refs = systems(40, 6)
    file_a, file_b, out = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "cmp.json"
    file_a.write_text("\n".join(json.dumps({"prediction": p, "references": r}) for p, r in zip(a, refs, strict=True)))
    file_b.write_text("\n".join(json.dumps({"prediction": p}) for p in b))
    proc = run_cli("compare", file_a, file_b, "--metrics", "bleu,chrf", "--option", "chrf.word_order=2",
                   "--n-resamples", "300", "--seed", "3", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "B - A" in proc.stdout and "p-value" in proc.stdout and "chrf: nrefs:" in proc.stdout
    report = json.loads(out.read_text())
    assert report == [textgen_metrics.compare("bleu", a, b, refs, n_resamples=300, seed=3),
                      textgen_metrics.compare("chrf", a, b, refs, n_resamples=300, seed=3, word_order=2)]
    file_b.write_text("\n".join(json.dumps({"prediction": p}) for p in b[:-1]))
    proc = run_cli("compare", file_a, file_b, "--metrics", "bleu")
    assert proc.returncode == 2 and "39 rows, but" in proc.stderr


# -- what compare's figures are, and why a p-value and an interval can seem to disagree -------------
def english_systems(n, seed):
    preds, refs = mt_corpus(n, seed=seed, kinds=("english",), max_refs=1)
    return preds, second_system(preds, seed + 1), refs


def test_a_p_value_below_005_beside_an_interval_holding_0_gets_a_note_that_says_why():
    from textgen_metrics.comparison import describe_interval, describe_test, disagreement

    a, b, refs = english_systems(40, 6)
    got = textgen_metrics.compare("bleu", a, b, refs)
    s = got["scores"]["bleu"]
    assert s["p_value"] < 0.05 and s["difference_ci"][0] <= 0 <= s["difference_ci"][1]  # the premise
    note = disagreement(got, "bleu")
    assert note.startswith(f"note: bleu bleu: p = {s['p_value']:.4g} < 0.05 while the 95% interval of B - A holds 0")
    assert "one-sided" in note and "two-sided" in note and "\n" not in note
    assert describe_test(got).startswith("p-value: paired bootstrap resampling (Koehn 2004; sacrebleu's --paired-bs), "
                                         "1000 resamples")
    assert "mean of the resampled B - A plus and minus half" in describe_interval(got)
    # the reverse: p >= 0.05 while the interval leaves 0 out
    a, b, refs = english_systems(10, 11)
    got = textgen_metrics.compare("bleu", a, b, refs)
    s = got["scores"]["bleu"]
    assert s["p_value"] >= 0.05 and not s["difference_ci"][0] <= 0 <= s["difference_ci"][1]
    assert "leaves 0 out; both can hold: the interval describes" in disagreement(got, "bleu")
    # agreeing figures get no note: identical systems (p = 1, interval [0, 0]) and a clear difference
    same = textgen_metrics.compare("meteor", a, a, refs, n_resamples=200)
    assert disagreement(same, "meteor") is None
    assert "percentiles of the resampled B - A" in describe_interval(same)
    clear = textgen_metrics.compare("chrf", a, [""] * len(a), refs, n_resamples=200)
    assert clear["scores"]["score"]["p_value"] < 0.05 and disagreement(clear, "score") is None
    # randomization: its own test named, and its own reason
    ar = textgen_metrics.compare("bleu", a, b, refs, method="randomization", n_resamples=500)
    assert describe_test(ar).startswith("p-value: paired approximate randomization (Riezler and Maxwell 2005")
    ar["scores"]["bleu"].update(p_value=0.01, difference_ci=[-0.1, 0.2])
    assert "approximate randomization (swapping" in disagreement(ar, "bleu")


def test_cli_compare_names_the_test_and_notes_a_disagreement(tmp_path):
    a, b, refs = english_systems(40, 6)
    file_a, file_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    file_a.write_text("\n".join(json.dumps({"prediction": p, "references": r}) for p, r in zip(a, refs, strict=True)))
    file_b.write_text("\n".join(json.dumps({"prediction": p}) for p in b))
    proc = run_cli("compare", file_a, file_b, "--metrics", "bleu,meteor")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "p-value: paired bootstrap resampling (Koehn 2004; sacrebleu's --paired-bs), 1000 resamples" in out
    assert "95% CI of B - A (bleu): a paired bootstrap of 1000 resamples, the mean of the resampled B - A" in out
    assert "95% CI of B - A (meteor): a paired bootstrap of 1000 resamples, the percentiles" in out
    from textgen_metrics.comparison import disagreement

    results = [textgen_metrics.compare(m, a, b, refs) for m in ("bleu", "meteor")]
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [n for r in results for k in r["scores"] if (n := disagreement(r, k))]  # every one, no other
    p = results[0]["scores"]["bleu"]["p_value"]
    assert notes[0].startswith(f"note: bleu bleu: p = {p:.4g} < 0.05 while the 95% interval of B - A holds 0")
    proc = run_cli("compare", file_a, file_b, "--metrics", "bleu", "--method", "randomization", "--n-resamples", "500")
    assert proc.returncode == 0, proc.stderr
    assert "p-value: paired approximate randomization (Riezler and Maxwell 2005; sacrebleu's --paired-ar), " \
           "500 trials" in proc.stdout
