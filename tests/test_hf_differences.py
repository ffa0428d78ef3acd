"""Each point of the cards' "Differences from Hugging Face" sections, as a test: what this module
does where Hugging Face's module does otherwise. Hugging Face's modules themselves download
their scripts, so the other side is rebuilt here from their documented algorithm where a test
needs it (TensorFlow NMT's compute_bleu length rule, rouge-score's BootstrapAggregator)."""

import math
import re

import numpy as np
import pytest

import textgen_metrics
from conftest import ROOT
from corpus import pairs

HF_COUNTERPARTS = ["rouge", "bleu", "google_bleu", "meteor", "bertscore"]


@pytest.mark.parametrize("name", HF_COUNTERPARTS)
def test_cards_with_a_hugging_face_counterpart_have_the_section(name):
    text = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Differences from Hugging Face\n(.*?)^## ", text, re.S | re.M)
    assert section, name
    assert section.group(1).count("\n- **") >= 2
    assert "tests/test_hf_differences.py" in section.group(1)
    assert text.index("## Differences from Hugging Face") < text.index("## Citation")


@pytest.mark.parametrize("name", HF_COUNTERPARTS)
def test_no_examples_is_a_value_error(name, repo_root):
    import evaluate

    module = evaluate.load(f"./metrics/{name}")
    with pytest.raises(ValueError, match="^predictions: no examples"):
        module.compute(predictions=[], references=[])


# -- rouge --------------------------------------------------------------------------------------
def test_rouge_aggregate_is_the_exact_mean_not_a_bootstrap_median():
    from rouge_score import scoring

    data = pairs(200, seed=61)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    per = textgen_metrics.rouge(preds, refs, use_aggregator=False)
    ours = textgen_metrics.rouge(preds, refs)
    assert per.pop("signature") == ours["signature"]  # the settings, beside the scores
    for key, values in per.items():
        assert ours[key] == math.fsum(values) / len(values)
    assert ours == textgen_metrics.rouge(preds, refs)  # the same on every run
    # Hugging Face's: the mid of rouge-score's BootstrapAggregator, which moves between runs
    scorer = textgen_metrics.RougeScorer(["rouge1"])
    mids = set()
    for _ in range(3):
        agg = scoring.BootstrapAggregator()
        for p, r in zip(preds, refs, strict=True):
            agg.add_scores(scorer.score(r, p))
        mids.add(agg.aggregate()["rouge1"].mid.fmeasure)
    assert len(mids) > 1 and ours["rouge1"] not in mids


def test_rouge_lone_surrogate_is_an_error():
    with pytest.raises(ValueError, match=r"references\[0\]: lone surrogate '\\ud800' at character 2"):
        textgen_metrics.rouge(["ab"], ["ab\ud800"])


def test_rouge_defaults_score_as_rouge_score():
    from rouge_score import rouge_scorer

    data = pairs(50, seed=62)
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    ours = textgen_metrics.rouge([p for p, _ in data], [r for _, r in data], use_aggregator=False)
    for i, (p, r) in enumerate(data):
        for key, s in ref.score(r, p).items():
            assert ours[key][i] == s.fmeasure


# -- bleu ---------------------------------------------------------------------------------------
def test_bleu_takes_the_closest_reference_length_not_the_shortest():
    pred = "one two three four five six seven eight nine"
    refs = [["one two three", "one two three four five six seven eight nine ten"]]
    res = textgen_metrics.bleu([pred], refs)
    assert res["translation_length"] == 9 and res["reference_length"] == 10  # closest
    assert res["brevity_penalty"] == pytest.approx(math.exp(1 - 10 / 9)) and res["brevity_penalty"] < 1
    shortest = min(len(r.split()) for r in refs[0])  # Hugging Face's (NMT's compute_bleu)
    assert shortest == 3 and 9 / shortest > 1  # there: no brevity penalty at all


def test_bleu_with_every_prediction_empty_is_0_not_a_zero_division():
    res = textgen_metrics.bleu(["", ""], ["a b c", "d e"])
    assert res["bleu"] == 0.0 and res["brevity_penalty"] == 0.0 and res["translation_length"] == 0
    with pytest.raises(ZeroDivisionError):  # NMT's rule: ratio = 0, then 1 / ratio
        math.exp(1 - 1.0 / (res["translation_length"] / res["reference_length"]))


def test_bleu_additions_are_off_by_default():
    res = textgen_metrics.bleu(["the cat sat on the mat"], ["the cat is on the mat"])
    # Hugging Face's keys, plus the signature that says how the score was made
    assert set(res) == {"bleu", "precisions", "brevity_penalty", "length_ratio", "translation_length",
                        "reference_length", "signature"}
    assert isinstance(res["bleu"], float)
    per = textgen_metrics.bleu(["the cat sat on the mat"], ["the cat is on the mat"], use_aggregator=False)
    assert isinstance(per["bleu"], list)


# -- google_bleu --------------------------------------------------------------------------------
def test_google_bleu_equals_nltk_corpus_gleu_on_13a_tokens():
    from nltk.translate.gleu_score import corpus_gleu
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    data = pairs(80, seed=63)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    want = corpus_gleu([[tok(r).split()] for r in refs], [tok(p).split() for p in preds])
    assert textgen_metrics.google_bleu(preds, refs)["google_bleu"] == want
    per = textgen_metrics.google_bleu(preds, refs, use_aggregator=False)["google_bleu"]
    assert len(per) == len(preds)


# -- meteor -------------------------------------------------------------------------------------
def test_meteor_keeps_each_text_as_one_line():
    import nltk

    from textgen_metrics.lexical.meteor import word_tokenize

    text = "The cat sat. The dog ran."
    assert word_tokenize(text) == nltk.word_tokenize(text, preserve_line=True)
    assert word_tokenize(text) == ["The", "cat", "sat.", "The", "dog", "ran", "."]
    one = "The cat sat on the mat."
    assert word_tokenize(one) == ["The", "cat", "sat", "on", "the", "mat", "."]  # as punkt's would


def test_meteor_mean_is_fsum_not_numpy():
    data = pairs(40, seed=64)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    per = textgen_metrics.meteor(preds, refs, use_aggregator=False)["meteor"]
    assert textgen_metrics.meteor(preds, refs)["meteor"] == math.fsum(per) / len(per)
    scores = [0.1, 0.2, 0.3]  # where the two means part: numpy's sum rounds at each step
    assert math.fsum(scores) / 3 == 0.19999999999999998 and float(np.mean(scores)) == 0.20000000000000004


def test_meteor_uses_debians_wordnet_30():
    from textgen_metrics.wordnet import load_wordnet

    wn = load_wordnet()
    assert wn.get_version() == "3.0"


# -- bertscore ----------------------------------------------------------------------------------
def test_bertscore_default_model_needs_no_lang_and_english_is_the_packaged_model():
    none = textgen_metrics.bertscore(["the cat sat"], ["a cat sat"])
    english = textgen_metrics.bertscore(["the cat sat"], ["a cat sat"], lang="en")
    assert none["hashcode"].startswith("all-MiniLM-L6-v2_L6_") and english == none


def test_bertscore_other_language_without_model_is_an_error():
    with pytest.raises(ValueError, match="model_type='bert-base-multilingual-cased'"):
        textgen_metrics.bertscore(["Guten Tag"], ["Guten Tag"], lang="de")


def test_bertscore_all_layers_with_several_references_maximises_per_layer():
    from bert_score_reference import reference_score
    from textgen_metrics.semantic.bertscore import default_model_path

    preds = ["the cat sat on the mat", "a dog barked"]
    refs = [["a cat was on a mat", "dogs bark"], ["the dog barked loudly", "silence"]]
    ours = textgen_metrics.bertscore(preds, refs, all_layers=True)
    for layer in range(7):
        for i in range(2):
            best = max(textgen_metrics.bertscore([preds[i]], [r], all_layers=True)["f1"][layer][0] for r in refs[i])
            assert ours["f1"][layer][i] == pytest.approx(best, abs=1e-6)
    # bert_score's own result: the maximum taken over layers, not references (2 rows, not 7)
    theirs = reference_score(preds, refs, model_type=default_model_path(), num_layers=6, all_layers=True)
    assert len(theirs[2]) != len(ours["f1"])


def test_bertscore_nthreads_changes_nothing():
    preds, refs = ["the cat sat", "a dog ran", "hello"], ["a cat sat", "the dog ran off", "hi there"]
    a = textgen_metrics.bertscore(preds, refs, idf=True, nthreads=1)
    b = textgen_metrics.bertscore(preds, refs, idf=True, nthreads=16)
    assert a == b and all(math.isfinite(f) for f in a["f1"])


def test_bertscore_verbose_draws_one_bar(capsys):
    textgen_metrics.bertscore(["the cat sat", "b"], ["a cat sat", "c"], verbose=True)
    out, err = capsys.readouterr()
    assert "calculating scores..." in out and "done in" in out
    assert err.count("2/2") >= 1 and "computing greedy matching" not in out


def test_bertscore_hashcode_names_this_library():
    code = textgen_metrics.bertscore(["a"], ["a"])["hashcode"]
    assert code.endswith(f"_textgen-metrics={textgen_metrics.__version__}")
    assert re.match(r"all-MiniLM-L6-v2_L6_no-idf_version=0\.3\.13\(hug_trans=[^)]+\)_textgen-metrics=", code)


def test_bertscore_additions():
    res = textgen_metrics.bertscore(["a b", "c"], ["a b", "d"], use_aggregator=True)
    assert isinstance(res["f1"], float)
