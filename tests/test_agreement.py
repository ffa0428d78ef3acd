"""textgen_metrics.agreement against SciPy and scikit-learn: the same values on generated data of
every shape (ties, constants, two points, large and tiny magnitudes, labels of several kinds),
bootstrap intervals equal to resampling with the reference functions, None judge scores left out
and counted, bad input named."""

import math
import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics

import textgen_metrics
from textgen_metrics.human_agreement import cohen_kappa, kendall_tau, pearson, spearman


def same(ours, reference):
    """Ours is None exactly where the reference is NaN, and equal to the last digit elsewhere."""
    reference = float(reference)
    if math.isnan(reference):
        return ours is None
    return ours == reference


def score_pairs(seed, count=600):
    rng = np.random.default_rng(seed)
    for t in range(count):
        n = int(rng.integers(0, 60))
        kind = t % 6
        if kind == 0:  # Likert scores, many ties
            x, y = rng.integers(1, 6, n), rng.integers(1, 6, n)
        elif kind == 1:  # correlated reals
            x = rng.normal(size=n)
            y = x * rng.normal() + rng.normal(size=n)
        elif kind == 2:  # large offsets and a coarse other side
            x, y = rng.normal(size=n) * 1e8 + 3e9, rng.integers(0, 3, n) * 1.0
        elif kind == 3:  # rounded probabilities
            x = np.round(rng.random(n), 1)
            y = np.round(x + rng.normal(size=n) * 0.1, 2)
        elif kind == 4:  # a constant column
            x, y = np.full(n, 3.0), rng.random(n)
        else:  # tiny magnitudes, perfectly monotone
            x = np.sort(rng.random(n)) * 1e-9
            y = x ** 3
        yield list(map(float, x)), list(map(float, y))


@pytest.mark.parametrize("seed", [0, 1])
def test_correlations_equal_scipys(seed):
    warnings.simplefilter("ignore")
    checked = 0
    for x, y in score_pairs(seed):
        if len(x) >= 2:
            assert same(pearson(x, y), scipy.stats.pearsonr(x, y).statistic), (x, y)
        assert same(spearman(x, y), scipy.stats.spearmanr(x, y).statistic), (x, y)
        assert same(kendall_tau(x, y), scipy.stats.kendalltau(x, y).statistic), (x, y)
        checked += 1
    assert checked == 600


def test_agreements_values_equal_scipys_on_generated_data():
    """agreement() takes its values from meta-evaluation's statistic objects; they stay SciPy's of
    (judge, human) to the last bit, ties, constants and groups over 128 rows (Kendall's large
    path) included; Spearman's is the value whose last bit depends on the argument order."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(9)
    large = [(list(map(float, rng.integers(1, 6, n))), list(map(float, rng.integers(1, 4, n)))) for n in (129, 300)]
    checked = spearman_order_matters = 0
    for x, y in [*score_pairs(4, count=300), *large]:
        out = textgen_metrics.agreement(x, y, kind="scores", n_resamples=0)
        assert same(out["spearman"], scipy.stats.spearmanr(x, y).statistic), (x, y)
        assert same(out["kendall_tau"], scipy.stats.kendalltau(x, y).statistic), (x, y)
        pearson_ref = scipy.stats.pearsonr(x, y).statistic if len(x) >= 2 else float("nan")
        assert same(out["pearson"], pearson_ref), (x, y)
        if len(x) >= 2:
            spearman_order_matters += scipy.stats.spearmanr(x, y).statistic != scipy.stats.spearmanr(y, x).statistic
        checked += 1
    assert checked == 302 and spearman_order_matters > 0


def test_agreement_is_meta_evaluations_one_metric_case():
    """The same values and, with the same seed, the same intervals to the last bit as
    meta_evaluate on the judge as its one metric, ungrouped (one computation of each statistic)."""
    rng = np.random.default_rng(3)
    for n in (7, 60, 150):
        x = list(map(float, rng.integers(1, 6, n)))
        y = list(map(float, np.clip(np.array(x) + rng.integers(-2, 3, n), 1, 5)))
        ours = textgen_metrics.agreement(x, y, n_resamples=200, seed=3, confidence_level=0.9)
        meta = textgen_metrics.meta_evaluate({"judge": x}, y, statistics=("spearman", "kendall", "pearson"),
                                             n_resamples=200, seed=3, confidence_level=0.9, compare=False)
        by_name = {r["statistic"]: r for r in meta["results"]}
        for key, name in (("spearman", "spearman"), ("kendall_tau", "kendall"), ("pearson", "pearson")):
            assert ours[f"{key}_ci"] == by_name[name]["ci"], (n, key)
            assert ours[key] == pytest.approx(by_name[name]["value"], abs=1e-15), (n, key)
        assert ours["kendall_tau"] == by_name["kendall"]["value"] and ours["pearson"] == by_name["pearson"]["value"]


def label_pairs(seed, count=300):
    rng = np.random.default_rng(seed)
    vocabularies = [["yes", "no"], ["win", "loss", "tie"], [1, 2, 3, 4, 5], [True, False], ["a"]]
    for t in range(count):
        vocab = vocabularies[t % len(vocabularies)]
        n = int(rng.integers(1, 50))
        a = [vocab[int(i)] for i in rng.integers(0, len(vocab), n)]
        b = [v if rng.random() < 0.6 else vocab[int(rng.integers(0, len(vocab)))] for v in a]
        yield a, b


def test_kappa_and_accuracy_equal_scikit_learns():
    warnings.simplefilter("ignore")
    for a, b in label_pairs(3):
        for weights in (None, "linear", "quadratic"):
            assert same(cohen_kappa(a, b, weights), sklearn.metrics.cohen_kappa_score(a, b, weights=weights)), (a, b)
        out = textgen_metrics.agreement(a, b, kind="labels", n_resamples=0)
        assert out["accuracy"] == sklearn.metrics.accuracy_score(a, b)
        assert same(out["cohen_kappa"], sklearn.metrics.cohen_kappa_score(a, b))


def test_intervals_equal_resampling_with_the_reference_functions():
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(5)
    for n in (6, 40, 120):
        x = rng.integers(1, 6, n).astype(float)
        y = np.clip(x + rng.integers(-2, 3, n), 1, 5)
        out = textgen_metrics.agreement(list(x), list(y), n_resamples=300, seed=11, confidence_level=0.9)
        idx = np.random.default_rng(11).integers(0, n, size=(300, n))

        def pearson_ref(a, b):
            return scipy.stats.pearsonr(a, b).statistic if len(set(a)) > 1 and len(set(b)) > 1 else np.nan

        for key, fn in (("pearson", pearson_ref), ("spearman", lambda a, b: scipy.stats.spearmanr(a, b).statistic),
                        ("kendall_tau", lambda a, b: scipy.stats.kendalltau(a, b).statistic)):
            stats = np.array([fn(x[i], y[i]) for i in idx])
            want = np.quantile(stats[~np.isnan(stats)], [0.05, 0.95])
            assert out[f"{key}_ci"] == pytest.approx(list(want), abs=1e-12), key
        labels = [str(v) for v in x], [str(v) for v in y]
        out = textgen_metrics.agreement(*labels, n_resamples=300, seed=11, kappa_weights="linear")
        every = sorted(set(labels[0]) | set(labels[1]))
        kappas, accuracies = [], []
        for i in idx:
            a, b = [labels[0][j] for j in i], [labels[1][j] for j in i]
            kappas.append(sklearn.metrics.cohen_kappa_score(a, b, weights="linear", labels=every))
            accuracies.append(sklearn.metrics.accuracy_score(a, b))
        kappas = np.array(kappas)
        assert out["cohen_kappa_ci"] == pytest.approx(list(np.quantile(kappas[~np.isnan(kappas)], [0.025, 0.975])),
                                                      abs=1e-12)
        assert out["accuracy_ci"] == pytest.approx(list(np.quantile(accuracies, [0.025, 0.975])), abs=1e-12)


def test_missing_judge_scores_are_left_out_and_counted():
    judge = [4.2, None, 3.0, 1.8, None, 5.0, 2.5]
    human = [4, 2, 3, 2, 5, 5, None]
    out = textgen_metrics.agreement(judge, human)
    assert out["kind"] == "scores" and out["n"] == 4 and out["judge_missing"] == 2 and out["human_missing"] == 1
    kept = [(j, h) for j, h in zip(judge, human, strict=True) if j is not None and h is not None]
    assert out["spearman"] == scipy.stats.spearmanr(*zip(*kept, strict=True)).statistic
    assert out["pearson"] == scipy.stats.pearsonr(*zip(*kept, strict=True)).statistic
    low, high = out["pearson_ci"]
    assert -1 <= low <= high <= 1 and out["seed"] == 12345 and out["n_resamples"] == 1000
    # seeded: the same call gives the same intervals; another seed other ones
    assert textgen_metrics.agreement(judge, human) == out
    rng = np.random.default_rng(2)
    x, y = list(rng.random(30)), list(rng.random(30))
    assert textgen_metrics.agreement(x, y, seed=1)["pearson_ci"] != textgen_metrics.agreement(x, y)["pearson_ci"]
    # labels are detected; a pairwise run's verdicts with a None where the judge failed
    verdicts = textgen_metrics.agreement(["win", None, "tie", "loss"], ["win", "loss", "win", "loss"])
    assert verdicts["kind"] == "labels" and verdicts["n"] == 3 and verdicts["judge_missing"] == 1
    assert verdicts["accuracy"] == 2 / 3 and verdicts["labels"] == ["loss", "tie", "win"]
    # undefined statistics are None, never NaN
    flat = textgen_metrics.agreement([3, 3, 3], [1, 2, 3])
    assert flat["spearman"] is None and flat["pearson"] is None and flat["kendall_tau"] is None
    assert flat["pearson_ci"] is None


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"inputs differ in length \(judge_scores=2, human_scores=3\)"):
        textgen_metrics.agreement([1, 2], [1, 2, 3])
    with pytest.raises(TypeError, match=r"human_scores\[1\]: expected a number .* kind='labels'"):
        textgen_metrics.agreement([1, 2, 3], [1, "2", 3], kind="scores")
    with pytest.raises(ValueError, match=r"judge_scores\[0\]: nan is not a finite number"):
        textgen_metrics.agreement([float("nan"), 2, 3], [1, 2, 3])
    with pytest.raises(TypeError, match="judge_scores: expected a list"):
        textgen_metrics.agreement("123", [1, 2, 3])
    with pytest.raises(ValueError, match="kind: 'ranks' is not one of"):
        textgen_metrics.agreement([1], [1], kind="ranks")
    with pytest.raises(ValueError, match="kappa_weights: 'cubic'"):
        textgen_metrics.agreement(["a"], ["a"], kappa_weights="cubic")
    with pytest.raises(ValueError, match="confidence_level: 1.5"):
        textgen_metrics.agreement([1, 2], [1, 2], confidence_level=1.5)
    with pytest.raises(TypeError, match="mix types that cannot be ordered"):
        textgen_metrics.agreement([1, "a"], ["a", 1], kind="labels")
