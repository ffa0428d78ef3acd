"""ROUGE parity with the reference implementations over generated inputs.

rouge1/2/3/L/Lsum: rouge-score 0.1.2, bit for bit per example (the same floating-point
operations in the same order), with and without stemmer, single and multiple references.
rougeW/S/SU: the official ROUGE-1.5.5 script on the same tokens, to the five decimals it prints.
"""

import pytest
from rouge_score import rouge_scorer

from corpus import multi_references, pairs
from perl_rouge import run_perl
from reference_rouge import _fmeasure_perl
from textgen_metrics.lexical.rouge import RougeScorer

TYPES = ["rouge1", "rouge2", "rouge3", "rouge9", "rougeL", "rougeLsum"]


def assert_same(ours, ref, context):
    for field in ("precision", "recall", "fmeasure"):
        a, b = getattr(ours, field), getattr(ref, field)
        assert a == b, (field, a, b, context)


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_single_reference_matches_rouge_score(use_stemmer):
    ours = RougeScorer(TYPES, use_stemmer=use_stemmer)
    ref = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    data = pairs(400, seed=11 + use_stemmer)
    for pred, target in data:
        got, want = ours.score(target, pred), ref.score(target, pred)
        for t in TYPES:
            assert_same(got[t], want[t], (t, pred, target))


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_multiple_references_take_rouge_score_best_f(use_stemmer):
    ours = RougeScorer(TYPES, use_stemmer=use_stemmer)
    ref = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    for pred, targets in multi_references(250, seed=21 + use_stemmer):
        got, want = ours.score_multi(targets, pred), ref.score_multi(targets, pred)
        for t in TYPES:
            assert_same(got[t], want[t], (t, pred, targets))


def test_hugging_face_rouge_drop_in_values():
    """evaluate's rouge computes rouge-score per example; use_aggregator=False must equal it."""
    import textgen_metrics

    data = pairs(200, seed=5)
    preds = [p for p, _ in data]
    refs = [r for _, r in data]
    got = textgen_metrics.rouge(preds, refs, use_aggregator=False, use_stemmer=True)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    for i, (p, r) in enumerate(data):
        want = scorer.score(r, p)
        for t in want:
            assert got[t][i] == want[t].fmeasure


def _fmt(x):
    return float(f"{x:.5f}")


def _perl_cases(n, seed, use_stemmer):
    scorer = RougeScorer(["rouge1"], use_stemmer=use_stemmer)
    data = [(p, r) for p, r in pairs(n, seed=seed, long_every=25)]
    # the script divides by zero on a reference without tokens (ROUGE-W): such cases are
    # tested against the documented behaviour in test_rouge.py instead
    data = [(p, r) for p, r in data if sum(map(len, scorer._doc(r).sents))]
    peers = [scorer._doc(p).sents for p, _ in data]
    models = [scorer._doc(r).sents for _, r in data]
    return data, peers, models


def _check_against_perl(data, types, perl, name_of, use_stemmer, weight=1.2):
    ours = RougeScorer(types, use_stemmer=use_stemmer, rouge_w_weight=weight)
    checked = 0
    for (pred, target), printed in zip(data, perl, strict=True):
        got = ours.score(target, pred)
        for t in types:
            r, p, f = printed[name_of[t]]
            s = got[t]
            assert (_fmt(s.recall), _fmt(s.precision)) == (r, p), (t, s, printed, pred, target)
            # the script computes F from the rounded P and R
            assert _fmt(_fmeasure_perl(_fmt(s.precision), _fmt(s.recall))) == f, (t, s, f)
            assert abs(s.fmeasure - f) <= 1.5e-5
            checked += 1
    return checked


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_w_matches_official_script(use_stemmer):
    data, peers, models = _perl_cases(300, 31 + use_stemmer, use_stemmer)
    perl = run_perl(peers, models, rouge_w=True, weight=1.2)
    assert _check_against_perl(data, ["rougeW"], perl, {"rougeW": "ROUGE-W-1.2"}, use_stemmer) == len(data)


def test_rouge_w_other_weight_matches_official_script():
    data, peers, models = _perl_cases(120, 37, False)
    perl = run_perl(peers, models, rouge_w=True, weight=1.5)
    assert _check_against_perl(data, ["rougeW"], perl, {"rougeW": "ROUGE-W-1.5"}, False, weight=1.5)


@pytest.mark.parametrize("gap", ["any", 0, 4])
def test_rouge_s_and_su_match_official_script(gap):
    data, peers, models = _perl_cases(250, 41 + (0 if gap == "any" else gap + 1), False)
    perl = run_perl(peers, models, skip=gap, unigrams=True)
    suffix = "*" if gap == "any" else str(gap)
    k = "" if gap == "any" else str(gap)
    names = {f"rougeS{k}": f"ROUGE-S{suffix}", f"rougeSU{k}": f"ROUGE-SU{suffix}"}
    assert _check_against_perl(data, list(names), perl, names, False) == 2 * len(data)


def test_rouge_w_recall_quirk_of_the_official_script():
    s = RougeScorer(["rougeW"]).score("a b c d e f", "a b c d e f")["rougeW"]
    assert _fmt(s.recall) == 0.69883 and s.precision == 1.0
